//! One line per PDU, like tshark's default view: frame, time (relative to the capture's first
//! packet by default; see [`TimeFormat`]), connection, direction,
//! API and version, correlation id, a few key facts read from the tree (topics, group,
//! transactional id, non-zero error codes, record bytes), and the count of error diagnostics.

use super::time::TimeFormat;
use super::{Options, Palette};
use crate::diag::{Diagnostic, Severity};
use crate::pdu::{Direction, Origin, Pdu};
use crate::wire::tree::{Entity, Kind, NodeId, Tree, Value};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Topic names listed before the rest is counted as `+N`.
const MAX_TOPICS: usize = 3;
/// Distinct error codes listed.
const MAX_ERRORS: usize = 4;

/// The printer's memory between lines: the first timestamp, for relative times, and the last
/// shown PDU's, for deltas.
#[derive(Default, Debug)]
pub struct State {
    first_ts: Option<i64>,
    prev_shown: Option<i64>,
    time: TimeFormat,
}

/// Kafka's name for an error code, when known.
pub fn error_name(code: i16) -> Option<&'static str> {
    crate::protocol::errors::error_name(code)
}

impl State {
    pub fn with_time_format(time: TimeFormat) -> State {
        State {
            time,
            ..State::default()
        }
    }

    pub fn set_time_format(&mut self, time: TimeFormat) {
        self.time = time;
    }

    pub fn time_format(&self) -> TimeFormat {
        self.time
    }

    /// Notes the timestamp of something read, shown or not: the first one noted is time zero
    /// for relative times. Give it the capture's first packet (`CaptureSink::first_packet`)
    /// before anything else, so times follow tshark's `frame.time_relative`.
    pub fn clock(&mut self, ts_ns: Option<i64>) {
        if let Some(ts) = ts_ns {
            self.first_ts.get_or_insert(ts);
        }
    }

    /// The frame number and time column; `shown_pdu` moves the delta's reference on.
    fn prefix(&mut self, o: &Origin, shown_pdu: bool) -> String {
        let mut s = match o.frame {
            Some(f) => format!("{f:>6}"),
            None => format!("{:>6}", format!("#{}", o.index)),
        };
        if let (None, Some(at)) = (o.frame, o.stream_offset) {
            let _ = write!(s, " @{at}");
        }
        if let Some(ts) = o.ts_ns {
            let first = *self.first_ts.get_or_insert(ts);
            let _ = write!(s, " {}", self.time.render(ts, Some(first), self.prev_shown));
            if shown_pdu {
                self.prev_shown = Some(ts);
            }
        }
        s
    }

    pub fn write_pdu<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        pdu: &Pdu,
        o: &Options,
    ) -> io::Result<()> {
        let p = Palette::new(o.color);
        let mut s = self.prefix(&pdu.origin, true);
        if let (Some(c), Some(d)) = (&pdu.origin.conn, pdu.direction) {
            let (from, to) = match d {
                Direction::Request => (c.client, c.server),
                Direction::Response => (c.server, c.client),
            };
            let _ = write!(s, " {from} → {to}");
        }
        if pdu
            .tree
            .nodes
            .first()
            .is_some_and(|r| r.kind == Kind::Array)
        {
            batches(&mut s, &pdu.tree);
            return writeln!(w, "{s}{}", error_tail(&pdu.tree, p));
        }
        let dir = pdu.direction.map(|d| d.as_str()).unwrap_or("?");
        let _ = write!(s, " {dir:<8}");
        let api = match (pdu.api_name, pdu.api_key) {
            (Some(n), _) => n.to_string(),
            (None, Some(k)) => format!("api {k}"),
            (None, None)
                if pdu
                    .tree
                    .nodes
                    .first()
                    .is_some_and(|_| pdu.tree.child(0, "token").is_some()) =>
            {
                "SASL token".into()
            }
            _ => "?".into(),
        };
        let _ = write!(s, " {}{api}{}", p.bold(), p.reset());
        if let Some(v) = pdu.api_version {
            let _ = write!(s, " v{v}");
        }
        if let Some(c) = pdu.correlation_id {
            let _ = write!(s, " corr={c}");
        }
        if let Some(f) = pdu.request_frame {
            let _ = write!(s, " req={f}");
        }
        if let Some(ns) = pdu.latency_ns {
            let _ = write!(s, " {:.3}ms", ns as f64 / 1e6);
        }
        let facts = Facts::gather(&pdu.tree);
        facts.write(&mut s);
        writeln!(w, "{s}{}", error_tail(&pdu.tree, p))
    }

    pub fn write_note<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        origin: &Origin,
        d: &Diagnostic,
        o: &Options,
    ) -> io::Result<()> {
        let p = Palette::new(o.color);
        let mut s = self.prefix(origin, false);
        if let Some(c) = &origin.conn {
            let _ = write!(s, " {} ↔ {}", c.client, c.server);
        }
        writeln!(
            w,
            "{s} {}{}[{}]{} {}",
            p.severity(d.severity),
            d.severity.as_str(),
            d.code,
            p.reset(),
            d.message
        )
    }
}

/// Key facts of one PDU, found by field name anywhere in the tree.
#[derive(Default, Debug)]
struct Facts {
    client_id: Option<String>,
    topics: Vec<String>,
    topics_more: usize,
    group: Option<String>,
    txn: Option<String>,
    errors: Vec<i16>,
    record_bytes: u64,
}

impl Facts {
    fn gather(t: &Tree) -> Facts {
        let mut f = Facts::default();
        if t.nodes.is_empty() {
            return f;
        }
        if let Some(h) = t.child(0, "header") {
            if let Some(c) = t.child(h, "ClientId") {
                f.client_id = str_of(t, c);
            }
        }
        if let Some(b) = t.child(0, "body") {
            f.walk(t, b, 0);
        }
        f
    }

    fn walk(&mut self, t: &Tree, id: NodeId, depth: usize) {
        if depth > 2 * crate::limits::MAX_DEPTH {
            return;
        }
        for c in t.children(id) {
            let n = t.node(c);
            match n.kind {
                Kind::Struct | Kind::TaggedSection => self.walk(t, c, depth + 1),
                // Decoded batches: their size, not their contents (record data and
                // internal-topic structs are not this message's topics or groups).
                Kind::Array if n.name == "Records" => {
                    self.record_bytes += n.len.saturating_sub(n.hdr as u32) as u64
                }
                Kind::Array => self.walk(t, c, depth + 1),
                Kind::Scalar => match (n.entity, n.name, n.value) {
                    (Entity::TopicName, _, Value::Str(_)) => {
                        if let Some(s) = str_of(t, c) {
                            if !self.topics.contains(&s) {
                                if self.topics.len() < MAX_TOPICS {
                                    self.topics.push(s);
                                } else {
                                    self.topics_more += 1;
                                }
                            }
                        }
                    }
                    (Entity::GroupId, _, Value::Str(_)) => {
                        self.group = self.group.take().or_else(|| str_of(t, c))
                    }
                    (Entity::TransactionalId, _, Value::Str(_)) => {
                        self.txn = self.txn.take().or_else(|| str_of(t, c))
                    }
                    (_, "ErrorCode", Value::Int(e)) if e != 0 => {
                        if let Ok(e) = i16::try_from(e) {
                            if !self.errors.contains(&e) && self.errors.len() < MAX_ERRORS {
                                self.errors.push(e);
                            }
                        }
                    }
                    (_, "Records", Value::Bytes(s)) => self.record_bytes += s.len as u64,
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn write(&self, s: &mut String) {
        if let Some(c) = &self.client_id {
            let _ = write!(s, " client={c}");
        }
        if !self.topics.is_empty() {
            let _ = write!(s, " topics={}", self.topics.join(","));
            if self.topics_more > 0 {
                let _ = write!(s, ",+{}", self.topics_more);
            }
        }
        if let Some(g) = &self.group {
            let _ = write!(s, " group={g}");
        }
        if let Some(x) = &self.txn {
            let _ = write!(s, " txn={x}");
        }
        if self.record_bytes > 0 {
            let _ = write!(s, " records={}B", self.record_bytes);
        }
        for e in &self.errors {
            match error_name(*e) {
                Some(n) => {
                    let _ = write!(s, " {n}({e})");
                }
                None => {
                    let _ = write!(s, " error_code={e}");
                }
            }
        }
    }
}

/// A string member's text (lossy), with control characters escaped so a line stays a line.
fn str_of(t: &Tree, id: NodeId) -> Option<String> {
    let n = t.node(id);
    match n.value {
        Value::Str(s) => Some(
            String::from_utf8_lossy(t.bytes(n.buf, s))
                .escape_debug()
                .to_string(),
        ),
        _ => None,
    }
}

/// ` [N errors: first-code] [M warnings]`, or nothing.
fn error_tail(t: &Tree, p: Palette) -> String {
    let mut s = String::new();
    let errors: Vec<&Diagnostic> = t
        .diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if let Some(first) = errors.first() {
        let n = errors.len();
        let _ = write!(
            s,
            " {}[{n} error{}: {}]{}",
            p.error(),
            if n == 1 { "" } else { "s" },
            first.code,
            p.reset()
        );
    }
    let warnings = t
        .diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    if warnings > 0 {
        let _ = write!(
            s,
            " {}[{warnings} warning{}]{}",
            p.warning(),
            if warnings == 1 { "" } else { "s" },
            p.reset()
        );
    }
    s
}

/// A log file's batch: `batch offsets A..B, N records, CODEC`.
fn batches(s: &mut String, t: &Tree) {
    for b in t.children(0) {
        let int = |name: &str| match t.child(b, name).map(|c| t.node(c).value) {
            Some(Value::Int(i)) => Some(i),
            _ => None,
        };
        let n = t.node(b);
        if n.kind != Kind::Struct {
            let _ = write!(s, " {} bytes undecodable", n.len);
            continue;
        }
        if let Some(base) = int("BaseOffset").or_else(|| int("Offset")) {
            match int("LastOffsetDelta") {
                Some(d) => {
                    let _ = write!(s, " batch offsets {base}..{}", base.saturating_add(d));
                }
                None => {
                    let _ = write!(s, " message offset {base}");
                }
            }
        }
        if let Some(r) = t.child(b, "Records") {
            let _ = write!(s, ", {} records", t.children(r).count());
        }
        let codec = t
            .child(b, "Attributes")
            .and_then(|a| t.child(a, "Compression"))
            .map(|c| t.node(c).value);
        if let Some(Value::Label(l)) = codec {
            let _ = write!(s, ", {l}");
        }
    }
}
