//! Timestamps as text: RFC 3339 in UTC with nanoseconds, without a date-time dependency.

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
    }
}
