//! The JSON printer: one object per PDU, written by hand straight into a buffered `Write` (no
//! intermediate `serde_json::Value`), in the shape fixed by CONTRACT.md.
//!
//! Choices the contract leaves open, made here:
//! - A `Kind::Error` node (bytes the decoder could not decode) prints as
//!   `{"_error":"<code>","_data":"<base64 of the bytes it covers>"}`; the full diagnostic is in
//!   `diagnostics`.
//! - In `--annotate` mode the size prefix is the member `"size_prefix"` (offset 0, length 4), so
//!   that every byte of the frame is covered by some member, and the root's `"length"` is the
//!   frame length (in plain mode `"length"` is the size prefix's value, as tshark's `kafka.len`).
//! - With several inputs on one command line, each object names its file in `"input"` (right
//!   after `"index"`, which counts from 0 within each input).
//! - A tree whose root is an array (batches of a log segment or snapshot) prints it as
//!   `"batches"`; `stream_offset` is then the file offset of the first batch.
//! - A `TopicId` the capture's session can name (from an earlier Metadata,
//!   DescribeTopicPartitions or CreateTopics response), in a struct with no topic name of its
//!   own, is followed by the sibling member `"_topic_name":"<name>"`. It is not on the wire:
//!   the encoder ignores it, and `--annotate` output leaves it out (as the batch extras).
//! - Capture notes (gaps, TLS, skipped bytes) print as objects with the origin keys, `"note"`
//!   (the diagnostic code) and `"diagnostics"`, and no `header`/`body`.

use super::time;
use crate::diag::Diagnostic;
use crate::pdu::{Origin, Pdu};
use crate::wire::tree::{Kind, Node, NodeId, Tree, Value};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use std::io::{self, Write};

/// Deepest tree the printer follows; trees come from the decoder, which caps depth far below
/// this, but a printer must not overflow its stack whatever it is given.
const MAX_PRINT_DEPTH: usize = 4 * crate::limits::MAX_DEPTH;

#[derive(Clone, Copy, Debug, Default)]
pub struct JsonOptions {
    /// Every member value becomes `{"offset":o,"length":l,"value":v}`.
    pub annotate: bool,
    /// Print SASL PLAIN passwords instead of masking them.
    pub show_secrets: bool,
}

/// Writes `s` as a JSON string literal (quotes included).
///
/// Record values make up most of a capture's JSON, so the common case (nothing to escape) is
/// found a whole chunk at a time and copied in runs.
pub fn write_str<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    match write_short_clean(w, b"\"", s.as_bytes(), b"\"") {
        Some(done) => done,
        None => write_str_from(w, s, 0),
    }
}

/// Writes `pre`, `b` and `post` (each of `pre` and `post` at most 2 bytes) when `b` is at most
/// [`SHORT_KEY`] bytes and needs no escaping ([`clean_short`]), each straight from where it is.
/// `None`, with nothing written, otherwise. Member names and the short strings of a PDU (topics,
/// client ids, labels) take it. (They used to be laid out in a stack buffer, checked there 32
/// bytes at once and written in one piece: each read of that buffer waited for the smaller stores
/// that had just filled it, and JSON Lines of the benchmark capture took 5% longer, 333 → 317 ms.)
#[inline(always)]
fn write_short_clean<W: Write + ?Sized>(
    w: &mut W,
    pre: &[u8],
    b: &[u8],
    post: &[u8],
) -> Option<io::Result<()>> {
    if b.len() > SHORT_KEY || pre.len() > 2 || post.len() > 2 {
        return None;
    }
    if !clean_short(b) {
        return None;
    }
    Some(
        w.write_all(pre)
            .and_then(|_| w.write_all(b))
            .and_then(|_| w.write_all(post)),
    )
}

/// Whether no byte of `b` (at most [`SHORT_KEY`] bytes) is [`special`], read from `b` itself in
/// overlapping 8-byte words (4-byte ones under 8 bytes), each tested for all of its bytes at once
/// (see [`write_short_clean`] for why not a padded copy).
#[inline(always)]
fn clean_short(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Exact as a whole: some byte of `x` is below 0x20, or is `"`, `\\` or DEL.
    let any_special = |x: u64| {
        let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
        (x.wrapping_sub(0x20 * ONES) & !x & HIGH)
            | zero(x ^ (u64::from(b'"') * ONES))
            | zero(x ^ (u64::from(b'\\') * ONES))
            | zero(x ^ (0x7f * ONES))
            != 0
    };
    let word = |i: usize| {
        b.get(i..i + 8)
            .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
    };
    let n = b.len();
    if n >= 8 {
        // Words at 0, 8 and 16 while more than 8 bytes remain, then the last 8 bytes: every byte
        // at least once.
        let mut i = 0;
        while i + 8 < n {
            if any_special(word(i)) {
                return false;
            }
            i += 8;
        }
        return !any_special(word(n - 8));
    }
    if n >= 4 {
        let half = |i: usize| {
            b.get(i..i + 4)
                .map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap_or([0; 4])))
        };
        // The first 4 bytes and the last 4 (overlapping under 8) as the two halves of one word.
        return !any_special(u64::from(half(0)) | u64::from(half(n - 4)) << 32);
    }
    !b.iter().any(|&x| special::<false>(x))
}

/// [`write_str`] when the first `clean` bytes of `s` are already known to need no escaping.
fn write_str_from<W: Write + ?Sized>(w: &mut W, s: &str, clean: usize) -> io::Result<()> {
    w.write_all(b"\"")?;
    let bytes = s.as_bytes();
    let mut run = 0;
    let mut i = clean;
    loop {
        i += clean_prefix::<false>(bytes.get(i..).unwrap_or_default());
        let Some(&b) = bytes.get(i) else { break };
        w.write_all(&bytes[run..i])?;
        match b {
            b'"' => w.write_all(b"\\\"")?,
            b'\\' => w.write_all(b"\\\\")?,
            b'\n' => w.write_all(b"\\n")?,
            b'\r' => w.write_all(b"\\r")?,
            b'\t' => w.write_all(b"\\t")?,
            0x08 => w.write_all(b"\\b")?,
            0x0c => w.write_all(b"\\f")?,
            _ => write!(w, "\\u{:04x}", b)?,
        }
        i += 1;
        run = i;
    }
    w.write_all(&bytes[run..])?;
    w.write_all(b"\"")
}

/// Writes `,"name":` (the comma when `comma`). Members are most of what the printer writes:
/// a clean name (every schema name) of up to [`SHORT_KEY`] bytes takes
/// [`write_short_clean`]; others are written as any string.
#[inline]
fn write_key<W: Write + ?Sized>(w: &mut W, name: &str, comma: bool) -> io::Result<()> {
    let b = name.as_bytes();
    let pre: &[u8] = if comma { b",\"" } else { b"\"" };
    if let Some(done) = write_short_clean(w, pre, b, b"\":") {
        return done;
    }
    if b.len() > SHORT_KEY && clean_prefix::<false>(b) == b.len() {
        w.write_all(pre)?;
        w.write_all(b)?;
        return w.write_all(b"\":");
    }
    if comma {
        w.write_all(b",")?;
    }
    write_str(w, name)?;
    w.write_all(b":")
}

/// Names up to this long take [`write_key`]'s short path ([`write_short_clean`]).
const SHORT_KEY: usize = 32;

/// Whether `write_str` escapes byte `b` (control characters, `"`, `\\`, DEL); with `ASCII`,
/// also any byte of a multi-byte UTF-8 sequence.
#[inline(always)]
fn special<const ASCII: bool>(b: u8) -> bool {
    // `|`, not `||`: no branches, so that the chunk loop below vectorizes.
    // With `ASCII`, one unsigned compare rules out both ends: `b - 0x20` wraps below 0x20.
    if ASCII {
        (b.wrapping_sub(0x20) >= 0x5f) | (b == b'"') | (b == b'\\')
    } else {
        (b < 0x20) | (b == b'"') | (b == b'\\') | (b == 0x7f)
    }
}

/// Whether no byte of `chunk` is [`special`]: every byte tested, without early exit, a loop
/// the compiler turns into vector compares for a 32-byte chunk.
#[inline(always)]
fn clean_chunk<const ASCII: bool>(chunk: &[u8]) -> bool {
    chunk
        .iter()
        .fold(0u8, |acc, &x| acc | special::<ASCII>(x) as u8)
        == 0
}

/// Length of the leading run of `b` with no [`special`] byte. The bulk is tested 32 bytes at a
/// time without early exit, a loop the compiler turns into vector compares.
#[inline]
fn clean_prefix<const ASCII: bool>(b: &[u8]) -> usize {
    let mut i = 0;
    for chunk in b.chunks_exact(32) {
        if !clean_chunk::<ASCII>(chunk) {
            break;
        }
        i += 32;
    }
    i + b[i..]
        .iter()
        .position(|&x| special::<ASCII>(x))
        .unwrap_or(b.len() - i)
}

/// Writes data that may be text: `{"text":"…"}` when it is valid UTF-8, else
/// `{"base64":"…"}`. Plain ASCII (the usual record value) is validated and scanned for escapes
/// in one pass.
pub(crate) fn write_text_or_base64<W: Write + ?Sized>(w: &mut W, b: &[u8]) -> io::Result<()> {
    let clean = clean_prefix::<true>(b);
    if clean == b.len() {
        // Plain ASCII throughout: valid UTF-8 with nothing to escape.
        w.write_all(b"{\"text\":\"")?;
        w.write_all(b)?;
        return w.write_all(b"\"}");
    }
    match std::str::from_utf8(b) {
        Ok(t) => {
            w.write_all(b"{\"text\":")?;
            write_str_from(w, t, clean)?;
            w.write_all(b"}")
        }
        Err(_) => {
            w.write_all(b"{\"base64\":")?;
            write_base64(w, b)?;
            w.write_all(b"}")
        }
    }
}

/// Writes bytes as a quoted standard base64 string (with padding), streaming.
pub fn write_base64<W: Write + ?Sized>(w: &mut W, data: &[u8]) -> io::Result<()> {
    w.write_all(b"\"")?;
    let mut buf = [0u8; 1024];
    // 768 input bytes → exactly 1024 output chars with no padding, so chunks concatenate.
    for chunk in data.chunks(768) {
        let n = STANDARD
            .encode_slice(chunk, &mut buf)
            .map_err(|e| io::Error::other(e.to_string()))?;
        w.write_all(&buf[..n])?;
    }
    w.write_all(b"\"")
}

/// Writes an integer in decimal without going through `fmt` (the printer's hottest path):
/// two digits per division, one write.
#[inline]
pub fn write_int<W: Write + ?Sized>(w: &mut W, v: i64) -> io::Result<()> {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";
    let mut n = v.unsigned_abs();
    if n < 10 && v >= 0 {
        return w.write_all(&[b'0' + n as u8]);
    }
    // 19 digits and a sign at most.
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    w.write_all(&buf[i..])
}

/// Writes a uuid as a quoted JSON string, as Kafka prints it.
fn write_uuid<W: Write + ?Sized>(w: &mut W, u: &[u8; 16]) -> io::Result<()> {
    let mut buf = [0u8; 24];
    buf[0] = b'"';
    // 16 bytes are always 22 base64 characters, which fit.
    let n = URL_SAFE_NO_PAD
        .encode_slice(u, &mut buf[1..23])
        .unwrap_or(0);
    buf[1 + n] = b'"';
    w.write_all(&buf[..n + 2])
}

/// A uuid as Kafka prints it: 22 characters of base64url without padding.
pub fn uuid_string(u: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(u)
}

/// Writes a float64: a JSON number when finite, else the strings Kafka's JSON uses.
pub fn write_f64<W: Write + ?Sized>(w: &mut W, f: f64) -> io::Result<()> {
    if f.is_nan() {
        w.write_all(b"\"NaN\"")
    } else if f.is_infinite() {
        w.write_all(if f > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        })
    } else {
        // Debug gives the shortest text that reads back to the same f64, always a valid number.
        write!(w, "{f:?}")
    }
}

/// Writes one PDU object (no trailing newline).
pub fn write_pdu<W: Write + ?Sized>(
    w: &mut W,
    pdu: &Pdu,
    input: Option<&str>,
    o: &JsonOptions,
) -> io::Result<()> {
    let t = &pdu.tree;
    w.write_all(b"{")?;
    write_origin(w, &pdu.origin, input)?;
    if let Some(d) = pdu.direction {
        write!(w, ",\"direction\":\"{}\"", d.as_str())?;
    }
    if let Some(so) = pdu.origin.stream_offset {
        write!(w, ",\"stream_offset\":{so}")?;
    }
    let root = t.nodes.first();
    let prefix = root.filter(|r| r.hdr == 4).and_then(|_| size_prefix(t));
    if o.annotate {
        let len = root.map(|r| r.len as usize).unwrap_or(t.buf(0).len());
        write!(w, ",\"offset\":0,\"length\":{len}")?;
    } else if let Some(p) = prefix {
        write!(w, ",\"length\":{p}")?;
    }
    if let Some(k) = pdu.api_key {
        write!(w, ",\"api_key\":{k}")?;
    }
    if let Some(n) = pdu.api_name {
        w.write_all(b",\"api\":")?;
        write_str(w, n)?;
    }
    if let Some(v) = pdu.api_version {
        write!(w, ",\"api_version\":{v}")?;
    }
    if let Some(c) = pdu.correlation_id {
        write!(w, ",\"correlation_id\":{c}")?;
    }
    if let Some(r) = pdu.release {
        w.write_all(b",\"release\":")?;
        write_str(w, r)?;
    }
    if let Some(f) = pdu.request_frame {
        write!(w, ",\"request_frame\":{f}")?;
    }
    if let Some(ns) = pdu.latency_ns {
        w.write_all(b",\"latency_us\":")?;
        write_micros(w, ns)?;
    }
    if o.annotate {
        if let Some(p) = prefix {
            write!(
                w,
                ",\"size_prefix\":{{\"offset\":0,\"length\":4,\"value\":{p}}}"
            )?;
        }
    }
    if let Some(r) = root {
        let mut p = Printer {
            t,
            o,
            sasl: false,
            names: pdu,
        };
        if r.kind == Kind::Array {
            // A log file's batches (one tree per batch, or a corrupt region).
            w.write_all(b",\"batches\":")?;
            p.annotated(w, 0, 1)?;
        } else {
            for c in t.children(0) {
                p.member(w, c, 1, true)?;
            }
        }
    }
    w.write_all(b",\"diagnostics\":")?;
    write_diags(w, &t.diags)?;
    w.write_all(b"}")
}

/// Writes the JSON value of node `id` of `t` alone (as a member's value in [`write_pdu`], no
/// session names): what `output::value` reads back for the encoder.
pub fn write_value<W: Write + ?Sized>(
    w: &mut W,
    t: &Tree,
    id: NodeId,
    o: &JsonOptions,
) -> io::Result<()> {
    let none = Pdu::default();
    let mut p = Printer {
        t,
        o,
        sasl: false,
        names: &none,
    };
    p.annotated(w, id, 1)
}

/// Writes a capture note (something that is not a PDU) as an object.
pub fn write_note<W: Write + ?Sized>(
    w: &mut W,
    origin: &Origin,
    d: &Diagnostic,
    input: Option<&str>,
) -> io::Result<()> {
    w.write_all(b"{")?;
    write_origin(w, origin, input)?;
    if let Some(so) = origin.stream_offset {
        write!(w, ",\"stream_offset\":{so}")?;
    }
    w.write_all(b",\"note\":")?;
    write_str(w, d.code)?;
    w.write_all(b",\"diagnostics\":")?;
    write_diags(w, std::slice::from_ref(d))?;
    w.write_all(b"}")
}

fn write_origin<W: Write + ?Sized>(w: &mut W, o: &Origin, input: Option<&str>) -> io::Result<()> {
    write!(w, "\"index\":{}", o.index)?;
    if let Some(i) = input {
        w.write_all(b",\"input\":")?;
        write_str(w, i)?;
    }
    if let Some(f) = o.frame {
        write!(w, ",\"frame\":{f}")?;
    }
    if let Some(f) = o.frame {
        write!(w, ",\"last_frame\":{}", o.last_frame.unwrap_or(f))?;
    }
    if let Some(ts) = o.ts_ns {
        write!(w, ",\"ts\":\"{}\"", time::rfc3339_nanos(ts))?;
    }
    if let Some(c) = &o.conn {
        write!(
            w,
            ",\"connection\":{{\"client\":\"{}\",\"server\":\"{}\",\"stream\":{}}}",
            c.client, c.server, c.stream
        )?;
    }
    Ok(())
}

fn write_diags<W: Write + ?Sized>(w: &mut W, diags: &[Diagnostic]) -> io::Result<()> {
    w.write_all(b"[")?;
    for (i, d) in diags.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write!(w, "{{\"severity\":\"{}\",\"code\":", d.severity.as_str())?;
        write_str(w, d.code)?;
        w.write_all(b",\"path\":")?;
        write_str(w, &d.path)?;
        write!(w, ",\"offset\":{}", d.offset)?;
        if d.buf != 0 {
            write!(w, ",\"buffer\":{}", d.buf)?;
        }
        w.write_all(b",\"message\":")?;
        write_str(w, &d.message)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]")
}

/// Microseconds from nanoseconds, exact, without trailing zeros: 123400 ns → `123.4`.
fn write_micros<W: Write + ?Sized>(w: &mut W, ns: i64) -> io::Result<()> {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let (us, frac) = (a / 1000, a % 1000);
    if frac == 0 {
        return write!(w, "{sign}{us}");
    }
    let f = format!("{frac:03}");
    write!(w, "{sign}{us}.{}", f.trim_end_matches('0'))
}

/// The value of the 4-byte size prefix at the start of buffer 0.
pub fn size_prefix(t: &Tree) -> Option<i32> {
    let b = t.buf(0).get(..4)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

struct Printer<'a> {
    t: &'a Tree,
    o: &'a JsonOptions,
    /// Inside a SASL token (root member `token`): PLAIN passwords get masked.
    sasl: bool,
    /// Resolved topic names (`_topic_name`).
    names: &'a Pdu,
}

impl Printer<'_> {
    /// `"name":value` (annotated when asked).
    /// Writes `,"name":value` (the comma when `comma`).
    fn member<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        id: NodeId,
        depth: usize,
        comma: bool,
    ) -> io::Result<()> {
        let n = self.t.node(id);
        write_key(w, n.name, comma)?;
        self.sasl = depth == 1 && n.name == "token";
        self.annotated(w, id, depth)
    }

    fn annotated<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        id: NodeId,
        depth: usize,
    ) -> io::Result<()> {
        if !self.o.annotate {
            return self.value(w, id, depth);
        }
        let n = self.t.node(id);
        w.write_all(b"{\"offset\":")?;
        write_int(w, n.offset as i64)?;
        w.write_all(b",\"length\":")?;
        write_int(w, n.len as i64)?;
        if n.buf != 0 {
            w.write_all(b",\"buffer\":")?;
            write_int(w, n.buf as i64)?;
        }
        w.write_all(b",\"value\":")?;
        self.value(w, id, depth)?;
        w.write_all(b"}")
    }

    fn value<W: Write + ?Sized>(&mut self, w: &mut W, id: NodeId, depth: usize) -> io::Result<()> {
        let n = *self.t.node(id);
        if depth > MAX_PRINT_DEPTH {
            return w.write_all(b"{\"_error\":\"depth-limit\"}");
        }
        match n.kind {
            Kind::Struct if n.value == Value::Null => w.write_all(b"null"),
            Kind::Array if n.value == Value::Null => w.write_all(b"null"),
            Kind::Struct => self.object_members(w, id, depth),
            Kind::TaggedSection => {
                // Only reached when a tagged section is not inside a struct (never from the
                // decoder): print it as an object of its own.
                self.object_members(w, id, depth)
            }
            Kind::Array => {
                w.write_all(b"[")?;
                for (i, c) in self.t.children(id).enumerate() {
                    if i > 0 {
                        w.write_all(b",")?;
                    }
                    self.annotated(w, c, depth + 1)?;
                }
                w.write_all(b"]")
            }
            Kind::UnknownTag => self.unknown_tag(w, &n),
            Kind::Error => self.error(w, &n),
            Kind::Scalar => self.scalar(w, &n),
        }
    }

    /// Members of a struct: its children, with a tagged section flattened (known tags as
    /// members, unknown ones gathered under `_unknown_tagged_fields`).
    fn object_members<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        id: NodeId,
        depth: usize,
    ) -> io::Result<()> {
        w.write_all(b"{")?;
        let mut first = true;
        let mut unknown = false;
        let sep = |w: &mut W, first: &mut bool| -> io::Result<()> {
            if !std::mem::take(first) {
                w.write_all(b",")?;
            }
            Ok(())
        };
        let sasl = self.sasl;
        for c in self.t.children(id) {
            let cn = self.t.node(c);
            if cn.kind == Kind::TaggedSection {
                for tc in self.t.children(c) {
                    let tn = self.t.node(tc);
                    if matches!(tn.kind, Kind::UnknownTag) {
                        unknown = true;
                        continue;
                    }
                    let comma = !std::mem::take(&mut first);
                    self.member(w, tc, depth + 1, comma)?;
                    self.sasl = sasl;
                }
            } else {
                if let Some(x) = crate::records::encode::extras(self.t, id, c) {
                    self.batch_extras(w, x, &mut first)?;
                }
                let comma = !std::mem::take(&mut first);
                self.member(w, c, depth + 1, comma)?;
                self.sasl = sasl;
                if !self.o.annotate {
                    if let Some(name) = self.names.topic_name(c) {
                        w.write_all(b",\"_topic_name\":")?;
                        write_str(w, name)?;
                    }
                }
            }
        }
        if unknown {
            sep(w, &mut first)?;
            w.write_all(b"\"_unknown_tagged_fields\":[")?;
            let mut k = 0;
            for c in self
                .t
                .children(id)
                .filter(|&c| self.t.node(c).kind == Kind::TaggedSection)
            {
                for tc in self.t.children(c) {
                    if let Kind::UnknownTag = self.t.node(tc).kind {
                        if k > 0 {
                            w.write_all(b",")?;
                        }
                        k += 1;
                        self.annotated(w, tc, depth + 1)?;
                    }
                }
            }
            w.write_all(b"]")?;
        }
        w.write_all(b"}")
    }

    /// The members a batch needs to be encoded back (`records::encode::extras`): the stored
    /// records count when it differs from the records shown, and the compressed bytes. Not in
    /// annotated output: they are copies of bytes inside `Records`, whose span locates them, and
    /// the encoder reads plain JSON.
    fn batch_extras<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        x: crate::records::encode::Extras,
        first: &mut bool,
    ) -> io::Result<()> {
        if self.o.annotate {
            return Ok(());
        }
        if let Some(c) = x.count {
            if !std::mem::take(first) {
                w.write_all(b",")?;
            }
            write_str(w, crate::records::encode::RECORDS_COUNT)?;
            w.write_all(b":")?;
            write_int(w, c)?;
        }
        if let Some((buf, s)) = x.compressed {
            if !std::mem::take(first) {
                w.write_all(b",")?;
            }
            write_str(w, crate::records::encode::COMPRESSED)?;
            w.write_all(b":")?;
            write_base64(w, self.t.bytes(buf, s))?;
        }
        Ok(())
    }

    fn unknown_tag<W: Write + ?Sized>(&mut self, w: &mut W, n: &Node) -> io::Result<()> {
        let tag = self.t.unknown_tag(n);
        write!(w, "{{\"tag\":{tag},\"data\":")?;
        match n.value {
            Value::Bytes(s) | Value::Data(s) => write_base64(w, self.t.bytes(n.buf, s))?,
            _ => w.write_all(b"null")?,
        }
        w.write_all(b"}")
    }

    fn error<W: Write + ?Sized>(&mut self, w: &mut W, n: &Node) -> io::Result<()> {
        let code = match n.value {
            Value::Diag(i) => self
                .t
                .diags
                .get(i as usize)
                .map(|d| d.code)
                .unwrap_or("error"),
            _ => "error",
        };
        w.write_all(b"{\"_error\":")?;
        write_str(w, code)?;
        w.write_all(b",\"_data\":")?;
        let s = crate::wire::tree::Span {
            start: n.offset,
            len: n.len,
        };
        write_base64(w, self.t.bytes(n.buf, s))?;
        w.write_all(b"}")
    }

    fn scalar<W: Write + ?Sized>(&mut self, w: &mut W, n: &Node) -> io::Result<()> {
        match n.value {
            Value::None | Value::Null => w.write_all(b"null"),
            Value::Bool(b) => w.write_all(if b { b"true" } else { b"false" }),
            Value::Int(i) => write_int(w, i),
            Value::Float(f) => write_f64(w, f),
            Value::Uuid(u) => write_uuid(w, &u),
            Value::Str(s) => write_str(w, &String::from_utf8_lossy(self.t.bytes(n.buf, s))),
            Value::Bytes(s) => {
                let b = self.t.bytes(n.buf, s);
                if self.sasl && !self.o.show_secrets {
                    if let Some(masked) = crate::capture::mask_sasl_plain(b) {
                        return write_base64(w, &masked);
                    }
                }
                write_base64(w, b)
            }
            Value::Data(s) => write_text_or_base64(w, self.t.bytes(n.buf, s)),
            Value::Label(l) => write_str(w, l),
            Value::Diag(i) => {
                let code = self
                    .t
                    .diags
                    .get(i as usize)
                    .map(|d| d.code)
                    .unwrap_or("error");
                w.write_all(b"{\"_error\":")?;
                write_str(w, code)?;
                w.write_all(b"}")
            }
        }
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
pub(crate) mod tests;
