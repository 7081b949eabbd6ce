//! The human view: one `offset | bytes | field = value` row per node, in the spirit of
//! `wasm-tools dump` and `tshark -V`. A container's row shows its own prefix bytes (count,
//! length, null marker, tag and size); a leaf's row shows its bytes, cut after two rows so that
//! a 1 MB record set does not flood the terminal. Diagnostics follow the PDU's rows.

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
                r.row(
                    w,
                    0,
                    0,
                    4,
                    0,
                    &format!(
                        "{}size{} = {}{sp}{}",
                        p.name(),
                        p.reset(),
                        p.number(),
                        p.reset()
                    ),
                )?;
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

impl Rows<'_> {
    /// One or two rows for `len` bytes at `offset` of buffer `buf`, with `text` on the first.
    fn row<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        buf: u16,
        offset: u32,
        len: u32,
        depth: usize,
        text: &str,
    ) -> io::Result<()> {
        let data = self
            .t
            .bytes(buf, crate::wire::tree::Span { start: offset, len });
        let p = self.p;
        let off = if buf == 0 {
            format!("0x{offset:04x}")
        } else {
            format!("{buf}+0x{offset:04x}")
        };
        let indent = "  ".repeat(depth.min(40));
        let first = data.get(..data.len().min(ROW)).unwrap_or(&[]);
        writeln!(
            w,
            "{}{off:>8}{} | {:<BYTES_W$} | {indent}{text}",
            p.dim(),
            p.reset(),
            hex(first)
        )?;
        let rest = data.get(ROW..).unwrap_or(&[]);
        if !rest.is_empty() {
            let col = if rest.len() <= ROW {
                hex(rest)
            } else {
                format!("… {} more bytes", rest.len())
            };
            writeln!(w, "{:>8} | {col:<BYTES_W$} |", "")?;
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
        let label = if element || n.kind == Kind::TaggedSection {
            String::new()
        } else {
            format!(
                "{}{}{}",
                p.name(),
                if id == 0 && n.name.is_empty() {
                    "batches"
                } else if n.name.is_empty() {
                    "_"
                } else {
                    n.name
                },
                p.reset()
            )
        };
        if depth > MAX_DEPTH {
            return self.row(
                w,
                n.buf,
                n.offset,
                n.len,
                depth,
                &format!(
                    "{label} {}(nested too deep to show){}",
                    p.error(),
                    p.reset()
                ),
            );
        }
        match n.kind {
            Kind::Struct | Kind::Array | Kind::TaggedSection => {
                let count = self.t.children(id).count();
                let what = match (n.kind, n.value) {
                    (_, Value::Null) => format!("{}null{}", p.null(), p.reset()),
                    (Kind::Array, _) => format!("[{count}]"),
                    (Kind::TaggedSection, _) => {
                        format!("{count} tagged field{}", if count == 1 { "" } else { "s" })
                    }
                    _ => String::new(),
                };
                let text = match (label.is_empty(), what.is_empty()) {
                    (true, _) => what,
                    (false, true) => label,
                    (false, false) => format!("{label} {what}"),
                };
                self.row(w, n.buf, n.offset, n.hdr as u32, depth, &text)?;
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
                        let note = format!(
                            "{}({own} bytes, decoded below from buffer {other}){}",
                            p.dim(),
                            p.reset()
                        );
                        self.row(w, n.buf, n.offset + n.hdr as u32, own, depth + 1, &note)?;
                    }
                }
                for (i, c) in self.t.children(id).enumerate() {
                    if n.kind == Kind::Array {
                        let cn = self.t.node(c);
                        if matches!(cn.kind, Kind::Struct | Kind::Array) {
                            let is_null = cn.value == Value::Null;
                            let t = format!(
                                "{}[{i}]{}{}",
                                p.name(),
                                p.reset(),
                                if is_null {
                                    format!(" {}null{}", p.null(), p.reset())
                                } else {
                                    String::new()
                                }
                            );
                            self.row(w, cn.buf, cn.offset, cn.hdr as u32, depth + 1, &t)?;
                            for gc in self.t.children(c) {
                                self.node(w, gc, depth + 2, false)?;
                            }
                        } else {
                            let v = self.value(&cn.clone(), depth);
                            let t = format!("{}[{i}]{} = {v}", p.name(), p.reset());
                            self.row(w, cn.buf, cn.offset, cn.len, depth + 1, &t)?;
                        }
                    } else {
                        self.node(w, c, depth + 1, false)?;
                    }
                }
                Ok(())
            }
            Kind::UnknownTag(tag) => {
                let v = match n.value {
                    Value::Bytes(s) => format!("{} bytes", s.len),
                    _ => String::new(),
                };
                let text = format!(
                    "{}tag {tag}{} {}(unknown){} = {v}",
                    p.name(),
                    p.reset(),
                    p.warning(),
                    p.reset()
                );
                self.row(w, n.buf, n.offset, n.len, depth, &text)
            }
            Kind::Error => {
                let msg = match n.value {
                    Value::Diag(i) => self
                        .t
                        .diags
                        .get(i as usize)
                        .map(|d| format!("{}[{}]: {}", d.severity.as_str(), d.code, d.message)),
                    _ => None,
                }
                .unwrap_or_else(|| "undecodable".into());
                let text = format!("{label} {}{msg}{} ({} bytes)", p.error(), p.reset(), n.len);
                self.row(w, n.buf, n.offset, n.len, depth, &text)
            }
            Kind::Scalar => {
                let v = self.value(&n, depth);
                let text = match self.pdu.topic_name(id) {
                    // Escaped as strings are (the name comes from the capture), unquoted.
                    Some(name) => {
                        let q = quote(name);
                        let inner = q.get(1..q.len().saturating_sub(1)).unwrap_or(&q);
                        format!("{label} = {v} ({inner})")
                    }
                    None => format!("{label} = {v}"),
                };
                self.row(w, n.buf, n.offset, n.len, depth, &text)
            }
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

    fn value(&self, n: &Node, depth: usize) -> String {
        let p = self.p;
        match n.value {
            Value::None | Value::Null => format!("{}null{}", p.null(), p.reset()),
            Value::Bool(b) => format!("{}{b}{}", p.number(), p.reset()),
            Value::Int(i) => {
                let extra = self
                    .annotate_int(n.name, i)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                format!("{}{i}{}{extra}", p.number(), p.reset())
            }
            Value::Float(f) => format!("{}{f:?}{}", p.number(), p.reset()),
            Value::Uuid(u) => format!("{}{}{}", p.string(), uuid_string(&u), p.reset()),
            Value::Str(s) => {
                let text = String::from_utf8_lossy(self.t.bytes(n.buf, s));
                format!("{}{}{}", p.string(), quote(&text), p.reset())
            }
            Value::Bytes(s) => {
                let b = self.t.bytes(n.buf, s);
                if depth == 0 && n.name == "token" && !self.show_secrets {
                    if let Some(m) = crate::capture::mask_sasl_plain(b) {
                        return format!(
                            "{} bytes (SASL/PLAIN {}, password masked)",
                            b.len(),
                            quote(&String::from_utf8_lossy(&m))
                        );
                    }
                }
                format!("{} bytes", b.len())
            }
            Value::Data(s) => {
                let b = self.t.bytes(n.buf, s);
                match std::str::from_utf8(b) {
                    Ok(text) => format!("{}{}{}", p.string(), quote(text), p.reset()),
                    Err(_) => format!("{} bytes", b.len()),
                }
            }
            Value::Label(l) => l.to_string(),
            Value::Diag(i) => self
                .t
                .diags
                .get(i as usize)
                .map(|d| d.code.to_string())
                .unwrap_or_default(),
        }
    }
}

/// A string literal for humans: quotes, escapes, cut after `MAX_STR` characters.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_STR) + 2);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == MAX_STR {
            out.push_str("\"… (");
            let _ = write!(out, "{} chars)", s.chars().count());
            return out;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 3);
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:02x}");
    }
    s
}
