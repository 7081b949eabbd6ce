//! Legacy message sets (magic 0 and 1): the CRC-32 check, key and value, and compressed wrapper
//! messages whose value holds an inner message set (v1 inner offsets relative, the wrapper
//! carrying the absolute offset of the last inner message).

use super::batch::inflate;
use super::codec::Codec;
use super::read::{Fail, Rd, R};
use super::{RecordsContext, MIN_BATCH_SIZE, W};
use crate::diag::{Diagnostic, FieldPath};
use crate::limits::MAX_NODES_PER_TREE;
use crate::wire::tree::{Kind, Tree, Value};

/// Bytes before the CRC-covered part of a message: offset, size, crc.
const CRC_FROM: u32 = 16;

/// How an inner message relates to its wrapper.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inner {
    /// Added to a relative inner offset to make it absolute (v1); `None` for v0 (absolute).
    pub base: Option<i64>,
    pub wrapper_magic: i8,
    /// The wrapper's timestamp when it is v1 with LogAppendTime: Kafka gives every inner
    /// message that timestamp.
    pub log_append_ts: Option<i64>,
}

/// Decodes one complete message of `total` bytes at `at` as an array element.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode_message(
    t: &mut Tree,
    buf: u16,
    at: u32,
    total: u32,
    magic: i8,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
    inner: Option<Inner>,
) {
    let id = t.open("", Kind::Struct, buf, at);
    let end = at + total;
    let mut w = W::new(t, buf, at, total);
    if let Err(f) = message(&mut w, at, end, magic, ctx, path, inner) {
        w.fail(f, path, end);
    }
    t.close(id, end);
}

#[allow(clippy::too_many_arguments)]
fn message(
    w: &mut W,
    at: u32,
    end: u32,
    magic: i8,
    ctx: &RecordsContext,
    path: FieldPath<'_>,
    inner: Option<Inner>,
) -> R<()> {
    let offset = w.int("Offset", 8)?;
    if let Some(Inner {
        base: Some(base), ..
    }) = inner
    {
        w.derived("AbsoluteOffset", Value::Int(base.wrapping_add(offset)));
    }
    w.int("MessageSize", 4)?;
    w.crc(
        path,
        (at + CRC_FROM, end),
        "CRC-32",
        "message",
        crc32fast::hash,
    )?;
    w.int("Magic", 1)?;
    if let Some(i) = inner.filter(|i| i.wrapper_magic != magic) {
        w.diag(Diagnostic::warning(
            "inner-magic-mismatch",
            format!("{path}.Magic"),
            (at + 16) as u64,
            format!(
                "inner message magic {magic} inside a magic-{} wrapper",
                i.wrapper_magic
            ),
        ));
    }
    let a_at = w.rd.pos;
    let attrs = w.rd.i8(w.t.buf(w.buf), "Attributes")?;
    let aid = w.t.open("Attributes", Kind::Struct, w.buf, a_at);
    w.t.node_mut(aid).hdr = 1;
    let codec_id = (attrs & 7) as u8;
    w.derived("Compression", Value::Label(Codec::label(codec_id)));
    if magic == 1 {
        w.derived(
            "TimestampType",
            Value::Label(if attrs & 0x08 != 0 {
                "LogAppendTime"
            } else {
                "CreateTime"
            }),
        );
    }
    w.t.close(aid, a_at + 1);
    let mut log_append_ts = None;
    if magic == 1 {
        let ts = w.int("Timestamp", 8)?;
        if attrs & 0x08 != 0 {
            log_append_ts = Some(ts);
        }
        if let Some(ts) = inner.and_then(|i| i.log_append_ts) {
            w.derived("EffectiveTimestamp", Value::Int(ts));
        }
    }
    w.data("Key", false)?;
    if codec_id == 0 {
        w.data("Value", false)?;
    } else if inner.is_some() {
        w.diag(Diagnostic::error(
            "nested-compression",
            format!("{path}.Attributes"),
            a_at as u64,
            "an inner message of a compressed wrapper is itself compressed; its value is shown raw",
        ));
        w.data("Value", false)?;
    } else {
        wrapper_value(w, codec_id, magic, (offset, log_append_ts), ctx, path)?;
    }
    if !w.rd.at_end() {
        return Err(Fail::new(
            "record-length-mismatch",
            w.rd.pos,
            format!(
                "message declares {} more bytes than its fields use",
                end - w.rd.pos
            ),
        ));
    }
    Ok(())
}

/// A compressed wrapper's value: `InnerMessages`, decoded from a decompressed buffer.
fn wrapper_value(
    w: &mut W,
    codec_id: u8,
    magic: i8,
    wrapper: (i64, Option<i64>),
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) -> R<()> {
    let (at, hdr, span) = w.len_prefixed("Value", false)?;
    let Some(body) = span else {
        w.diag(Diagnostic::error(
            "decompress-failed",
            format!("{path}.Value"),
            at as u64,
            "a compressed wrapper message has a null value",
        ));
        let id = w.t.leaf("Value", Value::Null, w.buf, at, hdr as u32);
        w.t.node_mut(id).hdr = hdr;
        return Ok(());
    };
    let arr = w.t.open("InnerMessages", Kind::Array, w.buf, at);
    w.t.node_mut(arr).hdr = hdr;
    let ipath = path.member("InnerMessages");
    let Some(codec) = Codec::from_id(codec_id).filter(|c| *c != Codec::Zstd) else {
        let f = Fail::new(
            "unknown-codec",
            body.start,
            format!("compression id {codec_id} is not valid in a magic-{magic} message"),
        );
        w.fail_element(f, ipath, body.start + body.len);
        w.t.close(arr, w.rd.pos);
        return Ok(());
    };
    match inflate(w.t, w.buf, body, codec, magic, ipath) {
        Ok(nb) => inner_set(w.t, nb, magic, wrapper, ctx, ipath),
        Err(f) => w.fail_element(f, ipath, body.start + body.len),
    }
    w.t.close(arr, body.start + body.len);
    w.rd.pos = body.start + body.len;
    Ok(())
}

/// The message set inside a wrapper: every message of buffer `nb`.
fn inner_set(
    t: &mut Tree,
    nb: u16,
    magic: i8,
    (wrapper_offset, log_append_ts): (i64, Option<i64>),
    ctx: &RecordsContext,
    path: FieldPath<'_>,
) {
    let len = t.buf(nb).len() as u32;
    // v1: absolute = wrapper offset - last inner offset + inner offset (a wrapper offset of 0,
    // written by some librdkafka versions, means base 0).
    let base = (magic == 1).then(|| {
        let last = walk(t.buf(nb), len).last().map(|&(o, _)| o).unwrap_or(0);
        if wrapper_offset == 0 {
            0
        } else {
            wrapper_offset.wrapping_sub(last)
        }
    });
    let mut pos = 0u32;
    let mut i = 0usize;
    for (_, total) in walk(t.buf(nb), len) {
        if t.nodes.len() >= MAX_NODES_PER_TREE {
            break;
        }
        let m = t
            .buf(nb)
            .get((pos + 16) as usize)
            .map(|&m| m as i8)
            .unwrap_or(-1);
        let ipath = path.index(i as i64);
        if m == 0 || m == 1 {
            decode_message(
                t,
                nb,
                pos,
                total,
                m,
                ctx,
                ipath,
                Some(Inner {
                    base,
                    wrapper_magic: magic,
                    log_append_ts,
                }),
            );
        } else {
            let d = Diagnostic::error(
                "unknown-magic",
                ipath,
                (pos + 16) as u64,
                format!("inner message magic {m}, expected 0 or 1"),
            );
            t.error_node("", nb, pos, total, d.in_buf(nb));
        }
        pos += total;
        i += 1;
    }
    if pos < len {
        let d = Diagnostic::error(
            "truncated",
            format!("{path}[{i}]"),
            pos as u64,
            format!(
            "{} bytes at the end of the decompressed message set do not form a complete message",
            len - pos
        ),
        );
        t.error_node("", nb, pos, len - pos, d.in_buf(nb));
    }
}

/// The (offset, total size) of each complete message in `d[..len]`, stopping at the first that
/// is cut short or declares an impossible size.
fn walk(d: &[u8], len: u32) -> Vec<(i64, u32)> {
    let mut out = Vec::new();
    let mut rd = Rd::new(d, 0, len);
    while rd.remaining() >= 12 {
        let (Ok(off), Ok(size)) = (rd.i64(d, "offset"), rd.i32(d, "size")) else {
            break;
        };
        if size < MIN_BATCH_SIZE || size as u32 > rd.remaining() {
            break;
        }
        rd.pos += size as u32;
        out.push((off, size as u32 + 12));
    }
    out
}
