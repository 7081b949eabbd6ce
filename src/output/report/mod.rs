//! `kinspect report`: one self-contained HTML page about a run (overview, PDUs and bytes per
//! API over time, latency percentiles, error codes over time, clients and connections, the
//! slowest requests with their decoded trees, check findings). [`Report`] is a sink: it keeps
//! bounded aggregates while the engine streams (counts and percentiles in
//! [`crate::capture::stats::Stats`], a fixed number of time buckets, the top N slowest with
//! their trees, the first findings of a [`Checker`] fed by the same run), and writes the page
//! at [`Sink::finish`]. Caps live in [`crate::limits`].
//!
//! `timeline` owns the buckets, `svg` the plots, `html` the page (and its escaping).

pub mod html;
pub mod svg;
pub mod timeline;

use crate::capture::stats::{client_id, error_codes, Stats};
use crate::check::{Checker, Coverage, Finding};
use crate::choice::Choice;
use crate::diag::{Diagnostic, Severity};
use crate::engine::{InputEnd, InputInfo, Sink};
use crate::limits::{
    MAX_REPORT_CONNECTIONS, MAX_REPORT_FINDINGS, MAX_REPORT_SLOWEST, MAX_REPORT_TREE_BYTES,
};
use crate::pdu::{Direction, Origin, Pdu};
use crate::query::{Field, Value as QValue};
use crate::wire::tree::Value;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, Write};
use timeline::Timeline;

/// What the page is about, and how much it lists.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The page's title.
    pub title: String,
    /// Slowest requests shown with their trees (at most [`MAX_REPORT_SLOWEST`]).
    pub slowest: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            title: "kinspect report".into(),
            slowest: 20,
        }
    }
}

/// One input as the overview lists it.
#[derive(Clone, Debug, Default)]
pub struct InputRow {
    pub name: String,
    pub kind: &'static str,
    pub packets: Option<u64>,
    pub file_bytes: Option<u64>,
    pub pdus: u64,
    pub failed: Option<String>,
}

/// One TCP connection (or, past the cap, all the others together).
#[derive(Clone, Debug, Default)]
pub struct ConnRow {
    pub input: usize,
    pub stream: Option<u32>,
    pub client: String,
    pub server: String,
    /// The client id of its first request with one (`Some(None)`: a null id).
    pub client_id: Option<Option<String>>,
    /// `ClientSoftwareName ClientSoftwareVersion` from its ApiVersions request.
    pub software: Option<String>,
    pub requests: u64,
    pub responses: u64,
    pub bytes: u64,
    pub first_ts: Option<i64>,
    pub last_ts: Option<i64>,
}

/// A response among the slowest, with its tree rendered as the `tree` view prints it.
#[derive(Clone, Debug)]
pub struct Slow {
    pub latency_ns: i64,
    seq: u64,
    pub input: usize,
    pub frame: Option<u64>,
    pub request_frame: Option<u64>,
    pub api: String,
    pub version: Option<i16>,
    pub conn: Option<(String, String)>,
    pub tree: String,
    pub truncated: bool,
}

impl PartialEq for Slow {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Slow {}
impl PartialOrd for Slow {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
/// Slower is greater; among equals the earlier is greater (it stays when a tie is evicted).
impl Ord for Slow {
    fn cmp(&self, o: &Self) -> Ordering {
        self.latency_ns
            .cmp(&o.latency_ns)
            .then(o.seq.cmp(&self.seq))
    }
}

/// PDUs naming one topic (by name, or by a topic id the session named).
#[derive(Clone, Debug, Default)]
pub struct TopicRow {
    pub requests: u64,
    pub responses: u64,
    /// Bytes of the PDUs that name it (a PDU naming several topics counts for each).
    pub bytes: u64,
    /// Responses naming it that carry a non-zero error code.
    pub error_responses: u64,
}

/// A finding as the page lists it.
#[derive(Clone, Debug)]
pub struct FindingRow {
    pub input: usize,
    pub severity: Severity,
    pub rule: &'static str,
    pub frames: Vec<u64>,
    pub text: String,
}

/// The report sink: aggregates while the run streams, the page at `finish`.
pub struct Report<W: Write> {
    w: W,
    opts: ReportOptions,
    pub stats: Stats,
    pub inputs: Vec<InputRow>,
    pub timeline: Timeline,
    /// Earliest and latest timestamp of anything read (shown or not).
    pub span: Option<(i64, i64)>,
    checker: Checker,
    pub findings: Vec<FindingRow>,
    /// Rule → (severity, findings), over every finding.
    pub finding_counts: BTreeMap<&'static str, (Severity, u64)>,
    /// An error-level rule fired.
    pub check_errors: bool,
    /// What the rules followed, summed over the inputs ended.
    pub coverage: Coverage,
    slowest: BinaryHeap<Reverse<Slow>>,
    seq: u64,
    pub conns: BTreeMap<(usize, u32), ConnRow>,
    /// Connections past [`MAX_REPORT_CONNECTIONS`], and PDUs with no connection.
    pub other_conns: ConnRow,
    /// Topic → PDUs naming it, for the first [`MAX_REPORT_CONNECTIONS`] topics; the rest in
    /// `other_topics`.
    pub topics: BTreeMap<String, TopicRow>,
    pub other_topics: TopicRow,
    topic_field: Option<Field>,
}

impl<W: Write> Report<W> {
    pub fn new(w: W, opts: ReportOptions) -> Self {
        Report {
            w,
            opts: ReportOptions {
                slowest: opts.slowest.min(MAX_REPORT_SLOWEST),
                ..opts
            },
            stats: Stats::new(),
            inputs: Vec::new(),
            timeline: Timeline::default(),
            span: None,
            checker: Checker::new(),
            findings: Vec::new(),
            finding_counts: BTreeMap::new(),
            check_errors: false,
            coverage: Coverage::default(),
            slowest: BinaryHeap::new(),
            seq: 0,
            conns: BTreeMap::new(),
            other_conns: ConnRow {
                input: usize::MAX,
                ..ConnRow::default()
            },
            topics: BTreeMap::new(),
            other_topics: TopicRow::default(),
            topic_field: Field::parse("topic").ok(),
        }
    }

    /// The slowest responses kept, slowest first.
    pub fn slowest(&self) -> Vec<&Slow> {
        let mut v: Vec<&Slow> = self.slowest.iter().map(|r| &r.0).collect();
        v.sort_by(|a, b| b.cmp(a));
        v
    }

    fn input(&self) -> usize {
        self.inputs.len().saturating_sub(1)
    }

    fn found(&mut self, f: Finding) {
        let sev = f.severity();
        self.check_errors |= sev == Severity::Error;
        self.finding_counts.entry(f.rule.code).or_insert((sev, 0)).1 += 1;
        if self.findings.len() < MAX_REPORT_FINDINGS {
            self.findings.push(FindingRow {
                input: self.input(),
                severity: sev,
                rule: f.rule.code,
                text: super::check::text_line(&f),
                frames: f.frames,
            });
        }
    }

    fn count_conn(&mut self, pdu: &Pdu, len: u64) {
        let input = self.input();
        let row = match pdu.origin.conn {
            Some(c) => {
                let key = (input, c.stream);
                if self.conns.contains_key(&key) || self.conns.len() < MAX_REPORT_CONNECTIONS {
                    self.conns.entry(key).or_insert_with(|| ConnRow {
                        input,
                        stream: Some(c.stream),
                        client: c.client.to_string(),
                        server: c.server.to_string(),
                        ..ConnRow::default()
                    })
                } else {
                    &mut self.other_conns
                }
            }
            None => &mut self.other_conns,
        };
        match pdu.direction {
            Some(Direction::Request) => {
                row.requests += 1;
                if row.client_id.is_none() {
                    row.client_id = client_id(pdu);
                }
                if row.software.is_none() && pdu.api_key == Some(18) {
                    row.software = software(pdu);
                }
            }
            Some(Direction::Response) => row.responses += 1,
            None => {}
        }
        row.bytes += len;
        if let Some(ts) = pdu.origin.ts_ns {
            row.first_ts.get_or_insert(ts);
            row.last_ts = Some(ts);
        }
    }

    /// Counts the PDU for every distinct topic it names (`query`'s `topic` field: schema
    /// entities, topic ids named from the session).
    fn count_topics(&mut self, pdu: &Pdu, len: u64) {
        let Some(field) = &self.topic_field else {
            return;
        };
        let mut names: Vec<String> = Vec::new();
        field.values(pdu, |v| {
            let name = match v {
                QValue::Text(t) => t.to_string(),
                QValue::Str(b) => String::from_utf8_lossy(b).into_owned(),
                _ => return,
            };
            if !names.contains(&name) && names.len() < MAX_REPORT_CONNECTIONS {
                names.push(name);
            }
        });
        if names.is_empty() {
            return;
        }
        let mut errored = false;
        if pdu.direction == Some(Direction::Response) {
            error_codes(pdu, |_| errored = true);
        }
        for name in names {
            let row =
                if self.topics.contains_key(&name) || self.topics.len() < MAX_REPORT_CONNECTIONS {
                    self.topics.entry(name).or_default()
                } else {
                    &mut self.other_topics
                };
            match pdu.direction {
                Some(Direction::Request) => row.requests += 1,
                Some(Direction::Response) => row.responses += 1,
                None => {}
            }
            row.bytes += len;
            row.error_responses += u64::from(errored);
        }
    }

    fn consider_slow(&mut self, pdu: &Pdu) {
        let Some(latency_ns) = pdu.latency_ns else {
            return;
        };
        if self.opts.slowest == 0 {
            return;
        }
        self.seq += 1;
        let full = self.slowest.len() >= self.opts.slowest;
        if full
            && self
                .slowest
                .peek()
                .is_some_and(|m| m.0.latency_ns >= latency_ns)
        {
            return;
        }
        // Rendered only now that it is among the slowest, and cut at a cap.
        let mut out = Capped::default();
        let o = super::Options {
            format: super::Format::Tree,
            annotate: false,
            color: false,
            show_secrets: false,
        };
        let _ = super::tree::write_pdu(&mut out, pdu, None, &o);
        let slow = Slow {
            latency_ns,
            seq: self.seq,
            input: self.input(),
            frame: pdu.origin.frame,
            request_frame: pdu.request_frame,
            api: api_label(pdu),
            version: pdu.api_version,
            conn: pdu
                .origin
                .conn
                .map(|c| (c.client.to_string(), c.server.to_string())),
            tree: String::from_utf8_lossy(&out.buf).into_owned(),
            truncated: out.truncated,
        };
        if full {
            self.slowest.pop();
        }
        self.slowest.push(Reverse(slow));
    }

    fn see(&mut self, ts: i64) {
        self.span = Some(match self.span {
            None => (ts, ts),
            Some((lo, hi)) => (lo.min(ts), hi.max(ts)),
        });
    }
}

fn api_label(pdu: &Pdu) -> String {
    match (pdu.api_name, pdu.api_key) {
        (Some(n), _) => n.to_string(),
        (None, Some(k)) => format!("API {k}"),
        _ => "?".into(),
    }
}

/// `ClientSoftwareName ClientSoftwareVersion` of an ApiVersions request (v3+).
fn software(pdu: &Pdu) -> Option<String> {
    let t = &pdu.tree;
    let body = (!t.nodes.is_empty())
        .then(|| t.child(0, "body"))
        .flatten()?;
    let text = |name: &str| {
        let n = *t.node(t.child(body, name)?);
        match n.value {
            Value::Str(s) => Some(String::from_utf8_lossy(t.bytes(n.buf, s)).into_owned()),
            _ => None,
        }
    };
    let name = text("ClientSoftwareName")?;
    Some(match text("ClientSoftwareVersion") {
        Some(v) => format!("{name} {v}"),
        None => name,
    })
}

/// A writer that keeps the first [`MAX_REPORT_TREE_BYTES`] and then fails, so a huge tree
/// stops rendering at the cap.
#[derive(Default)]
struct Capped {
    buf: Vec<u8>,
    truncated: bool,
}

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let room = MAX_REPORT_TREE_BYTES - self.buf.len();
        if b.len() > room {
            self.buf.extend_from_slice(&b[..room]);
            self.truncated = true;
            return Err(io::Error::other("tree cut at the report's cap"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Sink for Report<W> {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        // Each input is its own conversation for the rules.
        self.checker = Checker::new();
        self.inputs.push(InputRow {
            name: input.name.to_string(),
            kind: input.kind.name(),
            ..InputRow::default()
        });
        Ok(())
    }

    fn clock(&mut self, ts_ns: Option<i64>) {
        if let Some(ts) = ts_ns {
            self.see(ts);
        }
    }

    fn pdu(&mut self, pdu: &Pdu, _input: Option<&str>) -> io::Result<()> {
        if self.inputs.is_empty() {
            self.inputs.push(InputRow::default());
        }
        self.stats.pdu(pdu);
        if let Some(i) = self.inputs.last_mut() {
            i.pdus += 1;
        }
        let len = pdu.tree.buf(0).len() as u64;
        if let Some(ts) = pdu.origin.ts_ns {
            self.see(ts);
            if let Some(key) = pdu.api_key {
                let slot = self.timeline.slot(ts);
                Timeline::add(&mut self.timeline.pdus, key, slot, 1);
                Timeline::add(&mut self.timeline.bytes, key, slot, len);
                if pdu.direction == Some(Direction::Response) {
                    let errors = &mut self.timeline.errors;
                    error_codes(pdu, |code| Timeline::add(errors, code, slot, 1));
                }
            }
        }
        self.count_conn(pdu, len);
        self.count_topics(pdu, len);
        if pdu.direction == Some(Direction::Response) {
            self.consider_slow(pdu);
        }
        let found: Vec<Finding> = self.checker.pdu(pdu).collect();
        found.into_iter().for_each(|f| self.found(f));
        Ok(())
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, _input: Option<&str>) -> io::Result<()> {
        self.stats.note(origin, d);
        self.checker.note(origin, d);
        Ok(())
    }

    fn end_input(&mut self, end: &InputEnd<'_>) -> io::Result<()> {
        if self.inputs.last().is_none_or(|i| i.name != end.name) {
            self.inputs.push(InputRow {
                name: end.name.to_string(),
                ..InputRow::default()
            });
        }
        if let Some(s) = end.summary {
            self.stats.capture(s);
            if let Some(ts) = s.first_ts_ns {
                self.see(ts);
            }
        }
        self.coverage.add(&self.checker.coverage());
        if let Some(row) = self.inputs.last_mut() {
            row.failed = end.failed.map(str::to_string);
            row.packets = end.summary.map(|s| s.packets);
            row.file_bytes = end.summary.map(|s| s.file_bytes);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let page = html::page(self, &self.opts);
        self.w.write_all(page.as_bytes())?;
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_are_kept_and_ties_keep_the_first() {
        let mut r = Report::new(
            Vec::new(),
            ReportOptions {
                slowest: 3,
                ..ReportOptions::default()
            },
        );
        for (i, l) in [5, 1, 9, 5, 7, 2, 9].into_iter().enumerate() {
            let pdu = Pdu {
                direction: Some(Direction::Response),
                latency_ns: Some(l),
                origin: Origin {
                    frame: Some(i as u64 + 1),
                    ..Origin::default()
                },
                ..Pdu::default()
            };
            r.pdu(&pdu, None).unwrap();
        }
        let kept: Vec<(i64, Option<u64>)> = r
            .slowest()
            .iter()
            .map(|s| (s.latency_ns, s.frame))
            .collect();
        assert_eq!(kept, [(9, Some(3)), (9, Some(7)), (7, Some(5))]);
    }

    #[test]
    fn a_huge_tree_is_cut_at_the_cap() {
        let mut c = Capped::default();
        for _ in 0..MAX_REPORT_TREE_BYTES {
            if c.write_all(b"0123456789").is_err() {
                break;
            }
        }
        assert!(c.truncated);
        assert_eq!(c.buf.len(), MAX_REPORT_TREE_BYTES);
    }
}
