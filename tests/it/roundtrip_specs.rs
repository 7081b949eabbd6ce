//! Every message spec of both built-in Kafka releases (requests, responses, headers, KRaft
//! records, coordinator and control records), at every valid version: a minimal message
//! and seeded varied ones, built from the schema by the generator, encoded, decoded and compared
//! (the decoded JSON must equal what was encoded, and re-encoding must give the same bytes).
//! Kafka's spec files are the oracle for what exists; the generator and the decoder share only
//! the compiled plan.

use kinspect::output::value::tree_to_json;
use kinspect::protocol::builtin;
use kinspect::schema::model::{MessageSpec, SpecType};
use kinspect::wire::decode::decode_message_at;
use kinspect::wire::encode::encode_message;
use kinspect::wire::plan::Plan;
use kinspect::wire::sample::{minimal, varied, Rng};
use kinspect::wire::tree::Tree;

fn round_trip(spec: &'static MessageSpec, v: i16, json: &serde_json::Value) -> Result<(), String> {
    let plan = Plan::compile(spec, v);
    let mut bytes = Vec::new();
    encode_message(&plan, json, &mut bytes, "body").map_err(|e| format!("encode: {e}"))?;
    let mut t = Tree::new();
    t.reset(&bytes);
    let end = decode_message_at(&mut t, spec, v, 0, 0, bytes.len() as u32, "body", "body");
    if end as usize != bytes.len() {
        return Err(format!("decoding stopped at {end} of {}", bytes.len()));
    }
    if let Some(d) = t.diags.first() {
        return Err(format!("diagnostic: {d}"));
    }
    t.check_tiling(0)?;
    let back = tree_to_json(&t, 0);
    if &back != json {
        return Err(format!("decoded JSON differs:\n in: {json}\nout: {back}"));
    }
    let mut again = Vec::new();
    encode_message(&plan, &back, &mut again, "body").map_err(|e| format!("re-encode: {e}"))?;
    if again != bytes {
        return Err("re-encoding differs".into());
    }
    Ok(())
}

#[test]
fn every_spec_and_version_round_trips() {
    let mut combos = 0;
    let mut failures = Vec::new();
    for (release, spec) in builtin().specs() {
        if spec.spec_type == SpecType::Header && spec.valid_versions.is_empty() {
            continue;
        }
        for v in spec.valid_versions.iter() {
            combos += 1;
            let plan = Plan::compile(spec, v);
            let mut rng = Rng::new(((v as u64) << 32) ^ spec.name.len() as u64 ^ 0x6b69_6e73);
            let mut cases = vec![minimal(&plan)];
            cases.extend((0..8).map(|_| varied(&plan, &mut rng)));
            for (i, json) in cases.iter().enumerate() {
                if let Err(e) = round_trip(spec, v, json) {
                    failures.push(format!("{release} {} v{v} case {i}: {e}", spec.name));
                    break;
                }
            }
        }
    }
    eprintln!("round-tripped {combos} (spec, version) combinations");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(combos > 700);
}
