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
pub use crate::schema::model::Entity;

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
    UnknownTag(u32),
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
    pub diags: Vec<Diagnostic>,
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

    /// The bytes of a span in a buffer (empty when out of range, never panics).
    pub fn bytes(&self, buf: u16, s: Span) -> &[u8] {
        let b = self.buf(buf);
        let start = s.start as usize;
        let end = start.saturating_add(s.len as usize);
        b.get(start..end).unwrap_or(&[])
    }

    /// Opens a container; close it with [`Tree::close`].
    pub fn open(&mut self, name: &'static str, kind: Kind, buf: u16, offset: u32) -> NodeId {
        let id = self.nodes.len() as NodeId;
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
    pub fn leaf(
        &mut self,
        name: &'static str,
        value: Value,
        buf: u16,
        offset: u32,
        len: u32,
    ) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node {
            name,
            kind: Kind::Scalar,
            value,
            buf,
            hdr: 0,
            offset,
            len,
            end: id + 1,
            entity: Entity::None,
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
        let di = self.diags.len() as u32;
        self.diags.push(d);
        let id = self.nodes.len() as NodeId;
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
    /// Nodes are the arena: growing one is a cost on every field of every frame. 64 bytes
    /// before the entity byte; 72 with it (the byte cannot share `Kind`'s or `Value`'s
    /// padding).
    #[test]
    fn a_node_stays_small() {
        assert!(
            std::mem::size_of::<super::Node>() <= 72,
            "{}",
            std::mem::size_of::<super::Node>()
        );
        eprintln!("size_of::<Node>() = {}", std::mem::size_of::<super::Node>());
    }
}
