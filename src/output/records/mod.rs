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
//! `0x` and lowercase hex when not UTF-8, `NULL` when null (kcat's `-Z`). A key or value the
//! decoder read with a schema (control records, internal-topic records such as consumer offsets
//! and cluster metadata, `--as TYPE`) is shown decoded instead: in JSON as `key_decoded` /
//! `value_decoded` (the decode output's JSON of the struct) beside the bytes, in a line as that
//! JSON, compact, in place of the bytes (`%K`/`%S` still count the bytes).

use crate::pdu::{Direction, Pdu};
use crate::wire::tree::{Entity, Kind, NodeId, Tree, Value};
use std::io;

mod print;
pub use print::{RecordOptions, RecordPrinter, RecordsFormat, Template, DEFAULT_TEMPLATE};

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
    /// The key and value decoded into a struct (control records, internal topics' records,
    /// `--as`): the tree node, printed as its JSON in place of the bytes.
    pub key_decoded: Option<NodeId>,
    pub value_decoded: Option<NodeId>,
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

    /// Where the record's batch (or legacy message) starts in the log file it was read from:
    /// the PDU's file offset plus the batch's place in it. `None` for records read off the
    /// wire, and for an offset past `u64::MAX`.
    pub fn file_offset(&self, pdu: &Pdu) -> Option<u64> {
        let log = pdu.api_key.is_none() && pdu.origin.frame.is_none();
        pdu.origin
            .stream_offset
            .filter(|_| log)
            .and_then(|s| s.checked_add(u64::from(self.batch_at)))
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

/// A key or value the decoder read as a struct (not plain bytes, not null).
fn decoded(t: &Tree, id: NodeId) -> bool {
    let n = t.node(id);
    n.kind == Kind::Struct && n.value != Value::Null
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
        key_decoded: None,
        value_decoded: None,
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
        rec.key_decoded = key.filter(|&k| decoded(t, k));
        rec.value_decoded = value.filter(|&v| decoded(t, v));
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
        key_decoded: t.child(m, "Key").filter(|&k| decoded(t, k)),
        value_decoded: t.child(m, "Value").filter(|&v| decoded(t, v)),
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
/// is the PDUs its records come from. Log-file batches pass. A PDU with decoding errors whose
/// message has a `records` field in its version passes too, though the decoding never reached
/// its records (a Produce request cut by the snap length): its records are the ones missing.
pub struct HoldsRecords {
    protocol: &'static crate::protocol::Protocol,
}

impl std::fmt::Debug for HoldsRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HoldsRecords")
    }
}

impl HoldsRecords {
    pub fn new(protocol: &'static crate::protocol::Protocol) -> HoldsRecords {
        HoldsRecords { protocol }
    }
}

impl crate::engine::Filter for HoldsRecords {
    fn pdu(&self, pdu: &Pdu) -> bool {
        let holds = |p: &Pdu| {
            p.tree
                .nodes
                .iter()
                .any(|n| n.kind == Kind::Array && n.name == "Records")
        };
        let could_hold = |p: &Pdu| match (p.api_key, p.api_version, p.direction) {
            (Some(k), Some(v), Some(d)) => self
                .protocol
                .message(k, v, d)
                .is_some_and(|m| m.spec.has_prim(crate::schema::model::Prim::Records, v)),
            _ => false,
        };
        holds(pdu) || (pdu.tree.has_errors() && could_hold(pdu))
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
