//! What a fuzzing run reports: its counters, the findings saved, coverage, and the summary.

use super::cases::{Case, Target as Api};
use super::repro::Reproducer;
use crate::probe::findings::Finding;
use crate::protocol::Protocol;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The run so far.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub cases: u64,
    pub rounds: u64,
    pub answers: u64,
    pub decoded: u64,
    pub findings: usize,
    /// Times the broker was found down after a round (and restarted, or waited for).
    pub restarts: u64,
    /// Findings left out because, minimised, they were a case kind already reported.
    pub repeats: u64,
    /// Answers whose record batches did not decode while the broker was known to store corrupt
    /// batches (an `accepted-corrupt-batch` finding): symptoms of that finding, counted only.
    pub stored_corrupt: u64,
    pub elapsed: Duration,
}

impl Stats {
    pub fn rate(&self) -> f64 {
        self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One finding with its reproducer (and where it was saved).
#[derive(Clone, Debug)]
pub struct Saved {
    pub finding: Finding,
    pub reproducer: Reproducer,
    pub dir: Option<PathBuf>,
    /// The reproducer showed the finding again when re-run, and a death again on a broker
    /// freshly restarted after the reproducer killed it. Unconfirmed ones are kept apart
    /// (`OUT/unconfirmed/`), not counted as findings.
    pub confirmed: bool,
}

#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub stats: Stats,
    /// The time spent minimising (not counted in the cases/s).
    pub minimising: Duration,
    pub findings: Vec<Saved>,
    /// Deaths and other events whose sequence did not show them again on a re-run (timing, or
    /// state left by cases before the sequence): kept for a look, not findings.
    pub unconfirmed: Vec<Saved>,
    /// (api key, version) → cases sent.
    pub coverage: BTreeMap<(i16, i16), u64>,
    /// (api key, min, max) as advertised.
    pub advertised: Vec<(i16, i16, i16)>,
    /// The APIs fuzzed, with the versions sent to each.
    pub targets: Vec<Api>,
    /// The first cases sent (up to [`KEEP_FIRST`]), for determinism checks.
    pub first_cases: Vec<Case>,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
}

pub const KEEP_FIRST: usize = 256;

impl FuzzReport {
    pub fn has_errors(&self) -> bool {
        // A death seen once is still a death, confirmed or not.
        self.findings
            .iter()
            .chain(&self.unconfirmed)
            .any(|s| s.finding.is_error())
    }

    /// Findings by code, in code order.
    pub fn by_code(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for s in &self.findings {
            *m.entry(s.finding.code).or_insert(0) += 1;
        }
        m
    }

    /// The final summary: cases, rate, findings by kind, coverage.
    pub fn summary(&self, proto: &Protocol) -> String {
        let s = &self.stats;
        let mut out = format!(
            "{} cases in {:.1} s ({:.0} cases/s), {} rounds, {} answers ({} decoded cleanly), {} finding(s)",
            s.cases,
            s.elapsed.as_secs_f64(),
            s.rate(),
            s.rounds,
            s.answers,
            s.decoded,
            self.findings.len()
        );
        if s.restarts > 0 {
            out.push_str(&format!(
                ", broker down {} time(s) (restarted or waited for)",
                s.restarts
            ));
        }
        if s.stored_corrupt > 0 {
            out.push_str(&format!(
                ", {} answer(s) carrying stored corrupt batches (symptoms of accepted-corrupt-batch)",
                s.stored_corrupt
            ));
        }
        if s.repeats > 0 {
            out.push_str(&format!(
                ", {} repeat(s) left out (minimised to a case kind already reported)",
                s.repeats
            ));
        }
        if !self.minimising.is_zero() {
            out.push_str(&format!(
                "; {:.1} s minimising",
                self.minimising.as_secs_f64()
            ));
        }
        out.push('\n');
        if !self.findings.is_empty() {
            let kinds: Vec<String> = self
                .by_code()
                .iter()
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            out.push_str(&format!("findings: {}\n", kinds.join(", ")));
        }
        let possible: u64 = self.targets.iter().map(|t| (t.hi - t.lo) as u64 + 1).sum();
        let in_range = self
            .coverage
            .keys()
            .filter(|(k, v)| {
                self.targets
                    .iter()
                    .any(|t| t.api_key == *k && (t.lo..=t.hi).contains(v))
            })
            .count();
        out.push_str(&format!(
            "coverage: {in_range} of {possible} advertised API versions sent ({} APIs), {} (api, version) pairs in all with past-range ones\n",
            self.targets.len(),
            self.coverage.len()
        ));
        let mut per: BTreeMap<i16, Vec<i16>> = BTreeMap::new();
        for &(k, v) in self.coverage.keys() {
            per.entry(k).or_default().push(v);
        }
        let list: Vec<String> = per
            .iter()
            .map(|(k, vs)| {
                let name = proto
                    .api_name(*k)
                    .map_or(format!("key {k}"), str::to_string);
                let lo = vs.iter().filter(|&&v| v >= 0).min().copied().unwrap_or(0);
                let hi = vs
                    .iter()
                    .filter(|&&v| (0..1000).contains(&v))
                    .max()
                    .copied()
                    .unwrap_or(0);
                format!("{name} v{lo}-{hi}")
            })
            .collect();
        out.push_str(&format!("  {}\n", list.join(", ")));
        if !self.unconfirmed.is_empty() {
            out.push_str(&format!(
                "unconfirmed: {} (did not show again when re-run, or not on a freshly restarted broker; kept apart, not counted as findings)\n",
                self.unconfirmed.len()
            ));
        }
        for f in self.findings.iter().chain(&self.unconfirmed) {
            out.push_str(&format!(
                "{}{} {} v{} [{}]: {} ({} of {} cases){}\n",
                if f.confirmed { "" } else { "unconfirmed " },
                f.finding.code,
                f.finding.api.unwrap_or("?"),
                f.finding.api_version,
                f.finding.variant,
                f.finding.message,
                f.reproducer.sequence.len(),
                f.reproducer.original_len,
                f.dir
                    .as_ref()
                    .map(|d| format!(" → {}", d.display()))
                    .unwrap_or_default()
            ));
        }
        if let Some(w) = &self.stopped {
            out.push_str(&format!("stopped: {w}\n"));
        }
        out
    }
}
