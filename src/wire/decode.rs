//! The plan interpreter: walks a compiled [`Plan`] over the bytes and writes the decoded tree
//! (shape fixed by CONTRACT.md), plus the frame-level [`Decoder`] (size prefix, direction,
//! headers, release-aware body, ApiVersions fallback).
//!
//! Degrade, don't abort: when a field cannot be decoded, an `Error` node covers the rest of the
//! innermost bounded region (a tagged field's declared size, else the message) and every open
//! container is closed there, so the tree still tiles and the frame is still shown.
//!
//! Diagnostic codes (stable; severity in brackets):
//! - `truncated` [error]: fewer bytes than a field needs.
//! - `negative-length` [error]: a length or count below -1 (compact: a uvarint ≥ 2^31).
//! - `null-not-allowed` [error]: null (-1 / 0) where the version is not nullable; shown as null.
//! - `count-exceeds-remaining` [error]: an array (or tagged-field count) claims more elements
//!   than bytes remain, rejected before anything is reserved (Kafka's own guard).
//! - `string-too-long` [error]: a string longer than 32767 bytes (Kafka's reader refuses it).
//! - `invalid-utf8` [warning]: a string that is not UTF-8 (Kafka replaces, so do the printers).
//! - `invalid-bool` [warning]: a bool byte other than 0/1 (read as true, as Kafka does).
//! - `varint-overlong` [warning]: a non-minimal unsigned varint (accepted by Kafka).
//! - `varint-overflow` [error]: a varint with a 6th byte; [warning] when the 5th byte sets bits
//!   above 2^32 (Kafka drops them).
//! - `tag-order` / `tag-duplicate` [error]: tagged fields not strictly ascending.
//! - `tag-size-mismatch` [error]: a known tag's content does not fill exactly its declared size.
//! - `depth-limit` [error]: nesting beyond `limits::MAX_DEPTH`; `node-limit` [error]: more than
//!   `limits::MAX_NODES_PER_TREE` nodes.
//! - Frame level (see [`Decoder`]): `unknown-api`, `unknown-version`, `unstable-version`
//!   [warning], `trailing-bytes`, `size-mismatch`, `missing-hints`, `apiversions-fallback` [info].

use super::cursor::{Cursor, ReadError, VarintForm};
use super::diag::Diagnostic;
use super::plan::{Plan, StructPlan, Ty};
use super::tree::{Kind, NodeId, Span, Tree, Value};
use crate::limits::{MAX_DEPTH, MAX_NODES_PER_TREE};
use crate::schema::model::{MessageSpec, Prim};
use std::fmt::Write as _;

/// One step of a field path: `.Name` or `[i]`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg {
    Name(&'static str),
    Index(u32),
}

/// The rest of the bounded region was turned into an `Error` node; unwind to its owner.
#[derive(Debug)]
pub(crate) struct Abort;

type Step = Result<usize, Abort>;

/// How a struct's presence is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    /// Nullable struct outside tags: int8, negative = null.
    Int8,
    /// Nullable struct inside a tag: uvarint, ≤ 0 (as a Java int) = null.
    Uvarint,
}

/// Decoding state for one message body in one buffer.
pub(crate) struct Walker<'t, 'd> {
    pub tree: &'t mut Tree,
    pub data: &'d [u8],
    pub buf: u16,
    pub prefix: &'d str,
    pub path: &'t mut Vec<Seg>,
    depth: usize,
}

impl<'t, 'd> Walker<'t, 'd> {
    pub fn new(
        tree: &'t mut Tree,
        data: &'d [u8],
        buf: u16,
        prefix: &'d str,
        path: &'t mut Vec<Seg>,
    ) -> Self {
        path.clear();
        Walker {
            tree,
            data,
            buf,
            prefix,
            path,
            depth: 0,
        }
    }

    fn path_string(&self) -> String {
        let mut s = String::with_capacity(self.prefix.len() + 16 * self.path.len());
        s.push_str(self.prefix);
        for seg in self.path.iter() {
            match seg {
                Seg::Name(n) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(n);
                }
                Seg::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
            }
        }
        s
    }

    fn diag(&mut self, d: Diagnostic) {
        self.tree.diags.push(d.in_buf(self.buf));
    }

    fn warn(&mut self, code: &'static str, offset: usize, msg: String) {
        let d = Diagnostic::warning(code, self.path_string(), offset as u64, msg);
        self.diag(d);
    }

    fn err(&mut self, code: &'static str, offset: usize, msg: String) {
        let d = Diagnostic::error(code, self.path_string(), offset as u64, msg);
        self.diag(d);
    }

    /// Ends the current region: an `Error` node from `from` to `limit`.
    fn fail(
        &mut self,
        name: &'static str,
        from: usize,
        limit: usize,
        code: &'static str,
        at: usize,
        msg: String,
    ) -> Abort {
        let d = Diagnostic::error(code, self.path_string(), at as u64, msg).in_buf(self.buf);
        self.tree.error_node(
            name,
            self.buf,
            from as u32,
            limit.saturating_sub(from) as u32,
            d,
        );
        Abort
    }

    fn read_fail(
        &mut self,
        name: &'static str,
        from: usize,
        limit: usize,
        at: usize,
        what: &str,
        e: ReadError,
    ) -> Abort {
        match e {
            ReadError::Truncated { need, have } => self.fail(
                name,
                from,
                limit,
                "truncated",
                at,
                format!("expected {what} ({need} bytes) at byte {at}, only {have} left"),
            ),
            ReadError::VarintTooLong { max_bytes } => self.fail(
                name,
                from,
                limit,
                "varint-overflow",
                at,
                format!("{what}: varint longer than {max_bytes} bytes"),
            ),
        }
    }

    fn check_varint(&mut self, form: VarintForm, at: usize, what: &str) {
        if form.overlong {
            self.warn(
                "varint-overlong",
                at,
                format!("{what}: non-minimal {}-byte varint", form.len),
            );
        }
        if form.dropped_bits {
            self.warn(
                "varint-overflow",
                at,
                format!("{what}: bits above 2^32 set in the 5th varint byte (dropped)"),
            );
        }
    }

    fn uvarint(
        &mut self,
        name: &'static str,
        from: usize,
        at: usize,
        limit: usize,
        what: &str,
    ) -> Result<(u32, usize), Abort> {
        let mut c = Cursor::new(self.data, at, limit);
        match c.uvarint() {
            Ok((v, form)) => {
                self.check_varint(form, at, what);
                Ok((v, form.len as usize))
            }
            Err(e) => Err(self.read_fail(name, from, limit, at, what, e)),
        }
    }

    /// Guards every container: depth and node count.
    fn enter(&mut self, name: &'static str, pos: usize, limit: usize) -> Result<(), Abort> {
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(
                name,
                pos,
                limit,
                "depth-limit",
                pos,
                format!("nesting deeper than {MAX_DEPTH}"),
            ));
        }
        if self.tree.nodes.len() >= MAX_NODES_PER_TREE {
            return Err(self.fail(
                name,
                pos,
                limit,
                "node-limit",
                pos,
                format!("more than {MAX_NODES_PER_TREE} nodes"),
            ));
        }
        Ok(())
    }

    /// Decodes the plan's root struct as node `name` over `[start, end)`; returns where it ended
    /// (`end` when it had to give up).
    pub fn message(&mut self, plan: &Plan, name: &'static str, start: usize, end: usize) -> usize {
        self.structure(plan, plan.root, name, Marker::None, start, end)
            .unwrap_or(end)
    }

    fn structure(
        &mut self,
        plan: &Plan,
        sid: u32,
        name: &'static str,
        marker: Marker,
        pos: usize,
        limit: usize,
    ) -> Step {
        self.enter(name, pos, limit)?;
        let sp: &StructPlan = plan.structure(sid);
        let mut p = pos;
        let null = match marker {
            Marker::None => false,
            Marker::Int8 => match Cursor::new(self.data, p, limit).i8() {
                Ok(m) => {
                    p += 1;
                    m < 0
                }
                Err(e) => {
                    return Err(self.read_fail(
                        name,
                        pos,
                        limit,
                        pos,
                        "a nullable-struct marker (int8)",
                        e,
                    ))
                }
            },
            Marker::Uvarint => {
                let (m, len) =
                    self.uvarint(name, pos, p, limit, "a nullable-struct marker (uvarint)")?;
                p += len;
                (m as i32) <= 0
            }
        };
        let id = self.tree.open(name, Kind::Struct, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = (p - pos) as u16;
        if null {
            self.tree.node_mut(id).value = Value::Null;
            self.tree.close(id, p as u32);
            return Ok(p);
        }
        self.depth += 1;
        let r = self.members(plan, sp, p, limit);
        self.depth -= 1;
        match r {
            Ok(q) => {
                self.tree.close(id, q as u32);
                Ok(q)
            }
            Err(a) => {
                self.tree.close(id, limit as u32);
                Err(a)
            }
        }
    }

    fn members(&mut self, plan: &Plan, sp: &StructPlan, mut p: usize, limit: usize) -> Step {
        for f in &sp.fields {
            self.path.push(Seg::Name(f.name));
            let r = self.value(plan, &f.ty, f.name, f.nullable, f.compact, false, p, limit);
            self.path.pop();
            p = r?;
        }
        if sp.flexible {
            p = self.tagged_section(plan, sp, p, limit)?;
        }
        Ok(p)
    }

    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        plan: &Plan,
        ty: &Ty,
        name: &'static str,
        nullable: bool,
        compact: bool,
        in_tag: bool,
        pos: usize,
        limit: usize,
    ) -> Step {
        match ty {
            Ty::Prim(p) => self.prim(*p, name, nullable, compact, pos, limit),
            Ty::Struct(sid) => {
                let marker = match (nullable, in_tag) {
                    (false, _) => Marker::None,
                    (true, false) => Marker::Int8,
                    (true, true) => Marker::Uvarint,
                };
                self.structure(plan, *sid, name, marker, pos, limit)
            }
            Ty::Array(elem) => self.array(plan, elem, name, nullable, compact, pos, limit),
            Ty::TooDeep => Err(self.fail(
                name,
                pos,
                limit,
                "depth-limit",
                pos,
                format!("schema nesting deeper than {MAX_DEPTH}"),
            )),
        }
    }

    /// Reads a length or count prefix: `(value, prefix bytes)`, -1 meaning null.
    fn length(
        &mut self,
        name: &'static str,
        compact: bool,
        wide: bool,
        pos: usize,
        limit: usize,
        what: &str,
    ) -> Result<(i64, usize), Abort> {
        if compact {
            let (raw, len) = self.uvarint(name, pos, pos, limit, what)?;
            // Kafka computes `readUnsignedVarint() - 1` on a Java int.
            return Ok((i64::from(raw as i32) - 1, len));
        }
        let mut c = Cursor::new(self.data, pos, limit);
        let r = if wide {
            c.i32().map(i64::from)
        } else {
            c.i16().map(i64::from)
        };
        match r {
            Ok(n) => Ok((n, if wide { 4 } else { 2 })),
            Err(e) => Err(self.read_fail(name, pos, limit, pos, what, e)),
        }
    }

    fn prim(
        &mut self,
        p: Prim,
        name: &'static str,
        nullable: bool,
        compact: bool,
        pos: usize,
        limit: usize,
    ) -> Step {
        let mut c = Cursor::new(self.data, pos, limit);
        let fixed = match p {
            Prim::Bool => c.u8().map(|b| {
                if b > 1 {
                    self.warn(
                        "invalid-bool",
                        pos,
                        format!("bool byte {b:#04x} (expected 0 or 1), read as true"),
                    );
                }
                Value::Bool(b != 0)
            }),
            Prim::Int8 => c.i8().map(|v| Value::Int(v.into())),
            Prim::Int16 => c.i16().map(|v| Value::Int(v.into())),
            Prim::Uint16 => c.u16().map(|v| Value::Int(v.into())),
            Prim::Int32 => c.i32().map(|v| Value::Int(v.into())),
            Prim::Uint32 => c.u32().map(|v| Value::Int(v.into())),
            Prim::Int64 => c.i64().map(Value::Int),
            Prim::Float64 => c.f64().map(Value::Float),
            Prim::Uuid => c.uuid().map(Value::Uuid),
            Prim::String | Prim::Bytes | Prim::Records => {
                return self.blob(p, name, nullable, compact, pos, limit)
            }
        };
        match fixed {
            Ok(v) => {
                self.tree
                    .leaf(name, v, self.buf, pos as u32, (c.pos() - pos) as u32);
                Ok(c.pos())
            }
            Err(e) => Err(self.read_fail(name, pos, limit, pos, p.as_str(), e)),
        }
    }

    /// string / bytes / records: a length prefix then that many bytes.
    fn blob(
        &mut self,
        p: Prim,
        name: &'static str,
        nullable: bool,
        compact: bool,
        pos: usize,
        limit: usize,
    ) -> Step {
        let what = if compact {
            "a compact length (uvarint)"
        } else if p == Prim::String {
            "a length (int16)"
        } else {
            "a length (int32)"
        };
        let (n, hdr) = self.length(name, compact, p != Prim::String, pos, limit, what)?;
        let start = pos + hdr;
        if n == -1 {
            if !nullable {
                self.err(
                    "null-not-allowed",
                    pos,
                    format!("null {} where this version does not allow null", p.as_str()),
                );
            }
            let id = self
                .tree
                .leaf(name, Value::Null, self.buf, pos as u32, hdr as u32);
            self.tree.node_mut(id).hdr = hdr as u16;
            return Ok(start);
        }
        if n < -1 {
            return Err(self.fail(
                name,
                pos,
                limit,
                "negative-length",
                pos,
                format!("{} length {n} (only -1 means null)", p.as_str()),
            ));
        }
        let len = n as usize;
        if len > limit.saturating_sub(start) {
            return Err(self.fail(
                name,
                pos,
                limit,
                "truncated",
                start,
                format!(
                    "{} of {len} bytes at byte {start}, only {} left",
                    p.as_str(),
                    limit.saturating_sub(start)
                ),
            ));
        }
        let span = Span {
            start: start as u32,
            len: len as u32,
        };
        let value = match p {
            Prim::String => {
                if len > i16::MAX as usize {
                    self.err(
                        "string-too-long",
                        pos,
                        format!("string of {len} bytes; Kafka refuses more than 32767"),
                    );
                }
                let bytes = self.data.get(start..start + len).unwrap_or(&[]);
                if let Err(e) = std::str::from_utf8(bytes) {
                    let at = start + e.valid_up_to();
                    self.warn(
                        "invalid-utf8",
                        at,
                        format!("invalid UTF-8 at byte {at} of a string (shown with U+FFFD)"),
                    );
                }
                Value::Str(span)
            }
            _ => Value::Bytes(span),
        };
        let id = self
            .tree
            .leaf(name, value, self.buf, pos as u32, (hdr + len) as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        Ok(start + len)
    }

    #[allow(clippy::too_many_arguments)]
    fn array(
        &mut self,
        plan: &Plan,
        elem: &Ty,
        name: &'static str,
        nullable: bool,
        compact: bool,
        pos: usize,
        limit: usize,
    ) -> Step {
        self.enter(name, pos, limit)?;
        let what = if compact {
            "an array count (uvarint)"
        } else {
            "an array count (int32)"
        };
        let (n, hdr) = self.length(name, compact, true, pos, limit, what)?;
        let start = pos + hdr;
        let id = self.tree.open(name, Kind::Array, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        if n == -1 {
            if !nullable {
                self.err(
                    "null-not-allowed",
                    pos,
                    "null array where this version does not allow null".into(),
                );
            }
            self.tree.node_mut(id).value = Value::Null;
            self.tree.close(id, start as u32);
            return Ok(start);
        }
        let remaining = limit.saturating_sub(start);
        let bad = if n < -1 {
            Some((
                "negative-length",
                format!("array count {n} (only -1 means null)"),
            ))
        } else if n as u64 > remaining as u64 {
            Some((
                "count-exceeds-remaining",
                format!("array claims {n} elements but only {remaining} bytes remain"),
            ))
        } else {
            None
        };
        if let Some((code, msg)) = bad {
            // The count prefix stays with the array; the error covers what follows.
            let a = self.fail("", start, limit, code, pos, msg);
            self.tree.close(id, limit as u32);
            return Err(a);
        }
        let mut p = start;
        self.depth += 1;
        for i in 0..n as u32 {
            self.path.push(Seg::Index(i));
            let r = self.value(plan, elem, "", false, compact, false, p, limit);
            self.path.pop();
            match r {
                Ok(q) => p = q,
                Err(a) => {
                    self.depth -= 1;
                    self.tree.close(id, limit as u32);
                    return Err(a);
                }
            }
        }
        self.depth -= 1;
        self.tree.close(id, p as u32);
        Ok(p)
    }

    fn tagged_section(&mut self, plan: &Plan, sp: &StructPlan, pos: usize, limit: usize) -> Step {
        self.path.push(Seg::Name("_tagged_fields"));
        let r = self.tagged_inner(plan, sp, pos, limit);
        self.path.pop();
        r
    }

    fn tagged_inner(&mut self, plan: &Plan, sp: &StructPlan, pos: usize, limit: usize) -> Step {
        let (count, hdr) = self.uvarint("", pos, pos, limit, "a tagged-field count (uvarint)")?;
        let mut p = pos + hdr;
        // Each tagged field takes at least two bytes (tag and size).
        if count as u64 * 2 > limit.saturating_sub(p) as u64 {
            let rem = limit.saturating_sub(p);
            return Err(self.fail(
                "",
                pos,
                limit,
                "count-exceeds-remaining",
                pos,
                format!("{count} tagged fields claimed but only {rem} bytes remain"),
            ));
        }
        let id = self
            .tree
            .open("", Kind::TaggedSection, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        let mut prev: Option<u32> = None;
        for _ in 0..count {
            match self.tagged_field(plan, sp, p, limit, &mut prev) {
                Ok(q) => p = q,
                Err(a) => {
                    self.tree.close(id, limit as u32);
                    return Err(a);
                }
            }
        }
        self.tree.close(id, p as u32);
        Ok(p)
    }

    fn tagged_field(
        &mut self,
        plan: &Plan,
        sp: &StructPlan,
        p: usize,
        limit: usize,
        prev: &mut Option<u32>,
    ) -> Step {
        let (tag, tl) = self.uvarint("", p, p, limit, "a tag (uvarint)")?;
        let (size, sl) = self.uvarint("", p, p + tl, limit, "a tagged-field size (uvarint)")?;
        let q = p + tl + sl;
        let size = size as usize;
        if size > limit.saturating_sub(q) {
            let rem = limit.saturating_sub(q);
            return Err(self.fail(
                "",
                p,
                limit,
                "truncated",
                p,
                format!("tag {tag} declares {size} bytes, only {rem} left"),
            ));
        }
        let fend = q + size;
        match *prev {
            Some(t) if t == tag => self.err("tag-duplicate", p, format!("tag {tag} appears twice")),
            Some(t) if t > tag => self.err(
                "tag-order",
                p,
                format!("tag {tag} after tag {t} (tags must ascend)"),
            ),
            _ => {}
        }
        *prev = Some(tag);
        let Some(f) = sp.tagged_field(tag) else {
            let id = self.tree.leaf(
                "",
                Value::Bytes(Span {
                    start: q as u32,
                    len: size as u32,
                }),
                self.buf,
                p as u32,
                (fend - p) as u32,
            );
            let n = self.tree.node_mut(id);
            n.kind = Kind::UnknownTag(tag);
            n.hdr = (q - p) as u16;
            return Ok(fend);
        };
        self.path.push(Seg::Name(f.name));
        let first = self.tree.nodes.len();
        let r = self.value(plan, &f.ty, f.name, f.nullable, true, true, q, fend);
        if let Ok(e) = r {
            if e != fend {
                let msg = format!(
                    "tag {tag} ({}) declares {size} bytes but its content takes {}",
                    f.name,
                    e - q
                );
                let d = Diagnostic::error("tag-size-mismatch", self.path_string(), p as u64, msg)
                    .in_buf(self.buf);
                if self
                    .tree
                    .nodes
                    .get(first)
                    .is_some_and(|n| n.kind == Kind::Scalar)
                {
                    // A leaf simply grows to the declared size (below); its value span is exact.
                    self.tree.diags.push(d);
                } else {
                    self.tree
                        .error_node("_excess", self.buf, e as u32, (fend - e) as u32, d);
                }
            }
        }
        self.path.pop();
        // The field node spans its tag and size too; its header grows accordingly.
        let end_id = self.tree.nodes.len() as NodeId;
        if let Some(n) = self.tree.nodes.get_mut(first) {
            n.hdr = n.hdr.saturating_add((q - p) as u16);
            n.offset = p as u32;
            n.len = (fend - p) as u32;
            if n.kind != Kind::Scalar && n.kind != Kind::Error {
                n.end = end_id;
            }
        }
        Ok(fend)
    }
}

/// Decodes one message-shaped body (a KRaft metadata record, a coordinator key or value, a
/// control record value) at `version` over `[start, end)` of buffer `buf`, as a `Struct` node
/// called `name`, with diagnostics under `path`. Returns the end offset (where decoding stopped;
/// bytes left before `end` are the caller's to report). A version outside the spec's
/// `validVersions` becomes an `Error` node with `unknown-version`. Uses the process-wide plan
/// cache, so it is cheap to call per record.
#[allow(clippy::too_many_arguments)]
pub fn decode_message_at(
    tree: &mut Tree,
    spec: &'static MessageSpec,
    version: i16,
    buf: u16,
    start: u32,
    end: u32,
    name: &'static str,
    path: &str,
) -> u32 {
    // The walker reads the buffer while it pushes nodes: lend it out for the duration.
    let data = tree
        .bufs
        .get_mut(buf as usize)
        .map(std::mem::take)
        .unwrap_or_default();
    let end = (end as usize).min(data.len());
    let start = (start as usize).min(end);
    let r = if !spec.valid_versions.contains(version) {
        let d = Diagnostic::error(
            "unknown-version",
            path,
            start as u64,
            format!(
                "{} has no version {version} (valid: {})",
                spec.name, spec.valid_versions
            ),
        )
        .in_buf(buf);
        tree.error_node(name, buf, start as u32, (end - start) as u32, d);
        end
    } else {
        let plan = super::plan::shared(spec, version);
        let mut segs = Vec::new();
        let mut w = Walker::new(tree, &data, buf, path, &mut segs);
        w.message(&plan, name, start, end)
    };
    if let Some(b) = tree.bufs.get_mut(buf as usize) {
        *b = data;
    }
    r as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::plan::testspec::*;

    fn run(spec: &'static MessageSpec, v: i16, bytes: &[u8]) -> (Tree, u32) {
        let mut t = Tree::new();
        t.reset(bytes);
        let end = decode_message_at(&mut t, spec, v, 0, 0, bytes.len() as u32, "body", "body");
        t.check_tiling(0).unwrap();
        (t, end)
    }

    fn codes(t: &Tree) -> Vec<&'static str> {
        t.diags.iter().map(|d| d.code).collect()
    }

    fn demo() -> &'static MessageSpec {
        spec(
            "DemoRequest",
            "0-1",
            "1+",
            vec![
                f("Id", "int32", "0+"),
                nullable(f("Name", "string", "0+"), "0+"),
                with_fields(
                    f("Items", "[]Item", "0+"),
                    vec![f("B", "bool", "0+"), f("K", "int16", "0+")],
                ),
                tagged(f("Note", "string", "1+"), 3, "1+"),
            ],
        )
    }

    #[test]
    fn legacy_version_layout_and_spans() {
        // Id=7, Name=null, Items=[{true,258}]
        let bytes = [0, 0, 0, 7, 0xff, 0xff, 0, 0, 0, 1, 1, 1, 2];
        let (t, end) = run(demo(), 0, &bytes);
        assert_eq!(end, 13);
        assert!(t.diags.is_empty(), "{:?}", t.diags);
        let root = 0;
        assert_eq!(t.node(root).name, "body");
        let id = t.child(root, "Id").unwrap();
        assert_eq!(t.node(id).value, Value::Int(7));
        let name = t.child(root, "Name").unwrap();
        assert_eq!(
            (t.node(name).value, t.node(name).hdr, t.node(name).len),
            (Value::Null, 2, 2)
        );
        let items = t.child(root, "Items").unwrap();
        assert_eq!(
            (t.node(items).hdr, t.node(items).offset, t.node(items).len),
            (4, 6, 7)
        );
        let el = t.children(items).next().unwrap();
        assert_eq!(t.node(t.child(el, "K").unwrap()).value, Value::Int(258));
        assert_eq!(t.node(t.child(el, "B").unwrap()).value, Value::Bool(true));
    }

    #[test]
    fn flexible_version_with_known_and_unknown_tags() {
        // Id=1, Name="hé" (compact len 4), Items=[] (compact 1), tags: 2 fields:
        // tag 3 size 3 "ok" (compact 3), tag 7 size 2 [aa bb]; Item structs have tagged sections.
        let bytes = [
            0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 3, 3, 3, b'o', b'k', 7, 2, 0xaa, 0xbb,
        ];
        let (t, end) = run(demo(), 1, &bytes);
        assert_eq!(end as usize, bytes.len());
        assert!(t.diags.is_empty(), "{:?}", t.diags);
        let name = t.child(0, "Name").unwrap();
        assert_eq!(t.node(name).value, Value::Str(Span { start: 5, len: 3 }));
        let sec = t.children(0).last().unwrap();
        assert_eq!(
            (t.node(sec).kind, t.node(sec).hdr, t.node(sec).offset),
            (Kind::TaggedSection, 1, 9)
        );
        let kids: Vec<_> = t.children(sec).collect();
        let note = t.node(kids[0]);
        assert_eq!(
            (note.name, note.offset, note.hdr, note.len),
            ("Note", 10, 3, 5)
        );
        assert_eq!(note.value, Value::Str(Span { start: 13, len: 2 }));
        let unk = t.node(kids[1]);
        assert_eq!(
            (unk.kind, unk.offset, unk.hdr, unk.value),
            (
                Kind::UnknownTag(7),
                15,
                2,
                Value::Bytes(Span { start: 17, len: 2 })
            )
        );
    }

    #[test]
    fn two_billion_elements_in_ten_bytes_fail_at_once() {
        // Id, Name null, Items claiming 2^31-1 elements.
        let bytes = [0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff];
        let t0 = std::time::Instant::now();
        let (t, _) = run(demo(), 0, &bytes);
        assert!(t0.elapsed().as_millis() < 100);
        assert_eq!(codes(&t), ["count-exceeds-remaining"]);
        assert_eq!(t.diags[0].path, "body.Items");
        assert_eq!(t.diags[0].offset, 6);
    }

    #[test]
    fn every_truncation_is_reported_and_never_panics() {
        let bytes = [
            0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 3, 3, 3, b'o', b'k', 7, 2, 0xaa, 0xbb,
        ];
        for cut in 0..bytes.len() {
            let (t, end) = run(demo(), 1, &bytes[..cut]);
            assert_eq!(end as usize, cut);
            // A count that no longer fits the cut bytes is caught before the bytes run out.
            let c = codes(&t);
            assert!(
                c.contains(&"truncated") || c.contains(&"count-exceeds-remaining"),
                "cut {cut}: {:?}",
                t.diags
            );
        }
    }

    #[test]
    fn wire_validity_diagnostics() {
        // Id, Name length -2, ...
        let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0xff, 0xfe, 0, 0]);
        assert_eq!(codes(&t), ["negative-length"]);
        // Items null (not nullable), then a bool of 2 is never reached.
        let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(codes(&t), ["null-not-allowed"]);
        // A bool of 2 and invalid UTF-8.
        let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0, 1, 0xff, 0, 0, 0, 1, 2, 0, 0]);
        assert_eq!(codes(&t), ["invalid-utf8", "invalid-bool"]);
        // Flexible: overlong compact string length, tags out of order and repeated.
        let (t, _) = run(
            demo(),
            1,
            &[0, 0, 0, 1, 0x81, 0x00, 1, 3, 7, 0, 3, 2, 1, 0, 3, 1, 1],
        );
        assert_eq!(
            codes(&t),
            [
                "varint-overlong",
                "tag-order",
                "tag-size-mismatch",
                "tag-duplicate"
            ]
        );
        // A varint with a sixth byte.
        let (t, _) = run(demo(), 1, &[0, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
        assert_eq!(codes(&t), ["varint-overflow"]);
        // Trailing bytes are the caller's to judge: decoding stops where the message ends.
        let (t, end) = run(demo(), 0, &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 9, 9]);
        assert_eq!((codes(&t).len(), end), (0, 10));
        // Unknown version.
        let (t, _) = run(demo(), 5, &[0]);
        assert_eq!(codes(&t), ["unknown-version"]);
    }

    #[test]
    fn known_tag_larger_than_its_content_keeps_the_excess_visible() {
        let s = spec(
            "TagRequest",
            "0",
            "0+",
            vec![tagged(
                with_fields(f("S", "Sub", "0+"), vec![f("X", "int8", "0+")]),
                0,
                "0+",
            )],
        );
        // One tag: 0, size 3, content = X(1 byte) + empty tagged section (1 byte) + 1 excess.
        let (t, end) = run(s, 0, &[1, 0, 3, 5, 0, 9]);
        assert_eq!(end, 6);
        assert_eq!(codes(&t), ["tag-size-mismatch"]);
        let sec = t.children(0).last().unwrap();
        let sn = t.children(sec).next().unwrap();
        assert_eq!(t.node(sn).name, "S");
        assert_eq!(
            t.children(sn).map(|c| t.node(c).name).collect::<Vec<_>>(),
            ["X", "", "_excess"]
        );
    }

    #[test]
    fn nullable_struct_markers_inside_and_outside_tags() {
        let sub = vec![f("X", "int8", "0+")];
        let s = spec(
            "NullRequest",
            "0-1",
            "1+",
            vec![
                nullable(with_fields(f("A", "Sub", "0+"), sub.clone()), "0+"),
                nullable(
                    tagged(with_fields(f("B", "Sub2", "1+"), sub), 0, "1+"),
                    "1+",
                ),
            ],
        );
        // v0: marker -1 (null)
        let (t, end) = run(s, 0, &[0xff]);
        assert_eq!((t.node(1).value, end), (Value::Null, 1));
        // v0: marker 0 is read as present (any non-negative byte)
        let (t, _) = run(s, 0, &[0, 5]);
        assert_eq!(t.node(t.child(1, "X").unwrap()).value, Value::Int(5));
        // v1: A present {X=5, no tags}, tag 0 size 1 marker 0 → null B
        let (t, _) = run(s, 1, &[1, 5, 0, 1, 0, 1, 0, 0]);
        assert!(t.diags.is_empty(), "{:?}", t.diags);
        let sec = t.children(0).last().unwrap();
        let b = t.children(sec).next().unwrap();
        assert_eq!(
            (t.node(b).name, t.node(b).value, t.node(b).hdr),
            ("B", Value::Null, 3)
        );
    }

    #[test]
    fn self_nesting_hits_the_depth_limit_not_the_stack() {
        let mut s = spec("DeepRequest", "0", "none", vec![]).clone();
        s.common_structs.push(crate::schema::model::StructSpec {
            name: "Deep".into(),
            versions: v("0+"),
            fields: vec![nullable(f("Next", "Deep", "0+"), "0+")],
            pos: Default::default(),
        });
        s.fields.push(nullable(f("Next", "Deep", "0+"), "0+"));
        let s: &'static MessageSpec = Box::leak(Box::new(s));
        let bytes = vec![1u8; 500];
        let (t, _) = run(s, 0, &bytes);
        assert_eq!(codes(&t), ["depth-limit"]);
    }
}
