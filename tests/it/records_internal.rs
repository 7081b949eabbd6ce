//! Internal-topic records decoded with the built-in schemas. No bundled capture carries them (the
//! brokers there do not expose internal topics), so the records are written here field by field
//! from Kafka's spec files (shared/kafka-schemas/4.3.1, cited per test) and, for the KRaft
//! control values, by the `kafka-protocol` crate's generated encoders; batches by its
//! RecordBatchEncoder.

use crate::support;

use indexmap::IndexMap;
use kafka_protocol::messages::leader_change_message::{LeaderChangeMessage, Voter};
use kafka_protocol::messages::BrokerId;
use kafka_protocol::protocol::Encodable;
use kafka_protocol::records::{Record, TimestampType};
use kinspect::diag::Severity;
use kinspect::records::{AsType, RecordsContext};
use kinspect::wire::tree::{NodeId, Tree, Value};
use support::*;

/// A record's key and value (None = null).
type Kv = (Option<Vec<u8>>, Option<Vec<u8>>);

fn batch(kvs: &[Kv], control: bool) -> Vec<u8> {
    let records: Vec<Record> = kvs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| Record {
            transactional: false,
            control,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32 - 1,
            timestamp: 1_767_225_600_000,
            key: k.clone().map(bytes::Bytes::from),
            value: v.clone().map(bytes::Bytes::from),
            headers: IndexMap::new(),
        })
        .collect();
    crate::common::kp_batch(&records)
}

fn topic(t: &'static str) -> RecordsContext<'static> {
    RecordsContext {
        topic: Some(t),
        ..Default::default()
    }
}

/// Non-flexible string: int16 length, bytes.
fn s16(s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn first_record(t: &Tree) -> NodeId {
    t.children(t.child(batches(t)[0], "Records").unwrap())
        .next()
        .unwrap()
}

fn member(t: &Tree, id: NodeId, path: &[&str]) -> NodeId {
    path.iter().fold(id, |n, p| {
        t.child(n, p)
            .unwrap_or_else(|| panic!("no {p} in {:?}", t.node(n).name))
    })
}

fn text(t: &Tree, id: NodeId) -> String {
    String::from_utf8(data(t, id).unwrap()).unwrap()
}

/// OffsetCommitKey (group-coordinator, 4.3.1: coordinator-key apiKey 1 {group, topic, partition};
/// 3.9.0: data spec versions 0-1) and OffsetCommitValue (apiKey 1, versions 0-4; leaderEpoch 3+,
/// flexible 4+ with tagged topicId, tag 0).
fn offset_commit_key() -> Vec<u8> {
    let mut k = 1i16.to_be_bytes().to_vec();
    s16("g1", &mut k);
    s16("orders", &mut k);
    k.extend_from_slice(&2i32.to_be_bytes());
    k
}

#[test]
fn consumer_offsets_commit_records_decode_by_record_type_and_value_version() {
    let mut v3 = 3i16.to_be_bytes().to_vec();
    v3.extend_from_slice(&42i64.to_be_bytes());
    v3.extend_from_slice(&5i32.to_be_bytes());
    s16("meta", &mut v3);
    v3.extend_from_slice(&1_767_225_600_123i64.to_be_bytes());
    let mut v4 = 4i16.to_be_bytes().to_vec();
    v4.extend_from_slice(&43i64.to_be_bytes());
    v4.extend_from_slice(&6i32.to_be_bytes());
    v4.push(1); // compact string: length + 1
    v4.extend_from_slice(&1_767_225_600_456i64.to_be_bytes());
    v4.extend_from_slice(&[1, 0, 16]); // one tagged field: tag 0, 16 bytes
    v4.extend_from_slice(&[0xab; 16]);
    let b = batch(
        &[
            (Some(offset_commit_key()), Some(v3)),
            (Some(offset_commit_key()), Some(v4)),
            (Some(offset_commit_key()), None),
        ],
        false,
    );
    let t = decode(&b, &topic("__consumer_offsets"));
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    t.check_tiling(0).unwrap();
    let rs: Vec<_> = t
        .children(t.child(batches(&t)[0], "Records").unwrap())
        .collect();
    let k = member(&t, rs[0], &["Key"]);
    assert_eq!(int(&t, k, "Type"), 1);
    assert_eq!(label(&t, k, "TypeName"), "OffsetCommitKey");
    assert_eq!(text(&t, member(&t, k, &["Data", "group"])), "g1");
    assert_eq!(text(&t, member(&t, k, &["Data", "topic"])), "orders");
    assert_eq!(int(&t, member(&t, k, &["Data"]), "partition"), 2);
    let v = member(&t, rs[0], &["Value"]);
    assert_eq!(
        (int(&t, v, "Version"), label(&t, v, "TypeName")),
        (3, "OffsetCommitValue")
    );
    let d = member(&t, v, &["Data"]);
    assert_eq!((int(&t, d, "offset"), int(&t, d, "leaderEpoch")), (42, 5));
    assert_eq!(text(&t, member(&t, d, &["metadata"])), "meta");
    assert_eq!(int(&t, d, "commitTimestamp"), 1_767_225_600_123);
    // v4: flexible, compact string, and the tagged topicId.
    let d4 = member(&t, rs[1], &["Value", "Data"]);
    assert_eq!(int(&t, d4, "offset"), 43);
    assert_eq!(text(&t, member(&t, d4, &["metadata"])), "");
    let tagged = t
        .children(d4)
        .find(|&c| t.node(c).kind == kinspect::wire::tree::Kind::TaggedSection)
        .unwrap();
    assert_eq!(
        t.node(member(&t, tagged, &["topicId"])).value,
        Value::Uuid([0xab; 16])
    );
    // A tombstone: null value.
    assert_eq!(t.node(member(&t, rs[2], &["Value"])).value, Value::Null);
}

#[test]
fn as_type_decodes_any_topic_and_raw_turns_decoding_off() {
    let b = batch(&[(Some(offset_commit_key()), None)], false);
    let ctx = RecordsContext {
        topic: Some("copied-offsets"),
        as_type: Some(AsType::ConsumerOffsets),
        ..Default::default()
    };
    let t = decode(&b, &ctx);
    assert_eq!(
        label(&t, member(&t, first_record(&t), &["Key"]), "TypeName"),
        "OffsetCommitKey"
    );
    let raw = RecordsContext {
        topic: Some("__consumer_offsets"),
        as_type: Some(AsType::Raw),
        ..Default::default()
    };
    let t = decode(&b, &raw);
    assert_eq!(
        data(&t, member(&t, first_record(&t), &["Key"])),
        Some(offset_commit_key())
    );
    assert_eq!(
        AsType::from_name("consumer-offsets"),
        Some(AsType::ConsumerOffsets)
    );
    assert_eq!(
        AsType::from_name("__cluster_metadata"),
        Some(AsType::ClusterMetadata)
    );
    assert_eq!(AsType::from_name("orders"), None);
}

#[test]
fn unknown_record_types_and_versions_are_reported_and_shown_raw() {
    let mut k99 = 99i16.to_be_bytes().to_vec();
    k99.extend_from_slice(b"xyz");
    let mut v99 = 99i16.to_be_bytes().to_vec();
    v99.extend_from_slice(&[1, 2, 3]);
    let b = batch(
        &[
            (Some(k99), Some(v99.clone())),
            (Some(offset_commit_key()), Some(v99)),
        ],
        false,
    );
    let t = decode(&b, &topic("__consumer_offsets"));
    let codes: Vec<_> = t.diags.iter().map(|d| (d.severity, d.code)).collect();
    assert_eq!(
        codes,
        vec![
            (Severity::Warning, "unknown-record-type"),
            (Severity::Error, "unknown-record-version")
        ]
    );
    t.check_tiling(0).unwrap();
    let r = t
        .children(t.child(batches(&t)[0], "Records").unwrap())
        .nth(1)
        .unwrap();
    assert_eq!(
        data(&t, member(&t, r, &["Value", "Data"])),
        Some(vec![1, 2, 3])
    );
}

#[test]
fn transaction_state_keys_decode() {
    // TransactionLogKey (transaction-coordinator, coordinator-key apiKey 0, {TransactionalId}).
    let mut k = 0i16.to_be_bytes().to_vec();
    s16("txn-1", &mut k);
    let t = decode(
        &batch(&[(Some(k), None)], false),
        &topic("__transaction_state"),
    );
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let key = member(&t, first_record(&t), &["Key"]);
    assert_eq!(label(&t, key, "TypeName"), "TransactionLogKey");
    assert_eq!(
        text(&t, member(&t, key, &["Data", "TransactionalId"])),
        "txn-1"
    );
}

/// TopicRecord (metadata apiKey 2, version 0, flexible: Name compact string, TopicId uuid,
/// tags), framed as frameVersion 1, apiKey 2, version 0.
fn topic_record() -> Vec<u8> {
    let mut v = vec![1u8, 2, 0];
    v.push(b"orders".len() as u8 + 1);
    v.extend_from_slice(b"orders");
    v.extend_from_slice(&[7u8; 16]);
    v.push(0);
    v
}

#[test]
fn cluster_metadata_records_decode_with_their_framing() {
    let t = decode(
        &batch(&[(None, Some(topic_record()))], false),
        &topic("__cluster_metadata"),
    );
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    t.check_tiling(0).unwrap();
    let v = member(&t, first_record(&t), &["Value"]);
    assert_eq!(
        (
            int(&t, v, "FrameVersion"),
            int(&t, v, "ApiKey"),
            int(&t, v, "Version")
        ),
        (1, 2, 0)
    );
    assert_eq!(label(&t, v, "TypeName"), "TopicRecord");
    assert_eq!(text(&t, member(&t, v, &["Data", "Name"])), "orders");
    assert_eq!(
        t.node(member(&t, v, &["Data", "TopicId"])).value,
        Value::Uuid([7; 16])
    );
}

#[test]
fn metadata_framing_errors_are_reported_where_they_are() {
    let mut frame0 = topic_record();
    frame0[0] = 0;
    let mut garbage_after = topic_record();
    garbage_after.push(0xee);
    let b = batch(
        &[
            (Some(b"k".to_vec()), Some(topic_record())),
            (None, Some(frame0)),
            (None, Some(garbage_after)),
        ],
        false,
    );
    let t = decode(&b, &topic("__cluster_metadata"));
    let codes: Vec<_> = t.diags.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec![
            "metadata-key-present",
            "metadata-frame-invalid",
            "trailing-bytes"
        ]
    );
    t.check_tiling(0).unwrap();
}

#[test]
fn kraft_leader_change_control_records_decode_with_their_schema() {
    let mut m = LeaderChangeMessage::default();
    m.version = 0;
    m.leader_id = BrokerId(3);
    for id in [1, 2, 3] {
        let mut v = Voter::default();
        v.voter_id = id;
        m.voters.push(v);
    }
    let mut g = Voter::default();
    g.voter_id = 3;
    m.granting_voters.push(g);
    let mut value = bytes::BytesMut::new();
    m.encode(&mut value, 0).unwrap();
    let b = batch(&[(Some(vec![0, 0, 0, 2]), Some(value.to_vec()))], true);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    t.check_tiling(0).unwrap();
    let r = first_record(&t);
    assert_eq!(
        label(&t, member(&t, r, &["Key"]), "TypeName"),
        "LEADER_CHANGE"
    );
    let v = member(&t, r, &["Value"]);
    assert_eq!((int(&t, v, "Version"), int(&t, v, "LeaderId")), (0, 3));
    let voters: Vec<_> = t
        .children(member(&t, v, &["Voters"]))
        .map(|e| int(&t, e, "VoterId"))
        .collect();
    assert_eq!(voters, vec![1, 2, 3]);
    let granting: Vec<_> = t
        .children(member(&t, v, &["GrantingVoters"]))
        .map(|e| int(&t, e, "VoterId"))
        .collect();
    assert_eq!(granting, vec![3]);
    // The decoded control value (a schema struct) encodes back to the same bytes.
    assert!(encode_back(&b, &RecordsContext::default()) == b);
}

/// Decodes `b` as `ctx` says, prints it as JSON and encodes that back (src/records/encode.rs).
fn encode_back(b: &[u8], ctx: &RecordsContext) -> Vec<u8> {
    let t = decode(b, ctx);
    let j = kinspect::output::value::tree_to_json(&t, 0);
    let mut out = Vec::new();
    kinspect::records::encode::encode_records(j.as_array().unwrap(), &mut out, "records")
        .unwrap_or_else(|e| panic!("{e}: {j}"));
    out
}

#[test]
fn every_internal_and_control_form_encodes_back_to_the_same_bytes() {
    let mut tombstone_value_v3 = 3i16.to_be_bytes().to_vec();
    tombstone_value_v3.extend_from_slice(&42i64.to_be_bytes());
    tombstone_value_v3.extend_from_slice(&5i32.to_be_bytes());
    s16("", &mut tombstone_value_v3);
    tombstone_value_v3.extend_from_slice(&1_767_225_600_000i64.to_be_bytes());
    let mut txn_key = 0i16.to_be_bytes().to_vec();
    s16("txn-1", &mut txn_key);
    let mut frame0 = topic_record();
    frame0[0] = 0;
    let mut garbage_after = topic_record();
    garbage_after.push(0xee);
    let mut unknown_type = 999i16.to_be_bytes().to_vec();
    unknown_type.extend_from_slice(b"xyz");
    let mut marker = 0i16.to_be_bytes().to_vec();
    marker.extend_from_slice(&7i32.to_be_bytes());
    let cases: Vec<(&str, Vec<u8>, RecordsContext)> = vec![
        (
            "offset commit + tombstone",
            batch(
                &[
                    (Some(offset_commit_key()), Some(tombstone_value_v3)),
                    (Some(offset_commit_key()), None),
                ],
                false,
            ),
            topic("__consumer_offsets"),
        ),
        (
            "unknown record type",
            batch(&[(Some(unknown_type), Some(vec![0, 0, 1]))], false),
            topic("__consumer_offsets"),
        ),
        (
            "transaction state",
            batch(&[(Some(txn_key), None)], false),
            topic("__transaction_state"),
        ),
        (
            "cluster metadata, framing errors",
            batch(
                &[
                    (None, Some(topic_record())),
                    (Some(b"k".to_vec()), Some(topic_record())),
                    (None, Some(frame0)),
                    (None, Some(garbage_after)),
                ],
                false,
            ),
            topic("__cluster_metadata"),
        ),
        (
            "commit marker, short key, unknown control type",
            batch(
                &[
                    (Some(vec![0, 0, 0, 1]), Some(marker)),
                    (Some(vec![0, 0]), Some(vec![1])),
                    (Some(vec![0, 0, 0, 77]), Some(vec![2, 3])),
                ],
                true,
            ),
            RecordsContext::default(),
        ),
    ];
    for (what, b, ctx) in cases {
        assert!(
            encode_back(&b, &ctx) == b,
            "{what}: re-encoded bytes differ"
        );
    }
}

/// A log file `DIR/TOPIC-0/00000000000000000000.log` holding `batch`.
fn log_in_folder(root: &std::path::Path, topic: &str, batch: &[u8]) -> std::path::PathBuf {
    let dir = root.join(format!("{topic}-0"));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("00000000000000000000.log");
    std::fs::write(&f, batch).unwrap();
    f
}

fn records_cli(args: &[&str], file: &std::path::Path) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("records")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The `__consumer_offsets` segment the README's records example reads: an offset commit
/// (OffsetCommitValue v3) and its tombstone, batched by kafka-protocol.
fn consumer_offsets_segment() -> Vec<u8> {
    let mut v3 = 3i16.to_be_bytes().to_vec();
    v3.extend_from_slice(&42i64.to_be_bytes());
    v3.extend_from_slice(&5i32.to_be_bytes());
    s16("meta", &mut v3);
    v3.extend_from_slice(&1_767_225_600_123i64.to_be_bytes());
    batch(
        &[
            (Some(offset_commit_key()), Some(v3)),
            (Some(offset_commit_key()), None),
        ],
        false,
    )
}

/// tests/fixtures/records/__consumer_offsets-0/00000000000000000000.log is exactly what
/// kafka-protocol writes for [`consumer_offsets_segment`] (`BLESS=1` rewrites it).
#[test]
fn the_readme_consumer_offsets_segment_is_kafka_protocols_batch() {
    let path = crate::common::repo()
        .join("tests/fixtures/records/__consumer_offsets-0/00000000000000000000.log");
    crate::common::generated_fixture(&path, &consumer_offsets_segment());
}

/// `kinspect records` showed internal-topic and control records as their raw bytes (`0x0001…`);
/// it now shows what the decoder read with the coordinator and control schemas, next to the
/// bytes in JSON and in place of them in a line. The records are written from the spec files
/// (above) and batched by kafka-protocol's encoder.
#[test]
fn records_shows_internal_topic_and_control_records_decoded() {
    let root =
        std::env::temp_dir().join(format!("kinspect-records-internal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let f = log_in_folder(&root, "__consumer_offsets", &consumer_offsets_segment());
    let lines: Vec<serde_json::Value> = records_cli(&["-f", "jsonl"], &f)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let k = &lines[0]["key_decoded"];
    assert_eq!(k["TypeName"], "OffsetCommitKey", "{}", lines[0]);
    assert_eq!(k["Data"]["group"], "g1");
    assert_eq!(k["Data"]["topic"], "orders");
    assert_eq!(k["Data"]["partition"], 2);
    let v = &lines[0]["value_decoded"];
    assert_eq!(v["Version"], 3, "{}", lines[0]);
    assert_eq!(v["Data"]["offset"], 42);
    assert_eq!(v["Data"]["leaderEpoch"], 5);
    assert_eq!(v["Data"]["metadata"], "meta");
    // The bytes are still there, as in any record.
    assert!(
        lines[0]["key"].is_object() && lines[0]["value"]["base64"].is_string(),
        "{}",
        lines[0]
    );
    // A tombstone: null value, nothing decoded.
    assert!(lines[1]["value"].is_null());
    assert!(lines[1].get("value_decoded").is_none(), "{}", lines[1]);
    // A line shows the decoded key and value as compact JSON in place of the bytes.
    let line = records_cli(&["--template", "%k|%s|%K"], &f);
    let first = line.lines().next().unwrap();
    let parts: Vec<&str> = first.split('|').collect();
    let key: serde_json::Value = serde_json::from_str(parts[0]).unwrap();
    assert_eq!(key["Data"]["group"], "g1", "{first}");
    let val: serde_json::Value = serde_json::from_str(parts[1]).unwrap();
    assert_eq!(val["Data"]["offset"], 42, "{first}");
    assert_eq!(parts[2], offset_commit_key().len().to_string());

    // A transaction marker (control batch): key {version 0, type 1 = COMMIT}, value {version 0,
    // coordinator epoch 7} (Kafka's ControlRecordType and EndTransactionMarker).
    let mut key = 0i16.to_be_bytes().to_vec();
    key.extend_from_slice(&1i16.to_be_bytes());
    let mut value = 0i16.to_be_bytes().to_vec();
    value.extend_from_slice(&7i32.to_be_bytes());
    let marker = batch(&[(Some(key), Some(value))], true);
    let f = log_in_folder(&root, "orders", &marker);
    let out = records_cli(&["-f", "jsonl"], &f);
    let j: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(j["control"], true, "{j}");
    assert!(j["key_decoded"].to_string().contains("COMMIT"), "{j}");
    assert_eq!(j["value_decoded"]["CoordinatorEpoch"], 7, "{j}");
    let _ = std::fs::remove_dir_all(&root);
}
