//! RecordBatch v2 (magic 2): the 61-byte header, the CRC-32C check, decompression of the
//! records section, and the records themselves with their headers.

use super::codec::{self, Codec, CodecError};
use super::read::{Fail, R};
use super::{control, AsType, RecordsContext, W};
use crate::diag::{Diagnostic, FieldPath};
use crate::limits::{MAX_MALFORMED_RECORDS_IN_A_ROW, MAX_NODES_PER_TREE};
use crate::wire::tree::{Entity, Kind, Node, Span, Tree, Value};

/// Bytes of a v2 batch before its records (`RECORD_BATCH_OVERHEAD`).
pub const HEADER_LEN: u32 = 61;
/// The CRC covers the batch from the attributes on.
const CRC_FROM: u32 = 21;

/// What records need from their batch header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchInfo {
    pub base_offset: i64,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub log_append_time: bool,
    pub control: bool,
}

impl BatchInfo {
    /// A record's timestamp: the batch's maximum under LogAppendTime, else the base plus the
    /// record's delta.
    #[inline]
    fn timestamp(&self, delta: i64) -> i64 {
        if self.log_append_time {
            self.max_timestamp
        } else {
            self.base_timestamp.wrapping_add(delta)
        }
    }

    /// A record's offset: the base plus the record's delta.
    #[inline]
    fn offset(&self, delta: i32) -> i64 {
        self.base_offset.wrapping_add(i64::from(delta))
    }
}

/// Decodes one complete v2 batch of `total` bytes at `at` as an array element.
pub(crate) fn decode_v2(
    t: &mut Tree,
    buf: u16,
    at: u32,
    total: u32,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    if total < HEADER_LEN {
        let d = Diagnostic::error(
            "batch-length-invalid",
            path,
            at as u64 + 8,
            format!("a magic-2 batch needs at least {HEADER_LEN} bytes, this one declares {total}"),
        );
        t.error_node("", buf, at, total, d.in_buf(buf));
        return;
    }
    let id = t.open("", Kind::Struct, buf, at);
    let end = at + total;
    let mut w = W::new(t, buf, at, total);
    if let Err(f) = header_and_records(&mut w, at, end, ctx, path) {
        w.fail(f, path, end);
    }
    t.close(id, end);
}

fn header_and_records(
    w: &mut W,
    at: u32,
    end: u32,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) -> R<()> {
    let base_offset = w.int("BaseOffset", 8)?;
    w.int("BatchLength", 4)?;
    w.int("PartitionLeaderEpoch", 4)?;
    w.int("Magic", 1)?;
    w.crc(
        path,
        (at + CRC_FROM, end),
        "CRC-32C",
        "batch",
        crc32c::crc32c,
    )?;
    let attrs = attributes(w)?;
    w.int("LastOffsetDelta", 4)?;
    let base_timestamp = w.int("BaseTimestamp", 8)?;
    let max_timestamp = w.int("MaxTimestamp", 8)?;
    w.int("ProducerId", 8)?;
    w.int("ProducerEpoch", 2)?;
    w.int("BaseSequence", 4)?;
    let info = BatchInfo {
        base_offset,
        base_timestamp,
        max_timestamp,
        log_append_time: attrs & 0x08 != 0,
        control: attrs & 0x20 != 0,
    };
    let rec_at = w.rd.pos;
    let count = w.rd.i32(w.t.buf(w.buf), "Records count")?;
    let arr = w.t.open("Records", Kind::Array, w.buf, rec_at);
    w.t.node_mut(arr).hdr = 4;
    let rpath = path.member("Records");
    let codec_id = (attrs & 7) as u8;
    let body = Span {
        start: w.rd.pos,
        len: end - w.rd.pos,
    };
    // KRaft metadata records are decoded even then: few and small, and `kinspect check`'s
    // leader-recovery rules read them.
    if ctx.headers_only && ctx.interpretation() != Some(AsType::ClusterMetadata) {
        w.t.leaf("", Value::Bytes(body), w.buf, body.start, body.len);
    } else if codec_id == 0 {
        records(w.t, w.buf, body, count, &info, ctx, rpath);
    } else {
        compressed(w, codec_id, body, count, &info, ctx, rpath);
    }
    w.t.close(arr, end);
    w.rd.pos = end;
    Ok(())
}

/// The attributes int16 as a struct of labelled, derived members.
fn attributes(w: &mut W) -> R<i16> {
    let at = w.rd.pos;
    let a = w.rd.i16(w.t.buf(w.buf), "Attributes")?;
    let id = w.t.open("Attributes", Kind::Struct, w.buf, at);
    w.t.node_mut(id).hdr = 2;
    w.derived("Compression", Value::Label(Codec::label((a & 7) as u8)));
    w.derived(
        "TimestampType",
        Value::Label(if a & 0x08 != 0 {
            "LogAppendTime"
        } else {
            "CreateTime"
        }),
    );
    w.derived("IsTransactional", Value::Bool(a & 0x10 != 0));
    w.derived("IsControlBatch", Value::Bool(a & 0x20 != 0));
    w.derived("HasDeleteHorizonMs", Value::Bool(a & 0x40 != 0));
    if a as u16 & 0xff80 != 0 {
        w.derived("UnusedBits", Value::Int((a as u16 & 0xff80) as i64));
    }
    w.t.close(id, at + 2);
    Ok(a)
}

/// Decompresses `body` and decodes its records into a new buffer. On failure the compressed
/// bytes become one error node (the header above is still shown).
#[allow(clippy::too_many_arguments)]
fn compressed(
    w: &mut W,
    codec_id: u8,
    body: Span,
    count: i32,
    info: &BatchInfo,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    let Some(codec) = Codec::from_id(codec_id) else {
        let f = Fail::new(
            "unknown-codec",
            body.start,
            format!(
                "compression id {codec_id} is not a Kafka codec (0-4); records left compressed"
            ),
        );
        return w.fail_element(f, path, body.start + body.len);
    };
    match inflate(w.t, w.buf, body, codec, 2, path) {
        Ok(nb) => {
            let len = w.t.buf(nb).len() as u32;
            records(w.t, nb, Span { start: 0, len }, count, info, ctx, path);
        }
        Err(f) => w.fail_element(f, path, body.start + body.len),
    }
}

/// Decompresses `body` of buffer `buf` into a new tree buffer, reporting codec remarks as info
/// diagnostics. Shared with the legacy wrapper messages.
pub(crate) fn inflate(
    t: &mut Tree,
    buf: u16,
    body: Span,
    codec: Codec,
    magic: i8,
    path: FieldPath<'_>,
) -> Result<u16, Fail> {
    let used: usize = t.bufs.iter().skip(1).map(|b| b.len()).sum();
    let cap = codec::output_cap(body.len as usize, used);
    let input = t.bytes(buf, body);
    match codec::decompress(codec, input, magic, cap) {
        Ok(d) => {
            for n in d.notes {
                t.diags
                    .push(Diagnostic::info("codec-note", path, body.start as u64, n).in_buf(buf));
            }
            let dlen = d.data.len();
            t.add_buf(d.data).ok_or_else(|| {
                Fail::new(
                    "node-limit",
                    body.start,
                    format!("too many decompressed buffers in one tree ({dlen} bytes dropped)"),
                )
            })
        }
        Err(e @ CodecError::TooLarge { .. }) => Err(Fail::new(
            "decompression-bomb",
            body.start,
            format!(
                "{} of {} compressed bytes: {e}",
                codec.label_name(),
                body.len
            ),
        )),
        Err(e) => Err(Fail::new(
            "decompress-failed",
            body.start,
            format!("{}: {e}", codec.label_name()),
        )),
    }
}

impl Codec {
    fn label_name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }
}

/// Decodes the records in `region` of buffer `buf` as elements of the open `Records` array.
fn records(
    t: &mut Tree,
    buf: u16,
    region: Span,
    count: i32,
    info: &BatchInfo,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    let end = region.start + region.len;
    let mut w = W::new(t, buf, region.start, region.len);
    if count < 0 {
        w.diag(Diagnostic::error(
            "negative-count",
            path,
            region.start as u64,
            format!("records count {count}"),
        ));
    }
    // A count larger than the bytes can hold needs no check of its own: the loop below stops
    // at the end of the bytes and reports the shortfall.
    // The same for every record of the batch (it looks at the topic's name).
    let interpretation = ctx.interpretation();
    let mut i = 0i32;
    let mut malformed_in_a_row = 0usize;
    while i < count.max(0) {
        if w.rd.at_end() {
            w.diag(Diagnostic::error(
                "record-count-mismatch",
                path,
                w.rd.pos as u64,
                format!("{count} records declared, the batch holds {i}"),
            ));
            return;
        }
        if w.t.nodes.len() >= MAX_NODES_PER_TREE {
            let f = Fail::new(
                "node-limit",
                w.rd.pos,
                format!("more than {MAX_NODES_PER_TREE} nodes (limits::MAX_NODES_PER_TREE)"),
            );
            return w.fail_element(f, path, end);
        }
        if malformed_in_a_row >= MAX_MALFORMED_RECORDS_IN_A_ROW {
            let f = Fail::new(
                "records-abandoned",
                w.rd.pos,
                format!(
                    "records {}..{} not decoded: the {malformed_in_a_row} before them were all \
                     malformed (limits::MAX_MALFORMED_RECORDS_IN_A_ROW)",
                    i,
                    count.max(0)
                ),
            );
            return w.fail_element(f, path, end);
        }
        let clean = record(&mut w, info, interpretation, path.index(i), end);
        malformed_in_a_row = if clean { 0 } else { malformed_in_a_row + 1 };
        i += 1;
    }
    if !w.rd.at_end() {
        let f = Fail::new(
            "record-count-mismatch",
            w.rd.pos,
            format!(
                "{} bytes follow the {} declared records (Kafka: incorrect declared batch size)",
                end - w.rd.pos,
                count.max(0)
            ),
        );
        w.fail_element(f, path, end);
    }
}

/// One record; on a problem the record's remaining bytes become an error node and decoding goes
/// on with the next record when the length prefix allows it. True when the record was clean.
fn record(
    w: &mut W,
    info: &BatchInfo,
    interpretation: Option<AsType>,
    path: FieldPath<'_>,
    region_end: u32,
) -> bool {
    (interpretation.is_none() && !info.control && plain_record(w, info))
        || any_record(w, info, interpretation, path, region_end)
}

/// [`record`] for any record, whatever it holds and whatever is wrong with it.
fn any_record(
    w: &mut W,
    info: &BatchInfo,
    interpretation: Option<AsType>,
    path: FieldPath<'_>,
    region_end: u32,
) -> bool {
    let at = w.rd.pos;
    let len = match w.rd.varint(w.t.buf(w.buf), "record length") {
        Ok(n) if n >= 0 && n as u32 <= w.rd.remaining() => n as u32,
        Ok(n) => {
            let code = if n < 0 {
                "negative-length"
            } else {
                "truncated"
            };
            let f = Fail::new(
                code,
                at,
                format!("record length {n}, {} bytes remain", w.rd.remaining()),
            );
            w.fail_element(f, path, region_end);
            return false;
        }
        Err(f) => {
            w.fail_element(f, path, region_end);
            return false;
        }
    };
    let rend = w.rd.pos + len;
    let id = w.t.open("", Kind::Struct, w.buf, at);
    w.t.node_mut(id).hdr = (w.rd.pos - at) as u16;
    let saved_end = w.rd.end;
    w.rd.end = rend;
    let clean = match record_body(w, info, interpretation, path) {
        Ok(()) if w.rd.pos == rend => true,
        Ok(()) => {
            let f = Fail::new(
                "record-length-mismatch",
                w.rd.pos,
                format!(
                    "record declares {len} bytes, its fields end {} bytes early",
                    rend - w.rd.pos
                ),
            );
            w.fail(f, path, rend);
            false
        }
        Err(f) => {
            w.fail(f, path, rend);
            false
        }
    };
    w.t.close(id, rend);
    w.rd.end = saved_end;
    w.rd.pos = rend;
    clean
}

/// A record as nearly every one is (not control, not of an internal topic, no headers, nothing
/// to report), read whole before its nine nodes are pushed at once: the nodes [`any_record`]
/// pushes for it, field for field. False, with nothing pushed and the cursor where it was, for
/// any other record, which the general path then reads.
fn plain_record(w: &mut W, info: &BatchInfo) -> bool {
    const NODES: usize = 9;
    if w.t.nodes.len() + NODES > MAX_NODES_PER_TREE {
        return false;
    }
    let d = w.t.buf(w.buf);
    let mut rd = w.rd;
    let at = rd.pos;
    let Some(len) = rd.varint(d, "").ok().and_then(|n| u32::try_from(n).ok()) else {
        return false;
    };
    if len > rd.remaining() {
        return false;
    }
    let (body, rend) = (rd.pos, rd.pos + len);
    rd.end = rend;
    let Ok(attributes) = rd.i8(d, "") else {
        return false;
    };
    let ts_at = rd.pos;
    let Ok(ts_delta) = rd.varlong(d, "") else {
        return false;
    };
    let off_at = rd.pos;
    let Ok(off_delta) = rd.varint(d, "") else {
        return false;
    };
    let after_off = rd.pos;
    let Ok((key_at, key_hdr, key)) = rd.len_prefixed(d, "", true) else {
        return false;
    };
    let key_end = rd.pos;
    let Ok((value_at, value_hdr, value)) = rd.len_prefixed(d, "", true) else {
        return false;
    };
    let value_end = rd.pos;
    if !matches!(rd.varint(d, ""), Ok(0)) || rd.pos != rend {
        return false;
    }
    let data = |s: Option<Span>| s.map(Value::Data).unwrap_or(Value::Null);
    let id = w.t.nodes.len() as u32;
    let node = |i: u32, name, kind, value, offset: u32, len: u32, hdr: u16| Node {
        name,
        kind,
        value,
        buf: w.buf,
        hdr,
        offset,
        len,
        end: id + i + 1,
        entity: Entity::None,
    };
    let int =
        |i, name, v: i64, offset, len| node(i, name, Kind::Scalar, Value::Int(v), offset, len, 0);
    let mut record = node(
        0,
        "",
        Kind::Struct,
        Value::None,
        at,
        rend - at,
        (body - at) as u16,
    );
    record.end = id + NODES as u32;
    let nodes: [Node; NODES] = [
        record,
        int(1, "Attributes", i64::from(attributes), body, 1),
        int(2, "TimestampDelta", ts_delta, ts_at, off_at - ts_at),
        int(3, "Timestamp", info.timestamp(ts_delta), off_at, 0),
        int(
            4,
            "OffsetDelta",
            i64::from(off_delta),
            off_at,
            after_off - off_at,
        ),
        int(5, "Offset", info.offset(off_delta), after_off, 0),
        node(
            6,
            "Key",
            Kind::Scalar,
            data(key),
            key_at,
            key_end - key_at,
            key_hdr,
        ),
        node(
            7,
            "Value",
            Kind::Scalar,
            data(value),
            value_at,
            value_end - value_at,
            value_hdr,
        ),
        node(
            8,
            "Headers",
            Kind::Array,
            Value::None,
            value_end,
            rend - value_end,
            (rend - value_end) as u16,
        ),
    ];
    w.t.push_nodes(&nodes);
    w.rd.pos = rend;
    true
}

fn record_body(
    w: &mut W,
    info: &BatchInfo,
    interpretation: Option<AsType>,
    path: FieldPath<'_>,
) -> R<()> {
    w.int("Attributes", 1)?;
    let ts_delta = w.varlong("TimestampDelta")?;
    w.derived("Timestamp", Value::Int(info.timestamp(ts_delta)));
    let off_delta = w.varint("OffsetDelta")?;
    w.derived("Offset", Value::Int(info.offset(off_delta)));
    if info.control {
        let ty = control::key(w, path)?;
        control::value(w, ty, path)?;
    } else if let Some(kind) = interpretation {
        super::internal::key_value(w, kind, path)?;
    } else {
        w.data("Key", true)?;
        w.data("Value", true)?;
    }
    headers(w, path)
}

fn headers(w: &mut W, path: FieldPath<'_>) -> R<()> {
    let at = w.rd.pos;
    let n = w.rd.varint(w.t.buf(w.buf), "Headers count")?;
    if n < 0 {
        return Err(Fail::new(
            "negative-count",
            at,
            format!("headers count {n}"),
        ));
    }
    // Each header takes at least two bytes (two one-byte length prefixes).
    if n as u64 * 2 > w.rd.remaining() as u64 {
        return Err(Fail::new(
            "count-exceeds-remaining",
            at,
            format!(
                "{n} headers declared, {} bytes remain in the record",
                w.rd.remaining()
            ),
        ));
    }
    let arr = w.t.open("Headers", Kind::Array, w.buf, at);
    w.t.node_mut(arr).hdr = (w.rd.pos - at) as u16;
    for i in 0..n {
        let el = w.t.open("", Kind::Struct, w.buf, w.rd.pos);
        if let Err(f) = header(w, path, i) {
            // The rest of the record is spoiled: the error node ends it, inside this header.
            let end = w.rd.end;
            let headers = path.member("Headers");
            w.fail(f, headers.index(i), end);
            w.t.close(el, end);
            w.t.close(arr, end);
            return Ok(());
        }
        w.t.close(el, w.rd.pos);
    }
    w.t.close(arr, w.rd.pos);
    Ok(())
}

fn header(w: &mut W, path: FieldPath<'_>, i: i32) -> R<()> {
    let (at, hdr, s) = w.len_prefixed("Headers key", true)?;
    let Some(s) = s else {
        return Err(Fail::new(
            "negative-length",
            at,
            format!("{path}.Headers[{i}].Key: a header key cannot be null"),
        ));
    };
    if std::str::from_utf8(w.t.bytes(w.buf, s)).is_err() {
        w.diag(Diagnostic::warning(
            "invalid-utf8",
            format!("{path}.Headers[{i}].Key"),
            s.start as u64,
            "header key is not valid UTF-8 (shown lossily)",
        ));
    }
    let id = w.t.leaf("Key", Value::Str(s), w.buf, at, w.rd.pos - at);
    w.t.node_mut(id).hdr = hdr;
    w.data("Value", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::records::encode::put_varlong as varint;

    /// A record body (after its length): attributes, deltas, key, value, headers count.
    fn body(ts: i64, off: i64, key: Option<&[u8]>, value: Option<&[u8]>, headers: i64) -> Vec<u8> {
        let mut b = vec![0u8];
        varint(&mut b, ts);
        varint(&mut b, off);
        for d in [key, value] {
            match d {
                None => varint(&mut b, -1),
                Some(d) => {
                    varint(&mut b, d.len() as i64);
                    b.extend_from_slice(d);
                }
            }
        }
        varint(&mut b, headers);
        if headers > 0 {
            b.extend_from_slice(&[2, b'h', 2, b'v']);
        }
        b
    }

    fn framed(body: &[u8], extra: i64) -> Vec<u8> {
        let mut r = Vec::new();
        varint(&mut r, body.len() as i64 + extra);
        r.extend_from_slice(body);
        r
    }

    /// One record read by `plain_record` (when it takes it) and by `any_record`, from the same
    /// bytes: the same nodes, and the cursor at the same place.
    #[test]
    fn a_plain_record_is_read_as_the_general_path_reads_it() {
        let big = vec![b'x'; 300];
        let cases: Vec<(Vec<u8>, bool)> = vec![
            (framed(&body(0, 0, Some(b"k"), Some(b"value"), 0), 0), true),
            (framed(&body(-5, 1, None, Some(b""), 0), 0), true),
            (framed(&body(123_456_789, 70, Some(b""), None, 0), 0), true),
            (framed(&body(-1, 3, Some(&big), Some(&big), 0), 0), true),
            // Headers, a length the fields do not fill, a value running past the record,
            // a length past the batch: the general path's.
            (framed(&body(0, 0, Some(b"k"), Some(b"v"), 1), 0), false),
            (framed(&body(0, 0, Some(b"k"), Some(b"v"), 0), 1), false),
            (framed(&body(0, 0, Some(b"k"), Some(b"v"), 0), -2), false),
            (framed(&body(0, 0, Some(b"k"), Some(b"v"), 0), 40), false),
        ];
        for (append_time, (bytes, plain)) in [false, true]
            .into_iter()
            .flat_map(|a| cases.iter().map(move |c| (a, c)))
        {
            let info = BatchInfo {
                base_offset: 1_000,
                base_timestamp: 1_700_000_000_000,
                max_timestamp: 1_700_000_000_999,
                log_append_time: append_time,
                control: false,
            };
            let read = |fast: bool| {
                let mut t = Tree::new();
                t.reset(bytes);
                let mut w = W::new(&mut t, 0, 0, bytes.len() as u32);
                let took = if fast {
                    plain_record(&mut w, &info)
                } else {
                    any_record(
                        &mut w,
                        &info,
                        None,
                        FieldPath::from("r"),
                        bytes.len() as u32,
                    )
                };
                let pos = w.rd.pos;
                (took, pos, t.nodes, t.diags.len())
            };
            let (took, pos, nodes, _) = read(true);
            assert_eq!(took, *plain, "{bytes:02x?}");
            if !took {
                assert!(nodes.is_empty());
                assert_eq!(pos, 0);
                continue;
            }
            let (clean, gpos, gnodes, diags) = read(false);
            assert!(clean && diags == 0, "{bytes:02x?}");
            assert_eq!((pos, &nodes), (gpos, &gnodes), "{bytes:02x?}");
            assert_eq!(nodes.len(), 9);
        }
    }
}
