//! The requests a probe sends: built from the schema at one API version (never hand-written),
//! with the topic, group and broker names the broker itself reported, and wait bounds kept short
//! so that a well-behaved broker answers within the timeout.
//!
//! Per version: `minimal` (zeros and empties), `one` (every array holds one element, every
//! entity field names something the broker knows), `nulls` (minimal, with every nullable field
//! null), then `--variants N` varied messages from the seeded generator.

use crate::pdu::Direction;
use crate::protocol::headers::request_header_version;
use crate::protocol::Protocol;
use crate::records::encode_pdu;
use crate::schema::model::{Field, MessageSpec, Prim};
use crate::wire::encode::EncodeError;
use crate::wire::plan::{shared, Plan, Ty};
use crate::wire::sample::{self, Rng};
use serde_json::{json, Map, Value as J};
use std::collections::{HashMap, HashSet};

/// What the broker told us exists, for fields whose schema `entityType` names them.
#[derive(Clone, Debug, Default)]
pub struct Entities {
    pub topics: Vec<String>,
    pub groups: Vec<String>,
    pub brokers: Vec<i32>,
}

/// Names used when the broker reported none (the probe never invents a second one).
const FALLBACK_TOPIC: &str = "kinspect-probe";
const FALLBACK_GROUP: &str = "kinspect-probe-group";
const FALLBACK_TXN: &str = "kinspect-probe-txn";

impl Entities {
    fn pick_name(&self, entity: &str, rng: Option<&mut Rng>) -> Option<String> {
        let (list, fallback): (&[String], &str) = match entity {
            "topicName" => (&self.topics, FALLBACK_TOPIC),
            "groupId" => (&self.groups, FALLBACK_GROUP),
            "transactionalId" => (&[], FALLBACK_TXN),
            _ => return None,
        };
        if list.is_empty() {
            return Some(fallback.to_string());
        }
        let i = rng.map_or(0, |r| r.below(list.len() as u64) as usize);
        list.get(i).cloned()
    }
    fn pick_broker(&self, rng: Option<&mut Rng>) -> Option<i32> {
        if self.brokers.is_empty() {
            return None;
        }
        let i = rng.map_or(0, |r| r.below(self.brokers.len() as u64) as usize);
        self.brokers.get(i).copied()
    }
}

/// Top-level fields that bound how long a broker may hold a request before answering (long
/// polls, rebalance waits, admin timeouts). Generated values are clamped to
/// [`MAX_WAIT_MS`] so that a correct broker answers within the probe's timeout. An explicit
/// list: these are the exact spec names of the wait bounds in the 3.9.0 and 4.3.1 specs.
pub const WAIT_FIELDS: &[&str] = &[
    "MaxWaitMs",
    "TimeoutMs",
    "RebalanceTimeoutMs",
    "SessionTimeoutMs",
    "TransactionTimeoutMs",
];
pub const MAX_WAIT_MS: i64 = 100;

/// One request to send: its kind (`minimal`, `one`, `nulls`, `varied-N`) and body JSON.
#[derive(Clone, Debug)]
pub struct Body {
    pub variant: String,
    pub json: J,
}

/// The request bodies to send for `spec` at `version`, duplicates removed, in a fixed order.
pub fn bodies(
    spec: &'static MessageSpec,
    version: i16,
    variants: u32,
    seed: u64,
    ents: &Entities,
) -> Vec<Body> {
    let plan = shared(spec, version);
    let map = entity_map(spec);
    let mut out: Vec<Body> = Vec::new();
    let mut push = |variant: String, mut json: J, rng: Option<&mut Rng>| {
        fill(&plan, plan.root, &mut json, &map, ents, rng);
        clamp_waits(&mut json);
        if !out.iter().any(|b| b.json == json) {
            out.push(Body { variant, json });
        }
    };
    push("minimal".into(), sample::minimal(&plan), None);
    let mut o = one(&plan, plan.root);
    // Acks 0 is never answered: the one-of-each Produce asks for every replica's.
    if spec.api_name() == "Produce" {
        if let Some(a) = o.get_mut("Acks") {
            *a = J::from(-1);
        }
    }
    push("one".into(), o, None);
    push("nulls".into(), nulls(&plan, plan.root), None);
    // One stream per (api, version): what is probed elsewhere does not shift these choices.
    let key = spec.api_key.unwrap_or(-1) as u16 as u64;
    let mut rng = Rng::new(seed ^ (key << 32) ^ ((version as u16 as u64) << 16));
    for i in 0..variants {
        let j = sample::varied(&plan, &mut rng);
        push(format!("varied-{i}"), j, Some(&mut rng));
    }
    out
}

/// One varied body drawn from `rng` (hostile values: nulls, extreme integers, non-ASCII
/// strings, unknown tags), entity fields filled and wait bounds clamped like [`bodies`]' own:
/// the fuzzer's valid-but-hostile cases.
pub fn varied_body(spec: &'static MessageSpec, version: i16, rng: &mut Rng, ents: &Entities) -> J {
    let plan = shared(spec, version);
    let map = entity_map(spec);
    let mut json = sample::varied(&plan, rng);
    fill(&plan, plan.root, &mut json, &map, ents, Some(rng));
    clamp_waits(&mut json);
    json
}

/// The decoded-PDU JSON of a request, as `kinspect encode` takes it.
pub fn request_json(
    proto: &'static Protocol,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: &str,
    body: &J,
) -> J {
    let mut header = Map::new();
    header.insert("RequestApiKey".into(), api_key.into());
    header.insert("RequestApiVersion".into(), version.into());
    header.insert("CorrelationId".into(), correlation_id.into());
    if request_header_version(proto, api_key, version) != Some(0) {
        header.insert("ClientId".into(), client_id.into());
    }
    json!({
        "direction": "request",
        "api_key": api_key,
        "api_version": version,
        "length": 0,
        "header": header,
        "body": body,
    })
}

/// The request's frame bytes (size prefix included).
pub fn encode_request(
    proto: &'static Protocol,
    api_key: i16,
    version: i16,
    correlation_id: i32,
    client_id: &str,
    body: &J,
) -> Result<Vec<u8>, EncodeError> {
    encode_pdu(
        proto,
        &request_json(proto, api_key, version, correlation_id, client_id, body),
    )
}

/// The request spec kinspect has for `api_key` at `version`, if any.
pub fn request_spec(proto: &Protocol, api_key: i16, version: i16) -> Option<&'static MessageSpec> {
    proto
        .message(api_key, version, Direction::Request)
        .map(|r| r.spec)
}

/// Field identity (the address of its name, which plans borrow) → the schema's `entityType`.
type EntityMap = HashMap<usize, &'static str>;

fn entity_map(spec: &'static MessageSpec) -> EntityMap {
    fn walk(
        spec: &'static MessageSpec,
        fields: &'static [Field],
        map: &mut EntityMap,
        seen: &mut HashSet<usize>,
    ) {
        for f in fields {
            if let Some(e) = f.entity_type.as_deref() {
                map.insert(f.name.as_ptr() as usize, e);
            }
            let sub = spec.struct_fields(f);
            if !sub.is_empty() && seen.insert(sub.as_ptr() as usize) {
                walk(spec, sub, map, seen);
            }
        }
    }
    let mut map = EntityMap::new();
    walk(spec, &spec.fields, &mut map, &mut HashSet::new());
    map
}

/// Puts known names into entity fields: always in the deterministic messages, three times in
/// four in varied ones (the rest keep the generator's hostile strings).
fn fill(
    plan: &Plan,
    sid: u32,
    json: &mut J,
    map: &EntityMap,
    ents: &Entities,
    mut rng: Option<&mut Rng>,
) {
    let Some(obj) = json.as_object_mut() else {
        return;
    };
    let sp = plan.structure(sid);
    for f in sp.fields.iter().chain(&sp.tagged) {
        let Some(v) = obj.get_mut(f.name) else {
            continue;
        };
        let entity = map.get(&(f.name.as_ptr() as usize)).copied();
        fill_value(plan, &f.ty, v, entity, map, ents, rng.as_deref_mut());
    }
}

fn fill_value(
    plan: &Plan,
    ty: &Ty,
    v: &mut J,
    entity: Option<&str>,
    map: &EntityMap,
    ents: &Entities,
    mut rng: Option<&mut Rng>,
) {
    match ty {
        Ty::Prim(Prim::String) => {
            let Some(e) = entity else { return };
            if !v.is_string() {
                return;
            }
            let keep = rng.as_deref_mut().is_some_and(|r| r.chance(4));
            if !keep {
                if let Some(n) = ents.pick_name(e, rng) {
                    *v = J::from(n);
                }
            }
        }
        Ty::Prim(Prim::Int32) if entity == Some("brokerId") && v.is_number() => {
            if let Some(id) = ents.pick_broker(rng) {
                *v = J::from(id);
            }
        }
        Ty::Array(inner) => {
            if let Some(items) = v.as_array_mut() {
                for item in items {
                    fill_value(plan, inner, item, entity, map, ents, rng.as_deref_mut());
                }
            }
        }
        Ty::Struct(sid) => fill(plan, *sid, v, map, ents, rng),
        _ => {}
    }
}

fn clamp_waits(json: &mut J) {
    let Some(obj) = json.as_object_mut() else {
        return;
    };
    for name in WAIT_FIELDS {
        if let Some(v) = obj.get_mut(*name) {
            if let Some(n) = v.as_i64() {
                *v = J::from(n.clamp(0, MAX_WAIT_MS));
            }
        }
    }
}

fn zero(p: Prim) -> J {
    match p {
        Prim::Bool => J::Bool(false),
        Prim::Float64 => J::from(0.0),
        Prim::Uuid => J::from("AAAAAAAAAAAAAAAAAAAAAA"),
        Prim::String | Prim::Bytes | Prim::Records => J::from(""),
        _ => J::from(0),
    }
}

/// One valid record batch (magic 2, uncompressed, CRC-32C right) holding one record: key
/// null, value `kinspect`, timestamp 0. What `one` puts in `records` fields, so that a Produce
/// is meaningful, not only well-formed.
pub fn record_batch() -> Vec<u8> {
    let value = b"kinspect";
    // Record: attributes, timestampDelta 0, offsetDelta 0, key -1 (null), value, 0 headers;
    // every varint zig-zag, and the value length (8 → 16) fits one byte.
    let mut rec = vec![0u8, 0, 0, 1, (value.len() * 2) as u8];
    rec.extend_from_slice(value);
    rec.push(0);
    let mut body = Vec::new(); // from attributes to the end: what the CRC covers
    body.extend_from_slice(&0i16.to_be_bytes()); // attributes
    body.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
    body.extend_from_slice(&0i64.to_be_bytes()); // baseTimestamp
    body.extend_from_slice(&0i64.to_be_bytes()); // maxTimestamp
    body.extend_from_slice(&(-1i64).to_be_bytes()); // producerId
    body.extend_from_slice(&(-1i16).to_be_bytes()); // producerEpoch
    body.extend_from_slice(&(-1i32).to_be_bytes()); // baseSequence
    body.extend_from_slice(&1i32.to_be_bytes()); // recordsCount
    body.push((rec.len() * 2) as u8); // record length, zig-zag (< 64)
    body.extend_from_slice(&rec);
    let mut out = Vec::new();
    out.extend_from_slice(&0i64.to_be_bytes()); // baseOffset
    out.extend_from_slice(&((4 + 1 + 4 + body.len()) as i32).to_be_bytes()); // batchLength
    out.extend_from_slice(&(-1i32).to_be_bytes()); // partitionLeaderEpoch
    out.push(2); // magic
    out.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Every untagged field at its zero, every array with one element: the smallest message that
/// names something in each list (a topic, a partition, a group); `records` hold one valid batch.
fn one(plan: &Plan, sid: u32) -> J {
    fn value(plan: &Plan, ty: &Ty, depth: usize) -> J {
        match ty {
            Ty::Prim(Prim::Records) => {
                use base64::Engine as _;
                J::from(base64::engine::general_purpose::STANDARD.encode(record_batch()))
            }
            Ty::Prim(p) => zero(*p),
            // Struct recursion is cut by the plan (`TooDeep`); only arrays need a bound.
            Ty::Struct(sid) => {
                let sp = plan.structure(*sid);
                J::Object(
                    sp.fields
                        .iter()
                        .map(|f| (f.name.to_string(), value(plan, &f.ty, depth + 1)))
                        .collect(),
                )
            }
            Ty::Array(e) if depth < 16 => J::Array(vec![value(plan, e, depth + 1)]),
            Ty::Array(_) => J::Array(Vec::new()),
            Ty::TooDeep => J::Null,
        }
    }
    value(plan, &Ty::Struct(sid), 0)
}

/// The minimal message with every nullable field null (null arrays, strings, structs).
fn nulls(plan: &Plan, sid: u32) -> J {
    let sp = plan.structure(sid);
    J::Object(
        sp.fields
            .iter()
            .map(|f| {
                let v = if f.nullable {
                    J::Null
                } else {
                    match &f.ty {
                        Ty::Struct(s) => nulls(plan, *s),
                        Ty::Prim(p) => zero(*p),
                        Ty::Array(_) => J::Array(Vec::new()),
                        Ty::TooDeep => J::Null,
                    }
                };
                (f.name.to_string(), v)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::builtin;

    fn spec(name: &str, v: i16) -> &'static MessageSpec {
        let p = builtin();
        request_spec(p, p.api_key(name).unwrap(), v).unwrap()
    }

    #[test]
    fn one_names_known_topics_and_every_body_encodes() {
        let ents = Entities {
            topics: vec!["orders".into()],
            groups: vec!["g1".into()],
            brokers: vec![7],
        };
        let b = bodies(spec("Metadata", 12), 12, 3, 1, &ents);
        assert_eq!(b[0].variant, "minimal");
        let one = b.iter().find(|b| b.variant == "one").unwrap();
        assert_eq!(one.json["Topics"][0]["Name"], "orders");
        for x in &b {
            encode_request(builtin(), 3, 12, 1, "c", &x.json).unwrap();
        }
        let og = bodies(spec("OffsetFetch", 3), 3, 0, 1, &ents);
        let one = og.iter().find(|b| b.variant == "one").unwrap();
        assert_eq!(one.json["GroupId"], "g1");
        let nulls = og.iter().find(|b| b.variant == "nulls").unwrap();
        assert!(nulls.json["Topics"].is_null());
    }

    #[test]
    fn a_produce_one_carries_a_batch_that_decodes_cleanly() {
        use crate::pdu::{Hints, Pdu};
        let ents = Entities::default();
        for v in [3, 9] {
            let b = bodies(spec("Produce", v), v, 0, 1, &ents);
            let one = b.iter().find(|b| b.variant == "one").unwrap();
            let frame = encode_request(builtin(), 0, v, 5, "c", &one.json).unwrap();
            let mut d = crate::records::decoder(builtin());
            let mut p = Pdu::default();
            d.decode_frame(&frame, &Hints::default(), &mut p);
            assert!(p.tree.diags.is_empty(), "v{v}: {:?}", p.tree.diags);
            let n = p.tree.nodes.iter().filter(|n| n.name == "Crc").count();
            assert_eq!(n, 1, "v{v}: one batch");
        }
        assert_eq!(record_batch().len(), 61 + 1 + 14);
    }

    #[test]
    fn wait_bounds_are_clamped_and_the_output_is_seeded() {
        let ents = Entities::default();
        let a = bodies(spec("Fetch", 11), 11, 8, 42, &ents);
        let b = bodies(spec("Fetch", 11), 11, 8, 42, &ents);
        assert_eq!(
            a.iter().map(|x| &x.json).collect::<Vec<_>>(),
            b.iter().map(|x| &x.json).collect::<Vec<_>>()
        );
        for x in &a {
            let w = x.json["MaxWaitMs"].as_i64().unwrap();
            assert!((0..=MAX_WAIT_MS).contains(&w), "{w}");
        }
    }
}
