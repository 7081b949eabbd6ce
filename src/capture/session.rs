//! Conversation state that decoding needs, fed PDU by PDU by the decode loop: topic ids
//! resolved to names from Metadata, DescribeTopicPartitions and CreateTopics responses.
//!
//! The names serve twice: the decoder reads `records` under a topic known only by id with them
//! (`TopicNames`), and [`name_topic_ids`] lists them for the printers (`_topic_name`). What a
//! conversation should look like (versions the broker advertised, correlation ids, epochs) is
//! `check`'s: `decode --check` adds its findings.

use crate::pdu::{Direction, Pdu};
use crate::protocol::KnownApis;
use crate::wire::hook::TopicNames;
use crate::wire::tree::{Entity, Kind, Node, NodeId, Tree, Value};
use std::collections::HashMap;

/// The APIs the session learns from, by name in the built-in registry (API keys are Kafka's,
/// not a release's: an overlay does not renumber them).
fn known() -> &'static KnownApis {
    crate::protocol::builtin().known()
}

/// Most topic ids remembered; a capture naming more keeps the first ones.
const MAX_TOPIC_IDS: usize = 1 << 20;

#[derive(Default, Debug, Clone)]
pub struct Session {
    topics: HashMap<[u8; 16], String>,
}

fn body(tree: &Tree) -> Option<NodeId> {
    if tree.nodes.is_empty() {
        return None;
    }
    let b = tree.child(0, "body")?;
    (tree.node(b).kind == Kind::Struct).then_some(b)
}

impl Session {
    pub fn new() -> Self {
        Session::default()
    }

    /// The name of a topic id seen in an earlier response.
    /// The KRaft metadata topic's id is fixed (`Uuid.METADATA_TOPIC_ID`, 0…01).
    pub fn topic_name(&self, id: [u8; 16]) -> Option<&str> {
        const METADATA_TOPIC_ID: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        if id == METADATA_TOPIC_ID {
            return Some("__cluster_metadata");
        }
        self.topics.get(&id).map(String::as_str)
    }

    /// Topic ids known so far.
    pub fn topic_count(&self) -> usize {
        self.topics.len()
    }

    /// Whether a frame with these hints may teach the session something: a response (or a
    /// frame of unknown direction) of an API whose responses are learnt from. A frame for
    /// which this is false leaves the session as it was, so it can be decoded against a
    /// snapshot, on another thread.
    pub fn may_learn_from(direction: Option<Direction>, api_key: Option<i16>) -> bool {
        let k = known();
        direction != Some(Direction::Request)
            && api_key.is_some()
            && [k.metadata, k.create_topics, k.describe_topic_partitions].contains(&api_key)
    }

    /// Learns what a decoded response says: topic names.
    pub fn learn(&mut self, pdu: &Pdu) {
        if pdu.direction != Some(Direction::Response)
            || pdu.api_version.is_none()
            || !Self::may_learn_from(pdu.direction, pdu.api_key)
        {
            return;
        }
        let Some(b) = body(&pdu.tree) else {
            return;
        };
        self.learn_topics(&pdu.tree, b)
    }

    /// Every struct of the body that carries both a topic id and a topic name (the `Topics[]`
    /// of Metadata, CreateTopics and DescribeTopicPartitions responses) teaches their pairing.
    fn learn_topics(&mut self, tree: &Tree, b: NodeId) {
        for t in b..tree.node(b).end {
            if tree.node(t).kind != Kind::Struct {
                continue;
            }
            let (mut id, mut name) = (None, None);
            for c in tree.children(t) {
                let n = tree.node(c);
                match (n.entity, n.value) {
                    (Entity::TopicId, Value::Uuid(u)) if u != [0; 16] => id = Some(u),
                    (Entity::TopicName, Value::Str(s)) => name = Some((n.buf, s)),
                    _ => {}
                }
            }
            let (Some(id), Some((buf, s))) = (id, name) else {
                continue;
            };
            let name = String::from_utf8_lossy(tree.bytes(buf, s)).into_owned();
            if self.topics.len() < MAX_TOPIC_IDS || self.topics.contains_key(&id) {
                self.topics.insert(id, name);
            }
        }
    }
}

impl TopicNames for Session {
    fn topic_name(&self, id: [u8; 16]) -> Option<&str> {
        Session::topic_name(self, id)
    }
}

/// Fills `out` with the names `names` knows for the topic-id members of `tree`'s structs that
/// carry no topic name of their own, in node order. Data-driven: any member whose entity is
/// a topic id ([`Entity::TopicId`]), whatever the API.
pub fn name_topic_ids(tree: &Tree, names: &dyn TopicNames, out: &mut Vec<(NodeId, String)>) {
    out.clear();
    // Most frames hold no topic id at all (a Produce request's records are structs too, and
    // asking each of them for one is a pass over all their members): one look at every node
    // says so first.
    let is_id =
        |n: &Node| n.entity == Entity::TopicId && matches!(n.value, Value::Uuid(u) if u != [0; 16]);
    if !tree.nodes.iter().any(is_id) {
        return;
    }
    for (i, n) in tree.nodes.iter().enumerate() {
        if n.kind != Kind::Struct || n.value == Value::Null {
            continue;
        }
        let id = i as NodeId;
        let mut found = None;
        let mut named = false;
        for c in tree.children(id) {
            let cn = tree.node(c);
            match cn.value {
                Value::Uuid(u) if is_id(cn) => found = Some((c, u)),
                Value::Str(_) if cn.entity == Entity::TopicName => named = true,
                _ => {}
            }
        }
        if let (Some((c, u)), false) = (found, named) {
            if let Some(name) = names.topic_name(u) {
                out.push((c, name.to_string()));
            }
        }
    }
    out.sort_unstable_by_key(|(c, _)| *c);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::Conn;
    use crate::wire::tree::Span;

    /// Metadata's key, as the session finds it by name.
    const METADATA: i16 = 3;

    #[test]
    fn the_apis_learnt_from_are_found_by_name() {
        let k = known();
        assert_eq!(
            (
                k.api_versions,
                k.metadata,
                k.create_topics,
                k.describe_topic_partitions
            ),
            (Some(18), Some(METADATA), Some(19), Some(75))
        );
        assert_eq!(k.controlled_shutdown, Some(7));
    }

    fn pdu(dir: Direction, key: i16, version: i16, tree: Tree) -> Pdu {
        let conn = Conn {
            client: "127.0.0.1:40000".parse().unwrap(),
            server: "127.0.0.1:9092".parse().unwrap(),
            stream: 0,
        };
        let mut p = Pdu {
            direction: Some(dir),
            api_key: Some(key),
            api_version: Some(version),
            tree,
            ..Pdu::default()
        };
        p.origin.conn = Some(conn);
        p
    }

    /// root { header, body { Topics: [ {Name?, TopicId} … ] } } over `buf`, where each topic's
    /// name (when given) is a span of `buf`.
    fn topics(buf: &[u8], entries: &[(Option<Span>, [u8; 16])]) -> Tree {
        let mut t = Tree::new();
        t.reset(buf);
        let root = t.open("", Kind::Struct, 0, 0);
        let h = t.open("header", Kind::Struct, 0, 0);
        t.close(h, 0);
        let b = t.open("body", Kind::Struct, 0, 0);
        let arr = t.open("Topics", Kind::Array, 0, 0);
        for &(name, id) in entries {
            let e = t.open("", Kind::Struct, 0, 0);
            if let Some(s) = name {
                let n = t.leaf("Name", Value::Str(s), 0, s.start, s.len);
                t.node_mut(n).entity = Entity::TopicName;
            }
            let n = t.leaf("TopicId", Value::Uuid(id), 0, 0, 0);
            t.node_mut(n).entity = Entity::TopicId;
            t.close(e, 0);
        }
        t.close(arr, 0);
        t.close(b, 0);
        t.close(root, 0);
        t
    }

    fn sp(start: u32, len: u32) -> Option<Span> {
        Some(Span { start, len })
    }

    #[test]
    fn topic_ids_are_named_only_where_their_struct_does_not_name_them() {
        let buf = b"ordersclicks";
        let mut s = Session::new();
        // A Metadata response teaches two names (a zero id, "no id", teaches nothing).
        s.learn(&pdu(
            Direction::Response,
            METADATA,
            12,
            topics(
                buf,
                &[
                    (sp(0, 6), [1; 16]),
                    (sp(6, 6), [2; 16]),
                    (sp(0, 6), [0; 16]),
                ],
            ),
        ));
        assert_eq!(s.topic_name([1; 16]), Some("orders"));
        assert_eq!(s.topic_name([2; 16]), Some("clicks"));
        assert_eq!(s.topic_count(), 2);
        // A later PDU: ids alone get names; a struct with its own Name, an unknown id and the
        // zero id get none.
        let t = topics(
            buf,
            &[
                (None, [2; 16]),
                (sp(0, 6), [1; 16]),
                (None, [9; 16]),
                (None, [0; 16]),
                (None, [1; 16]),
            ],
        );
        let mut out = vec![(0, "stale".to_string())];
        name_topic_ids(&t, &s, &mut out);
        let got: Vec<(&str, [u8; 16])> = out
            .iter()
            .map(|(n, name)| match t.node(*n).value {
                Value::Uuid(u) => (name.as_str(), u),
                v => panic!("{v:?}"),
            })
            .collect();
        assert_eq!(got, [("clicks", [2; 16]), ("orders", [1; 16])]);
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "node order");
        // A PDU with no id to name (the zero id is none) leaves nothing from the last.
        let t = topics(buf, &[(None, [0; 16]), (sp(0, 6), [0; 16])]);
        let mut out = vec![(0, "stale".to_string())];
        name_topic_ids(&t, &s, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
