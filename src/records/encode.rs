//! The records encoder: the JSON of decoded batches (the shape documented in [`super`]) back to
//! the exact bytes, and [`extras`], the two non-field members the printers add so that this is
//! possible (`_compressed`, `_records_count`).
//!
//! Stored values are written as they are (`BatchLength`, `Crc`, `MessageSize`): a corrupt batch
//! re-encodes as corrupt. Only when they are absent (JSON written by hand) are they computed.
//! Record lengths and header counts are not in the JSON: they are computed, minimal varints.
//! Derived members (`CrcComputed`, `Timestamp`, `Offset`, labels, `TypeName`, …) are ignored,
//! except the attribute labels, which are the only place the attribute bits are shown.
//! A struct cut by an undecodable region ends with `_undecoded` (`{"_error","_data"}`): the
//! members present are written, then its bytes.

use super::codec::Codec;
use crate::protocol::builtin;
use crate::wire::encode::{encode_message, err, EncodeError};
use crate::wire::plan;
use crate::wire::tree::{Kind, NodeId, Span, Tree};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{Map, Value as J};

/// Batch member holding a compressed batch's (or legacy wrapper's) compressed bytes, base64:
/// the decompressed records cannot be recompressed byte for byte.
pub const COMPRESSED: &str = "_compressed";
/// Batch member holding the records count when it differs from the records shown (a count
/// that lies, records that could not be decompressed).
pub const RECORDS_COUNT: &str = "_records_count";
const UNDECODED: &str = "_undecoded";

/// Bytes a batch's JSON must carry beyond its decoded members (see [`extras`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extras {
    /// The compressed bytes: buffer and span.
    pub compressed: Option<(u16, Span)>,
    /// The stored records count, when it differs from the records shown.
    pub count: Option<i64>,
}

/// What the printers add before a batch's `Records` (or a wrapper's `InnerMessages`) member
/// `id` of the batch struct `parent`: the compressed bytes (buffer and span) when the elements
/// live in a decompressed buffer, and the stored count when it differs from the elements
/// shown. `None` for any other member.
#[inline]
pub fn extras(tree: &Tree, parent: NodeId, id: NodeId) -> Option<Extras> {
    // Asked of every member the printers write: the kind, one byte, rules out most at once,
    // without a call.
    if tree.node(id).kind != Kind::Array {
        return None;
    }
    array_extras(tree, parent, id)
}

/// [`extras`] of an array member.
fn array_extras(tree: &Tree, parent: NodeId, id: NodeId) -> Option<Extras> {
    let n = tree.node(id);
    let v2 = match n.name {
        "Records" => true,
        "InnerMessages" => false,
        _ => return None,
    };
    tree.child(parent, "Magic")?;
    let content = Span {
        start: n.offset + n.hdr as u32,
        len: n.len.saturating_sub(n.hdr as u32),
    };
    let mut kids = tree.children(id);
    let first_buf = kids.next().map(|c| tree.node(c).buf);
    let compressed = match first_buf {
        Some(b) => b != n.buf,
        None => content.len > 0,
    };
    let count = if v2 && n.hdr == 4 {
        let b = tree.bytes(
            n.buf,
            Span {
                start: n.offset,
                len: 4,
            },
        );
        let stored = match b {
            [a, b, c, d] => i32::from_be_bytes([*a, *b, *c, *d]) as i64,
            _ => 0,
        };
        let shown = tree
            .children(id)
            .filter(|&c| tree.node(c).kind != Kind::Error)
            .count() as i64;
        (stored != shown).then_some(stored)
    } else {
        None
    };
    Some(Extras {
        compressed: compressed.then_some((n.buf, content)),
        count,
    })
}

/// Why a struct stopped early: an error, or its `_undecoded` region was reached.
enum Stop {
    Err(EncodeError),
    Undecoded,
}

impl From<EncodeError> for Stop {
    fn from(e: EncodeError) -> Stop {
        Stop::Err(e)
    }
}

type R<T> = Result<T, Stop>;

/// Encodes the elements of a `records` field (batches, legacy messages, partial batches,
/// undecodable regions) into `out`.
pub fn encode_records(batches: &[J], out: &mut Vec<u8>, path: &str) -> Result<(), EncodeError> {
    for (i, b) in batches.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if let Some(d) = error_data(b, &p) {
            out.extend(d?);
            continue;
        }
        let o = obj(b, &p)?;
        if o.get("Partial") == Some(&J::Bool(true)) {
            partial(o, out, &p)?;
        } else if o.contains_key("MessageSize") || o.contains_key("Offset") {
            finish(o, out, &p, legacy)?;
        } else {
            finish(o, out, &p, batch_v2)?;
        }
    }
    Ok(())
}

/// Runs `f` over the struct, then appends its `_undecoded` bytes if it stopped there.
fn finish(
    o: &Map<String, J>,
    out: &mut Vec<u8>,
    path: &str,
    f: impl FnOnce(&S, &mut Vec<u8>) -> R<()>,
) -> Result<(), EncodeError> {
    let s = S { o, path };
    // Stopping early (`Stop::Undecoded`) only happens when `_undecoded` is present.
    if let Err(Stop::Err(e)) = f(&s, out) {
        return Err(e);
    }
    if let Some(u) = o.get(UNDECODED) {
        let p = s.at(UNDECODED);
        let d =
            error_data(u, &p).unwrap_or_else(|| Err(err(&p, "expected {\"_error\",\"_data\"}")))?;
        out.extend(d);
    }
    Ok(())
}

/// A JSON struct being encoded, with its path for errors.
struct S<'a> {
    o: &'a Map<String, J>,
    path: &'a str,
}

impl S<'_> {
    fn at(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }

    /// The member `name`; a missing member is where an undecodable region began when the
    /// struct has one, else an error.
    fn get(&self, name: &str) -> R<&J> {
        match self.o.get(name) {
            Some(v) => Ok(v),
            None if self.o.contains_key(UNDECODED) => Err(Stop::Undecoded),
            None => Err(err(&self.at(name), "missing member").into()),
        }
    }

    fn int(&self, name: &str, lo: i64, hi: i64) -> R<i64> {
        let v = self.get(name)?;
        v.as_i64()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| err(&self.at(name), format!("expected an integer {lo}..={hi}")).into())
    }

    /// Writes a big-endian integer member of `width` bytes.
    fn put(&self, out: &mut Vec<u8>, name: &str, width: usize) -> R<()> {
        let (lo, hi) = match width {
            1 => (i8::MIN as i64, i8::MAX as i64),
            2 => (i16::MIN as i64, i16::MAX as i64),
            4 => (i32::MIN as i64, i32::MAX as i64),
            _ => (i64::MIN, i64::MAX),
        };
        let v = self.int(name, lo, hi)?;
        out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
        Ok(())
    }

    /// An optional stored uint32/int32 (CRC, size): `None` when absent, to be computed.
    fn stored(&self, name: &str, lo: i64, hi: i64) -> R<Option<i64>> {
        match self.o.get(name) {
            None => Ok(None),
            Some(_) => self.int(name, lo, hi).map(Some),
        }
    }
}

fn obj<'a>(v: &'a J, path: &str) -> Result<&'a Map<String, J>, EncodeError> {
    v.as_object().ok_or_else(|| err(path, "expected an object"))
}

fn error_data(v: &J, path: &str) -> Option<Result<Vec<u8>, EncodeError>> {
    let o = v.as_object()?;
    o.get("_error")?;
    Some(b64(
        o.get("_data").unwrap_or(&J::Null),
        &format!("{path}._data"),
    ))
}

fn b64(v: &J, path: &str) -> Result<Vec<u8>, EncodeError> {
    let s = v.as_str().ok_or_else(|| err(path, "expected base64"))?;
    STANDARD
        .decode(s)
        .map_err(|e| err(path, format!("invalid base64: {e}")))
}

/// A batch cut short: the header fields that were present, then `Incomplete`.
fn partial(o: &Map<String, J>, out: &mut Vec<u8>, path: &str) -> Result<(), EncodeError> {
    let s = S { o, path };
    const FIELDS: [(&str, usize); 6] = [
        ("BaseOffset", 8),
        ("Offset", 8),
        ("BatchLength", 4),
        ("MessageSize", 4),
        ("PartitionLeaderEpoch", 4),
        ("Magic", 1),
    ];
    for (name, width) in FIELDS {
        if o.contains_key(name) {
            stopped(s.put(out, name, width))?;
        }
    }
    if let Some(v) = o.get("Incomplete") {
        out.extend(b64(v, &s.at("Incomplete"))?);
    }
    Ok(())
}

fn stopped<T>(r: R<T>) -> Result<T, EncodeError> {
    r.map_err(|e| match e {
        Stop::Err(e) => e,
        Stop::Undecoded => err("", "undecodable region in the middle of a partial batch"),
    })
}

/// A magic-2 record batch.
fn batch_v2(s: &S, out: &mut Vec<u8>) -> R<()> {
    let start = out.len();
    s.put(out, "BaseOffset", 8)?;
    let length = s.stored("BatchLength", i32::MIN as i64, i32::MAX as i64)?;
    out.extend_from_slice(&length.unwrap_or(0).to_be_bytes()[4..]);
    s.put(out, "PartitionLeaderEpoch", 4)?;
    s.put(out, "Magic", 1)?;
    let crc = s.stored("Crc", 0, u32::MAX as i64)?;
    out.extend_from_slice(&crc.unwrap_or(0).to_be_bytes()[4..]);
    let attrs = attributes(s, true)?;
    out.extend_from_slice(&(attrs as i16).to_be_bytes());
    s.put(out, "LastOffsetDelta", 4)?;
    s.put(out, "BaseTimestamp", 8)?;
    s.put(out, "MaxTimestamp", 8)?;
    s.put(out, "ProducerId", 8)?;
    s.put(out, "ProducerEpoch", 2)?;
    s.put(out, "BaseSequence", 4)?;
    let recs = s.get("Records")?;
    let rp = s.at("Records");
    let arr = recs
        .as_array()
        .ok_or_else(|| err(&rp, "expected an array of records"))?;
    let count = match s.o.get(RECORDS_COUNT) {
        Some(_) => s.int(RECORDS_COUNT, i32::MIN as i64, i32::MAX as i64)?,
        None => arr.iter().filter(|r| error_data(r, "").is_none()).count() as i64,
    };
    out.extend_from_slice(&(count as i32).to_be_bytes());
    if let Some(c) = s.o.get(COMPRESSED) {
        out.extend(b64(c, &s.at(COMPRESSED))?);
    } else {
        let control = attrs & 0x20 != 0;
        for (i, r) in arr.iter().enumerate() {
            let p = format!("{rp}[{i}]");
            match error_data(r, &p) {
                Some(d) => out.extend(d?),
                None => record(obj(r, &p)?, control, out, &p)?,
            }
        }
    }
    let total = out.len() - start;
    if length.is_none() {
        let n = i32::try_from(total - 12).map_err(|_| err(s.path, "batch larger than 2 GiB"))?;
        out[start + 8..start + 12].copy_from_slice(&n.to_be_bytes());
    }
    if crc.is_none() {
        let c = crc32c::crc32c(out.get(start + 21..).unwrap_or(&[]));
        out[start + 17..start + 21].copy_from_slice(&c.to_be_bytes());
    }
    Ok(())
}

/// The attribute bits from their labels (v2: int16; legacy: int8).
fn attributes(s: &S, v2: bool) -> R<i64> {
    let a = s.get("Attributes")?;
    let ap = s.at("Attributes");
    let a = obj(a, &ap)?;
    let codec = a.get("Compression").and_then(J::as_str).unwrap_or("none");
    let id = (0u8..8)
        .find(|&i| Codec::label(i) == codec)
        .ok_or_else(|| {
            err(
                &format!("{ap}.Compression"),
                "expected none, gzip, snappy, lz4 or zstd",
            )
        })?;
    let mut v = id as i64;
    if a.get("TimestampType").and_then(J::as_str) == Some("LogAppendTime") {
        v |= 0x08;
    }
    if v2 {
        let flag = |k: &str| a.get(k) == Some(&J::Bool(true));
        for (k, bit) in [
            ("IsTransactional", 0x10),
            ("IsControlBatch", 0x20),
            ("HasDeleteHorizonMs", 0x40),
        ] {
            if flag(k) {
                v |= bit;
            }
        }
        v |= a.get("UnusedBits").and_then(J::as_i64).unwrap_or(0) & 0xff80;
    }
    Ok(v)
}

/// Zig-zag varint (records use signed varints).
pub(crate) fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// One v2 record: its fields, then its length in front.
fn record(
    o: &Map<String, J>,
    control: bool,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), EncodeError> {
    let mut body = Vec::new();
    finish(o, &mut body, path, |s, b| {
        s.put(b, "Attributes", 1)?;
        put_varlong(b, s.int("TimestampDelta", i64::MIN, i64::MAX)?);
        put_varlong(b, s.int("OffsetDelta", i32::MIN as i64, i32::MAX as i64)?);
        let key = s.get("Key")?;
        key_or_value(key, None, control, b, &s.at("Key"))?;
        let value = s.get("Value")?;
        key_or_value(value, Some(key), control, b, &s.at("Value"))?;
        let hp = s.at("Headers");
        let hs = s.get("Headers")?;
        let hs = hs.as_array().ok_or_else(|| err(&hp, "expected an array"))?;
        put_varlong(b, hs.len() as i64);
        for (i, h) in hs.iter().enumerate() {
            let p = format!("{hp}[{i}]");
            let ho = obj(h, &p)?;
            finish(ho, b, &p, |s, b| {
                let k = s.get("Key")?;
                let k = k
                    .as_str()
                    .ok_or_else(|| err(&s.at("Key"), "expected a string"))?;
                put_varlong(b, k.len() as i64);
                b.extend_from_slice(k.as_bytes());
                data(s.get("Value")?, b, &s.at("Value"), true)?;
                Ok(())
            })?;
        }
        Ok(())
    })?;
    put_varlong(out, body.len() as i64);
    out.extend(body);
    Ok(())
}

/// A key, value or header value as printed for `Value::Data`: null, `{"text"}` or `{"base64"}`;
/// `varint` chooses the length prefix (v2 records) over int32 (legacy messages).
fn data(v: &J, out: &mut Vec<u8>, path: &str, varint: bool) -> Result<(), EncodeError> {
    let bytes = match v {
        J::Null => None,
        J::Object(o) => match (o.get("text"), o.get("base64")) {
            (Some(J::String(t)), None) => Some(t.as_bytes().to_vec()),
            (None, Some(b)) => Some(b64(b, &format!("{path}.base64"))?),
            _ => return Err(err(path, "expected null, {\"text\": …} or {\"base64\": …}")),
        },
        _ => return Err(err(path, "expected null, {\"text\": …} or {\"base64\": …}")),
    };
    put_prefixed(out, bytes.as_deref(), varint, path)
}

fn put_prefixed(
    out: &mut Vec<u8>,
    b: Option<&[u8]>,
    varint: bool,
    path: &str,
) -> Result<(), EncodeError> {
    let n = match b {
        None => -1,
        Some(b) => i32::try_from(b.len()).map_err(|_| err(path, "more than 2 GiB"))?,
    };
    if varint {
        put_varlong(out, n as i64);
    } else {
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(b.unwrap_or(&[]));
    Ok(())
}

/// A record key or value: plain data, or one of the structured forms the internal-topic and
/// control-record decoders produce (recognised by their members). `key` is the record's key
/// when encoding its value (a KRaft control value's schema depends on the key's type).
fn key_or_value(
    v: &J,
    key: Option<&J>,
    control: bool,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), EncodeError> {
    let Some(o) = v
        .as_object()
        .filter(|o| !o.contains_key("text") && !o.contains_key("base64"))
    else {
        return data(v, out, path, true);
    };
    let mut b = Vec::new();
    finish(o, &mut b, path, |s, b| structured(s, key, control, b))?;
    put_prefixed(out, Some(&b), true, path)
}

fn structured(s: &S, key: Option<&J>, control: bool, b: &mut Vec<u8>) -> R<()> {
    let o = s.o;
    let type_name = o.get("TypeName").and_then(J::as_str);
    if control {
        let key_type = key.and_then(|k| k.get("Type")).and_then(J::as_i64);
        match (key, key_type) {
            // A control key: version, type (absent when the key was too short to hold them).
            (None, _) => {
                if o.contains_key("Type") {
                    s.put(b, "Version", 2)?;
                    s.put(b, "Type", 2)?;
                }
            }
            (Some(_), Some(0 | 1)) => {
                s.put(b, "Version", 2)?;
                s.put(b, "CoordinatorEpoch", 4)?;
            }
            (Some(_), ty) => {
                // A KRaft control value: the schema of the key's type, at version 0.
                let ty = ty.unwrap_or(-1);
                let spec = usize::try_from(ty - 2)
                    .ok()
                    .and_then(|i| super::internal::CONTROL_SCHEMAS.get(i))
                    .and_then(|n| builtin().by_name(n))
                    .ok_or_else(|| {
                        err(s.path, format!("no control value schema for key type {ty}"))
                    })?;
                let mut m = o.clone();
                m.remove("Unparsed");
                encode_message(&plan::shared(spec.spec, 0), &J::Object(m), b, s.path)?;
            }
        }
    } else if o.contains_key("FrameVersion") {
        // __cluster_metadata: uvarint frame version, api key, version, then the record.
        for k in ["FrameVersion", "ApiKey", "Version"] {
            let n = s.int(k, 0, u32::MAX as i64)?;
            crate::wire::cursor::put_uvarint(b, n as u32);
        }
        let ver = s.int("Version", 0, i16::MAX as i64)? as i16;
        body(s, type_name, ver, b)?;
    } else if o.contains_key("Type") {
        // A coordinator key: 3.9 key specs are versioned by the type, 4.x ones have one version.
        let ty = s.int("Type", i16::MIN as i64, i16::MAX as i64)? as i16;
        b.extend_from_slice(&ty.to_be_bytes());
        let ver = type_name
            .and_then(|n| builtin().by_name(n))
            .map(|r| {
                if r.spec.valid_versions.contains(ty) {
                    ty
                } else {
                    r.spec.valid_versions.lo
                }
            })
            .unwrap_or(0);
        body(s, type_name, ver, b)?;
    } else if o.contains_key("Version") {
        // A coordinator value.
        let ver = s.int("Version", i16::MIN as i64, i16::MAX as i64)? as i16;
        b.extend_from_slice(&ver.to_be_bytes());
        body(s, type_name, ver, b)?;
    } else if !o.contains_key(UNDECODED) {
        return Err(err(s.path, "unrecognised record key or value form").into());
    }
    if let Some(u) = o.get("Unparsed") {
        b.extend(b64(u, &s.at("Unparsed"))?);
    }
    Ok(())
}

/// A struct's `Data`: the record schema named by `TypeName`, or raw base64.
fn body(s: &S, type_name: Option<&str>, ver: i16, b: &mut Vec<u8>) -> R<()> {
    let Some(d) = s.o.get("Data") else {
        return Ok(());
    };
    let dp = s.at("Data");
    match (d, type_name.and_then(|n| builtin().by_name(n))) {
        (J::String(_), _) | (_, None) => b.extend(b64(d, &dp)?),
        (_, Some(r)) => encode_message(&plan::shared(r.spec, ver), d, b, &dp)?,
    }
    Ok(())
}

/// A legacy (magic 0/1) message, a compressed wrapper's inner messages included.
fn legacy(s: &S, out: &mut Vec<u8>) -> R<()> {
    let start = out.len();
    s.put(out, "Offset", 8)?;
    let size = s.stored("MessageSize", i32::MIN as i64, i32::MAX as i64)?;
    out.extend_from_slice(&size.unwrap_or(0).to_be_bytes()[4..]);
    let crc = s.stored("Crc", 0, u32::MAX as i64)?;
    out.extend_from_slice(&crc.unwrap_or(0).to_be_bytes()[4..]);
    let magic = s.int("Magic", -128, 127)?;
    out.push(magic as u8);
    out.push(attributes(s, false)? as u8);
    if magic == 1 {
        s.put(out, "Timestamp", 8)?;
    }
    data(s.get("Key")?, out, &s.at("Key"), false)?;
    if let Some(v) = s.o.get("Value") {
        data(v, out, &s.at("Value"), false)?;
    } else {
        let ip = s.at("InnerMessages");
        let inner = match s.o.get(COMPRESSED) {
            Some(c) => b64(c, &s.at(COMPRESSED))?,
            None => {
                let arr = s.get("InnerMessages")?;
                let arr = arr
                    .as_array()
                    .ok_or_else(|| err(&ip, "expected an array"))?;
                let mut b = Vec::new();
                encode_records(arr, &mut b, &ip)?;
                b
            }
        };
        put_prefixed(out, Some(&inner), false, &ip)?;
    }
    let total = out.len() - start;
    if size.is_none() {
        let n = i32::try_from(total - 12).map_err(|_| err(s.path, "message larger than 2 GiB"))?;
        out[start + 8..start + 12].copy_from_slice(&n.to_be_bytes());
    }
    if crc.is_none() {
        let c = crc32fast::hash(out.get(start + 16..).unwrap_or(&[]));
        out[start + 12..start + 16].copy_from_slice(&c.to_be_bytes());
    }
    Ok(())
}
