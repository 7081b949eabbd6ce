//! The decoded-message tree: a flat, reusable arena of nodes in pre-order.
//!
//! Decoding pushes nodes; printers walk them. A node's descendants are the nodes
//! `id+1 .. node.end`. Nothing here allocates per field once the arena has grown to the size of
//! the largest message seen: `clear()` keeps capacity, strings and bytes are ranges into the
//! tree's buffers, and names are `&'static str` from the (process-lifetime) schema registry.
//!
//! Buffers: buffer 0 is the frame itself; decompressed record data is appended as further
//! buffers, and every node says which buffer its span is in.

use crate::diag::Diagnostic;
use crate::limits::{MAX_DIAGNOSTICS_PER_RECORD_SET, MAX_DIAGNOSTICS_PER_TREE, MAX_NODES_PER_TREE};
pub use crate::schema::model::Entity;
use std::fmt::Write as _;

pub type NodeId = u32;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An object: children are named members.
    Struct,
    /// An array: children are unnamed elements.
    Array,
    /// A single value (`Node::value`).
    Scalar,
    /// A flexible struct's tagged-field section. Printers flatten it: known tags appear as
    /// members of the enclosing struct, unknown ones under `_unknown_tagged_fields`.
    TaggedSection,
    /// A tag that the schema does not know at this version; value is `Bytes` of its payload.
    /// Its span starts with the tag's header, so the tag number is read from the bytes when it
    /// is shown ([`Tree::unknown_tag`]) rather than kept in every node.
    UnknownTag,
    /// Bytes that could not be decoded; value is `Diag(index into Tree::diags)`.
    Error,
}

/// A range of bytes inside buffer `Node::buf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Containers, and anything with no value of its own.
    None,
    /// An explicit null (never the same as empty).
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Uuid([u8; 16]),
    /// A schema `string`: UTF-8 text (invalid UTF-8 is shown lossily and diagnosed).
    Str(Span),
    /// A schema `bytes`: printed as base64.
    Bytes(Span),
    /// A record key, value or header value: printed as `{"text": …}` when valid UTF-8, else
    /// `{"base64": …}`.
    Data(Span),
    /// A label chosen by hand-written code (codec name, control record type, …).
    Label(&'static str),
    /// Index into `Tree::diags` (for `Kind::Error` nodes).
    Diag(u32),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Node {
    /// Member name in the enclosing struct; "" for array elements and the root.
    pub name: &'static str,
    pub kind: Kind,
    pub value: Value,
    /// Buffer the span is in.
    pub buf: u16,
    /// Bytes at the start of the span that belong to the node itself rather than to a child or
    /// the value: a length or count prefix, a tag and size header, a null marker.
    pub hdr: u16,
    pub offset: u32,
    pub len: u32,
    /// One past the last descendant.
    pub end: NodeId,
    /// What a schema field's value identifies (its `entityType`); `None` for anything else.
    pub entity: Entity,
}

/// A decoded message (or batch, or file): nodes, buffers and diagnostics.
#[derive(Default, Clone, Debug)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub bufs: Vec<Vec<u8>>,
    /// Read like a slice; every producer pushes through [`Diags::push`], which caps them.
    pub diags: Diags,
}

/// A tree's diagnostics: the first [`MAX_DIAGNOSTICS_PER_TREE`] as pushed (and at most
/// [`MAX_DIAGNOSTICS_PER_RECORD_SET`] of each record set), then one `diagnostics-suppressed`
/// diagnostic per cap that was hit, counting the rest by code. Its severity is the worst of those
/// it counts (so [`Tree::has_errors`] stays true), its offset, buffer and path those of the first.
/// The cap lives here, the one place every producer pushes through, so none can bypass it; an
/// error node whose diagnostic was not kept points at the summary that counts it.
#[derive(Clone, Default)]
pub struct Diags {
    list: Vec<Diagnostic>,
    /// The tree's summary, once its cap is hit.
    over: Option<Summary>,
    /// The record set being decoded: diagnostics kept for it, and its summary.
    set: Option<(usize, Option<Summary>)>,
    /// Diagnostics not kept, in all.
    dropped: u64,
}

/// Code of the diagnostic that stands for those over a cap.
pub const SUPPRESSED: &str = "diagnostics-suppressed";

/// The node arena's capacity stops doubling here: `MAX_NODES_PER_TREE` and room for what is
/// pushed after the last budget check (the nodes of the value or record being read, and the
/// error node that stops the walk; 64 Ki nodes, 4 MiB). A tree that needs more still gets it, by
/// doubling.
const NODE_CEILING: usize = MAX_NODES_PER_TREE + (64 << 10);

/// Which cap a summary is for.
#[derive(Clone, Copy)]
enum Cap {
    Tree,
    RecordSet,
}

/// A `diagnostics-suppressed` entry: where it is and what it counts (the first few codes
/// separately).
#[derive(Clone, Copy)]
struct Summary {
    at: u32,
    cap: Cap,
    count: u64,
    codes: [(&'static str, u64); 4],
}

impl Summary {
    fn add(&mut self, code: &'static str) {
        self.count += 1;
        if let Some(slot) = self
            .codes
            .iter_mut()
            .find(|(c, _)| *c == code || c.is_empty())
        {
            slot.0 = code;
            slot.1 += 1;
        }
    }

    fn write(&self, out: &mut String) {
        let (scope, limit, name) = match self.cap {
            Cap::Tree => ("here", MAX_DIAGNOSTICS_PER_TREE, "MAX_DIAGNOSTICS_PER_TREE"),
            Cap::RecordSet => (
                "in this record set",
                MAX_DIAGNOSTICS_PER_RECORD_SET,
                "MAX_DIAGNOSTICS_PER_RECORD_SET",
            ),
        };
        out.clear();
        let _ = write!(
            out,
            "{} more diagnostics {scope} not shown (at most {limit} are kept: limits::{name}):",
            self.count
        );
        let mut listed = 0;
        for (i, (code, n)) in self.codes.iter().filter(|(c, _)| !c.is_empty()).enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            let _ = write!(out, "{sep}{code} ({n})");
            listed += n;
        }
        if listed < self.count {
            let _ = write!(out, ", others ({})", self.count - listed);
        }
    }
}

impl Diags {
    /// Diagnostics the kept list has room for (its allocation, for memory accounting).
    pub fn capacity(&self) -> usize {
        self.list.capacity()
    }

    /// Records `d` (or counts it in a summary, past a cap).
    pub fn push(&mut self, d: Diagnostic) {
        self.push_at(d);
    }

    /// Records `d` and returns its index, or the index of the summary that counts it.
    pub fn push_at(&mut self, d: Diagnostic) -> u32 {
        let tree_full = self.over.is_some() || self.list.len() >= MAX_DIAGNOSTICS_PER_TREE;
        let Some((kept, set_sum)) = self.set else {
            return if tree_full {
                self.count_in(Cap::Tree, d)
            } else {
                self.keep(d)
            };
        };
        if kept < MAX_DIAGNOSTICS_PER_RECORD_SET {
            self.set = Some((kept + 1, set_sum));
            return if tree_full {
                self.count_in(Cap::Tree, d)
            } else {
                self.keep(d)
            };
        }
        if set_sum.is_none() && tree_full {
            return self.count_in(Cap::Tree, d);
        }
        self.count_in(Cap::RecordSet, d)
    }

    fn keep(&mut self, d: Diagnostic) -> u32 {
        self.list.push(d);
        (self.list.len() - 1) as u32
    }

    /// Counts `d` in the summary for `cap`, pushing that summary first if there is none.
    fn count_in(&mut self, cap: Cap, d: Diagnostic) -> u32 {
        self.dropped += 1;
        let slot = match cap {
            Cap::Tree => self.over,
            Cap::RecordSet => self.set.and_then(|(_, s)| s),
        };
        let mut sum = match slot {
            Some(s) => s,
            None => {
                let at = self.list.len() as u32;
                self.list.push(Diagnostic {
                    code: SUPPRESSED,
                    message: String::new(),
                    ..d.clone()
                });
                Summary {
                    at,
                    cap,
                    count: 0,
                    codes: [("", 0); 4],
                }
            }
        };
        sum.add(d.code);
        if let Some(s) = self.list.get_mut(sum.at as usize) {
            s.severity = s.severity.min(d.severity);
            sum.write(&mut s.message);
        }
        match cap {
            Cap::Tree => self.over = Some(sum),
            Cap::RecordSet => {
                if let Some((_, s)) = self.set.as_mut() {
                    *s = Some(sum);
                }
            }
        }
        sum.at
    }

    /// Starts a record set: until [`Diags::end_record_set`], at most
    /// [`MAX_DIAGNOSTICS_PER_RECORD_SET`] of its diagnostics are kept. Returns whether this call
    /// started one (a record set inside another, a legacy wrapper's, belongs to the outer one).
    pub fn begin_record_set(&mut self) -> bool {
        if self.set.is_some() {
            return false;
        }
        self.set = Some((0, None));
        true
    }

    /// Ends the record set [`Diags::begin_record_set`] started, when `started`.
    pub fn end_record_set(&mut self, started: bool) {
        if started {
            self.set = None;
        }
    }

    /// How many diagnostics were counted by summaries instead of kept.
    pub fn suppressed(&self) -> u64 {
        self.dropped
    }

    pub fn clear(&mut self) {
        self.list.clear();
        self.over = None;
        self.set = None;
        self.dropped = 0;
    }
}

impl std::ops::Deref for Diags {
    type Target = [Diagnostic];
    fn deref(&self) -> &[Diagnostic] {
        &self.list
    }
}

impl<'a> IntoIterator for &'a Diags {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

impl Extend<Diagnostic> for Diags {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        for d in iter {
            self.push(d);
        }
    }
}

impl std::fmt::Debug for Diags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.list).finish()
    }
}

/// Memory accounting for decoded trees, per thread: what a thread's trees are about to allocate
/// is told to the hook installed on that thread ([`growth::watch`]), which may wait before the
/// allocation happens. The engine's two decoding threads use it to keep one bound on what they
/// hold together (engine/parallel.rs); without a hook nothing is counted. Told: the nodes'
/// arena when it grows, and decompressed record data as it grows (records/codec.rs).
pub mod growth {
    use std::cell::RefCell;
    use std::sync::Arc;

    /// Told, on the thread it is installed on, how many more bytes that thread's decoded trees
    /// are about to hold.
    pub trait Growth: Send + Sync {
        fn grow(&self, bytes: usize);
    }

    thread_local! {
        static HOOK: RefCell<Option<Arc<dyn Growth>>> = const { RefCell::new(None) };
    }

    /// Installs `hook` on this thread until the guard is dropped (the one before comes back).
    pub fn watch(hook: Arc<dyn Growth>) -> Guard {
        Guard(HOOK.with(|h| h.borrow_mut().replace(hook)))
    }

    /// Puts back the hook that was installed before [`watch`].
    pub struct Guard(Option<Arc<dyn Growth>>);

    impl Drop for Guard {
        fn drop(&mut self) {
            let prev = self.0.take();
            HOOK.with(|h| *h.borrow_mut() = prev);
        }
    }

    /// This thread's trees are about to allocate `bytes` more.
    #[cold]
    pub fn note(bytes: usize) {
        // The hook may wait (for the other thread); it is not re-entered on this thread.
        let hook = HOOK.with(|h| h.borrow().clone());
        if let Some(h) = hook {
            h.grow(bytes);
        }
    }
}

impl Tree {
    pub fn new() -> Tree {
        Tree::default()
    }

    /// Empties the tree, keeping every allocation for reuse. Buffer 0 becomes `frame`.
    pub fn reset(&mut self, frame: &[u8]) {
        self.nodes.clear();
        self.diags.clear();
        if self.bufs.is_empty() {
            self.bufs.push(Vec::new());
        }
        self.bufs.truncate(1);
        self.bufs[0].clear();
        self.bufs[0].extend_from_slice(frame);
    }

    /// Adds a buffer (decompressed data) and returns its index, or `None` past `u16::MAX`.
    pub fn add_buf(&mut self, data: Vec<u8>) -> Option<u16> {
        let i = u16::try_from(self.bufs.len()).ok()?;
        self.bufs.push(data);
        Some(i)
    }

    pub fn buf(&self, i: u16) -> &[u8] {
        self.bufs.get(i as usize).map(|b| &b[..]).unwrap_or(&[])
    }

    /// The tag number of a [`Kind::UnknownTag`] node: the uvarint its span starts with (the
    /// walker read it there and checked it).
    pub fn unknown_tag(&self, n: &Node) -> u32 {
        let end = n.offset.saturating_add(u32::from(n.hdr)) as usize;
        let mut c = super::cursor::Cursor::new(self.buf(n.buf), n.offset as usize, end);
        c.uvarint().map_or(0, |(tag, _)| tag)
    }

    /// How many buffers the tree has (the frame's included).
    pub fn buf_count(&self) -> usize {
        self.bufs.len()
    }

    /// Bytes of heap the buffers hold, as allocated.
    pub fn buf_capacity(&self) -> usize {
        self.bufs.iter().map(Vec::capacity).sum()
    }

    /// The bytes of a span in a buffer (empty when out of range, never panics).
    pub fn bytes(&self, buf: u16, s: Span) -> &[u8] {
        let b = self.buf(buf);
        let start = s.start as usize;
        let end = start.saturating_add(s.len as usize);
        b.get(start..end).unwrap_or(&[])
    }

    /// Opens a container; close it with [`Tree::close`].
    #[inline(always)]
    pub fn open(&mut self, name: &'static str, kind: Kind, buf: u16, offset: u32) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.will_push();
        self.nodes.push(Node {
            name,
            kind,
            value: Value::None,
            buf,
            hdr: 0,
            offset,
            len: 0,
            end: id + 1,
            entity: Entity::None,
        });
        id
    }

    /// Makes room in the node arena before a push (the only check on the hot path is the length
    /// against the capacity).
    #[inline]
    fn will_push(&mut self) {
        if self.nodes.len() == self.nodes.capacity() {
            self.grow_nodes(1);
        }
    }

    /// Makes room for `n` more nodes, telling the growth hook what that allocates: the capacity
    /// doubles, as a vector's does, except where doubling would pass [`NODE_CEILING`] and
    /// the ceiling is enough. A tree stopped at `MAX_NODES_PER_TREE` then holds room for that
    /// many nodes and a little more, not for twice as many.
    #[cold]
    #[inline(never)]
    fn grow_nodes(&mut self, n: usize) {
        let (len, cap) = (self.nodes.len(), self.nodes.capacity());
        let want = len.saturating_add(n);
        let mut new = want.max(cap.saturating_mul(2)).max(4);
        if new > NODE_CEILING && want <= NODE_CEILING {
            new = NODE_CEILING;
        }
        growth::note((new - cap).saturating_mul(std::mem::size_of::<Node>()));
        self.nodes.reserve_exact(new - len);
    }

    /// Pushes `nodes` at once, as consecutive [`Tree::open`]/[`Tree::leaf`] calls would, their
    /// `end`s already set (one check for room, one copy). The caller checks the node budget.
    pub(crate) fn push_nodes(&mut self, nodes: &[Node]) {
        if self.nodes.len() + nodes.len() > self.nodes.capacity() {
            self.grow_nodes(nodes.len());
        }
        self.nodes.extend_from_slice(nodes);
    }

    /// Closes a container opened with [`Tree::open`]: its span ends at `end_offset` and it owns
    /// every node pushed since.
    pub fn close(&mut self, id: NodeId, end_offset: u32) {
        let end = self.nodes.len() as NodeId;
        if let Some(n) = self.nodes.get_mut(id as usize) {
            n.len = end_offset.saturating_sub(n.offset);
            n.end = end;
        }
    }

    /// Pushes a leaf.
    #[inline]
    pub fn leaf(
        &mut self,
        name: &'static str,
        value: Value,
        buf: u16,
        offset: u32,
        len: u32,
    ) -> NodeId {
        self.leaf_with(name, value, buf, offset, len, 0, Entity::None)
    }

    /// Pushes a leaf with its header length and entity (one write of the node, where
    /// [`Tree::leaf`] and setting them after costs a second, bounds-checked one).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn leaf_with(
        &mut self,
        name: &'static str,
        value: Value,
        buf: u16,
        offset: u32,
        len: u32,
        hdr: u16,
        entity: Entity,
    ) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.will_push();
        self.nodes.push(Node {
            name,
            kind: Kind::Scalar,
            value,
            buf,
            hdr,
            offset,
            len,
            end: id + 1,
            entity,
        });
        id
    }

    /// Records a diagnostic and an `Error` node covering `len` bytes at `offset`.
    pub fn error_node(
        &mut self,
        name: &'static str,
        buf: u16,
        offset: u32,
        len: u32,
        d: Diagnostic,
    ) -> NodeId {
        let di = self.diags.push_at(d);
        let id = self.nodes.len() as NodeId;
        self.will_push();
        self.nodes.push(Node {
            name,
            kind: Kind::Error,
            value: Value::Diag(di),
            buf,
            hdr: 0,
            offset,
            len,
            end: id + 1,
            entity: Entity::None,
        });
        id
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id as usize]
    }

    /// Direct children of `id`.
    pub fn children(&self, id: NodeId) -> Children<'_> {
        let n = &self.nodes[id as usize];
        Children {
            tree: self,
            next: id + 1,
            end: n.end,
        }
    }

    /// The first direct child called `name`.
    pub fn child(&self, id: NodeId, name: &str) -> Option<NodeId> {
        self.children(id)
            .find(|&c| self.nodes[c as usize].name == name)
    }

    /// The diagnostics of severity error.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diags.iter().filter(|d| d.is_error())
    }

    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// Checks the "every byte accounted for once" property for the subtree at `id`: children
    /// lie inside their parent, in the parent's buffer they do not overlap, and the parent's
    /// header comes first. Children in another buffer (decompressed data) are checked against
    /// each other only. Returns the first violation.
    pub fn check_tiling(&self, id: NodeId) -> Result<(), String> {
        let n = self.node(id);
        let (start, end) = (n.offset as u64, n.offset as u64 + n.len as u64);
        let mut cursor = start + n.hdr as u64;
        let mut other: Vec<(u16, u64)> = Vec::new();
        for c in self.children(id) {
            let cn = self.node(c);
            let (cs, ce) = (cn.offset as u64, cn.offset as u64 + cn.len as u64);
            if cn.buf == n.buf {
                if cs < cursor || ce > end {
                    return Err(format!(
                        "node {c} ({:?}) spans {cs}..{ce}, outside {cursor}..{end} of its parent {id} ({:?})",
                        cn.name, n.name
                    ));
                }
                cursor = ce;
            } else {
                let slot = match other.iter_mut().find(|(b, _)| *b == cn.buf) {
                    Some(s) => s,
                    None => {
                        other.push((cn.buf, 0));
                        other.last_mut().unwrap()
                    }
                };
                if cs < slot.1 {
                    return Err(format!(
                        "node {c} ({:?}) overlaps its sibling in buffer {}",
                        cn.name, cn.buf
                    ));
                }
                slot.1 = ce;
            }
            self.check_tiling(c)?;
        }
        Ok(())
    }
}

pub struct Children<'t> {
    tree: &'t Tree,
    next: NodeId,
    end: NodeId,
}

impl Iterator for Children<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let id = self.next;
        self.next = self.tree.nodes[id as usize].end;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warn(i: usize) -> Diagnostic {
        Diagnostic::warning("w", format!("p[{i}]"), i as u64, "m")
    }

    #[test]
    fn diagnostics_past_the_tree_cap_are_counted_by_one_summary() {
        let mut t = Tree::new();
        let n = MAX_DIAGNOSTICS_PER_TREE;
        for i in 0..n + 10 {
            t.diags.push(warn(i));
        }
        t.diags.push(Diagnostic::error("e", "x", 5, "bad"));
        assert_eq!(t.diags.len(), n + 1);
        let s = &t.diags[n];
        assert_eq!(
            (s.code, s.offset, s.path.as_str()),
            (SUPPRESSED, n as u64, "p[1024]")
        );
        assert!(
            s.message.starts_with("11 more diagnostics here not shown"),
            "{s}"
        );
        assert!(s.message.ends_with("w (10), e (1)"), "{s}");
        assert!(s.is_error() && t.has_errors(), "the worst severity counted");
        assert_eq!(t.diags.suppressed(), 11);
        // An error node past the cap points at the summary.
        t.reset(&[0; 4]);
        for i in 0..n {
            t.diags.push(warn(i));
        }
        let id = t.error_node("", 0, 0, 4, Diagnostic::error("e", "", 0, "x"));
        assert_eq!(t.node(id).value, Value::Diag(n as u32));
        assert_eq!(t.diags.len(), n + 1);
        t.reset(&[]);
        assert!(t.diags.is_empty() && t.diags.suppressed() == 0);
    }

    #[test]
    fn each_record_set_keeps_its_own_first_diagnostics() {
        let mut d = Diags::default();
        let m = MAX_DIAGNOSTICS_PER_RECORD_SET;
        for _ in 0..2 {
            let started = d.begin_record_set();
            assert!(started);
            // A nested record set (a legacy wrapper's) belongs to the outer one.
            let inner = d.begin_record_set();
            assert!(!inner);
            for i in 0..m + 5 {
                d.push(warn(i));
            }
            d.end_record_set(inner);
            d.push(warn(0));
            d.end_record_set(started);
        }
        d.push(warn(7));
        assert_eq!(d.len(), 2 * (m + 1) + 1);
        assert_eq!(d[m].code, SUPPRESSED);
        assert!(
            d[m].message
                .starts_with("6 more diagnostics in this record set"),
            "{}",
            d[m]
        );
        assert_eq!(d[2 * m + 1].code, SUPPRESSED);
        assert_eq!(d.last().unwrap().offset, 7, "outside a record set: kept");
        assert_eq!(d.suppressed(), 12);
    }

    #[test]
    fn a_summary_lists_four_codes_then_the_others() {
        let mut d = Diags::default();
        for i in 0..MAX_DIAGNOSTICS_PER_TREE {
            d.push(warn(i));
        }
        for code in ["a", "b", "c", "d", "e", "f", "a"] {
            d.push(Diagnostic::info(code, "", 0, ""));
        }
        let s = d.last().unwrap();
        assert!(
            s.message
                .ends_with(": a (2), b (1), c (1), d (1), others (2)"),
            "{s}"
        );
        assert_eq!(s.severity, crate::diag::Severity::Info);
    }

    #[test]
    fn children_skip_grandchildren_and_tiling_holds() {
        let mut t = Tree::new();
        t.reset(&[0u8; 10]);
        let root = t.open("", Kind::Struct, 0, 0);
        t.leaf("A", Value::Int(1), 0, 0, 2);
        let arr = t.open("B", Kind::Array, 0, 2);
        t.node_mut(arr).hdr = 4;
        t.leaf("", Value::Int(2), 0, 6, 4);
        t.close(arr, 10);
        t.close(root, 10);
        let kids: Vec<_> = t.children(root).collect();
        assert_eq!(kids, vec![1, 2]);
        assert_eq!(t.child(root, "B"), Some(2));
        assert!(t.check_tiling(root).is_ok());
        t.node_mut(3).offset = 5; // overlaps the array's count prefix
        assert!(t.check_tiling(root).is_err());
    }
}

#[cfg(test)]
mod size {
    /// Nodes are the arena: growing one is a cost on every field of every frame. 64 bytes: the
    /// name, a 24-byte `Value`, four spans' worth of `u32`/`u16`, and `Kind` and `Entity` a byte
    /// each (an unknown tag's number, which made `Kind` 8 bytes and the node 72, is read from
    /// the bytes instead).
    #[test]
    fn a_node_stays_small() {
        assert!(
            std::mem::size_of::<super::Node>() <= 64,
            "{}",
            std::mem::size_of::<super::Node>()
        );
        eprintln!("size_of::<Node>() = {}", std::mem::size_of::<super::Node>());
    }
}
