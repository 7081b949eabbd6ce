//! Every (api, version, direction) of the built-in protocol, as whole frames: a minimal message
//! and varied ones from the schema-driven generator, with Kafka's header for that version,
//! encoded by `encode_pdu`, decoded by `Decoder::decode_frame` (direction detected for requests,
//! hinted for responses), and compared with the JSON it came from.

use kinspect::output::value::pdu_json;
use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::protocol::{builtin, headers};
use kinspect::records::encode_pdu;
use kinspect::wire::decode::RecordsOptions;
use kinspect::wire::plan::shared;
use kinspect::wire::sample::{minimal, varied, Rng};
use serde_json::{json, Value as J};
use std::collections::BTreeSet;

fn frame_json(dir: Direction, key: i16, v: i16, body: J, header: J) -> J {
    json!({"direction": dir.as_str(), "api_key": key, "api_version": v, "length": 0, "header": header, "body": body})
}

#[test]
fn every_api_version_and_direction_decodes_and_round_trips_as_a_frame() {
    let proto = builtin();
    let mut dec = kinspect::records::decoder(proto);
    // The samples' `records` fields hold arbitrary bytes, not batches: keep them opaque here
    // (batches inside frames: tests/records_in_frames.rs).
    dec.set_records(RecordsOptions {
        raw: true,
        as_type: None,
        ..Default::default()
    });
    let mut pdu = Pdu::default();
    let mut combos = BTreeSet::new();
    let mut failures = Vec::new();
    for key in proto.api_keys() {
        let versions: BTreeSet<i16> = proto
            .api_versions(key)
            .iter()
            .flat_map(|a| a.valid.iter())
            .collect();
        for v in versions {
            for dir in [Direction::Request, Direction::Response] {
                let Some(r) = proto.message(key, v, dir) else {
                    failures.push(format!("{key} v{v} {}: no spec", dir.as_str()));
                    continue;
                };
                combos.insert((key, v, dir.as_str()));
                let hv = headers::header_version(proto, dir, key, v).expect("known API");
                let h = proto.header(dir, hv).expect("header spec");
                let hplan = shared(h.spec, hv);
                let plan = shared(r.spec, v);
                let mut rng = Rng::new(((key as u64) << 16) ^ (v as u64) ^ 0x4b41_464b);
                let mut bodies = vec![minimal(&plan)];
                bodies.extend((0..3).map(|_| varied(&plan, &mut rng)));
                for (i, body) in bodies.into_iter().enumerate() {
                    let mut header = if i == 0 {
                        minimal(&hplan)
                    } else {
                        varied(&hplan, &mut rng)
                    };
                    if dir == Direction::Request {
                        header["RequestApiKey"] = key.into();
                        header["RequestApiVersion"] = v.into();
                    }
                    let mut want = frame_json(dir, key, v, body, header);
                    let ctx = format!(
                        "{} v{v} {} case {i}",
                        proto.api_name(key).unwrap_or("?"),
                        dir.as_str()
                    );
                    let bytes = match encode_pdu(proto, &want) {
                        Ok(b) => b,
                        Err(e) => {
                            failures.push(format!("{ctx}: encode: {e}"));
                            break;
                        }
                    };
                    want["length"] = (bytes.len() - 4).into();
                    let hints = match dir {
                        Direction::Request => Hints::default(),
                        Direction::Response => Hints {
                            api_key: Some(key),
                            api_version: Some(v),
                            ..Hints::default()
                        },
                    };
                    dec.decode_frame(&bytes, &hints, &mut pdu);
                    let errs: Vec<String> = pdu.tree.errors().map(|d| d.to_string()).collect();
                    if !errs.is_empty() {
                        failures.push(format!("{ctx}: {}", errs.join("; ")));
                        break;
                    }
                    if pdu.direction != Some(dir) || pdu.release != Some(r.release) {
                        failures.push(format!(
                            "{ctx}: decoded as {:?} from {:?}",
                            pdu.direction, pdu.release
                        ));
                        break;
                    }
                    if let Err(e) = pdu.tree.check_tiling(0) {
                        failures.push(format!("{ctx}: {e}"));
                        break;
                    }
                    let got = pdu_json(&pdu);
                    if got != want {
                        failures.push(format!("{ctx}: decoded\n {got}\nexpected\n {want}"));
                        break;
                    }
                }
            }
        }
    }
    eprintln!("{} (api, version, direction) combinations", combos.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    // The count over the union of Kafka 3.9.0 and 4.3.1 (checked against the spec files
    // by the schema tests).
    assert_eq!(combos.len(), 722);
}

/// The encoder takes user-written JSON: wrong types, out-of-range numbers, missing or unknown
/// members, bad base64 must come back as errors naming the JSON path, never a panic.
#[test]
fn the_encoder_refuses_bad_json_with_a_path() {
    let proto = builtin();
    let mut rng = Rng::new(99);
    let poison = [
        json!(null),
        json!(true),
        json!(1.5),
        json!(-129),
        json!(70000),
        json!(4294967296i64),
        json!("%%%"),
        json!([1]),
        json!({"x": 1}),
    ];
    let (mut refused, mut tried) = (0, 0);
    for key in proto.api_keys() {
        let Some(a) = proto.api_versions(key).first().copied() else {
            continue;
        };
        let v = a.valid.hi;
        let Some(r) = proto.message(key, v, Direction::Request) else {
            continue;
        };
        let plan = shared(r.spec, v);
        let hv = headers::request_header_version(proto, key, v).unwrap();
        let h = minimal(&shared(
            proto.header(Direction::Request, hv).unwrap().spec,
            hv,
        ));
        let body = varied(&plan, &mut rng);
        let mut leaves = Vec::new();
        collect_paths(&body, String::new(), &mut leaves);
        for path in leaves {
            let mut b = body.clone();
            *b.pointer_mut(&path).unwrap() =
                poison[rng.below(poison.len() as u64) as usize].clone();
            let mut header = h.clone();
            header["RequestApiKey"] = key.into();
            header["RequestApiVersion"] = v.into();
            tried += 1;
            if let Err(e) = encode_pdu(proto, &frame_json(Direction::Request, key, v, b, header)) {
                refused += 1;
                assert!(e.path.starts_with("body"), "{e}");
            }
        }
    }
    eprintln!("{refused} of {tried} poisoned messages refused");
    assert!(refused * 2 > tried);
}

fn collect_paths(v: &J, at: String, out: &mut Vec<String>) {
    match v {
        J::Object(m) => m
            .iter()
            .for_each(|(k, x)| collect_paths(x, format!("{at}/{k}"), out)),
        J::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| collect_paths(x, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}
