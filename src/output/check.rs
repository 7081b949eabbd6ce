//! `kinspect check` as a sink: every PDU and capture note of each input goes through a fresh
//! [`Checker`]; its findings are printed as they come (one line each, or one JSON object each),
//! then, per input, the quorum timeline when asked, and at the end a count per rule, what the
//! rules followed (PDUs, connections, partitions, producers, ... summed over the inputs) and,
//! when they missed something, what they could not see (PDUs with decoding errors, gaps, a
//! truncated file, TLS, ...).

use crate::check::{Checker, Coverage, Finding, Missed, RULES};
use crate::diag::{Diagnostic, Severity};
use crate::engine::{Filter, InputEnd, InputInfo, Sink};
use crate::limits::MAX_PAIRS_IN_FLIGHT;
use crate::pdu::{Direction, Origin, Pdu};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::io::{self, Write};
use std::sync::Arc;

/// How findings are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    /// One line per finding, then a count per rule and what the rules followed.
    Text,
    /// One JSON object per finding (and per timeline event).
    Jsonl,
}

impl crate::choice::Choice for CheckFormat {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "text",
            "One line per finding, then a count per rule and what the rules followed",
            CheckFormat::Text,
        ),
        ("jsonl", "One JSON object per finding", CheckFormat::Jsonl),
    ];
}

/// Prints the findings of the conversation rules.
pub struct CheckPrinter<W: Write> {
    w: W,
    format: CheckFormat,
    timeline: bool,
    checker: Checker,
    name: String,
    counts: BTreeMap<&'static str, u64>,
    /// An error-level rule fired (among the findings shown).
    pub errors: bool,
    /// Which findings are shown: those of PDUs this filter selects (the rules see every PDU).
    show: Option<Arc<dyn Filter>>,
    /// With `show` and pairs: the requests it selected, by (connection, correlation id), so
    /// that their responses' findings are shown too.
    pairs: Option<HashSet<(Option<u32>, i32)>>,
    /// What the rules followed, summed over the inputs ended so far.
    coverage: Coverage,
    /// Text was printed before the counts (a finding or a timeline), which a blank line then
    /// separates from them.
    wrote: bool,
    /// Per input that had any, what the rules could not see there (for `check --strict`).
    pub missed_by_input: Vec<(String, Vec<Missed>)>,
}

impl<W: Write> CheckPrinter<W> {
    pub fn new(w: W, format: CheckFormat, timeline: bool) -> Self {
        CheckPrinter {
            w,
            format,
            timeline,
            checker: Checker::new(),
            name: String::new(),
            counts: BTreeMap::new(),
            errors: false,
            show: None,
            pairs: None,
            coverage: Coverage::default(),
            wrote: false,
            missed_by_input: Vec::new(),
        }
    }

    /// Where the findings go.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Shows only the findings of PDUs `filter` selects (with `pairs`, also those of the
    /// responses to requests it selected). The rules still see every PDU: a filter narrows what
    /// is reported, not the conversation the rules follow.
    pub fn with_filter(mut self, filter: Arc<dyn Filter>, pairs: bool) -> Self {
        self.show = Some(filter);
        self.pairs = pairs.then(HashSet::new);
        self
    }

    /// Whether the findings of `pdu` are shown.
    fn shown(&mut self, pdu: &Pdu) -> bool {
        let Some(f) = &self.show else {
            return true;
        };
        let selected = f.pdu(pdu);
        let (Some(pairs), Some(corr)) = (self.pairs.as_mut(), pdu.correlation_id) else {
            return selected;
        };
        let key = (pdu.origin.conn.map(|c| c.stream), corr);
        match pdu.direction {
            Some(Direction::Request) => {
                if selected && pairs.len() < MAX_PAIRS_IN_FLIGHT {
                    pairs.insert(key);
                }
                selected
            }
            Some(Direction::Response) => pairs.remove(&key) || selected,
            None => selected,
        }
    }

    fn found(&mut self, f: &Finding) -> io::Result<()> {
        *self.counts.entry(f.rule.code).or_default() += 1;
        self.errors |= f.severity() == Severity::Error;
        self.wrote = true;
        match self.format {
            CheckFormat::Text => writeln!(self.w, "{}: {}", self.name, text_line(f)),
            CheckFormat::Jsonl => writeln!(self.w, "{}", finding_json(&self.name, f)),
        }
    }
}

/// Every rule of [`RULES`], in order: its code, severity and family, what must hold, and the
/// KIP and Kafka source behind it (`kinspect check --rules`). Text: a heading line per rule and
/// two indented lines; JSON Lines: one object per rule, `rule` being the code as in findings.
pub fn write_rules(w: &mut dyn Write, format: CheckFormat) -> io::Result<()> {
    for r in RULES {
        match format {
            CheckFormat::Text => writeln!(
                w,
                "{} ({}, {})\n    {}\n    {}; {}",
                r.code,
                r.severity.as_str(),
                r.family,
                r.statement,
                r.kip,
                r.source
            )?,
            CheckFormat::Jsonl => writeln!(
                w,
                "{}",
                json!({
                    "rule": r.code,
                    "severity": r.severity.as_str(),
                    "family": r.family,
                    "statement": r.statement,
                    "kip": r.kip,
                    "source": r.source,
                })
            )?,
        }
    }
    w.flush()
}

/// A finding as one JSON object (the stable contract of `kinspect check --format jsonl`).
pub fn finding_json(file: &str, f: &Finding) -> serde_json::Value {
    json!({
        "file": file,
        "rule": f.rule.code,
        "severity": f.severity().as_str(),
        "frames": f.frames,
        "message": f.message,
        "expected": f.expected,
        "seen": f.seen,
        "api": f.api,
        "connection": f.connection.map(|c| json!({"client": c.client.to_string(), "server": c.server.to_string(), "stream": c.stream})),
    })
}

/// A finding as one line: frames, rule, severity, message, what was expected and seen.
pub fn text_line(f: &Finding) -> String {
    let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
    let mut s = format!(
        "{:<12} {:<30} {:<7} {}",
        frames.join(","),
        f.rule.code,
        f.severity().as_str(),
        f.message
    );
    if !f.expected.is_empty() || !f.seen.is_empty() {
        s.push_str(&format!(" [expected {}; seen {}]", f.expected, f.seen));
    }
    s
}

impl<W: Write> Sink for CheckPrinter<W> {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        // Each input is its own conversation.
        self.checker = Checker::new();
        self.name = input.name.to_string();
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, _input: Option<&str>) -> io::Result<()> {
        let found: Vec<Finding> = self.checker.pdu(pdu).collect();
        if !self.shown(pdu) {
            return Ok(());
        }
        found.iter().try_for_each(|f| self.found(f))
    }

    fn note(&mut self, origin: &Origin, diag: &Diagnostic, _input: Option<&str>) -> io::Result<()> {
        self.checker.note(origin, diag);
        Ok(())
    }

    fn end_input(&mut self, end: &InputEnd<'_>) -> io::Result<()> {
        let cov = self.checker.coverage();
        if !cov.missed.is_empty() {
            self.missed_by_input
                .push((end.name.to_string(), cov.missed.clone()));
        }
        self.coverage.add(&cov);
        if !self.timeline || end.failed.is_some() {
            return Ok(());
        }
        let t = self.checker.timeline();
        let name = end.name;
        match self.format {
            CheckFormat::Text => {
                let body = if t.events.is_empty() {
                    "  (no KRaft election traffic)\n".to_string()
                } else {
                    t.render()
                };
                let gap = if std::mem::replace(&mut self.wrote, true) {
                    "\n"
                } else {
                    ""
                };
                write!(self.w, "{gap}{name}: quorum timeline\n{body}")
            }
            CheckFormat::Jsonl => t.events.iter().try_for_each(|e| {
                writeln!(
                    self.w,
                    "{}",
                    json!({"file": name, "timeline": {"frame": e.frame, "ts_ns": e.ts_ns, "epoch": e.epoch, "event": e.text}})
                )
            }),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.format == CheckFormat::Text {
            let gap = if self.wrote { "\n" } else { "" };
            writeln!(self.w, "{gap}findings per rule")?;
            if self.counts.is_empty() {
                writeln!(self.w, "  (none)")?;
            }
            for r in RULES {
                if let Some(n) = self.counts.get(r.code) {
                    writeln!(self.w, "  {:<34} {:<7} {n:>7}", r.code, r.severity.as_str())?;
                }
            }
            // Whether the rules had anything to judge: a family that followed nothing is
            // silent, not passed.
            writeln!(self.w, "\nwhat the rules followed")?;
            row(&mut self.w, "PDUs", "", self.coverage.pdus)?;
            for f in &self.coverage.followed {
                row(&mut self.w, f.what, f.family, f.count as u64)?;
            }
            // What they could not see: shown only when something was missed.
            if !self.coverage.missed.is_empty() {
                writeln!(self.w, "\nwhat the rules could not see")?;
                for m in &self.coverage.missed {
                    row(&mut self.w, m.what, m.severity.as_str(), m.count)?;
                }
                writeln!(
                    self.w,
                    "  (`kinspect decode -f summary` shows each at its frame; `--errors-only` the errors)"
                )?;
            }
        }
        self.w.flush()
    }
}

/// One row of the closing tables: what, family or severity, count.
fn row(w: &mut impl Write, what: &str, kind: &str, n: u64) -> io::Result<()> {
    writeln!(w, "  {what:<34} {kind:<9} {n:>5}")
}
