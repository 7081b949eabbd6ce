//! Decoded trees as `serde_json::Value`s, for the encoder's round trip (`kinspect encode`, the
//! round-trip fuzzers and tests): the very JSON the streaming printer ([`super::json`], plain
//! mode, secrets shown, no session names) writes, read back. One printer serves both, so what
//! the round trip checks is what users see.

use super::json::{self, JsonOptions};
use crate::pdu::Pdu;
use crate::wire::tree::{NodeId, Tree};
use serde::Deserialize as _;
use serde_json::{Map, Value as J};

/// Plain JSON with nothing masked: the encoder must get every byte back.
const PLAIN: JsonOptions = JsonOptions {
    annotate: false,
    show_secrets: true,
};

/// The JSON of the subtree at `id` (CONTRACT.md), as the JSON printer shows it: structs are
/// objects of their members (known tags flattened in, unknown ones under
/// `_unknown_tagged_fields`), arrays are arrays, nulls are explicit, `Error` nodes are
/// `{"_error": code, "_data": base64 of their bytes}` and decoded batches carry the
/// `_compressed` / `_records_count` members the records encoder needs.
pub fn tree_to_json(tree: &Tree, id: NodeId) -> J {
    let mut buf = Vec::new();
    if json::write_value(&mut buf, tree, id, &PLAIN).is_err() {
        return J::Null;
    }
    // The printer caps its depth (`{"_error":"depth-limit"}` beyond), so reading it back
    // without serde_json's 128-level limit stays bounded.
    let mut de = serde_json::Deserializer::from_slice(&buf);
    de.disable_recursion_limit();
    match J::deserialize(&mut de).and_then(|v| de.end().map(|_| v)) {
        Ok(v) => v,
        Err(e) => {
            debug_assert!(false, "the JSON printer wrote invalid JSON: {e}");
            J::Null
        }
    }
}

/// The message-level JSON of a decoded PDU (`direction`, `api_key`, `api_version`, `length`
/// when the frame had a size prefix, `header`, `body` or `token`, `_trailing`): what
/// `records::encode_pdu` needs. The printers add origin, names and diagnostics.
pub fn pdu_json(pdu: &Pdu) -> J {
    let mut m = Map::new();
    let t = &pdu.tree;
    if let Some(d) = pdu.direction {
        m.insert("direction".into(), d.as_str().into());
    }
    if let Some(k) = pdu.api_key {
        m.insert("api_key".into(), k.into());
    }
    if let Some(v) = pdu.api_version {
        m.insert("api_version".into(), v.into());
    }
    if let Some(root) = t.nodes.first() {
        if root.hdr == 4 {
            m.insert("length".into(), (root.len.saturating_sub(4)).into());
        }
        for c in t.children(0) {
            let n = t.node(c);
            m.insert(n.name.to_string(), tree_to_json(t, c));
        }
    }
    J::Object(m)
}
