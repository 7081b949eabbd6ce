//! Timestamps as text, without a date-time dependency: RFC 3339 in UTC with nanoseconds (JSON),
//! and the summary view's time column in the formats of tshark's `-t` ([`TimeFormat`]).

use std::fmt;
use std::str::FromStr;

/// How the summary view shows a PDU's time, after tshark's `-t`. Absolute times are UTC (tshark's
/// `a`/`ad` use local time and its `u`/`ud` UTC; kinspect knows no time zone, so `a` and `u`
/// are the same, as are `ad` and `ud`). Microseconds, as tshark prints pcap times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeFormat {
    /// `r`: seconds since the capture's first packet (tshark's default, `frame.time_relative`).
    #[default]
    Relative,
    /// `a`: UTC time of day, `01:43:27.989428`.
    Absolute,
    /// `ad`: UTC date and time, `2026-11-30 01:43:27.989428`.
    AbsoluteDate,
    /// `d`: seconds since the previous PDU shown (tshark's `dd`, `frame.time_delta_displayed`;
    /// 0 for the first).
    Delta,
    /// `e`: seconds since the Unix epoch, `1796003007.989428`.
    Epoch,
}

impl TimeFormat {
    /// Every format's name and what it shows, for help texts and error messages.
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        (
            "r",
            "seconds since the first packet of the capture (default)",
        ),
        ("a", "UTC time of day"),
        ("ad", "UTC date and time"),
        ("d", "seconds since the previous PDU shown"),
        ("e", "seconds since the Unix epoch"),
    ];

    pub fn name(self) -> &'static str {
        match self {
            TimeFormat::Relative => "r",
            TimeFormat::Absolute => "a",
            TimeFormat::AbsoluteDate => "ad",
            TimeFormat::Delta => "d",
            TimeFormat::Epoch => "e",
        }
    }

    /// The time column for a PDU at `ts`, given the first packet's time and the previous
    /// shown PDU's time (each defaulting to `ts` itself when unknown).
    pub fn render(self, ts: i64, first: Option<i64>, prev: Option<i64>) -> String {
        match self {
            TimeFormat::Relative => seconds(ts.saturating_sub(first.unwrap_or(ts)), 4),
            TimeFormat::Delta => seconds(ts.saturating_sub(prev.unwrap_or(ts)), 4),
            TimeFormat::Epoch => seconds(ts, 0),
            TimeFormat::Absolute => utc_micros(ts, false),
            TimeFormat::AbsoluteDate => utc_micros(ts, true),
        }
    }
}

impl fmt::Display for TimeFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TimeFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "r" => TimeFormat::Relative,
            "a" | "u" => TimeFormat::Absolute,
            "ad" | "ud" => TimeFormat::AbsoluteDate,
            "d" | "dd" => TimeFormat::Delta,
            "e" => TimeFormat::Epoch,
            _ => {
                let names: Vec<&str> = Self::CHOICES.iter().map(|c| c.0).collect();
                return Err(format!(
                    "unknown time format {s:?}: expected one of {}",
                    names.join(", ")
                ));
            }
        })
    }
}

/// `S.ffffff` (microseconds, truncated toward zero like tshark), the seconds right-aligned in
/// `width`; negative spans (timestamps that go backwards) keep their sign.
fn seconds(ns: i64, width: usize) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let whole = format!("{sign}{}", a / 1_000_000_000);
    format!("{whole:>width$}.{:06}", a % 1_000_000_000 / 1000)
}

/// `HH:MM:SS.ffffff`, with `YYYY-MM-DD ` before it when `date`.
fn utc_micros(ns: i64, date: bool) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let micros = ns.rem_euclid(1_000_000_000) / 1000;
    let sod = secs.rem_euclid(86_400);
    let time = format!(
        "{:02}:{:02}:{:02}.{micros:06}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if date {
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        format!("{y:04}-{m:02}-{d:02} {time}")
    } else {
        time
    }
}

/// `2024-05-01T10:00:00.123456789Z` for nanoseconds since the Unix epoch (negative allowed).
pub fn rfc3339_nanos(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let nanos = ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// Proleptic Gregorian date from days since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Oracle: `date -u -d @<secs> +%Y-%m-%dT%H:%M:%S` (GNU coreutils), checked by hand.
    #[test]
    fn known_instants() {
        assert_eq!(rfc3339_nanos(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339_nanos(1_714_557_600_123_456_789),
            "2024-05-01T10:00:00.123456789Z"
        );
        assert_eq!(
            rfc3339_nanos(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
        assert_eq!(rfc3339_nanos(-1), "1969-12-31T23:59:59.999999999Z");
        assert_eq!(
            rfc3339_nanos(4_102_444_799_000_000_000),
            "2099-12-31T23:59:59.000000000Z"
        );
    }

    #[test]
    fn extremes_do_not_panic() {
        let _ = rfc3339_nanos(i64::MIN);
        let _ = rfc3339_nanos(i64::MAX);
        for f in TimeFormat::CHOICES {
            let f: TimeFormat = f.0.parse().unwrap();
            for (ts, first) in [(i64::MIN, i64::MAX), (i64::MAX, i64::MIN), (0, 0)] {
                let _ = f.render(ts, Some(first), Some(first));
            }
        }
    }

    // Oracle: tshark 4.0.17 on captures/mock-kcat-none.pcap, frame 6:
    // `-t r` 0.000239, `-t ud` 2026-11-30 01:43:27.989575, `-t e` 1796003007.989575.
    #[test]
    fn time_formats_like_tshark() {
        let first = 1_796_003_007_989_336_000;
        let ts = 1_796_003_007_989_575_000;
        let r = |f: TimeFormat| f.render(ts, Some(first), Some(ts - 56_000));
        assert_eq!(r(TimeFormat::Relative), "   0.000239");
        assert_eq!(r(TimeFormat::Absolute), "01:43:27.989575");
        assert_eq!(r(TimeFormat::AbsoluteDate), "2026-11-30 01:43:27.989575");
        assert_eq!(r(TimeFormat::Delta), "   0.000056");
        assert_eq!(r(TimeFormat::Epoch), "1796003007.989575");
        assert_eq!(
            TimeFormat::Relative.render(ts, Some(ts + 1500), None),
            "  -0.000001"
        );
        assert_eq!(TimeFormat::Delta.render(ts, None, None), "   0.000000");
    }

    #[test]
    fn every_listed_name_parses_to_itself() {
        for (name, _) in TimeFormat::CHOICES {
            let f: TimeFormat = name.parse().unwrap();
            assert_eq!(f.name(), *name);
        }
        assert_eq!("ud".parse(), Ok(TimeFormat::AbsoluteDate));
        assert_eq!("dd".parse(), Ok(TimeFormat::Delta));
        let e = "x".parse::<TimeFormat>().unwrap_err();
        assert!(e.contains("r, a, ad, d, e"), "{e}");
        assert_eq!(TimeFormat::default(), TimeFormat::Relative);
    }
}
