//! The plan interpreter: walks a compiled [`Plan`](super::plan::Plan) over one buffer and
//! writes the decoded tree (shape fixed by CONTRACT.md). Diagnostic codes are listed in
//! [`super::decode`].
//!
//! Degrade, don't abort: when a field cannot be decoded, an `Error` node covers the rest of the
//! innermost bounded region (a tagged field's declared size, else the message) and every open
//! container is closed there, so the tree still tiles and the rest of the frame is still shown.

use super::cursor::{Cursor, ReadError, VarintForm};
use super::decode::{TopicNames, TOPIC_FIELDS, TOPIC_ID_FIELD};
use super::plan::{Plan, StructPlan, Ty};
use super::tree::{Kind, NodeId, Span, Tree, Value};
use crate::diag::Diagnostic;
use crate::limits::{MAX_DEPTH, MAX_NODES_PER_TREE};
use crate::records::{self, AsType, RecordsContext};
use crate::schema::model::Prim;
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

/// Name of an `Error` node that replaces a struct's whole tagged section.
pub const TAGS: &str = "_tagged_fields";

/// How a struct's presence is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    /// Nullable struct outside tags: int8, negative = null.
    Int8,
    /// Nullable struct inside a tag: uvarint, ≤ 0 (as a Java int) = null.
    Uvarint,
}

/// How `records` fields decode: as batches (the default) through [`crate::records`], or kept
/// as opaque bytes (`--records raw`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordsOptions {
    /// Keep every `records` field as `Value::Bytes`.
    pub raw: bool,
    /// `--as TYPE`: how record keys and values are read, whatever the topic.
    pub as_type: Option<AsType>,
    /// Batch headers and CRCs only (see `RecordsContext::headers_only`).
    pub headers_only: bool,
}

/// The topic of the records below, as the innermost enclosing struct names it.
#[derive(Clone, Copy)]
enum TopicRef {
    Name(Span),
    Id([u8; 16]),
}

/// Decoding state for one message body in one buffer.
pub(crate) struct Walker<'t, 'd> {
    pub tree: &'t mut Tree,
    pub data: &'d [u8],
    pub buf: u16,
    pub prefix: &'d str,
    pub path: &'t mut Vec<Seg>,
    depth: usize,
    /// `None`: `records` fields stay bytes (message bodies inside records, headers).
    records: Option<RecordsOptions>,
    /// A cut last batch is normal (responses: the broker stops at its byte limit).
    partial_tail_ok: bool,
    /// The topic name (or id) field of the innermost enclosing struct that has one.
    topic: Option<TopicRef>,
    names: Option<&'t dyn TopicNames>,
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
            records: None,
            partial_tail_ok: false,
            topic: None,
            names: None,
        }
    }

    /// Names topics known only by id, for the records below them.
    pub fn with_topic_names(mut self, names: &'t dyn TopicNames) -> Self {
        self.names = Some(names);
        self
    }

    /// Decodes `records` fields into batches as `opts` says; `response` allows a cut last batch.
    pub fn with_records(mut self, opts: RecordsOptions, response: bool) -> Self {
        self.records = (!opts.raw).then_some(opts);
        self.partial_tail_ok = response;
        self
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
                    if m != -1 && m != 1 {
                        self.warn("null-marker", pos, format!("nullable-struct marker {m} (Kafka writes -1 or 1; any negative reads as null)"));
                    }
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
                if m > 1 {
                    self.warn("null-marker", pos, format!("nullable-struct marker {m} (Kafka writes 0 or 1; ≤ 0 as an int reads as null)"));
                }
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
        let outer_topic = self.topic;
        let r = self.members(plan, sp, p, limit);
        self.topic = outer_topic;
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
            if self.records.is_some()
                && matches!(f.ty, Ty::Prim(Prim::String))
                && TOPIC_FIELDS.contains(&f.name)
            {
                if let Some(Value::Str(s)) = self.tree.nodes.last().map(|n| n.value) {
                    self.topic = Some(TopicRef::Name(s));
                }
            } else if self.records.is_some()
                && self.names.is_some()
                && matches!(f.ty, Ty::Prim(Prim::Uuid))
                && f.name == TOPIC_ID_FIELD
            {
                if let Some(Value::Uuid(u)) = self.tree.nodes.last().map(|n| n.value) {
                    self.topic = Some(TopicRef::Id(u));
                }
            }
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
        // Every value is at least one node: a 100 MB array of int8 must not become 100 M nodes.
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
                format!(
                    "the schema nests structs deeper than {MAX_DEPTH} or a struct contains itself"
                ),
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
        if p == Prim::Records {
            if let Some(opts) = self.records {
                return Ok(self.batches(opts, name, pos, hdr, span));
            }
        }
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

    /// A `records` field's content as batches (see [`crate::records`]): an `Array` node whose
    /// header is the length prefix.
    fn batches(
        &mut self,
        opts: RecordsOptions,
        name: &'static str,
        pos: usize,
        hdr: usize,
        span: Span,
    ) -> usize {
        let data = self.data;
        let names = self.names;
        let topic = self.topic.and_then(|t| match t {
            TopicRef::Name(s) => {
                let b = data.get(s.start as usize..(s.start + s.len) as usize)?;
                std::str::from_utf8(b).ok()
            }
            TopicRef::Id(u) => names?.topic_name(u),
        });
        let ctx = RecordsContext {
            topic,
            partial_tail_ok: self.partial_tail_ok,
            as_type: opts.as_type,
            headers_only: opts.headers_only,
        };
        let id = self.tree.open(name, Kind::Array, self.buf, pos as u32);
        self.tree.node_mut(id).hdr = hdr as u16;
        // Most fetch responses carry empty records: no path to name, nothing to allocate.
        if span.len > 0 {
            let path = self.path_string();
            records::decode_records(self.tree, self.buf, span.start, span.len, &ctx, &path);
        }
        let end = span.start + span.len;
        self.tree.close(id, end);
        end as usize
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
        let remaining = limit.saturating_sub(start);
        let bad = if n < -1 {
            Some((
                "negative-length",
                format!("array count {n} (only -1 means null)"),
            ))
        } else if n > remaining as i64 {
            Some((
                "count-exceeds-remaining",
                format!("array claims {n} elements but only {remaining} bytes remain"),
            ))
        } else {
            None
        };
        if let Some((code, msg)) = bad {
            // The error replaces the whole array, count included, so its bytes stay together.
            return Err(self.fail(name, pos, limit, code, pos, msg));
        }
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
        self.path.push(Seg::Name(TAGS));
        let r = self.tagged_inner(plan, sp, pos, limit);
        self.path.pop();
        r
    }

    fn tagged_inner(&mut self, plan: &Plan, sp: &StructPlan, pos: usize, limit: usize) -> Step {
        let (count, hdr) = self.uvarint(TAGS, pos, pos, limit, "a tagged-field count (uvarint)")?;
        let mut p = pos + hdr;
        // Each tagged field takes at least two bytes (tag and size).
        if count as u64 * 2 > limit.saturating_sub(p) as u64 {
            let rem = limit.saturating_sub(p);
            return Err(self.fail(
                TAGS,
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
                    // A tag or size that cannot be read loses the section's framing: the error
                    // replaces the whole section (count included) so the bytes stay together.
                    let err = self.tree.nodes.last().copied();
                    self.tree.nodes.truncate(id as usize);
                    if let Some(mut n) = err {
                        n.name = TAGS;
                        n.offset = pos as u32;
                        n.len = limit.saturating_sub(pos) as u32;
                        n.end = id + 1;
                        self.tree.nodes.push(n);
                    }
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
        // Known tags read as members of the struct (as the JSON shows them), so their paths
        // leave out the section.
        let section = self.path.pop();
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
        self.path.extend(section);
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
