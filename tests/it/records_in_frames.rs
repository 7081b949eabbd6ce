//! Records decoded in place inside Produce and Fetch frames (the walker hands every `records`
//! field to the records decoder) and encoded back: every bundled capture's batches show up as
//! batches, every codec and magic round-trips byte for byte through the JSON, a Fetch
//! response's cut last batch is partial (and the same cut in a request is an error), and a
//! Produce to `__consumer_offsets` built from hand-written key/value bytes decodes with the
//! coordinator schemas.

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::output::value::pdu_json;
use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::records::encode_pdu;
use kinspect::wire::decode::RecordsOptions;
use kinspect::wire::tree::{Kind, NodeId, Tree, Value};
use serde_json::{json, Value as J};
use std::collections::BTreeSet;

struct Frame {
    name: String,
    frame: u64,
    hints: Hints,
    data: Vec<u8>,
}

fn frames() -> Vec<Frame> {
    let opts = CaptureOptions {
        protocol: Some(builtin()),
        ..CaptureOptions::default()
    };
    let mut out = Vec::new();
    for cap in common::bundled_captures() {
        let name = cap.file_stem().unwrap().to_string_lossy().into_owned();
        let f = std::fs::File::open(&cap).unwrap();
        read_capture(std::io::BufReader::new(f), &opts, &mut |e| {
            if let Event::Frame {
                origin,
                hints,
                data,
            } = e
            {
                out.push(Frame {
                    name: name.clone(),
                    frame: origin.last_frame.or(origin.frame).unwrap_or(0),
                    hints,
                    data: data.to_vec(),
                });
            }
        })
        .unwrap();
    }
    out
}

/// The `records` fields of the message (not the batches' own `Records` arrays): the nodes
/// called `Records` whose parent is not a batch (a batch has a `Magic` member).
fn message_records(t: &Tree) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = vec![0];
    while let Some(id) = stack.pop() {
        let batch = t.child(id, "Magic").is_some();
        for c in t.children(id) {
            if t.node(c).name == "Records" && !batch {
                out.push(c);
            } else {
                stack.push(c);
            }
        }
    }
    out
}

fn label(t: &Tree, id: NodeId, name: &str) -> Option<&'static str> {
    match t.child(id, name).map(|c| t.node(c).value) {
        Some(Value::Label(l)) => Some(l),
        _ => None,
    }
}

#[test]
fn every_captured_records_field_is_decoded_into_batches_and_encodes_back() {
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    let (mut fields, mut batches, mut round_trips) = (0, 0, 0);
    let mut codecs = BTreeSet::new();
    let mut magics = BTreeSet::new();
    for f in frames() {
        dec.decode_frame(&f.data, &f.hints, &mut pdu);
        let t = &pdu.tree;
        for r in message_records(t) {
            let n = t.node(r);
            let at = format!("{} frame {}", f.name, f.frame);
            match n.value {
                // Null records, or a field the frame was cut in (snaplen), hold no batches.
                Value::Null => continue,
                _ if n.kind == Kind::Error => continue,
                v => assert!(
                    n.kind == Kind::Array,
                    "{at}: Records left as {v:?}, expected batches"
                ),
            }
            fields += 1;
            // Non-empty records hold at least one batch, and the batches cover the field.
            if n.len > n.hdr as u32 {
                let kids: Vec<_> = t.children(r).collect();
                assert!(!kids.is_empty(), "{at}: non-empty Records with no batch");
                let last = t.node(*kids.last().unwrap());
                assert_eq!(
                    last.offset + last.len,
                    n.offset + n.len,
                    "{at}: batches end early"
                );
            }
            for b in t.children(r) {
                if let Some(Value::Int(m)) = t.child(b, "Magic").map(|c| t.node(c).value) {
                    batches += 1;
                    magics.insert(m);
                    let a = t.child(b, "Attributes").unwrap();
                    codecs.insert(label(t, a, "Compression").unwrap());
                }
            }
        }
        t.check_tiling(0)
            .unwrap_or_else(|e| panic!("{} frame {}: {e}", f.name, f.frame));
        if !t.has_errors() && !message_records(t).is_empty() {
            let j = pdu_json(&pdu);
            let back = encode_pdu(builtin(), &j)
                .unwrap_or_else(|e| panic!("{} frame {}: {e}", f.name, f.frame));
            assert!(
                back == f.data,
                "{} frame {}: re-encoded bytes differ",
                f.name,
                f.frame
            );
            round_trips += 1;
        }
    }
    // Floors from the bundled captures (produce and fetch traffic of five clients).
    assert!(fields >= 40, "only {fields} records fields");
    assert!(batches >= 40, "only {batches} batches");
    assert!(
        round_trips >= 40,
        "only {round_trips} frames with records re-encoded"
    );
    for c in ["none", "gzip", "snappy", "lz4", "zstd"] {
        assert!(
            codecs.contains(c),
            "no {c} batch in the captures: {codecs:?}"
        );
    }
    // Every client in the captures writes magic 2 (legacy messages: tests/records_legacy.rs and
    // `legacy_messages_encode_back` below).
    assert!(magics.contains(&2), "magics seen: {magics:?}");
}

#[test]
fn records_raw_keeps_the_field_as_bytes() {
    let mut dec = kinspect::records::decoder(builtin());
    dec.set_records(RecordsOptions {
        raw: true,
        as_type: None,
        ..Default::default()
    });
    let mut pdu = Pdu::default();
    let mut seen = 0;
    for f in frames() {
        dec.decode_frame(&f.data, &f.hints, &mut pdu);
        for r in message_records(&pdu.tree) {
            let n = pdu.tree.node(r);
            assert!(
                matches!(n.value, Value::Bytes(_) | Value::Null) || n.kind == Kind::Error,
                "{} frame {}: {:?}",
                f.name,
                f.frame,
                n.kind
            );
            seen += 1;
        }
    }
    assert!(seen >= 40);
}

/// The first Fetch response of the captures that carries a v2 batch: (frame, hints, JSON).
fn a_fetch_response_with_batches() -> (Frame, J) {
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    for f in frames() {
        if f.hints.api_key != Some(1) {
            continue;
        }
        dec.decode_frame(&f.data, &f.hints, &mut pdu);
        if pdu.direction != Some(Direction::Response) || pdu.tree.has_errors() {
            continue;
        }
        let t = &pdu.tree;
        if message_records(t)
            .iter()
            .any(|&r| t.children(r).any(|b| t.child(b, "Magic").is_some()))
        {
            let j = pdu_json(&pdu);
            return (f, j);
        }
    }
    panic!("no Fetch response with batches in the bundled captures");
}

/// The first non-empty `Records` member of a decoded-PDU JSON body (a mutable reference).
fn first_records(v: &mut J) -> Option<&mut J> {
    match v {
        J::Object(m) => {
            if m.get("Records")
                .is_some_and(|r| r.as_array().is_some_and(|a| !a.is_empty()))
                && !m.contains_key("Magic")
            {
                return m.get_mut("Records");
            }
            m.values_mut().find_map(first_records)
        }
        J::Array(a) => a.iter_mut().find_map(first_records),
        _ => None,
    }
}

#[test]
fn a_fetch_responses_cut_last_batch_is_partial_and_a_requests_is_an_error() {
    use base64::Engine as _;
    let (f, mut j) = a_fetch_response_with_batches();
    let recs = first_records(&mut j["body"]).unwrap();
    let batches = recs.as_array().unwrap().clone();
    let mut bytes = Vec::new();
    kinspect::records::encode::encode_records(&batches, &mut bytes, "Records").unwrap();
    // Cut the last batch 7 bytes short, as a broker does at its byte limit.
    let cut = bytes.len() - 7;
    *recs = J::from(base64::engine::general_purpose::STANDARD.encode(&bytes[..cut]));
    let frame = encode_pdu(builtin(), &j).unwrap();
    assert_eq!(
        frame.len(),
        f.data.len() - 7,
        "the frame shrinks by the cut"
    );

    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    dec.decode_frame(&frame, &f.hints, &mut pdu);
    let t = &pdu.tree;
    assert!(!t.has_errors(), "{:?}", t.diags);
    assert!(t.diags.iter().any(|d| d.code == "partial-batch"));
    let r = message_records(t)
        .into_iter()
        .find(|&r| t.node(r).len > t.node(r).hdr as u32)
        .unwrap();
    let last = t.children(r).last().unwrap();
    assert_eq!(
        t.child(last, "Partial").map(|c| t.node(c).value),
        Some(Value::Bool(true))
    );
    // The partial batch round-trips too.
    assert_eq!(encode_pdu(builtin(), &pdu_json(&pdu)).unwrap(), frame);

    // The same cut batch in a Produce request is an error: a client never sends half a batch.
    let produce = json!({
        "direction": "request", "api_key": 0, "api_version": 7, "length": 0,
        "header": {"RequestApiKey": 0, "RequestApiVersion": 7, "CorrelationId": 9,
                   "ClientId": "t"},
        "body": {"TransactionalId": null, "Acks": -1, "TimeoutMs": 1000, "TopicData": [
            {"Name": "t", "PartitionData": [{"Index": 0, "Records":
                base64::engine::general_purpose::STANDARD.encode(&bytes[..cut])}]}]}
    });
    let frame = encode_pdu(builtin(), &produce).unwrap();
    dec.decode_frame(&frame, &Hints::default(), &mut pdu);
    assert!(
        pdu.tree
            .diags
            .iter()
            .any(|d| d.code == "truncated" && d.is_error()),
        "{:?}",
        pdu.tree.diags
    );
}

/// A Produce v7 request to `topic` whose one batch holds one record with these key and value
/// bytes; the encoder computes the batch length and CRC (they are left out of the JSON).
fn produce_with_record(topic: &str, key: &[u8], value: &[u8]) -> J {
    use base64::Engine as _;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    json!({
        "direction": "request", "api_key": 0, "api_version": 7, "length": 0,
        "header": {"RequestApiKey": 0, "RequestApiVersion": 7, "CorrelationId": 7,
                   "ClientId": "kinspect-test"},
        "body": {"TransactionalId": null, "Acks": -1, "TimeoutMs": 5000, "TopicData": [
            {"Name": topic, "PartitionData": [{"Index": 3, "Records": [{
                "BaseOffset": 0, "PartitionLeaderEpoch": -1, "Magic": 2,
                "Attributes": {"Compression": "none", "TimestampType": "CreateTime",
                               "IsTransactional": false, "IsControlBatch": false,
                               "HasDeleteHorizonMs": false},
                "LastOffsetDelta": 0, "BaseTimestamp": 1700000000000i64,
                "MaxTimestamp": 1700000000000i64, "ProducerId": -1, "ProducerEpoch": -1,
                "BaseSequence": -1,
                "Records": [{"Attributes": 0, "TimestampDelta": 0, "OffsetDelta": 0,
                             "Key": {"base64": b64(key)}, "Value": {"base64": b64(value)},
                             "Headers": []}]}]}]}]}
    })
}

#[test]
fn a_produce_to_consumer_offsets_decodes_its_key_and_value_with_the_coordinator_schemas() {
    // OffsetCommitKey (record type 1; group-coordinator/OffsetCommitKey.json): int16 type, then
    // group, topic (int16-length strings) and int32 partition.
    let mut key = vec![0, 1];
    for s in ["my-group", "orders"] {
        key.extend((s.len() as i16).to_be_bytes());
        key.extend(s.as_bytes());
    }
    key.extend(5i32.to_be_bytes());
    // OffsetCommitValue v3 (OffsetCommitValue.json): int16 version, int64 offset, int32
    // leaderEpoch, string metadata, int64 commitTimestamp.
    let mut value = vec![0, 3];
    value.extend(4242i64.to_be_bytes());
    value.extend(17i32.to_be_bytes());
    value.extend(2i16.to_be_bytes());
    value.extend(b"md");
    value.extend(1_700_000_000_123i64.to_be_bytes());

    let frame = encode_pdu(
        builtin(),
        &produce_with_record("__consumer_offsets", &key, &value),
    )
    .unwrap();
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    dec.decode_frame(&frame, &Hints::default(), &mut pdu);
    assert!(!pdu.tree.has_errors(), "{:?}", pdu.tree.diags);
    let j = pdu_json(&pdu);
    let batch = &j["body"]["TopicData"][0]["PartitionData"][0]["Records"][0];
    assert_eq!(
        batch["Crc"], batch["CrcComputed"],
        "the encoder computed the CRC"
    );
    let rec = &batch["Records"][0];
    let k = &rec["Key"];
    assert_eq!(k["Type"], 1);
    assert_eq!(k["TypeName"], "OffsetCommitKey");
    let kd = k["Data"].as_object().unwrap();
    let kv: Vec<&J> = kd.values().collect();
    assert_eq!(
        kv,
        [&json!("my-group"), &json!("orders"), &json!(5)],
        "{kd:?}"
    );
    let v = &rec["Value"];
    assert_eq!(v["Version"], 3);
    assert_eq!(v["TypeName"], "OffsetCommitValue");
    let vv: Vec<&J> = v["Data"].as_object().unwrap().values().collect();
    assert_eq!(
        vv,
        [
            &json!(4242),
            &json!(17),
            &json!("md"),
            &json!(1_700_000_000_123i64)
        ]
    );
    // The decoded structs encode back to the same bytes.
    assert_eq!(encode_pdu(builtin(), &j).unwrap(), frame);

    // The same bytes on an ordinary topic stay data; `--as consumer-offsets` decodes them.
    let plain = encode_pdu(builtin(), &produce_with_record("orders", &key, &value)).unwrap();
    dec.decode_frame(&plain, &Hints::default(), &mut pdu);
    let j = pdu_json(&pdu);
    let rec = &j["body"]["TopicData"][0]["PartitionData"][0]["Records"][0]["Records"][0];
    assert!(
        rec["Key"].get("text").is_some() && rec["Key"].get("Type").is_none(),
        "{rec}"
    );
    dec.set_records(RecordsOptions {
        raw: false,
        as_type: Some(kinspect::records::AsType::ConsumerOffsets),
        ..Default::default()
    });
    dec.decode_frame(&plain, &Hints::default(), &mut pdu);
    let j = pdu_json(&pdu);
    let rec = &j["body"]["TopicData"][0]["PartitionData"][0]["Records"][0]["Records"][0];
    assert_eq!(rec["Key"]["TypeName"], "OffsetCommitKey");
}

/// Decodes `bytes` as a records field (root array of batches) and returns its JSON.
fn records_json(bytes: &[u8], ctx: &kinspect::records::RecordsContext) -> (J, bool) {
    let mut t = Tree::new();
    t.reset(bytes);
    let root = t.open("", Kind::Array, 0, 0);
    kinspect::records::decode_records(&mut t, 0, 0, bytes.len() as u32, ctx, "records");
    t.close(root, bytes.len() as u32);
    (kinspect::output::value::tree_to_json(&t, 0), t.has_errors())
}

fn encode_back(j: &J) -> Vec<u8> {
    let mut out = Vec::new();
    kinspect::records::encode::encode_records(j.as_array().unwrap(), &mut out, "records")
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

#[test]
fn legacy_messages_encode_back_including_damaged_ones() {
    // kafka-python 2.0.2's message sets (tests/fixtures/records/legacy): magic 0 and 1, plain
    // and gzip/snappy/lz4 wrappers.
    let dir = common::repo().join("tests/fixtures/records/legacy");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("bin") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let ctx = kinspect::records::RecordsContext::default();
        let (j, errors) = records_json(&bytes, &ctx);
        assert!(!errors, "{}", p.display());
        let s = j.to_string();
        let compressed = !p.to_string_lossy().ends_with("none.bin");
        assert_eq!(s.contains("\"_compressed\""), compressed, "{}", p.display());
        assert!(
            encode_back(&j) == bytes,
            "{}: re-encoded bytes differ",
            p.display()
        );
        // Damaged copies come back exactly as damaged: a flipped CRC byte, a flipped byte in
        // the compressed payload (decompression fails: the bytes travel as `_error`), and the
        // set cut short (partial).
        for (what, damaged) in [
            ("crc", flip(&bytes, 13)),
            ("payload", flip(&bytes, bytes.len() - 3)),
            ("cut", bytes[..bytes.len() - 5].to_vec()),
        ] {
            let ctx = kinspect::records::RecordsContext {
                partial_tail_ok: true,
                ..Default::default()
            };
            let (j, _) = records_json(&damaged, &ctx);
            assert!(
                encode_back(&j) == damaged,
                "{} ({what}): re-encoded bytes differ: {j}",
                p.display()
            );
        }
        n += 1;
    }
    assert_eq!(n, 8, "the eight legacy fixtures");
}

fn flip(b: &[u8], at: usize) -> Vec<u8> {
    let mut v = b.to_vec();
    v[at] ^= 0x5a;
    v
}

#[test]
fn damaged_captured_batches_encode_back_as_damaged() {
    // Every captured batch with one byte flipped at a few places (length, CRC, attributes, record
    // count, inside the records or the compressed payload): whatever the decoder makes of it,
    // the JSON carries every byte back.
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    let mut n = 0;
    let mut forms = BTreeSet::new();
    for f in frames() {
        dec.decode_frame(&f.data, &f.hints, &mut pdu);
        if pdu.tree.has_errors() {
            continue;
        }
        let t = &pdu.tree;
        for r in message_records(t) {
            let node = *t.node(r);
            if node.kind != Kind::Array || node.len <= node.hdr as u32 {
                continue;
            }
            let start = (node.offset + node.hdr as u32) as usize;
            let bytes = &f.data[start..(node.offset + node.len) as usize];
            for at in [10, 18, 22, 58, 64, bytes.len() / 2, bytes.len() - 2] {
                if at >= bytes.len() {
                    continue;
                }
                let damaged = flip(bytes, at);
                let ctx = kinspect::records::RecordsContext {
                    partial_tail_ok: true,
                    ..Default::default()
                };
                let (j, _) = records_json(&damaged, &ctx);
                let text = j.to_string();
                for form in [
                    "_records_count",
                    "_undecoded",
                    "_error",
                    "Partial",
                    "_compressed",
                ] {
                    if text.contains(&format!("\"{form}\"")) {
                        forms.insert(form);
                    }
                }
                assert!(
                    encode_back(&j) == damaged,
                    "{} frame {} byte {at}: re-encoded bytes differ: {j}",
                    f.name,
                    f.frame
                );
                n += 1;
            }
        }
    }
    assert!(n >= 200, "only {n} damaged batches");
    // The damage reached every way the JSON carries bytes the decoder could not use.
    assert_eq!(forms.len(), 5, "forms seen: {forms:?}");
}

/// Headers-only mode (the default for `--format summary`) keeps every batch header, still
/// verifies the CRC over the undecoded (possibly compressed) bytes, and agrees with full decoding
/// on which frames have errors — here on every captured records-carrying frame, intact and with a
/// byte of its last batch flipped.
#[test]
fn headers_only_batches_keep_crc_checks_and_agree_with_full_decoding_on_errors() {
    let mut full = kinspect::records::decoder(builtin());
    let mut checked = kinspect::records::decoder(builtin());
    checked.set_records(RecordsOptions {
        headers_only: true,
        ..Default::default()
    });
    let (mut a, mut b) = (Pdu::default(), Pdu::default());
    let mut flipped_seen = 0;
    for f in frames() {
        full.decode_frame(&f.data, &f.hints, &mut a);
        if message_records(&a.tree).is_empty() || a.tree.has_errors() {
            continue;
        }
        let batches = |t: &Tree| -> usize {
            message_records(t)
                .iter()
                .map(|&r| t.children(r).count())
                .sum()
        };
        checked.decode_frame(&f.data, &f.hints, &mut b);
        assert!(!b.tree.has_errors(), "{} frame {}", f.name, f.frame);
        assert_eq!(
            batches(&a.tree),
            batches(&b.tree),
            "{} frame {}",
            f.name,
            f.frame
        );
        // The last byte of a frame carrying records is inside its last batch's records.
        let last = f.data.len() - 1;
        let bad = flip(&f.data, last);
        full.decode_frame(&bad, &f.hints, &mut a);
        checked.decode_frame(&bad, &f.hints, &mut b);
        let crc = |t: &Tree| t.diags.iter().any(|d| d.code == "crc-mismatch");
        if crc(&a.tree) {
            assert!(
                crc(&b.tree),
                "{} frame {}: full decoding saw the CRC mismatch, headers-only did not",
                f.name,
                f.frame
            );
            flipped_seen += 1;
        }
    }
    assert!(
        flipped_seen >= 20,
        "only {flipped_seen} corrupted batches checked"
    );
}
