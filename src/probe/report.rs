//! The terminal table: one row per API and version, its verdict (the worst finding), the error
//! codes its answers carried, and the slowest answer.

use super::findings::{rank, Finding};
use super::Report;
use std::fmt::Write as _;

/// One API version's findings, summed up.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub api_key: i16,
    pub api: String,
    pub api_version: i16,
    /// Requests sent at this version.
    pub requests: usize,
    /// The worst finding's code.
    pub verdict: &'static str,
    /// Every finding code of the row, worst first, each once.
    pub codes: Vec<&'static str>,
    pub error_codes: Vec<String>,
    pub max_latency_us: Option<u64>,
}

impl Report {
    /// Rows in API key, then version, order.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        let mut order: Vec<(i16, i16)> = Vec::new();
        for f in &self.findings {
            if !order.contains(&(f.api_key, f.api_version)) {
                order.push((f.api_key, f.api_version));
            }
        }
        order.sort();
        for (k, v) in order {
            let fs: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| f.api_key == k && f.api_version == v)
                .collect();
            let mut codes: Vec<&'static str> = Vec::new();
            for f in &fs {
                if !codes.contains(&f.code) {
                    codes.push(f.code);
                }
            }
            codes.sort_by_key(|c| rank(c));
            let mut corr: Vec<i32> = fs.iter().filter_map(|f| f.correlation_id).collect();
            corr.sort();
            corr.dedup();
            let mut error_codes: Vec<String> = Vec::new();
            for f in &fs {
                for e in &f.error_codes {
                    if !error_codes.contains(e) {
                        error_codes.push(e.clone());
                    }
                }
            }
            rows.push(Row {
                api_key: k,
                api: fs
                    .first()
                    .and_then(|f| f.api)
                    .map_or_else(|| format!("#{k}"), str::to_string),
                api_version: v,
                requests: corr.len(),
                verdict: codes.first().copied().unwrap_or("clean"),
                codes,
                error_codes,
                max_latency_us: fs.iter().filter_map(|f| f.latency_us).max(),
            });
        }
        rows
    }

    /// The table, with a closing summary line.
    pub fn table(&self) -> String {
        let rows = self.rows();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:<30} {:>4} {:>4} {:>5}  {:<22} {:<40} {:>9}",
            "API", "KEY", "VER", "REQS", "VERDICT", "ERROR CODES", "MAX LAT"
        );
        for r in &rows {
            let mut verdict = r.verdict.to_string();
            if r.codes.len() > 1 {
                verdict.push_str(&format!(" +{}", r.codes.len() - 1));
            }
            let lat = r.max_latency_us.map_or_else(|| "-".into(), latency);
            let errs = if r.error_codes.is_empty() {
                "-".to_string()
            } else {
                r.error_codes.join(",")
            };
            let _ = writeln!(
                s,
                "{:<30} {:>4} {:>4} {:>5}  {:<22} {:<40} {:>9}",
                r.api, r.api_key, r.api_version, r.requests, verdict, errs, lat
            );
        }
        let (e, w) = self
            .findings
            .iter()
            .fold((0, 0), |(e, w), f| match f.severity {
                crate::diag::Severity::Error => (e + 1, w),
                crate::diag::Severity::Warning => (e, w + 1),
                crate::diag::Severity::Info => (e, w),
            });
        let _ = writeln!(
            s,
            "{} requests, {} API versions, {} findings: {e} errors, {w} warnings; {} APIs advertised",
            self.requests,
            rows.len(),
            self.findings.len(),
            self.advertised.len()
        );
        // A broker that went down ends the sweep: the rows after it were never probed.
        if let Some(f) = self.findings.iter().find(|f| f.code == "broker-down") {
            let _ = writeln!(
                s,
                "the sweep stopped at {} v{}: {}",
                f.api.unwrap_or("?"),
                f.api_version,
                f.message
            );
        }
        s
    }
}

/// A latency for the table: microseconds under a millisecond (a loopback mock answers in tens
/// of them, which `0.0 ms` hid), else milliseconds with one decimal.
fn latency(us: u64) -> String {
    if us < 1000 {
        format!("{us} µs")
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}

#[test]
fn latencies_under_a_millisecond_show_in_microseconds() {
    assert_eq!(latency(0), "0 µs");
    assert_eq!(latency(37), "37 µs");
    assert_eq!(latency(999), "999 µs");
    assert_eq!(latency(1000), "1.0 ms");
    assert_eq!(latency(2_019_900), "2019.9 ms");
}

#[test]
fn a_sweep_ended_by_a_dead_broker_says_so_under_the_table() {
    use crate::probe::findings::Finding;
    let mut r = crate::probe::Report::default();
    let mut f = Finding::new("broker-down", 0, Some("Produce"), 0);
    f.message = "cannot reconnect to 127.0.0.1:9: refused; the sweep stops".into();
    r.findings
        .push(Finding::new("clean", 3, Some("Metadata"), 1));
    r.findings.push(f);
    let t = r.table();
    assert!(
        t.lines()
            .last()
            .unwrap()
            .starts_with("the sweep stopped at Produce v0: cannot reconnect"),
        "{t}"
    );
    r.findings.pop();
    assert!(!r.table().contains("the sweep stopped"));
}
