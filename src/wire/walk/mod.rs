//! The plan interpreter: walks a compiled [`Plan`](super::plan::Plan) over one buffer and
//! writes the decoded tree (shape fixed by CONTRACT.md). Diagnostic codes are listed in
//! [`super::decode`].
//!
//! Degrade, don't abort: when a field cannot be decoded, an `Error` node covers the rest of the
//! innermost bounded region (a tagged field's declared size, else the message) and every open
//! container is closed there, so the tree still tiles and the rest of the frame is still shown.
//!
//! Parts: this file holds the walker's state and the containers (structs, arrays); [`checks`]
//! the field paths, diagnostics and limits; [`scalar`] primitives and length-prefixed values;
//! [`tagged`] tagged sections; [`records`] the glue to the [`RecordsHook`] (the topic of the
//! records below a struct).

mod checks;
mod records;
mod scalar;
mod tagged;

use super::cursor::Cursor;
use super::hook::{RecordsHook, RecordsOptions, TopicNames};
use super::plan::{fixed_width, FieldPlan, Plan, Read, StructPlan, Ty};
use super::tree::{Kind, Tree, Value};
use crate::diag::FieldPath;
use crate::limits::MAX_DEPTH;
use crate::pdu::Direction;
use crate::schema::model::{Entity, Prim};
use records::TopicRef;

pub use tagged::TAGS;

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

/// What the walker needs to know about the value it is about to read, beyond its type.
#[derive(Clone, Copy)]
struct Slot {
    /// The node's name ("" for array elements).
    name: &'static str,
    nullable: bool,
    /// Lengths and counts are uvarints.
    compact: bool,
    /// Inside a tagged field (a nullable struct then has a uvarint marker).
    in_tag: bool,
    /// What a leaf's value identifies (the field's, for an array's elements too).
    entity: Entity,
}

impl Slot {
    /// An untagged field's.
    fn of(f: &FieldPlan) -> Slot {
        Slot {
            name: f.name,
            nullable: f.nullable,
            compact: f.compact,
            in_tag: false,
            entity: f.entity,
        }
    }
}

/// Decoding state for one message body in one buffer.
pub(crate) struct Walker<'t, 'd> {
    pub tree: &'t mut Tree,
    pub data: &'d [u8],
    pub buf: u16,
    pub prefix: FieldPath<'d>,
    pub path: &'t mut Vec<Seg>,
    depth: usize,
    /// `None`: `records` fields stay bytes (message bodies inside records, headers).
    records: Option<(&'t dyn RecordsHook, RecordsOptions)>,
    direction: Direction,
    /// The topic name (or id) field of the innermost enclosing struct that has one.
    topic: Option<TopicRef>,
    names: Option<&'t dyn TopicNames>,
}

impl<'t, 'd> Walker<'t, 'd> {
    pub fn new(
        tree: &'t mut Tree,
        data: &'d [u8],
        buf: u16,
        prefix: FieldPath<'d>,
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
            direction: Direction::Request,
            topic: None,
            names: None,
        }
    }

    /// Names topics known only by id, for the records below them.
    pub fn with_topic_names(mut self, names: &'t dyn TopicNames) -> Self {
        self.names = Some(names);
        self
    }

    /// Hands `records` fields of a message in `direction` to `hook`, with `opts` (unless they
    /// say raw).
    pub fn with_records(
        mut self,
        hook: &'t dyn RecordsHook,
        opts: RecordsOptions,
        direction: Direction,
    ) -> Self {
        self.records = (!opts.raw).then_some((hook, opts));
        self.direction = direction;
        self
    }

    /// Decodes the plan's root struct as node `name` over `[start, end)`; returns where it ended
    /// (`end` when it had to give up).
    pub fn message(&mut self, plan: &Plan, name: &'static str, start: usize, end: usize) -> usize {
        // Internal-topic records decode messages into a tree that may already be full.
        self.node_budget(name, start, end)
            .and_then(|_| self.structure(plan, plan.root, name, Marker::None, start, end))
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
        let (p, null) = match marker {
            Marker::None => (pos, false),
            _ => self.null_marker(name, marker, pos, limit)?,
        };
        let id = self.tree.open(name, Kind::Struct, self.buf, pos as u32);
        if p != pos {
            self.tree.node_mut(id).hdr = (p - pos) as u16;
        }
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

    /// Reads a nullable struct's presence marker at `pos`: where the struct's fields start and
    /// whether it is null.
    #[cold]
    fn null_marker(
        &mut self,
        name: &'static str,
        marker: Marker,
        pos: usize,
        limit: usize,
    ) -> Result<(usize, bool), Abort> {
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
        Ok((p, null))
    }

    fn members(&mut self, plan: &Plan, sp: &StructPlan, mut p: usize, limit: usize) -> Step {
        // One path segment for all the fields, named only when the general path needs it (the
        // shortcuts report nothing without naming it first).
        self.path.push(Seg::Name(""));
        let r = self.fields(plan, &sp.fields, p, limit);
        self.path.pop();
        p = r?;
        if sp.flexible {
            p = self.tagged_section(plan, sp, p, limit)?;
        }
        Ok(p)
    }

    /// The untagged fields, the last segment of the path being theirs.
    fn fields(&mut self, plan: &Plan, fields: &[FieldPlan], mut p: usize, limit: usize) -> Step {
        let mut i = 0;
        while let Some(f) = fields.get(i) {
            match f.read {
                Read::Fixed { run, width } => {
                    let run = fields.get(i..i + run as usize).unwrap_or(&[]);
                    let (done, q) = self.fixed_run(run, width as usize, p, limit);
                    if done > 0 {
                        i += done;
                        p = q;
                        continue;
                    }
                }
                Read::Blob => {
                    let pr = match f.ty {
                        Ty::Prim(pr) => pr,
                        _ => Prim::Records,
                    };
                    if let Some(q) = self.fast_blob(pr, Slot::of(f), p, limit) {
                        if f.entity != Entity::None {
                            self.note_topic(f);
                        }
                        i += 1;
                        p = q;
                        continue;
                    }
                }
                Read::General => {}
            }
            self.name_last(Seg::Name(f.name));
            p = self.value(plan, &f.ty, Slot::of(f), p, limit)?;
            if f.entity != Entity::None {
                self.note_topic(f);
            }
            i += 1;
        }
        Ok(p)
    }

    /// Names the last path segment (the field or element being read).
    fn name_last(&mut self, seg: Seg) {
        if let Some(s) = self.path.last_mut() {
            *s = seg;
        }
    }

    fn value(&mut self, plan: &Plan, ty: &Ty, s: Slot, pos: usize, limit: usize) -> Step {
        // Every value is at least one node: a 100 MB array of int8 must not become 100 M nodes.
        self.node_budget(s.name, pos, limit)?;
        match ty {
            Ty::Prim(p) => self.prim(*p, s, pos, limit),
            Ty::Struct(sid) => {
                let marker = match (s.nullable, s.in_tag) {
                    (false, _) => Marker::None,
                    (true, false) => Marker::Int8,
                    (true, true) => Marker::Uvarint,
                };
                self.structure(plan, *sid, s.name, marker, pos, limit)
            }
            Ty::Array(elem) => self.array(plan, elem, s, pos, limit),
            Ty::TooDeep => Err(self.fail(
                s.name,
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

    fn array(&mut self, plan: &Plan, elem: &Ty, s: Slot, pos: usize, limit: usize) -> Step {
        let name = s.name;
        self.enter(name, pos, limit)?;
        let what = if s.compact {
            "an array count (uvarint)"
        } else {
            "an array count (int32)"
        };
        let (n, hdr) = match self.short_count(s.compact, pos, limit) {
            Some(c) => c,
            None => self.length(name, s.compact, true, pos, limit, what)?,
        };
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
            if !s.nullable {
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
        let es = Slot {
            name: "",
            nullable: false,
            compact: s.compact,
            in_tag: false,
            entity: s.entity,
        };
        self.depth += 1;
        self.path.push(Seg::Index(0));
        let r = self.elements(plan, elem, es, n as u32, start, limit);
        self.path.pop();
        let p = match r {
            Ok(q) => q,
            Err(a) => {
                self.depth -= 1;
                self.tree.close(id, limit as u32);
                return Err(a);
            }
        };
        self.depth -= 1;
        self.tree.close(id, p as u32);
        Ok(p)
    }

    /// An array count that reads without a diagnostic (an int32, or a one-byte uvarint):
    /// `(count, prefix bytes)` as [`Walker::length`] gives it. `None`: read it that way.
    fn short_count(&self, compact: bool, pos: usize, limit: usize) -> Option<(i64, usize)> {
        let data = self.data.get(..limit)?;
        if compact {
            let b = *data.get(pos)?;
            (b < 0x80).then_some((i64::from(b) - 1, 1))
        } else {
            let b = data.get(pos..pos.checked_add(4)?)?;
            Some((i64::from(i32::from_be_bytes(b.try_into().ok()?)), 4))
        }
    }

    /// An array's `n` elements from `p`, the last path segment being theirs.
    fn elements(
        &mut self,
        plan: &Plan,
        elem: &Ty,
        es: Slot,
        n: u32,
        mut p: usize,
        limit: usize,
    ) -> Step {
        let mut i = 0;
        match *elem {
            Ty::Prim(pr) => {
                if let Some(w) = fixed_width(pr) {
                    // All the elements at once when they fit (else the general path says where
                    // they stop fitting).
                    (i, p) = self.fixed_elements(pr, w as usize, es.entity, n, p, limit);
                } else if pr != Prim::Records {
                    while i < n {
                        match self.fast_blob(pr, es, p, limit) {
                            Some(q) => p = q,
                            None => break,
                        }
                        i += 1;
                    }
                }
            }
            Ty::Struct(sid) => {
                while i < n {
                    self.name_last(Seg::Index(i));
                    self.node_budget("", p, limit)?;
                    p = self.structure(plan, sid, "", Marker::None, p, limit)?;
                    i += 1;
                }
                return Ok(p);
            }
            _ => {}
        }
        while i < n {
            self.name_last(Seg::Index(i));
            p = self.value(plan, elem, es, p, limit)?;
            i += 1;
        }
        Ok(p)
    }
}
