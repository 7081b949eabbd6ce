//! One line (or one JSON object) per record: the records of Produce requests, Fetch responses,
//! log segments and snapshots, read from the decoded record batches of a PDU's tree
//! ([`each_record`]) and printed by [`RecordPrinter`], a sink.
//!
//! Nothing is copied per record: a [`Record`] borrows its key, value and headers from the tree,
//! and the printer writes them straight into its output buffer.
//!
//! Where a record's topic and partition come from: in a message, the nearest enclosing struct
//! with a `topicName` entity (or a topic id the session named) and the partition member of the
//! struct that holds the `Records` field (`PartitionIndex` in Fetch, `Index` in Produce: the
//! schema has no entity type for partitions, so these two names are the rule); in a log file,
//! the `TOPIC-PARTITION` folder the file lies in. A Produce request's records have no offset yet
//! (the broker assigns it): their `offset` is unknown and only the delta within the batch is
//! shown.
//!
//! Keys, values and header values: in JSON `{"text": …}` when valid UTF-8, else
//! `{"base64": …}` (the decode output's convention), `null` when null. In a line: the text with
//! control characters escaped (`\n`, `\t`, `\r`, `\\`, `\xNN`) so that a record stays one line,
//! `0x` and lowercase hex when not UTF-8, `NULL` when null (kcat's `-Z`). Control records and
//! internal-topic records (consumer offsets, cluster metadata) show their key and value bytes;
//! `kinspect decode` shows them decoded.

use super::json::{write_base64, write_int, write_str};
use crate::diag::Diagnostic;
use crate::engine::parallel::{Shared, Turn};
use crate::engine::{Half, InputInfo, Sink, Split};
use crate::pdu::{Direction, Origin, Pdu};
use crate::wire::tree::{Entity, Kind, NodeId, Tree, Value};
use std::io::{self, Write};
use std::sync::Arc;

/// Deepest struct nesting searched for `Records` fields (Produce and Fetch nest 4 deep).
const MAX_WALK_DEPTH: usize = 32;

/// One record, borrowed from a decoded tree.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    pub tree: &'a Tree,
    pub topic: Option<&'a str>,
    pub partition: Option<i64>,
    /// Where the batch starts: in the frame (buffer 0) for messages, in the file for log files
    /// (the batch's file offset is the PDU's `stream_offset`, this is relative to it).
    pub batch_at: u32,
    /// The record's absolute offset; `None` in a Produce request (not assigned yet).
    pub offset: Option<i64>,
    /// The offset within its batch (a legacy message: its offset field as written).
    pub offset_delta: i64,
    /// Milliseconds since the epoch; `None` for magic 0 (no timestamps).
    pub timestamp: Option<i64>,
    /// `CreateTime`, `LogAppendTime` or `NoTimestamp` (magic 0).
    pub timestamp_type: &'static str,
    /// `None` when the key is null.
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The record's `Headers` array node (v2 records).
    pub headers: Option<NodeId>,
    pub producer_id: Option<i64>,
    pub producer_epoch: Option<i64>,
    /// The record's sequence number: the batch's base sequence plus the offset delta (-1 when
    /// the batch has none).
    pub sequence: Option<i64>,
    pub transactional: bool,
    pub control: bool,
    pub codec: &'static str,
    /// Whether the batch's (or legacy message's) stored CRC matches the computed one.
    pub crc_ok: Option<bool>,
    pub magic: i8,
}

impl<'a> Record<'a> {
    /// Header keys and values (`None` for a null value), in order.
    pub fn headers(&self) -> impl Iterator<Item = (&'a [u8], Option<&'a [u8]>)> + 'a {
        let t = self.tree;
        self.headers
            .into_iter()
            .flat_map(move |h| t.children(h))
            .filter(move |&h| t.node(h).kind == Kind::Struct)
            .map(move |h| {
                let key = t.child(h, "Key").and_then(|k| data_of(t, k)).unwrap_or(&[]);
                (key, t.child(h, "Value").and_then(|v| data_of(t, v)))
            })
    }

    pub fn header_count(&self) -> usize {
        self.headers.map_or(0, |h| self.tree.children(h).count())
    }
}

/// The bytes of a key, value or header member: the data of a plain one, the content (past the
/// length prefix) of one decoded into a struct (control and internal-topic records); `None`
/// when null.
fn data_of(t: &Tree, id: NodeId) -> Option<&[u8]> {
    let n = t.node(id);
    match (n.kind, n.value) {
        (_, Value::Null) => None,
        (Kind::Scalar, Value::Data(s) | Value::Bytes(s) | Value::Str(s)) => Some(t.bytes(n.buf, s)),
        _ => {
            let start = n.offset + n.hdr as u32;
            let len = n.len.saturating_sub(n.hdr as u32);
            Some(t.bytes(n.buf, crate::wire::tree::Span { start, len }))
        }
    }
}

fn int(t: &Tree, id: NodeId, name: &str) -> Option<i64> {
    match t.node(t.child(id, name)?).value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

fn label(t: &Tree, id: NodeId, name: &str) -> Option<&'static str> {
    match t.node(t.child(id, name)?).value {
        Value::Label(l) => Some(l),
        _ => None,
    }
}

fn flag(t: &Tree, id: NodeId, name: &str) -> bool {
    t.child(id, name)
        .is_some_and(|c| t.node(c).value == Value::Bool(true))
}

/// Where the records walked belong.
#[derive(Clone, Copy, Debug, Default)]
struct Place<'a> {
    topic: Option<&'a str>,
    partition: Option<i64>,
    /// In a Produce request: offsets are not assigned yet.
    unassigned: bool,
}

/// Calls `f` for every record of `pdu`, in order: the records of its `Records` fields (a
/// message), or of its batches (a log file's tree, whose topic and partition the caller gives).
pub fn each_record<'a>(
    pdu: &'a Pdu,
    log_place: (Option<&'a str>, Option<i64>),
    f: &mut dyn FnMut(&Record<'a>) -> io::Result<()>,
) -> io::Result<()> {
    let t = &pdu.tree;
    let Some(root) = t.nodes.first() else {
        return Ok(());
    };
    if root.kind == Kind::Array && pdu.api_key.is_none() {
        let place = Place {
            topic: log_place.0,
            partition: log_place.1,
            unassigned: false,
        };
        return batches(t, 0, place, f);
    }
    let Some(body) = t.child(0, "body") else {
        return Ok(());
    };
    let place = Place {
        unassigned: pdu.direction == Some(Direction::Request),
        ..Place::default()
    };
    walk(pdu, body, place, 0, f)
}

fn walk<'a>(
    pdu: &'a Pdu,
    id: NodeId,
    mut place: Place<'a>,
    depth: usize,
    f: &mut dyn FnMut(&Record<'a>) -> io::Result<()>,
) -> io::Result<()> {
    if depth > MAX_WALK_DEPTH {
        return Ok(());
    }
    let t = &pdu.tree;
    for c in t.children(id) {
        let n = t.node(c);
        if n.kind != Kind::Scalar {
            continue;
        }
        match (n.entity, n.value, n.name) {
            (Entity::TopicName, Value::Str(s), _) => {
                place.topic = std::str::from_utf8(t.bytes(n.buf, s)).ok();
            }
            (Entity::TopicId, Value::Uuid(_), _) => {
                if let Some(name) = pdu.topic_name(c) {
                    place.topic = Some(name);
                }
            }
            (_, Value::Int(p), "PartitionIndex" | "Index" | "Partition") => {
                place.partition = Some(p)
            }
            _ => {}
        }
    }
    for c in t.children(id) {
        let n = t.node(c);
        match n.kind {
            Kind::Struct | Kind::TaggedSection => walk(pdu, c, place, depth + 1, f)?,
            Kind::Array if is_batches(t, c) => batches(t, c, place, f)?,
            Kind::Array => {
                for el in t.children(c) {
                    if t.node(el).kind == Kind::Struct {
                        walk(pdu, el, place, depth + 1, f)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A `records` field decoded into batches: its elements have a `Magic` member.
fn is_batches(t: &Tree, id: NodeId) -> bool {
    t.node(id).name == "Records"
        && t.children(id)
            .find(|&c| t.node(c).kind == Kind::Struct)
            .is_some_and(|b| t.child(b, "Magic").is_some())
}

fn batches<'a>(
    t: &'a Tree,
    id: NodeId,
    place: Place<'a>,
    f: &mut dyn FnMut(&Record<'a>) -> io::Result<()>,
) -> io::Result<()> {
    for b in t.children(id) {
        if t.node(b).kind != Kind::Struct || flag(t, b, "Partial") {
            continue;
        }
        match int(t, b, "Magic") {
            Some(2) => batch_v2(t, b, place, f)?,
            Some(m @ (0 | 1)) => legacy(t, b, m as i8, place, None, f)?,
            _ => {}
        }
    }
    Ok(())
}

fn crc_ok(t: &Tree, id: NodeId) -> Option<bool> {
    Some(int(t, id, "Crc")? == int(t, id, "CrcComputed")?)
}

fn batch_v2<'a>(
    t: &'a Tree,
    b: NodeId,
    place: Place<'a>,
    f: &mut dyn FnMut(&Record<'a>) -> io::Result<()>,
) -> io::Result<()> {
    let Some(recs) = t.child(b, "Records") else {
        return Ok(());
    };
    let attrs = t.child(b, "Attributes");
    let attr_label = |name| attrs.and_then(|a| label(t, a, name));
    let attr_flag = |name| attrs.is_some_and(|a| flag(t, a, name));
    let base_seq = int(t, b, "BaseSequence");
    let mut rec = Record {
        tree: t,
        topic: place.topic,
        partition: place.partition,
        batch_at: t.node(b).offset,
        offset: None,
        offset_delta: 0,
        timestamp: None,
        timestamp_type: attr_label("TimestampType").unwrap_or("CreateTime"),
        key: None,
        value: None,
        headers: None,
        producer_id: int(t, b, "ProducerId"),
        producer_epoch: int(t, b, "ProducerEpoch"),
        sequence: None,
        transactional: attr_flag("IsTransactional"),
        control: attr_flag("IsControlBatch"),
        codec: attr_label("Compression").unwrap_or("none"),
        crc_ok: crc_ok(t, b),
        magic: 2,
    };
    for r in t.children(recs) {
        if t.node(r).kind != Kind::Struct {
            continue;
        }
        let (mut key, mut value, mut headers) = (None, None, None);
        let (mut delta, mut offset, mut ts) = (0, None, None);
        for c in t.children(r) {
            let n = t.node(c);
            match (n.name, n.value) {
                ("OffsetDelta", Value::Int(v)) => delta = v,
                ("Offset", Value::Int(v)) => offset = Some(v),
                ("Timestamp", Value::Int(v)) => ts = Some(v),
                ("Key", _) => key = Some(c),
                ("Value", _) => value = Some(c),
                ("Headers", _) if n.kind == Kind::Array => headers = Some(c),
                _ => {}
            }
        }
        rec.offset_delta = delta;
        rec.offset = if place.unassigned { None } else { offset };
        rec.timestamp = ts;
        rec.key = key.and_then(|k| data_of(t, k));
        rec.value = value.and_then(|v| data_of(t, v));
        rec.headers = headers;
        rec.sequence = base_seq.map(|s| {
            if s < 0 {
                -1
            } else {
                // Sequences wrap at i32::MAX, as Kafka's DefaultRecordBatch does.
                ((s + delta) % (i32::MAX as i64 + 1)).max(0)
            }
        });
        f(&rec)?;
    }
    Ok(())
}

/// A legacy message (magic 0 or 1), or each inner message of a compressed wrapper.
fn legacy<'a>(
    t: &'a Tree,
    m: NodeId,
    magic: i8,
    place: Place<'a>,
    wrapper: Option<(&'static str, Option<bool>, u32)>,
    f: &mut dyn FnMut(&Record<'a>) -> io::Result<()>,
) -> io::Result<()> {
    let attrs = t.child(m, "Attributes");
    let codec = attrs
        .and_then(|a| label(t, a, "Compression"))
        .unwrap_or("none");
    if let Some(inner) = t.child(m, "InnerMessages") {
        let w = (codec, crc_ok(t, m), t.node(m).offset);
        for im in t.children(inner) {
            if t.node(im).kind == Kind::Struct {
                let im_magic = int(t, im, "Magic").unwrap_or(magic as i64) as i8;
                legacy(t, im, im_magic, place, Some(w), f)?;
            }
        }
        return Ok(());
    }
    let written = int(t, m, "Offset").unwrap_or(0);
    let offset = int(t, m, "AbsoluteOffset").unwrap_or(written);
    let ts = int(t, m, "EffectiveTimestamp").or_else(|| int(t, m, "Timestamp"));
    let (codec, crc, at) = wrapper.unwrap_or((codec, crc_ok(t, m), t.node(m).offset));
    let rec = Record {
        tree: t,
        topic: place.topic,
        partition: place.partition,
        batch_at: at,
        offset: (!place.unassigned).then_some(offset),
        offset_delta: written,
        timestamp: ts,
        timestamp_type: if magic == 0 {
            "NoTimestamp"
        } else {
            attrs
                .and_then(|a| label(t, a, "TimestampType"))
                .unwrap_or("CreateTime")
        },
        key: t.child(m, "Key").and_then(|k| data_of(t, k)),
        value: t.child(m, "Value").and_then(|v| data_of(t, v)),
        headers: None,
        producer_id: None,
        producer_epoch: None,
        sequence: None,
        transactional: false,
        control: false,
        codec,
        crc_ok: crc,
        magic,
    };
    f(&rec)
}

/// An [`crate::engine::Filter`] that shows only PDUs holding record batches (Produce requests,
/// Fetch and ShareFetch responses, …), so that what `records` shows, and what makes it exit 1,
/// is the PDUs its records come from. Log-file batches pass.
#[derive(Debug, Default)]
pub struct HoldsRecords;

impl crate::engine::Filter for HoldsRecords {
    fn pdu(&self, pdu: &Pdu) -> bool {
        pdu.tree
            .nodes
            .iter()
            .any(|n| n.kind == Kind::Array && n.name == "Records")
    }
}

/// The topic and partition a log file's folder names (`orders-0/00000000000000000000.log`).
pub fn log_place(path: &str) -> (Option<&str>, Option<i64>) {
    let p = std::path::Path::new(path);
    let dir = p
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|d| d.to_str());
    match dir.and_then(|d| d.rsplit_once('-')) {
        Some((topic, part)) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
            (Some(topic), part.parse().ok())
        }
        _ => (None, None),
    }
}

/// The record views: one line per record (a template), or JSON Lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordsFormat {
    Line,
    Jsonl,
}

impl crate::choice::Choice for RecordsFormat {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "line",
            "One line per record (see --template)",
            RecordsFormat::Line,
        ),
        ("jsonl", "One JSON object per record", RecordsFormat::Jsonl),
    ];
}

/// One piece of a line template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Lit(Vec<u8>),
    Code(u8),
}

/// A kcat-style line template (`%t %p %o %k %s`), parsed once.
///
/// Codes (kcat's letters where kcat has them): `%t` topic, `%p` partition, `%o` offset (`?`
/// in a Produce request: not assigned yet), `%O` offset delta in the batch, `%k` key, `%s`
/// value, `%K` key length, `%S` value length (-1 when null), `%T` timestamp (ms since the
/// epoch), `%y` timestamp type, `%h` headers (`key=value,…`), `%f` where (frame number, `#N`
/// for a frame on its own, `FILE:OFFSET` of the batch in a log file), `%d` direction, `%c`
/// client id, `%a` client address, `%i` producer id, `%e` producer epoch, `%q` sequence, `%x`
/// flags (`txn`, `control`, or `-`), `%z` codec, `%C` batch CRC (`ok`, `BAD`, `-`), `%m` magic,
/// `%%` a percent sign; escapes `\n`, `\t`, `\r`, `\\`.
#[derive(Clone, Debug)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// The line shown without `--template`.
pub const DEFAULT_TEMPLATE: &str = "%f %d %t/%p@%o %T key=%k value=%s";

const CODES: &[u8] = b"tpoOksKSTyhfdcaieqxzCm";

impl Template {
    /// Parses a template; an unknown `%` code or a `%` at the end is an error naming its column.
    pub fn parse(s: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match (b[i], b.get(i + 1).copied()) {
                (b'%', Some(b'%')) => lit.push(b'%'),
                (b'%', Some(c)) if CODES.contains(&c) => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                    }
                    pieces.push(Piece::Code(c));
                }
                (b'%', c) => {
                    let got = c.map_or("the end".to_string(), |c| format!("%{}", c as char));
                    return Err(format!(
                        "column {}: {got} is no template code (known: %t %p %o %O %k %s %K %S %T %y %h %f %d %c %a %i %e %q %x %z %C %m %%)",
                        i + 1
                    ));
                }
                (b'\\', Some(e @ (b'n' | b't' | b'r' | b'\\'))) => lit.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    _ => b'\\',
                }),
                (c, _) => {
                    lit.push(c);
                    i += 1;
                    continue;
                }
            }
            i += 2;
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Ok(Template { pieces })
    }

    fn ends_with_newline(&self) -> bool {
        matches!(self.pieces.last(), Some(Piece::Lit(l)) if l.ends_with(b"\n"))
    }
}

/// Options of the records printer.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub format: RecordsFormat,
    /// `None`: [`DEFAULT_TEMPLATE`], with ` headers=…` when a record has headers.
    pub template: Option<Template>,
}

/// Prints every record of every PDU it is handed; a sink.
pub struct RecordPrinter<W: Write> {
    w: W,
    format: RecordsFormat,
    template: Arc<Template>,
    /// No `--template`: headers are added when present.
    default: bool,
    /// The input being read (log files: the records' file), from `begin_input`.
    input: String,
    pub records: u64,
    /// The capture notes and log findings met (they are not records), as
    /// `INPUT: [code] message` lines, the first [`MAX_NOTES`]; the rest are counted.
    pub notes: Vec<String>,
    pub notes_dropped: u64,
}

/// Notes a [`RecordPrinter`] keeps for its caller to report.
pub const MAX_NOTES: usize = 1000;

impl<W: Write> RecordPrinter<W> {
    pub fn new(w: W, o: RecordOptions) -> RecordPrinter<W> {
        let default = o.template.is_none();
        let template = o.template.unwrap_or_else(|| {
            Template::parse(DEFAULT_TEMPLATE).unwrap_or(Template { pieces: Vec::new() })
        });
        RecordPrinter {
            w,
            format: o.format,
            template: Arc::new(template),
            default,
            input: String::new(),
            records: 0,
            notes: Vec::new(),
            notes_dropped: 0,
        }
    }

    fn with(&self, w: W) -> RecordPrinter<W> {
        RecordPrinter {
            w,
            format: self.format,
            template: Arc::clone(&self.template),
            default: self.default,
            input: self.input.clone(),
            records: 0,
            notes: Vec::new(),
            notes_dropped: 0,
        }
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    fn record(&mut self, pdu: &Pdu, input: &str, r: &Record<'_>) -> io::Result<()> {
        self.records += 1;
        match self.format {
            RecordsFormat::Jsonl => write_json(&mut self.w, pdu, input, r),
            RecordsFormat::Line => {
                let w = &mut self.w;
                for p in &self.template.pieces {
                    match p {
                        Piece::Lit(l) => w.write_all(l)?,
                        Piece::Code(c) => write_code(w, *c, pdu, input, r)?,
                    }
                }
                if self.default && r.header_count() > 0 {
                    w.write_all(b" headers=")?;
                    write_code(w, b'h', pdu, input, r)?;
                }
                if self.default || !self.template.ends_with_newline() {
                    w.write_all(b"\n")?;
                }
                Ok(())
            }
        }
    }
}

impl<W: Write> Sink for RecordPrinter<W> {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        input.name.clone_into(&mut self.input);
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        // `input` names the file when several were read (each segment of a log folder); it is
        // borrowed from the engine, so the name is copied only when it changes.
        if let Some(i) = input {
            if i != self.input {
                i.clone_into(&mut self.input);
            }
        }
        let name = std::mem::take(&mut self.input);
        let r = each_record(pdu, log_place(&name), &mut |r| self.record(pdu, &name, r));
        self.input = name;
        r
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        if self.notes.len() >= MAX_NOTES {
            self.notes_dropped += 1;
            return Ok(());
        }
        let name = input.unwrap_or(&self.input);
        let at = match (origin.frame, origin.stream_offset) {
            (Some(f), _) => format!(" frame {f}"),
            (None, Some(o)) => format!(":{o}"),
            _ => String::new(),
        };
        let sev = d.severity.as_str();
        self.notes
            .push(format!("{name}{at}: {sev} [{}] {}", d.code, d.message));
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// On two threads the worker's half prints the records of its batches into its own buffer and
/// writes them in its turn, as [`super::Printer`] does.
impl Split for RecordPrinter<Shared> {
    type Half = RecordPrinter<Shared>;

    fn fork(&mut self, turn: &Arc<Turn>) -> Option<RecordPrinter<Shared>> {
        let w = self.w.worker_side().ok()?;
        self.w.set_turn(Arc::clone(turn));
        Some(self.with(w))
    }

    fn hand_over(&mut self, half: &mut RecordPrinter<Shared>) -> io::Result<()> {
        half.input.clone_from(&self.input);
        self.w.write_held()
    }

    fn take_back(&mut self, half: &mut RecordPrinter<Shared>) -> io::Result<()> {
        self.records += std::mem::take(&mut half.records);
        Ok(())
    }
}

impl Half for RecordPrinter<Shared> {
    fn end_batch(&mut self) -> io::Result<()> {
        self.w.write_held()
    }
}

/// Data in a line: text with control characters escaped, `0x…` hex when not UTF-8, `NULL`.
fn write_data<W: Write + ?Sized>(w: &mut W, d: Option<&[u8]>) -> io::Result<()> {
    let Some(b) = d else {
        return w.write_all(b"NULL");
    };
    match std::str::from_utf8(b) {
        Ok(_) => {
            let mut run = 0;
            for (i, &c) in b.iter().enumerate() {
                let esc: &[u8] = match c {
                    b'\n' => b"\\n",
                    b'\t' => b"\\t",
                    b'\r' => b"\\r",
                    b'\\' => b"\\\\",
                    0..=0x1f | 0x7f => b"",
                    _ => continue,
                };
                w.write_all(&b[run..i])?;
                if esc.is_empty() {
                    write!(w, "\\x{c:02x}")?;
                } else {
                    w.write_all(esc)?;
                }
                run = i + 1;
            }
            w.write_all(&b[run..])
        }
        Err(_) => {
            w.write_all(b"0x")?;
            write_hex(w, b)
        }
    }
}

fn write_hex<W: Write + ?Sized>(w: &mut W, b: &[u8]) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 512];
    for chunk in b.chunks(256) {
        for (i, &c) in chunk.iter().enumerate() {
            buf[2 * i] = HEX[(c >> 4) as usize];
            buf[2 * i + 1] = HEX[(c & 15) as usize];
        }
        w.write_all(&buf[..2 * chunk.len()])?;
    }
    Ok(())
}

fn write_opt<W: Write + ?Sized>(w: &mut W, v: Option<i64>) -> io::Result<()> {
    match v {
        Some(v) => write_int(w, v),
        None => w.write_all(b"-"),
    }
}

/// The client id in the request header, or the one the capture gave a response (its
/// request's); `None` for a log file.
fn client_id(pdu: &Pdu) -> Option<&[u8]> {
    if let Some(c) = &pdu.origin.client_id {
        return Some(c.as_bytes());
    }
    let t = &pdu.tree;
    let h = t.nodes.first().and_then(|_| t.child(0, "header"))?;
    let n = t.node(t.child(h, "ClientId")?);
    match n.value {
        Value::Str(s) => Some(t.bytes(n.buf, s)),
        _ => None,
    }
}

/// The client's address: the connection's client side.
fn client_addr(pdu: &Pdu) -> Option<std::net::SocketAddr> {
    pdu.origin.conn.as_ref().map(|c| c.client)
}

fn write_where<W: Write + ?Sized>(
    w: &mut W,
    pdu: &Pdu,
    input: &str,
    r: &Record<'_>,
) -> io::Result<()> {
    match (pdu.origin.frame, pdu.api_key, pdu.origin.stream_offset) {
        (Some(f), _, _) => write_int(w, f as i64),
        (None, None, Some(at)) => {
            let file = std::path::Path::new(input)
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or(input);
            w.write_all(file.as_bytes())?;
            w.write_all(b":")?;
            write_int(w, (at + r.batch_at as u64) as i64)
        }
        _ => {
            w.write_all(b"#")?;
            write_int(w, pdu.origin.index as i64)
        }
    }
}

fn write_code<W: Write + ?Sized>(
    w: &mut W,
    c: u8,
    pdu: &Pdu,
    input: &str,
    r: &Record<'_>,
) -> io::Result<()> {
    match c {
        b't' => write_data(w, r.topic.map(str::as_bytes).or(Some(b"?"))),
        b'p' => write_opt(w, r.partition),
        b'o' => match r.offset {
            Some(o) => write_int(w, o),
            None => w.write_all(b"?"),
        },
        b'O' => write_int(w, r.offset_delta),
        b'k' => write_data(w, r.key),
        b's' => write_data(w, r.value),
        b'K' => write_int(w, r.key.map_or(-1, |k| k.len() as i64)),
        b'S' => write_int(w, r.value.map_or(-1, |v| v.len() as i64)),
        b'T' => write_opt(w, r.timestamp),
        b'y' => w.write_all(r.timestamp_type.as_bytes()),
        b'h' => {
            for (i, (k, v)) in r.headers().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_data(w, Some(k))?;
                w.write_all(b"=")?;
                write_data(w, v)?;
            }
            Ok(())
        }
        b'f' => write_where(w, pdu, input, r),
        b'd' => w.write_all(match pdu.direction {
            Some(d) => d.as_str().as_bytes(),
            None => b"log",
        }),
        b'c' => write_data(w, Some(client_id(pdu).unwrap_or(b"-"))),
        b'a' => match client_addr(pdu) {
            Some(a) => write!(w, "{a}"),
            None => w.write_all(b"-"),
        },
        b'i' => write_opt(w, r.producer_id),
        b'e' => write_opt(w, r.producer_epoch),
        b'q' => write_opt(w, r.sequence),
        b'x' => w.write_all(match (r.transactional, r.control) {
            (true, true) => b"txn,control",
            (true, false) => b"txn",
            (false, true) => b"control",
            (false, false) => b"-",
        }),
        b'z' => w.write_all(r.codec.as_bytes()),
        b'C' => w.write_all(match r.crc_ok {
            Some(true) => b"ok",
            Some(false) => b"BAD",
            None => b"-",
        }),
        b'm' => write_int(w, r.magic as i64),
        _ => Ok(()),
    }
}

/// Data in JSON: `{"text":…}`, `{"base64":…}` or `null`.
fn write_json_data<W: Write + ?Sized>(w: &mut W, d: Option<&[u8]>) -> io::Result<()> {
    match d {
        None => w.write_all(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => {
                w.write_all(b"{\"text\":")?;
                write_str(w, s)?;
                w.write_all(b"}")
            }
            Err(_) => {
                w.write_all(b"{\"base64\":")?;
                write_base64(w, b)?;
                w.write_all(b"}")
            }
        },
    }
}

fn write_json_opt<W: Write + ?Sized>(w: &mut W, v: Option<i64>) -> io::Result<()> {
    match v {
        Some(v) => write_int(w, v),
        None => w.write_all(b"null"),
    }
}

/// One record as a JSON object (keys documented in the README's records section).
fn write_json<W: Write + ?Sized>(
    w: &mut W,
    pdu: &Pdu,
    input: &str,
    r: &Record<'_>,
) -> io::Result<()> {
    let log = pdu.api_key.is_none() && pdu.origin.frame.is_none();
    w.write_all(b"{\"input\":")?;
    write_str(w, input)?;
    w.write_all(b",\"frame\":")?;
    write_json_opt(w, pdu.origin.frame.map(|f| f as i64))?;
    if log {
        w.write_all(b",\"file_offset\":")?;
        let at = pdu
            .origin
            .stream_offset
            .map(|s| (s + r.batch_at as u64) as i64);
        write_json_opt(w, at)?;
    }
    w.write_all(b",\"direction\":")?;
    match pdu.direction {
        Some(d) => write_str(w, d.as_str())?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b",\"client\":")?;
    match client_addr(pdu) {
        Some(a) => write!(w, "\"{a}\"")?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b",\"client_id\":")?;
    match client_id(pdu).map(String::from_utf8_lossy) {
        Some(c) => write_str(w, &c)?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b",\"topic\":")?;
    match r.topic {
        Some(t) => write_str(w, t)?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b",\"partition\":")?;
    write_json_opt(w, r.partition)?;
    w.write_all(b",\"offset\":")?;
    write_json_opt(w, r.offset)?;
    w.write_all(b",\"offset_delta\":")?;
    write_int(w, r.offset_delta)?;
    w.write_all(b",\"timestamp\":")?;
    write_json_opt(w, r.timestamp)?;
    w.write_all(b",\"timestamp_type\":")?;
    write_str(w, r.timestamp_type)?;
    w.write_all(b",\"key\":")?;
    write_json_data(w, r.key)?;
    w.write_all(b",\"value\":")?;
    write_json_data(w, r.value)?;
    w.write_all(b",\"headers\":[")?;
    for (i, (k, v)) in r.headers().enumerate() {
        w.write_all(if i == 0 { b"{\"key\":" } else { b",{\"key\":" })?;
        write_str(w, &String::from_utf8_lossy(k))?;
        w.write_all(b",\"value\":")?;
        write_json_data(w, v)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"],\"producer_id\":")?;
    write_json_opt(w, r.producer_id)?;
    w.write_all(b",\"producer_epoch\":")?;
    write_json_opt(w, r.producer_epoch)?;
    w.write_all(b",\"sequence\":")?;
    write_json_opt(w, r.sequence)?;
    write!(
        w,
        ",\"transactional\":{},\"control\":{},\"codec\":\"{}\",\"magic\":{},\"crc_ok\":",
        r.transactional, r.control, r.codec, r.magic
    )?;
    match r.crc_ok {
        Some(ok) => write!(w, "{ok}")?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b"}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_codes_and_escapes() {
        let t = Template::parse("%t\\t%p%%\\n").unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Code(b't'),
                Piece::Lit(b"\t".to_vec()),
                Piece::Code(b'p'),
                Piece::Lit(b"%\n".to_vec())
            ]
        );
        assert!(t.ends_with_newline());
        let e = Template::parse("ab %w").unwrap_err();
        assert!(e.starts_with("column 4: %w"), "{e}");
        assert!(Template::parse("%").unwrap_err().contains("the end"));
    }

    #[test]
    fn line_data_stays_on_one_line() {
        let mut out = Vec::new();
        write_data(&mut out, Some(b"a\nb\x01")).unwrap();
        out.push(b' ');
        write_data(&mut out, Some(&[0xff, 0x00])).unwrap();
        out.push(b' ');
        write_data(&mut out, None).unwrap();
        assert_eq!(out, b"a\\nb\\x01 0xff00 NULL");
    }

    #[test]
    fn log_folders_name_topic_and_partition() {
        assert_eq!(
            log_place("d/orders-3/00000000000000000000.log"),
            (Some("orders"), Some(3))
        );
        assert_eq!(
            log_place("__consumer_offsets-12/x.log"),
            (Some("__consumer_offsets"), Some(12))
        );
        assert_eq!(log_place("x.log"), (None, None));
    }
}
