//! Record data: v2 record batches, legacy v0/v1 message sets, compression codecs, control
//! records, internal-topic records and Kafka log files.
//!
//! [`decode_records`] turns the bytes of a `records` field (or of a log file) into batch nodes
//! under the container the caller has open. Shape (member names are stable, the JSON uses them):
//!
//! - v2 batch: `BaseOffset BatchLength PartitionLeaderEpoch Magic Crc CrcComputed Attributes{
//!   Compression TimestampType IsTransactional IsControlBatch HasDeleteHorizonMs [UnusedBits]}
//!   LastOffsetDelta BaseTimestamp MaxTimestamp ProducerId ProducerEpoch BaseSequence
//!   Records[...]`; the records count is the `Records` array's own 4 header bytes. When the batch
//!   is compressed, `Records` spans the count and the compressed bytes in the frame while its
//!   elements live in a decompressed buffer (`Node::buf`).
//! - v2 record: (length varint = the struct's header) `Attributes TimestampDelta Timestamp
//!   OffsetDelta Offset Key Value Headers[{Key Value}]`. `Timestamp` and `Offset` are derived
//!   (zero-length) absolute values.
//! - legacy message (magic 0/1): `Offset MessageSize Crc CrcComputed Magic Attributes{Compression
//!   [TimestampType]} [Timestamp] Key Value`; a compressed wrapper has `InnerMessages[...]` in
//!   place of `Value`, and each inner message of a v1 wrapper a derived `AbsoluteOffset` (and
//!   `EffectiveTimestamp`, the wrapper's timestamp, when the wrapper is LogAppendTime).
//! - a batch cut short at the end of the data: the header fields that fit, then `Partial: true`
//!   and `Incomplete` (the bytes present).
//!
//! In messages, the walker (`crate::wire::walk`) hands every `records` field to the
//! [`RecordsHook`] of its decoder, which [`Batches`] implements this way ([`decoder`] builds such
//! a decoder): the field is an `Array` of batches whose header is the length prefix; the topic
//! comes from the enclosing struct's `topicName` entity (`Name`, `Topic`, …), or from its topic
//! id when the caller passes the decoder names for topic ids (`wire::hook::TopicNames`:
//! `kinspect decode` and `stats` pass the capture's session, which learns them from Metadata,
//! CreateTopics and DescribeTopicPartitions responses), so `__consumer_offsets` records fetched
//! by id (Fetch v13+) decode too; `--records raw` keeps the bytes instead. The JSON printer
//! shows such a name as `"_topic_name"` next to the `TopicId` (see `crate::output::json`).
//!
//! The JSON printers add two members to a batch (or legacy wrapper) that are not in the tree, so
//! that [`encode`] can put every byte back (plain JSON only; annotated JSON locates the same
//! bytes by the `Records` span): `_compressed` (base64 of the compressed bytes, before
//! `Records`/`InnerMessages`, when the elements come from a decompressed buffer: recompressing
//! would not give the same bytes) and `_records_count` (the stored count, when it differs from
//! the records shown).
//!
//! Derived members (`CrcComputed`, `Timestamp`, `Offset`, `AbsoluteOffset`, `EffectiveTimestamp`,
//! the attribute labels, `Partial`) have zero length: they describe bytes, they are not bytes.
//!
//! Diagnostic codes (all carry the byte offset and buffer):
//! `truncated`, `partial-batch` (info; warning-free end of a Fetch response or log),
//! `batch-length-invalid`, `unknown-magic`, `crc-mismatch`, `unknown-codec`,
//! `decompress-failed`, `decompression-bomb`, `negative-length`, `negative-count`,
//! `count-exceeds-remaining`, `record-count-mismatch`, `diagnostics-suppressed` (the count of
//! those past `limits::MAX_DIAGNOSTICS_PER_RECORD_SET`), `record-length-mismatch`,
//! `records-abandoned` (the rest of a record set after
//! `limits::MAX_MALFORMED_RECORDS_IN_A_ROW` malformed records in a row),
//! `varint-overlong`, `varint-overflow`, `nested-compression`, `inner-magic-mismatch` (warning),
//! `codec-note` (info: lz4 KafkaLZ4 checksum, xerial framing, gzip bytes after the last member
//! or reserved header flags, which Kafka's Java reader ignores), `invalid-utf8` (warning, header
//! keys), `node-limit`, `depth-limit`, `control-record-invalid`, `unknown-control-type`
//! (warning), and the internal-topic codes documented in [`internal`].

pub mod batch;
pub mod codec;
pub mod control;
pub mod encode;
pub mod file;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod internal;
pub mod legacy;
pub mod logdir;
pub mod read;

use crate::diag::{Diagnostic, FieldPath};
use crate::limits::MAX_NODES_PER_TREE;
use crate::pdu::Direction;
use crate::protocol::Protocol;
use crate::wire::decode::Decoder;
use crate::wire::encode::EncodeError;
pub use crate::wire::hook::AsType;
use crate::wire::hook::{RecordsField, RecordsHook};
use crate::wire::tree::{Entity, Kind, Span, Tree, Value};
use read::{Fail, Rd, R};

/// The records hook ([`RecordsHook`]) the message decoder and encoder plug in: `records` fields
/// as batches, legacy message sets, codecs and internal-topic records.
pub struct Batches;

/// The one [`Batches`] hook (`Decoder::with_records(proto, &records::BATCHES)`).
pub static BATCHES: Batches = Batches;

impl RecordsHook for Batches {
    fn decode(&self, tree: &mut Tree, buf: u16, span: Span, field: &RecordsField) {
        let ctx = RecordsContext {
            topic: field.topic,
            // A response stops at the broker's byte limit, cutting its last batch.
            partial_tail_ok: field.direction == Direction::Response,
            as_type: field.options.as_type,
            headers_only: field.options.headers_only,
        };
        decode_records(tree, buf, span.start, span.len, &ctx, field.path);
    }

    fn encode(
        &self,
        items: &[serde_json::Value],
        out: &mut Vec<u8>,
        path: &str,
    ) -> Result<(), EncodeError> {
        encode::encode_records(items, out, path)
    }
}

/// A message decoder that decodes `records` fields into batches: what almost every caller
/// wants (`Decoder::records_as_bytes` keeps them as bytes).
pub fn decoder(proto: &'static Protocol) -> Decoder {
    Decoder::with_records(proto, &BATCHES)
}

/// Encodes one decoded-PDU JSON object to the frame's bytes, `records` fields shown as batches
/// included (`wire::encode::encode_pdu` with [`BATCHES`]).
pub fn encode_pdu(
    proto: &'static Protocol,
    pdu_json: &serde_json::Value,
) -> Result<Vec<u8>, EncodeError> {
    crate::wire::encode::encode_pdu(proto, pdu_json, Some(&BATCHES))
}

/// What the records decoder knows beyond the bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordsContext<'a> {
    /// The topic the records belong to, when the caller knows it.
    pub topic: Option<&'a str>,
    /// A last batch cut short is normal here (Fetch responses, log segments being written).
    pub partial_tail_ok: bool,
    /// `--as TYPE`: overrides the interpretation chosen from `topic`.
    pub as_type: Option<AsType>,
    /// Decode v2 batch headers and verify their CRC, but leave the records themselves (and any
    /// compressed payload) as one `Bytes` element: what a one-line summary needs, at a fraction of
    /// the cost. The CRC covers the compressed bytes, so corruption is still reported. KRaft
    /// metadata batches (`__cluster_metadata`) are decoded in full all the same.
    pub headers_only: bool,
}

impl RecordsContext<'_> {
    /// The interpretation in force: `--as` first, then the topic name.
    pub fn interpretation(&self) -> Option<AsType> {
        match self.as_type {
            Some(AsType::Raw) => None,
            Some(t) => Some(t),
            None => self.topic.and_then(AsType::for_topic),
        }
    }
}

/// Smallest size field a batch or message may declare (Kafka's `RECORD_OVERHEAD_V0`).
const MIN_BATCH_SIZE: i32 = 14;
/// Bytes before the magic byte in every format: offset, size, and crc or leader epoch.
const MAGIC_OFFSET: u32 = 16;

/// Decodes the record batches in `len` bytes at `start` of buffer `buf` as elements of the
/// container the caller has open (an array). `path` names that container in diagnostics
/// (`body.Topics[0].Partitions[0].Records`). Never panics; every problem becomes a diagnostic
/// and, where bytes could not be decoded, an `Error` node covering them. At most
/// `limits::MAX_DIAGNOSTICS_PER_RECORD_SET` diagnostics are kept for one call, the rest counted.
pub fn decode_records<'p>(
    tree: &mut Tree,
    buf: u16,
    start: u32,
    len: u32,
    ctx: &RecordsContext,
    path: impl Into<FieldPath<'p>>,
) {
    let path = path.into();
    let started = tree.diags.begin_record_set();
    record_set(tree, buf, start, len, ctx, path);
    tree.diags.end_record_set(started);
}

fn record_set(
    tree: &mut Tree,
    buf: u16,
    start: u32,
    len: u32,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    let mut rd = Rd::new(tree.buf(buf), start, len);
    let mut index = 0i64;
    while !rd.at_end() {
        let at = rd.pos;
        let bpath = FieldPath::Index(&path, index);
        if tree.nodes.len() >= MAX_NODES_PER_TREE {
            let d = Diagnostic::error("node-limit", bpath, at as u64, format!(
                "more than {MAX_NODES_PER_TREE} nodes (limits::MAX_NODES_PER_TREE); {} bytes of records left undecoded",
                rd.remaining()
            ));
            tree.error_node("", buf, at, rd.remaining(), d.in_buf(buf));
            return;
        }
        let remaining = rd.remaining();
        let data = tree.buf(buf);
        let size = (remaining >= 12).then(|| be_i32(data, at + 8));
        let magic = (remaining > MAGIC_OFFSET)
            .then(|| data.get((at + MAGIC_OFFSET) as usize).map(|&m| m as i8))
            .flatten();
        match size {
            Some(s) if s < MIN_BATCH_SIZE => {
                // Without a usable size there is no next batch to find: the rest is one error.
                let d = Diagnostic::error("batch-length-invalid", bpath, at as u64 + 8, format!(
                    "batch size {s} is below the minimum {MIN_BATCH_SIZE}; {remaining} bytes left undecoded"
                ));
                tree.error_node("", buf, at, remaining, d.in_buf(buf));
                return;
            }
            Some(s) if (s as u32).saturating_add(12) <= remaining => {
                let total = s as u32 + 12;
                match magic {
                    Some(2) => batch::decode_v2(tree, buf, at, total, ctx, bpath),
                    Some(m @ (0 | 1)) => {
                        legacy::decode_message(tree, buf, at, total, m, ctx, bpath, None)
                    }
                    _ => {
                        let m = magic.unwrap_or(-1);
                        let d = Diagnostic::error("unknown-magic", bpath, (at + MAGIC_OFFSET) as u64, format!(
                            "magic byte {m}: expected 0, 1 or 2 (the record format); batch of {total} bytes skipped"
                        ));
                        tree.error_node("", buf, at, total, d.in_buf(buf));
                    }
                }
                rd.pos += total;
            }
            _ => {
                if let Some(m) = magic.filter(|m| !(0..=2).contains(m)) {
                    let d = Diagnostic::error("unknown-magic", bpath, (at + MAGIC_OFFSET) as u64, format!(
                        "magic byte {m}: expected 0, 1 or 2 (the record format); {remaining} bytes left undecoded"
                    ));
                    tree.error_node("", buf, at, remaining, d.in_buf(buf));
                } else {
                    partial(tree, buf, at, remaining, size, magic, ctx, bpath);
                }
                return;
            }
        }
        index += 1;
    }
}

/// A batch with fewer bytes than it declares: the header fields that fit, then the rest raw.
#[allow(clippy::too_many_arguments)]
fn partial(
    t: &mut Tree,
    buf: u16,
    at: u32,
    remaining: u32,
    size: Option<i32>,
    magic: Option<i8>,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    let id = t.open("", Kind::Struct, buf, at);
    let mut w = W::new(t, buf, at, remaining);
    // The fields every format shares, named as in that format.
    if magic == Some(2) {
        let _ = w.int("BaseOffset", 8);
        let _ = w.int("BatchLength", 4);
        let _ = w.int("PartitionLeaderEpoch", 4);
        let _ = w.int("Magic", 1);
    } else {
        let _ = w.int("Offset", 8);
        let _ = w.int("MessageSize", 4);
    }
    let declared = size
        .map(|s| format!("declares {} bytes", s as i64 + 12))
        .unwrap_or_else(|| "has no complete size".into());
    let msg = format!("last batch {declared}, only {remaining} remain");
    let d = if ctx.partial_tail_ok {
        Diagnostic::info(
            "partial-batch",
            path,
            at as u64,
            format!("{msg} (normal at the end of a fetch response or log)"),
        )
    } else {
        Diagnostic::error("truncated", path, at as u64, msg)
    };
    w.t.diags.push(d.in_buf(buf));
    w.derived("Partial", Value::Bool(true));
    let pos = w.rd.pos;
    let rest = w.rd.end - pos;
    if rest > 0 {
        w.t.leaf(
            "Incomplete",
            Value::Bytes(Span {
                start: pos,
                len: rest,
            }),
            buf,
            pos,
            rest,
        );
    }
    t.close(id, at + remaining);
}

fn be_i32(d: &[u8], at: u32) -> i32 {
    match d.get(at as usize..at as usize + 4) {
        Some(b) => i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

/// A cursor that writes what it reads into the tree.
pub(crate) struct W<'t> {
    pub t: &'t mut Tree,
    pub buf: u16,
    pub rd: Rd,
}

impl<'t> W<'t> {
    pub fn new(t: &'t mut Tree, buf: u16, start: u32, len: u32) -> W<'t> {
        let rd = Rd::new(t.buf(buf), start, len);
        W { t, buf, rd }
    }

    /// Reads a big-endian signed integer of `width` bytes (1, 2, 4, 8) into a member.
    #[inline(always)]
    pub fn int(&mut self, name: &'static str, width: u8) -> R<i64> {
        let at = self.rd.pos;
        let d = self.t.buf(self.buf);
        let v = match width {
            1 => self.rd.i8(d, name)? as i64,
            2 => self.rd.i16(d, name)? as i64,
            4 => self.rd.i32(d, name)? as i64,
            _ => self.rd.i64(d, name)?,
        };
        self.t.leaf(name, Value::Int(v), self.buf, at, width as u32);
        Ok(v)
    }

    /// A big-endian uint32 member (CRCs).
    pub fn u32(&mut self, name: &'static str) -> R<u32> {
        let at = self.rd.pos;
        let v = self.rd.u32(self.t.buf(self.buf), name)?;
        self.t.leaf(name, Value::Int(v as i64), self.buf, at, 4);
        Ok(v)
    }

    #[inline]
    pub fn varint(&mut self, name: &'static str) -> R<i32> {
        let at = self.rd.pos;
        let v = self.rd.varint(self.t.buf(self.buf), name)?;
        self.t
            .leaf(name, Value::Int(v as i64), self.buf, at, self.rd.pos - at);
        Ok(v)
    }

    #[inline]
    pub fn varlong(&mut self, name: &'static str) -> R<i64> {
        let at = self.rd.pos;
        let v = self.rd.varlong(self.t.buf(self.buf), name)?;
        self.t
            .leaf(name, Value::Int(v), self.buf, at, self.rd.pos - at);
        Ok(v)
    }

    /// A zero-length member describing the bytes before it.
    #[inline]
    pub fn derived(&mut self, name: &'static str, v: Value) {
        self.t.leaf(name, v, self.buf, self.rd.pos, 0);
    }

    /// Reads a length prefix (zig-zag varint when `varint`, else int32) and checks the bytes it
    /// declares are present. Returns where the prefix started, its size, and the content span
    /// (`None` for length -1, null). Pushes nothing.
    #[inline(always)]
    pub fn len_prefixed(&mut self, name: &str, varint: bool) -> R<(u32, u16, Option<Span>)> {
        self.rd.len_prefixed(self.t.buf(self.buf), name, varint)
    }

    /// A length-prefixed data member (record key, value, header value): `Value::Data`, or
    /// `Value::Null` for length -1.
    #[inline]
    pub fn data(&mut self, name: &'static str, varint: bool) -> R<()> {
        let (at, hdr, s) = self.len_prefixed(name, varint)?;
        let v = s.map(Value::Data).unwrap_or(Value::Null);
        self.t
            .leaf_with(name, v, self.buf, at, self.rd.pos - at, hdr, Entity::None);
        Ok(())
    }

    /// Records `f` as an error node from its offset to `end` (the region it spoiled), as the
    /// member `_undecoded` of the struct being decoded.
    pub fn fail(&mut self, f: Fail, path: FieldPath<'_>, end: u32) {
        self.fail_named("_undecoded", f, path, end);
    }

    /// Like [`W::fail`], as an element of the array being decoded.
    pub fn fail_element(&mut self, f: Fail, path: FieldPath<'_>, end: u32) {
        self.fail_named("", f, path, end);
    }

    fn fail_named(&mut self, name: &'static str, f: Fail, path: FieldPath<'_>, end: u32) {
        let from = f.offset.max(self.last_end()).min(end);
        let d = Diagnostic::error(f.code, path, f.offset as u64, f.message).in_buf(self.buf);
        self.t.error_node(name, self.buf, from, end - from, d);
        self.rd.pos = end;
    }

    /// Where the last pushed node in this buffer ends (so an error node never overlaps it).
    fn last_end(&self) -> u32 {
        self.t
            .nodes
            .last()
            .filter(|n| n.buf == self.buf)
            .map(|n| n.offset + n.len)
            .unwrap_or(0)
    }

    /// Opens a struct named `name` over a varint-length-prefixed key or value (control and
    /// internal-topic records) and limits the cursor to its content. Returns the struct's node,
    /// the content span and the cursor end to restore, or `None` (after pushing a `Null`
    /// member) for a null field.
    pub fn open_prefixed(&mut self, name: &'static str) -> R<Option<(u32, Span, u32)>> {
        let (at, hdr, span) = self.len_prefixed(name, true)?;
        let Some(s) = span else {
            let id = self.t.leaf(name, Value::Null, self.buf, at, hdr as u32);
            self.t.node_mut(id).hdr = hdr;
            return Ok(None);
        };
        let id = self.t.open(name, Kind::Struct, self.buf, at);
        self.t.node_mut(id).hdr = hdr;
        let saved_end = self.rd.end;
        self.rd.pos = s.start;
        self.rd.end = s.start + s.len;
        Ok(Some((id, s, saved_end)))
    }

    /// Closes what [`W::open_prefixed`] opened; bytes the struct did not use are kept as
    /// `Unparsed`, and the cursor moves past the field with its end restored.
    pub fn close_prefixed(&mut self, id: u32, s: Span, saved_end: u32) {
        let end = s.start + s.len;
        let p = self.rd.pos;
        if p < end {
            let v = Value::Bytes(Span {
                start: p,
                len: end - p,
            });
            self.t.leaf("Unparsed", v, self.buf, p, end - p);
        }
        self.t.close(id, end);
        self.rd.pos = end;
        self.rd.end = saved_end;
    }

    /// Reads the stored `Crc` member, pushes `CrcComputed` (`compute` over bytes `from..end`)
    /// and reports a mismatch at the Crc field; the `unit` (batch or message) is still decoded.
    pub fn crc(
        &mut self,
        path: FieldPath<'_>,
        (from, end): (u32, u32),
        algo: &str,
        unit: &str,
        compute: fn(&[u8]) -> u32,
    ) -> R<()> {
        let at = self.rd.pos;
        let stored = self.u32("Crc")?;
        let covered = Span {
            start: from,
            len: end - from,
        };
        let computed = compute(self.t.bytes(self.buf, covered));
        self.derived("CrcComputed", Value::Int(computed as i64));
        if stored != computed {
            self.diag(Diagnostic::error(
                "crc-mismatch",
                format!("{path}.Crc"),
                at as u64,
                format!(
                    "stored {algo} {stored:#010x}, computed {computed:#010x} over bytes \
                     {from}..{end}; the {unit} is shown as read"
                ),
            ));
        }
        Ok(())
    }

    pub fn diag(&mut self, d: Diagnostic) {
        self.t.diags.push(d.in_buf(self.buf));
    }
}
