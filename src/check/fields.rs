//! Field access over a decoded tree, by the schema's member names: a member of a struct
//! (known tagged fields included, as the printers flatten them), its integer, bool, string or
//! uuid value, and the elements of an array member. Nothing here allocates.

use crate::pdu::Pdu;
use crate::wire::tree::{Kind, NodeId, Tree, Value};

/// The `body` struct of a decoded PDU, when it decoded as one.
pub fn body(tree: &Tree) -> Option<NodeId> {
    if tree.nodes.is_empty() {
        return None;
    }
    let b = tree.child(0, "body")?;
    (tree.node(b).kind == Kind::Struct).then_some(b)
}

/// The `header` struct of a decoded PDU.
pub fn header(tree: &Tree) -> Option<NodeId> {
    if tree.nodes.is_empty() {
        return None;
    }
    tree.child(0, "header")
}

/// The member `name` of struct `id`, looking inside its tagged-field section too.
pub fn member(tree: &Tree, id: NodeId, name: &str) -> Option<NodeId> {
    for c in tree.children(id) {
        let n = tree.node(c);
        if n.name == name {
            return Some(c);
        }
        if n.kind == Kind::TaggedSection {
            if let Some(t) = tree.child(c, name) {
                return Some(t);
            }
        }
    }
    None
}

/// The first of `names` that struct `id` has (a field renamed across versions).
pub fn member_any(tree: &Tree, id: NodeId, names: &[&str]) -> Option<NodeId> {
    names.iter().find_map(|n| member(tree, id, n))
}

pub fn int(tree: &Tree, id: NodeId, name: &str) -> Option<i64> {
    match tree.node(member(tree, id, name)?).value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

/// [`int`] of the first of `names` present.
pub fn int_any(tree: &Tree, id: NodeId, names: &[&str]) -> Option<i64> {
    match tree.node(member_any(tree, id, names)?).value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

pub fn boolean(tree: &Tree, id: NodeId, name: &str) -> Option<bool> {
    match tree.node(member(tree, id, name)?).value {
        Value::Bool(v) => Some(v),
        _ => None,
    }
}

/// A string member's text (`None` when null, absent or not UTF-8).
pub fn text<'t>(tree: &'t Tree, id: NodeId, name: &str) -> Option<&'t str> {
    let n = tree.node(member(tree, id, name)?);
    match n.value {
        Value::Str(s) => std::str::from_utf8(tree.bytes(n.buf, s)).ok(),
        _ => None,
    }
}

pub fn uuid(tree: &Tree, id: NodeId, name: &str) -> Option<[u8; 16]> {
    match tree.node(member(tree, id, name)?).value {
        Value::Uuid(u) => Some(u),
        _ => None,
    }
}

/// The elements of array member `name` of struct `id` (none when absent or null).
pub fn elems<'t>(tree: &'t Tree, id: NodeId, name: &str) -> impl Iterator<Item = NodeId> + 't {
    let arr = member(tree, id, name).filter(|&a| tree.node(a).kind == Kind::Array);
    arr.into_iter().flat_map(move |a| tree.children(a))
}

/// How a topic is named in a struct: by name, or only by id (named from the session when it
/// knows the id, see [`Pdu::topic_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic<'a> {
    Name(&'a str),
    Id([u8; 16]),
}

/// The id of the KRaft metadata topic (`Uuid.METADATA_TOPIC_ID`: 0…01).
pub const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// The topic struct `t`'s topic: its `Name`/`Topic`/`TopicName`, else the name the session
/// knows for its `TopicId`, else the id.
pub fn topic<'a>(pdu: &'a Pdu, t: NodeId) -> Option<Topic<'a>> {
    let tree = &pdu.tree;
    for n in ["Name", "Topic", "TopicName"] {
        if let Some(s) = text(tree, t, n) {
            return Some(Topic::Name(s));
        }
    }
    let id = member(tree, t, "TopicId")?;
    if let Some(name) = pdu.topic_name(id) {
        return Some(Topic::Name(name));
    }
    match tree.node(id).value {
        Value::Uuid(u) if u == METADATA_TOPIC_ID => Some(Topic::Name("__cluster_metadata")),
        Value::Uuid(u) => Some(Topic::Id(u)),
        _ => None,
    }
}

impl Topic<'_> {
    /// A stable 64-bit key (FNV-1a of the name, or of the id).
    pub fn key(&self) -> u64 {
        let bytes: &[u8] = match self {
            Topic::Name(s) => s.as_bytes(),
            Topic::Id(u) => u,
        };
        fnv(bytes)
    }
}

impl std::fmt::Display for Topic<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Topic::Name(s) => f.write_str(s),
            Topic::Id(u) => {
                f.write_str("topic id ")?;
                u.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
    }
}

/// FNV-1a, 64 bits.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_in_tagged_sections_and_arrays_iterate() {
        let mut t = Tree::new();
        t.reset(b"abc");
        let root = t.open("", Kind::Struct, 0, 0);
        let b = t.open("body", Kind::Struct, 0, 0);
        t.leaf("ErrorCode", Value::Int(74), 0, 0, 2);
        let arr = t.open("Topics", Kind::Array, 0, 0);
        for i in 0..3 {
            let e = t.open("", Kind::Struct, 0, 0);
            t.leaf("PartitionIndex", Value::Int(i), 0, 0, 4);
            t.close(e, 0);
        }
        t.close(arr, 0);
        let tags = t.open("", Kind::TaggedSection, 0, 0);
        t.leaf(
            "ClusterId",
            Value::Str(crate::wire::tree::Span { start: 0, len: 3 }),
            0,
            0,
            3,
        );
        t.close(tags, 0);
        t.close(b, 0);
        t.close(root, 0);
        let b = body(&t).unwrap();
        assert_eq!(int(&t, b, "ErrorCode"), Some(74));
        assert_eq!(text(&t, b, "ClusterId"), Some("abc"));
        let idx: Vec<i64> = elems(&t, b, "Topics")
            .filter_map(|e| int(&t, e, "PartitionIndex"))
            .collect();
        assert_eq!(idx, [0, 1, 2]);
        assert_eq!(elems(&t, b, "Missing").count(), 0);
        assert_eq!(int_any(&t, b, &["Nope", "ErrorCode"]), Some(74));
    }
}
