//! The human view: one `offset | bytes | field = value` row per node, in the spirit of
//! `wasm-tools dump` and `tshark -V`. A container's row shows its own prefix bytes (count,
//! length, null marker, tag and size), and says `(N bytes)` where they are a byte length (a
//! `records` field's size, a record's length) rather than the count its `[N]` shows; a leaf's
//! row shows its bytes, cut after two rows so that a 1 MB record set does not flood the
//! terminal. Diagnostics follow the PDU's rows.

use super::json::{size_prefix, uuid_string};
use super::{Options, Palette};
use crate::diag::Diagnostic;
use crate::pdu::{Origin, Pdu};
use crate::wire::tree::{Kind, Node, NodeId, Tree, Value};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Bytes shown per row.
const ROW: usize = 8;
/// Width of the bytes column: `ROW` bytes as `xx ` minus the last space.
const BYTES_W: usize = ROW * 3 - 1;
/// Longest string value shown before it is cut.
const MAX_STR: usize = 120;
const MAX_DEPTH: usize = 4 * crate::limits::MAX_DEPTH;

/// The title line shared by the tree and note views.
fn title(o: &Origin, input: Option<&str>) -> String {
    let mut s = String::new();
    if let Some(i) = input {
        let _ = write!(s, "{i}: ");
    }
    let _ = write!(s, "#{}", o.index);
    if let Some(f) = o.frame {
        let _ = write!(s, " frame {f}");
        if let Some(l) = o.last_frame.filter(|&l| l != f) {
            let _ = write!(s, "-{l}");
        }
    }
    if let Some(ts) = o.ts_ns {
        let _ = write!(s, " {}", super::time::rfc3339_nanos(ts));
    }
    if let (None, Some(at)) = (o.frame, o.stream_offset) {
        let _ = write!(s, " at byte {at}");
    }
    s
}

pub fn write_pdu<W: Write + ?Sized>(
    w: &mut W,
    pdu: &Pdu,
    input: Option<&str>,
    o: &Options,
) -> io::Result<()> {
    let p = Palette::new(o.color);
    let mut head = title(&pdu.origin, input);
    if let (Some(c), Some(d)) = (&pdu.origin.conn, pdu.direction) {
        let (from, to) = match d {
            crate::pdu::Direction::Request => (c.client, c.server),
            crate::pdu::Direction::Response => (c.server, c.client),
        };
        let _ = write!(head, " {from} → {to}");
    }
    if let Some(d) = pdu.direction {
        let _ = write!(head, " {}", d.as_str());
    }
    match (pdu.api_name, pdu.api_key) {
        (Some(n), _) => head.push_str(&format!(" {n}")),
        (None, Some(k)) => head.push_str(&format!(" api {k}")),
        _ => {}
    }
    if let Some(v) = pdu.api_version {
        let _ = write!(head, " v{v}");
    }
    if let Some(c) = pdu.correlation_id {
        let _ = write!(head, " correlation_id={c}");
    }
    if let Some(f) = pdu.request_frame {
        let _ = write!(head, " request_frame={f}");
    }
    if let Some(ns) = pdu.latency_ns {
        let _ = write!(head, " latency={:.1}µs", ns as f64 / 1000.0);
    }
    if let Some(r) = pdu.release {
        let _ = write!(head, " [{r}]");
    }
    writeln!(w, "{}{head}{}", p.bold(), p.reset())?;
    let t = &pdu.tree;
    if !t.nodes.is_empty() {
        let mut r = Rows {
            t,
            p,
            show_secrets: o.show_secrets,
            api_name: pdu.api_name,
            pdu,
        };
        if t.nodes[0].hdr == 4 {
            if let Some(sp) = size_prefix(t) {
                r.row(w, 0, 0, 4, 0, |w| {
                    put(w, p.name())?;
                    put(w, "size")?;
                    put(w, p.reset())?;
                    put(w, " = ")?;
                    put(w, p.number())?;
                    int(w, sp as i64)?;
                    put(w, p.reset())
                })?;
            }
        }
        if t.nodes[0].kind == Kind::Array {
            r.node(w, 0, 0, false)?;
        } else {
            for c in t.children(0) {
                r.node(w, c, 0, false)?;
            }
        }
    }
    for d in &t.diags {
        write_diag(w, d, p)?;
    }
    writeln!(w)
}

pub fn write_note<W: Write + ?Sized>(
    w: &mut W,
    origin: &Origin,
    d: &Diagnostic,
    input: Option<&str>,
    o: &Options,
) -> io::Result<()> {
    let p = Palette::new(o.color);
    let mut head = title(origin, input);
    if let Some(c) = &origin.conn {
        let _ = write!(head, " {} ↔ {}", c.client, c.server);
    }
    writeln!(w, "{}{head}{}", p.bold(), p.reset())?;
    write_diag(w, d, p)?;
    writeln!(w)
}

fn write_diag<W: Write + ?Sized>(w: &mut W, d: &Diagnostic, p: Palette) -> io::Result<()> {
    write!(
        w,
        "  {}{}[{}]{} at ",
        p.severity(d.severity),
        d.severity.as_str(),
        d.code,
        p.reset()
    )?;
    if d.buf != 0 {
        write!(w, "buffer {} ", d.buf)?;
    }
    write!(w, "0x{:04x}", d.offset)?;
    if !d.path.is_empty() {
        write!(w, " {}", d.path)?;
    }
    writeln!(w, ": {}", d.message)
}

struct Rows<'a> {
    t: &'a Tree,
    p: Palette,
    show_secrets: bool,
    /// The PDU's API name, shown next to the header's `RequestApiKey`.
    api_name: Option<&'static str>,
    /// For resolved topic names: `TopicId = AAAA… (name)`.
    pdu: &'a Pdu,
}

/// Writes a string (every piece of a row goes straight to the output: no `format!` per node).
#[inline]
fn put<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    // Colors are empty strings when off: not even a call for them.
    if s.is_empty() {
        return Ok(());
    }
    w.write_all(s.as_bytes())
}

/// `n` in decimal.
#[inline]
fn int<W: Write + ?Sized>(w: &mut W, n: i64) -> io::Result<()> {
    super::json::write_int(w, n)
}

const HEX: &[u8; 16] = b"0123456789abcdef";
const SPACES: [u8; 80] = [b' '; 80];
/// The separator before a row's text and its indent (two spaces a level, 40 levels at most).
const BAR_INDENT: [u8; 83] = {
    let mut a = [b' '; 83];
    a[1] = b'|';
    a
};

/// Up to `ROW` bytes as `xx xx …`, padded with spaces to `BYTES_W`.
fn hex_col<W: Write + ?Sized>(w: &mut W, b: &[u8]) -> io::Result<()> {
    let mut line = [b' '; BYTES_W];
    for (i, x) in b.iter().take(ROW).enumerate() {
        line[i * 3] = HEX[(x >> 4) as usize];
        line[i * 3 + 1] = HEX[(x & 15) as usize];
    }
    w.write_all(&line)
}

/// The offset column: `0x0004` or `2+0x0004` (buffer 2), right-aligned to 8.
fn offset_col<W: Write + ?Sized>(w: &mut W, buf: u16, offset: u32) -> io::Result<()> {
    let mut s = [b' '; 24];
    let mut i = s.len();
    let mut v = offset;
    let mut digits = 0;
    while v != 0 || digits < 4 {
        i -= 1;
        s[i] = HEX[(v & 15) as usize];
        v >>= 4;
        digits += 1;
    }
    i -= 2;
    s[i] = b'0';
    s[i + 1] = b'x';
    if buf != 0 {
        i -= 1;
        s[i] = b'+';
        let mut b = buf;
        loop {
            i -= 1;
            s[i] = b'0' + (b % 10) as u8;
            b /= 10;
            if b == 0 {
                break;
            }
        }
    }
    // Right-aligned to 8: the spaces are already there.
    w.write_all(&s[i.min(s.len() - 8)..])
}

impl Rows<'_> {
    /// One or two rows for `len` bytes at `offset` of buffer `buf`, with the row's text (written
    /// by `text`) on the first.
    fn row<W: Write + ?Sized>(
        &self,
        w: &mut W,
        buf: u16,
        offset: u32,
        len: u32,
        depth: usize,
        text: impl FnOnce(&mut W) -> io::Result<()>,
    ) -> io::Result<()> {
        let data = self
            .t
            .bytes(buf, crate::wire::tree::Span { start: offset, len });
        let p = self.p;
        put(w, p.dim())?;
        offset_col(w, buf, offset)?;
        put(w, p.reset())?;
        w.write_all(b" | ")?;
        hex_col(w, data.get(..data.len().min(ROW)).unwrap_or(&[]))?;
        w.write_all(&BAR_INDENT[..3 + 2 * depth.min(40)])?;
        text(w)?;
        w.write_all(b"\n")?;
        let rest = data.get(ROW..).unwrap_or(&[]);
        if !rest.is_empty() {
            w.write_all(b"         | ")?;
            if rest.len() <= ROW {
                hex_col(w, rest)?;
            } else {
                // `… N more bytes`, padded to the column's width in characters.
                let mut n = [0u8; 24];
                let mut c = io::Cursor::new(&mut n[..]);
                int(&mut c, rest.len() as i64)?;
                let digits = c.position() as usize;
                put(w, "… ")?;
                w.write_all(&n[..digits])?;
                w.write_all(b" more bytes")?;
                let chars = 2 + digits + 11;
                w.write_all(&SPACES[..BYTES_W.saturating_sub(chars)])?;
            }
            w.write_all(b" |\n")?;
        }
        Ok(())
    }

    /// The node's name, colored (nothing for an element or a tagged section).
    fn label(&self, id: NodeId, n: &Node, element: bool) -> Option<&'static str> {
        if element || n.kind == Kind::TaggedSection {
            None
        } else if id == 0 && n.name.is_empty() {
            Some("batches")
        } else if n.name.is_empty() {
            Some("_")
        } else {
            Some(n.name)
        }
    }

    /// ` (N bytes)` after a container whose prefix is a byte length rather than a count or a
    /// marker ([`length_prefix`]), so that the row says what its bytes are.
    fn put_length<W: Write + ?Sized>(&self, w: &mut W, n: &Node, count: usize) -> io::Result<()> {
        if n.hdr == 0 {
            return Ok(());
        }
        let prefix = self.t.bytes(
            n.buf,
            crate::wire::tree::Span {
                start: n.offset,
                len: n.hdr as u32,
            },
        );
        match length_prefix(n.kind, prefix, n.len.saturating_sub(n.hdr as u32), count) {
            Some(len) => {
                put(w, " (")?;
                int(w, i64::from(len))?;
                put(w, if len == 1 { " byte)" } else { " bytes)" })
            }
            None => Ok(()),
        }
    }

    fn put_label<W: Write + ?Sized>(&self, w: &mut W, label: Option<&str>) -> io::Result<()> {
        if let Some(l) = label {
            put(w, self.p.name())?;
            put(w, l)?;
            put(w, self.p.reset())?;
        }
        Ok(())
    }

    fn node<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        id: NodeId,
        depth: usize,
        element: bool,
    ) -> io::Result<()> {
        let n = *self.t.node(id);
        let p = self.p;
        let label = self.label(id, &n, element);
        if depth > MAX_DEPTH {
            return self.row(w, n.buf, n.offset, n.len, depth, |w| {
                self.put_label(w, label)?;
                put(w, " ")?;
                put(w, p.error())?;
                put(w, "(nested too deep to show)")?;
                put(w, p.reset())
            });
        }
        match n.kind {
            Kind::Struct | Kind::Array | Kind::TaggedSection => {
                let count = self.t.children(id).count();
                self.row(w, n.buf, n.offset, n.hdr as u32, depth, |w| {
                    self.put_label(w, label)?;
                    let what = matches!(
                        (n.kind, n.value),
                        (_, Value::Null) | (Kind::Array, _) | (Kind::TaggedSection, _)
                    );
                    if label.is_some() && what {
                        put(w, " ")?;
                    }
                    match (n.kind, n.value) {
                        (_, Value::Null) => {
                            put(w, p.null())?;
                            put(w, "null")?;
                            put(w, p.reset())
                        }
                        (Kind::Array, _) => {
                            put(w, "[")?;
                            int(w, count as i64)?;
                            put(w, "]")?;
                            self.put_length(w, &n, count)
                        }
                        (Kind::TaggedSection, _) => {
                            int(w, count as i64)?;
                            put(
                                w,
                                if count == 1 {
                                    " tagged field"
                                } else {
                                    " tagged fields"
                                },
                            )
                        }
                        _ => Ok(()),
                    }
                })?;
                // Children decoded from another buffer (decompressed records): the container's
                // own bytes after its header are the compressed form; show them once here.
                if let Some(other) = self
                    .t
                    .children(id)
                    .map(|c| self.t.node(c).buf)
                    .find(|&b| b != n.buf)
                {
                    let own = n.len.saturating_sub(n.hdr as u32);
                    if own > 0 {
                        let at = n.offset + n.hdr as u32;
                        self.row(w, n.buf, at, own, depth + 1, |w| {
                            put(w, p.dim())?;
                            put(w, "(")?;
                            int(w, own as i64)?;
                            put(w, " bytes, decoded below from buffer ")?;
                            int(w, other as i64)?;
                            put(w, ")")?;
                            put(w, p.reset())
                        })?;
                    }
                }
                for (i, c) in self.t.children(id).enumerate() {
                    if n.kind == Kind::Array {
                        let cn = *self.t.node(c);
                        let index = |w: &mut W| {
                            put(w, p.name())?;
                            put(w, "[")?;
                            int(w, i as i64)?;
                            put(w, "]")?;
                            put(w, p.reset())
                        };
                        if matches!(cn.kind, Kind::Struct | Kind::Array) {
                            // Only an array's prefix can be its count.
                            let count = match (cn.kind, cn.hdr) {
                                (Kind::Array, 1..) => self.t.children(c).count(),
                                _ => 0,
                            };
                            self.row(w, cn.buf, cn.offset, cn.hdr as u32, depth + 1, |w| {
                                index(w)?;
                                self.put_length(w, &cn, count)?;
                                if cn.value == Value::Null {
                                    put(w, " ")?;
                                    put(w, p.null())?;
                                    put(w, "null")?;
                                    put(w, p.reset())?;
                                }
                                Ok(())
                            })?;
                            for gc in self.t.children(c) {
                                self.node(w, gc, depth + 2, false)?;
                            }
                        } else {
                            self.row(w, cn.buf, cn.offset, cn.len, depth + 1, |w| {
                                index(w)?;
                                put(w, " = ")?;
                                self.value(w, &cn, depth)
                            })?;
                        }
                    } else {
                        self.node(w, c, depth + 1, false)?;
                    }
                }
                Ok(())
            }
            Kind::UnknownTag => self.row(w, n.buf, n.offset, n.len, depth, |w| {
                put(w, p.name())?;
                put(w, "tag ")?;
                int(w, i64::from(self.t.unknown_tag(&n)))?;
                put(w, p.reset())?;
                put(w, " ")?;
                put(w, p.warning())?;
                put(w, "(unknown)")?;
                put(w, p.reset())?;
                put(w, " = ")?;
                if let Value::Bytes(s) = n.value {
                    int(w, s.len as i64)?;
                    put(w, " bytes")?;
                }
                Ok(())
            }),
            Kind::Error => self.row(w, n.buf, n.offset, n.len, depth, |w| {
                self.put_label(w, label)?;
                put(w, " ")?;
                put(w, p.error())?;
                let diag = match n.value {
                    Value::Diag(i) => self.t.diags.get(i as usize),
                    _ => None,
                };
                match diag {
                    Some(d) => {
                        put(w, d.severity.as_str())?;
                        put(w, "[")?;
                        put(w, d.code)?;
                        put(w, "]: ")?;
                        put(w, &d.message)?;
                    }
                    None => put(w, "undecodable")?,
                }
                put(w, p.reset())?;
                put(w, " (")?;
                int(w, n.len as i64)?;
                put(w, " bytes)")
            }),
            Kind::Scalar => self.row(w, n.buf, n.offset, n.len, depth, |w| {
                self.put_label(w, label)?;
                put(w, " = ")?;
                self.value(w, &n, depth)?;
                // Escaped as strings are (the name comes from the capture), unquoted.
                if let Some(name) = self.pdu.topic_name(id) {
                    put(w, " (")?;
                    quote(w, name, true)?;
                    put(w, ")")?;
                }
                Ok(())
            }),
        }
    }

    /// A readable name next to a number where the field name says what the number means.
    fn annotate_int(&self, name: &str, v: i64) -> Option<&'static str> {
        let v16 = i16::try_from(v).ok()?;
        match name {
            "ErrorCode" => super::summary::error_name(v16),
            "RequestApiKey" => self.api_name,
            "ApiKey" => crate::protocol::builtin().api_name(v16),
            _ => None,
        }
    }

    fn value<W: Write + ?Sized>(&self, w: &mut W, n: &Node, depth: usize) -> io::Result<()> {
        let p = self.p;
        match n.value {
            Value::None | Value::Null => {
                put(w, p.null())?;
                put(w, "null")?;
                put(w, p.reset())
            }
            Value::Bool(b) => {
                put(w, p.number())?;
                put(w, if b { "true" } else { "false" })?;
                put(w, p.reset())
            }
            Value::Int(i) => {
                put(w, p.number())?;
                int(w, i)?;
                put(w, p.reset())?;
                if let Some(s) = self.annotate_int(n.name, i) {
                    put(w, " (")?;
                    put(w, s)?;
                    put(w, ")")?;
                }
                Ok(())
            }
            Value::Float(f) => {
                put(w, p.number())?;
                write!(w, "{f:?}")?;
                put(w, p.reset())
            }
            Value::Uuid(u) => {
                put(w, p.string())?;
                put(w, &uuid_string(&u))?;
                put(w, p.reset())
            }
            Value::Str(s) => {
                let text = String::from_utf8_lossy(self.t.bytes(n.buf, s));
                put(w, p.string())?;
                quote(w, &text, false)?;
                put(w, p.reset())
            }
            Value::Bytes(s) => {
                let b = self.t.bytes(n.buf, s);
                int(w, b.len() as i64)?;
                put(w, " bytes")?;
                if depth == 0 && n.name == "token" && !self.show_secrets {
                    if let Some(m) = crate::capture::mask_sasl_plain(b) {
                        put(w, " (SASL/PLAIN ")?;
                        quote(w, &String::from_utf8_lossy(&m), false)?;
                        put(w, ", password masked)")?;
                    }
                }
                Ok(())
            }
            Value::Data(s) => {
                let b = self.t.bytes(n.buf, s);
                match std::str::from_utf8(b) {
                    Ok(text) => {
                        put(w, p.string())?;
                        quote(w, text, false)?;
                        put(w, p.reset())
                    }
                    Err(_) => {
                        int(w, b.len() as i64)?;
                        put(w, " bytes")
                    }
                }
            }
            Value::Label(l) => put(w, l),
            Value::Diag(i) => match self.t.diags.get(i as usize) {
                Some(d) => put(w, d.code),
                None => Ok(()),
            },
        }
    }
}

/// The byte length a container's own prefix (`prefix`, all of its header bytes) gives, when it
/// gives one: a `records` field's size (an int32, or an unsigned varint of the size + 1 when
/// compact) on an array of batches, a record's length (a zigzag varint) on a record. `None` for
/// a count, a null or presence marker, a bit field: the value read must use every prefix byte,
/// equal the `content` bytes that follow the prefix, and, on an array, differ from its `count`
/// of elements (a count prefix is that count).
fn length_prefix(kind: Kind, prefix: &[u8], content: u32, count: usize) -> Option<u32> {
    // Read by the decoder's own cursor, and only when the read ends at the prefix's end.
    let mut c = crate::wire::cursor::Cursor::new(prefix, 0, prefix.len());
    let value: i64 = match (kind, prefix.len()) {
        (_, 0) => return None,
        (Kind::Array, 4) => i64::from(c.i32().ok()?),
        (Kind::Array, _) => i64::from(c.uvarint().ok()?.0) - 1,
        (Kind::Struct, _) => i64::from(c.varint().ok()?.0),
        _ => return None,
    };
    if c.remaining() != 0 {
        return None;
    }
    let is_count = kind == Kind::Array && value == count as i64;
    (value == i64::from(content) && !is_count).then_some(content)
}

/// Whether `char::escape_debug` leaves ASCII byte `b` as it is.
#[inline(always)]
fn plain(b: u8) -> bool {
    // 0x20..0x7f, and `&`, not `&&`: no branches, so that the chunk scan vectorizes.
    (b.wrapping_sub(0x20) < 0x5f) & (b != b'"') & (b != b'\'') & (b != b'\\')
}

/// Writes a string literal for humans: quotes, escapes (as `char::escape_debug`), cut after
/// `MAX_STR` characters. `bare` leaves out the first and the last character (the quotes, or
/// the `)` after a cut string's length). Printable ASCII, the usual case, is copied in runs.
fn quote<W: Write + ?Sized>(w: &mut W, s: &str, bare: bool) -> io::Result<()> {
    if !bare {
        w.write_all(b"\"")?;
    }
    let bytes = s.as_bytes();
    // The leading run of plain ASCII (one character per byte), found a chunk at a time.
    let head = bytes.get(..bytes.len().min(MAX_STR)).unwrap_or(bytes);
    let mut i = 0;
    for chunk in head.chunks_exact(16) {
        if chunk.iter().fold(false, |acc, &b| acc | !plain(b)) {
            break;
        }
        i += 16;
    }
    let (mut run, mut chars) = (0, i);
    while i < bytes.len() {
        if chars == MAX_STR {
            w.write_all(&bytes[run..i])?;
            put(w, "\"… (")?;
            int(w, s.chars().count() as i64)?;
            return put(w, if bare { " chars" } else { " chars)" });
        }
        let b = bytes[i];
        chars += 1;
        if plain(b) {
            i += 1;
            continue;
        }
        w.write_all(&bytes[run..i])?;
        let Some(c) = s.get(i..).and_then(|t| t.chars().next()) else {
            break;
        };
        let mut enc = [0u8; 4];
        for e in c.escape_debug() {
            w.write_all(e.encode_utf8(&mut enc).as_bytes())?;
        }
        i += c.len_utf8();
        run = i;
    }
    w.write_all(bytes.get(run..).unwrap_or(&[]))?;
    if !bare {
        w.write_all(b"\"")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a prefix that reads, with every byte, as exactly the bytes that follow is a length;
    /// a count, a marker and a bit field are not, nor is a truncated varint.
    #[test]
    fn a_prefix_is_shown_as_a_length_only_when_it_is_one() {
        // A records field: int32 size, or compact (size + 1); a record: zigzag varint.
        assert_eq!(
            length_prefix(Kind::Array, &[0, 0, 0, 0xc3], 195, 1),
            Some(195)
        );
        assert_eq!(length_prefix(Kind::Array, &[0xc4, 0x01], 195, 1), Some(195));
        assert_eq!(
            length_prefix(Kind::Struct, &[0x84, 0x05], 322, 9),
            Some(322)
        );
        // The same bytes before a different length: not a length.
        assert_eq!(length_prefix(Kind::Array, &[0, 0, 0, 0xc3], 194, 1), None);
        assert_eq!(length_prefix(Kind::Struct, &[0x84, 0x05], 321, 9), None);
        // A count prefix is the number of elements, even when the bytes match too.
        assert_eq!(length_prefix(Kind::Array, &[0, 0, 0, 3], 3, 3), None);
        assert_eq!(length_prefix(Kind::Array, &[0x01], 0, 0), None);
        // A presence marker (1) and null (-1) of a nullable struct; the attributes' int16 bits.
        assert_eq!(length_prefix(Kind::Struct, &[0x01], 0, 0), None);
        assert_eq!(length_prefix(Kind::Struct, &[0xff], 0, 0), None);
        assert_eq!(length_prefix(Kind::Struct, &[0x00, 0x00], 0, 5), None);
        // A varint that does not end at the prefix's last byte, or does not end at all.
        assert_eq!(length_prefix(Kind::Struct, &[0x04, 0x00], 2, 0), None);
        assert_eq!(length_prefix(Kind::Struct, &[0x84, 0x85], 322, 0), None);
        assert_eq!(length_prefix(Kind::Struct, &[], 0, 0), None);
        assert_eq!(length_prefix(Kind::TaggedSection, &[0x00], 0, 0), None);
    }

    /// The literal as the printer wrote it before it streamed: `char::escape_debug` per
    /// character (the oracle), cut after `MAX_STR` characters.
    fn oracle(s: &str) -> String {
        let mut out = String::from("\"");
        for (i, c) in s.chars().enumerate() {
            if i == MAX_STR {
                out.push_str(&format!("\"… ({} chars)", s.chars().count()));
                return out;
            }
            out.extend(c.escape_debug());
        }
        out.push('"');
        out
    }

    #[test]
    fn quote_escapes_as_escape_debug_and_cuts_after_max_str() {
        let long_plain = "a".repeat(300);
        let long_mixed = format!("{}é\"{}", "x".repeat(118), "y".repeat(10));
        let cases = [
            "",
            "plain",
            "it's \"q\" \\ done",
            "tab\there\nnew\r\0\x7f\x01",
            "é ü 日本 \u{301} \u{200b} 🦀",
            long_plain.as_str(),
            &long_plain[..MAX_STR],
            &long_plain[..MAX_STR + 1],
            long_mixed.as_str(),
        ];
        for s in cases {
            let want = oracle(s);
            let mut got = Vec::new();
            quote(&mut got, s, false).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), want, "{s:?}");
            let mut bare = Vec::new();
            quote(&mut bare, s, true).unwrap();
            assert_eq!(
                String::from_utf8(bare).unwrap(),
                want[1..want.len() - 1],
                "{s:?}"
            );
        }
    }

    #[test]
    fn columns_match_the_format_widths() {
        for (buf, off) in [
            (0u16, 0u32),
            (0, 0x12345),
            (0, u32::MAX),
            (3, 7),
            (65535, 0xabcdef),
        ] {
            let mut got = Vec::new();
            offset_col(&mut got, buf, off).unwrap();
            let text = if buf == 0 {
                format!("0x{off:04x}")
            } else {
                format!("{buf}+0x{off:04x}")
            };
            assert_eq!(String::from_utf8(got).unwrap(), format!("{text:>8}"));
        }
        for n in 0..=ROW {
            let b: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
            let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
            let mut got = Vec::new();
            hex_col(&mut got, &b).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                format!("{:<BYTES_W$}", hex.join(" "))
            );
        }
    }
}
