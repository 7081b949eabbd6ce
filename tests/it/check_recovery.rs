//! KIP-704 leader-recovery rules on KRaft metadata logs (segments and snapshots of
//! PartitionRecord / PartitionChangeRecord sequences), on `__cluster_metadata` Fetch responses
//! and on AlterPartition requests; each rule fires on one scenario and stays silent on the same
//! one without the fault.
//!
//! Independent encoders: AlterPartition, BrokerRegistration and Fetch by the kafka-protocol
//! crate, record batches by its RecordBatchEncoder. kafka-protocol has no metadata-record
//! types, so PartitionRecord (apiKey 3, v0) and PartitionChangeRecord (apiKey 5, v0) are written
//! here byte by byte from Kafka's spec files (`metadata/src/main/resources/common/metadata/`
//! `PartitionRecord.json`, `PartitionChangeRecord.json`, 4.3.1): flexible from v0, so compact
//! arrays (length+1 as uvarint) and a tagged section (count, then tag, size, value, ascending
//! tags); the value framed as uvarint frameVersion 1, apiKey, version (KRaft `MetadataRecordSerde`).

use crate::check_support::{check, request, response, Net};
use bytes::Bytes;
use indexmap::IndexMap;
use kafka_protocol::messages::{
    alter_partition_request as ap, fetch_response, AlterPartitionRequest, AlterPartitionResponse,
    BrokerId, BrokerRegistrationRequest, BrokerRegistrationResponse, FetchRequest, FetchResponse,
};
use kafka_protocol::records::{Record, TimestampType};
use kinspect::check::{Checker, Finding};
use kinspect::diag::Diagnostic;
use kinspect::engine::{self, Input, Sink};
use kinspect::pdu::{Origin, Pdu};
use std::net::SocketAddr;

const TOPIC: [u8; 16] = [7; 16];

fn uvarint(mut v: u32, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn compact_ints(v: &[i32], out: &mut Vec<u8>) {
    uvarint(v.len() as u32 + 1, out);
    for x in v {
        out.extend_from_slice(&x.to_be_bytes());
    }
}

fn framed(api_key: u32, body: &[u8]) -> Vec<u8> {
    let mut v = vec![1u8];
    uvarint(api_key, &mut v);
    v.push(0); // version 0
    v.extend_from_slice(body);
    v
}

/// PartitionRecord v0: PartitionId, TopicId, Replicas, Isr, RemovingReplicas, AddingReplicas,
/// Leader, LeaderEpoch, PartitionEpoch; LeaderRecoveryState is tag 0 (omitted when 0).
fn partition_record(leader: i32, isr: &[i32], recovery: i8, epoch: i32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&TOPIC);
    compact_ints(&[1, 2, 3], &mut b);
    compact_ints(isr, &mut b);
    compact_ints(&[], &mut b);
    compact_ints(&[], &mut b);
    b.extend_from_slice(&leader.to_be_bytes());
    b.extend_from_slice(&epoch.to_be_bytes());
    b.extend_from_slice(&epoch.to_be_bytes());
    if recovery == 0 {
        b.push(0);
    } else {
        b.extend_from_slice(&[1, 0, 1, recovery as u8]);
    }
    framed(3, &b)
}

/// PartitionChangeRecord v0: PartitionId, TopicId; tagged Isr (tag 0, absent = unchanged),
/// Leader (tag 1, absent = -2 unchanged), LeaderRecoveryState (tag 5, absent = -1 unchanged).
fn change_record(leader: Option<i32>, isr: Option<&[i32]>, recovery: Option<i8>) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&TOPIC);
    let mut tags: Vec<(u32, Vec<u8>)> = Vec::new();
    if let Some(isr) = isr {
        let mut v = Vec::new();
        compact_ints(isr, &mut v);
        tags.push((0, v));
    }
    if let Some(l) = leader {
        tags.push((1, l.to_be_bytes().to_vec()));
    }
    if let Some(r) = recovery {
        tags.push((5, vec![r as u8]));
    }
    uvarint(tags.len() as u32, &mut b);
    for (tag, v) in tags {
        uvarint(tag, &mut b);
        uvarint(v.len() as u32, &mut b);
        b.extend_from_slice(&v);
    }
    framed(5, &b)
}

/// RegisterBrokerRecord v0 (apiKey 0): BrokerId, IncarnationId, BrokerEpoch, EndPoints (one:
/// Name, Host, Port uint16, SecurityProtocol int16, no tags), Features (none), Rack (null),
/// Fenced; no tags.
fn register_broker_record(id: i32, epoch: i64) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&id.to_be_bytes());
    b.extend_from_slice(&[3; 16]);
    b.extend_from_slice(&epoch.to_be_bytes());
    b.push(2); // one endpoint
    for text in ["PLAINTEXT", "10.0.0.2"] {
        uvarint(text.len() as u32 + 1, &mut b);
        b.extend_from_slice(text.as_bytes());
    }
    b.extend_from_slice(&9092u16.to_be_bytes());
    b.extend_from_slice(&0i16.to_be_bytes());
    b.push(0); // endpoint tags
    b.push(1); // no features
    b.push(0); // Rack null
    b.push(0); // Fenced false
    b.push(0); // tags
    framed(0, &b)
}

/// One batch of metadata records (null keys).
fn batch(values: &[Vec<u8>], base: i64) -> Vec<u8> {
    let records: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 1,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: base + i as i64,
            sequence: -1,
            timestamp: 1_767_225_600_000,
            key: None,
            value: Some(Bytes::from(v.clone())),
            headers: IndexMap::new(),
        })
        .collect();
    crate::common::kp_batch(&records)
}

/// The checker over engine inputs, collecting findings.
struct Collect(Checker, Vec<Finding>, Vec<String>);
impl Sink for Collect {
    fn pdu(&mut self, pdu: &Pdu, _: Option<&str>) -> std::io::Result<()> {
        self.2.extend(
            pdu.tree
                .errors()
                .map(|d| format!("{}: {}", d.code, d.message)),
        );
        let f: Vec<Finding> = self.0.pdu(pdu).collect();
        self.1.extend(f);
        Ok(())
    }
    fn note(&mut self, o: &Origin, d: &Diagnostic, _: Option<&str>) -> std::io::Result<()> {
        self.0.note(o, d);
        Ok(())
    }
}

/// Writes each batch-list as one file (`__cluster_metadata-0/NAME`) and checks it. Each call
/// has a folder of its own: tests run in parallel, several with the same file name, and one
/// removing the folder another was reading made them fail now and then.
fn check_file(name: &str, batches: &[Vec<Vec<u8>>]) -> Vec<Finding> {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir()
        .join(format!(
            "kinspect-recovery-{}-{call}-{name}",
            std::process::id()
        ))
        .join("__cluster_metadata-0");
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = Vec::new();
    let mut base = 0;
    for b in batches {
        bytes.extend(batch(b, base));
        base += b.len() as i64;
    }
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    let opts = engine::Options::new(kinspect::protocol::builtin());
    let mut sink = Collect(Checker::new(), Vec::new(), Vec::new());
    let out = engine::run([Input::path(&path)], &opts, &mut sink);
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    // A snapshot without header/footer control batches is a warning, not an error.
    assert!(sink.2.is_empty(), "decodes cleanly: {:?}", sink.2);
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    sink.1
}

fn codes(f: &[Finding]) -> Vec<&'static str> {
    f.iter().map(|f| f.rule.code).collect()
}

fn segment(records: Vec<Vec<u8>>) -> Vec<&'static str> {
    codes(&check_file("00000000000000000000.log", &[records]))
}

#[test]
fn recovering_isr_not_leader_in_a_segment() {
    // An unclean election to 2 that keeps 3 in the ISR while RECOVERING.
    let fired = segment(vec![
        partition_record(1, &[1, 2, 3], 0, 5),
        change_record(Some(2), Some(&[2, 3]), Some(1)),
    ]);
    assert_eq!(fired, ["recovering-isr-not-leader"]);
    // The same election as PartitionChangeBuilder writes it: ISR = [leader].
    assert!(segment(vec![
        partition_record(1, &[1, 2, 3], 0, 5),
        change_record(Some(2), Some(&[2]), Some(1)),
    ])
    .is_empty());
    // Recovery finishes: RECOVERED, then the ISR may grow.
    assert!(segment(vec![
        partition_record(2, &[2], 1, 6),
        change_record(None, None, Some(0)),
        change_record(None, Some(&[2, 3]), None),
    ])
    .is_empty());
    // Growing the ISR before the state says RECOVERED.
    assert_eq!(
        segment(vec![
            partition_record(2, &[2], 1, 6),
            change_record(None, Some(&[2, 3]), None),
        ]),
        ["recovering-isr-not-leader"]
    );
}

#[test]
fn recovering_isr_not_leader_in_a_snapshot() {
    let snap = "00000000000000000042-0000000003.checkpoint";
    let f = check_file(snap, &[vec![partition_record(2, &[2, 3], 1, 6)]]);
    assert_eq!(codes(&f), ["recovering-isr-not-leader"]);
    assert_eq!(
        f[0].frames,
        [0],
        "the snapshot's first batch (input index 0)"
    );
    assert!(
        f[0].message.contains("ISR [2, 3] and leader 2"),
        "{}",
        f[0].message
    );
    assert_eq!(
        (f[0].expected.as_str(), f[0].seen.as_str()),
        ("ISR [2]", "ISR [2, 3]")
    );
    assert!(check_file(snap, &[vec![partition_record(2, &[2], 1, 6)]]).is_empty());
}

#[test]
fn recovery_state_reverted_in_a_segment() {
    let fired = check_file(
        "00000000000000000000.log",
        &[
            vec![partition_record(1, &[1, 2], 0, 5)],
            vec![change_record(None, Some(&[1]), Some(1))],
        ],
    );
    assert_eq!(codes(&fired), ["recovery-state-reverted"]);
    assert_eq!(fired[0].frames, [0, 1], "both batches");
    // With a leader change (an unclean election) RECOVERING is how it starts.
    assert!(segment(vec![
        partition_record(1, &[1, 2], 0, 5),
        change_record(Some(2), Some(&[2]), Some(1)),
    ])
    .is_empty());
}

fn ends() -> (SocketAddr, SocketAddr) {
    (
        "10.0.0.2:40001".parse().unwrap(),
        "10.0.0.1:9093".parse().unwrap(),
    )
}

/// Broker 2 registers (epoch 77), fetches the metadata log (`records`, from offset 0), then
/// sends AlterPartition v3 for partition 0 with this state and ISR (broker, epoch).
fn alter_pcap(records: &[Vec<u8>], recovery: i8, isr: &[(i32, i64)]) -> Vec<u8> {
    let mut net = Net::new();
    let (c, s) = ends();
    let corr = net.corr();
    let reg = BrokerRegistrationRequest::default().with_broker_id(BrokerId(2));
    net.send(c, s, true, &request(62, 4, corr, &reg));
    let a = BrokerRegistrationResponse::default().with_broker_epoch(77);
    net.send(c, s, false, &response(4, corr, &a));
    if !records.is_empty() {
        let id = uuid::Uuid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let corr = net.corr();
        net.send(c, s, true, &request(1, 17, corr, &FetchRequest::default()));
        let a = FetchResponse::default().with_responses(vec![
            fetch_response::FetchableTopicResponse::default()
                .with_topic_id(id)
                .with_partitions(vec![fetch_response::PartitionData::default()
                    .with_partition_index(0)
                    .with_high_watermark(records.len() as i64)
                    .with_records(Some(Bytes::from(batch(records, 0))))]),
        ]);
        net.send(c, s, false, &response(17, corr, &a));
    }
    let corr = net.corr();
    let q = AlterPartitionRequest::default()
        .with_broker_id(BrokerId(2))
        .with_broker_epoch(77)
        .with_topics(vec![ap::TopicData::default()
            .with_topic_id(uuid::Uuid::from_bytes(TOPIC))
            .with_partitions(vec![ap::PartitionData::default()
                .with_partition_index(0)
                .with_leader_epoch(6)
                .with_leader_recovery_state(recovery)
                .with_partition_epoch(6)
                .with_new_isr_with_epochs(
                    isr.iter()
                        .map(|&(b, e)| {
                            ap::BrokerState::default()
                                .with_broker_id(BrokerId(b))
                                .with_broker_epoch(e)
                        })
                        .collect(),
                )])]);
    net.send(c, s, true, &request(56, 3, corr, &q));
    net.send(
        c,
        s,
        false,
        &response(3, corr, &AlterPartitionResponse::default()),
    );
    net.pcap()
}

fn alter(records: &[Vec<u8>], recovery: i8, isr: &[(i32, i64)]) -> Vec<Finding> {
    check(&alter_pcap(records, recovery, isr)).0
}

#[test]
fn recovering_isr_expanded_in_alter_partition() {
    let f = alter(&[], 1, &[(2, 77), (3, -1)]);
    assert_eq!(codes(&f), ["recovering-isr-expanded"]);
    assert_eq!(f[0].api, Some("AlterPartition"));
    assert!(f[0].message.contains("[2, 3]"), "{}", f[0].message);
    assert!(alter(&[], 1, &[(2, 77)]).is_empty());
    assert!(alter(&[], 0, &[(2, 77), (3, -1)]).is_empty());
}

#[test]
fn recovery_state_reverted_in_alter_partition_against_the_fetched_log() {
    // The metadata log (fetched from the controller) says RECOVERED; the leader asks RECOVERING.
    let log = [partition_record(2, &[2], 0, 6)];
    let f = alter(&log, 1, &[(2, 77)]);
    assert_eq!(codes(&f), ["recovery-state-reverted"]);
    assert_eq!(
        f[0].frames.len(),
        2,
        "the Fetch answer and the AlterPartition"
    );
    assert!(alter(&log, 0, &[(2, 77)]).is_empty());
    // A log that says RECOVERING: staying RECOVERING is fine.
    assert!(alter(&[partition_record(2, &[2], 1, 6)], 1, &[(2, 77)]).is_empty());
    // And the fetched records are checked too.
    assert_eq!(
        codes(&alter(&[partition_record(2, &[2, 3], 1, 6)], 0, &[(2, 77)])),
        ["recovering-isr-not-leader"]
    );
}

#[test]
fn isr_broker_epoch_stale_against_the_registration() {
    let f = alter(&[], 0, &[(2, 76), (3, -1)]);
    assert_eq!(codes(&f), ["isr-broker-epoch-stale"]);
    assert_eq!(
        (f[0].expected.as_str(), f[0].seen.as_str()),
        ("broker epoch 77 (or -1)", "76")
    );
    assert_eq!(f[0].frames.len(), 2, "registration answer, AlterPartition");
    assert!(alter(&[], 0, &[(2, 77), (3, -1)]).is_empty());
    assert!(
        alter(&[], 0, &[(2, -1)]).is_empty(),
        "-1: not checked by the controller"
    );
}

/// `kinspect check` reads batch headers only, except for the metadata log: the Fetch answer's
/// records are still judged, and a log segment is an input like a capture.
#[test]
fn the_cli_reads_metadata_records_in_fetch_answers_and_segments() {
    let dir = std::env::temp_dir().join(format!("kinspect-recovery-cli-{}", std::process::id()));
    let seg_dir = dir.join("__cluster_metadata-0");
    std::fs::create_dir_all(&seg_dir).unwrap();
    let pcap = dir.join("alter.pcap");
    std::fs::write(
        &pcap,
        alter_pcap(&[partition_record(2, &[2], 0, 6)], 1, &[(2, 77)]),
    )
    .unwrap();
    let seg = seg_dir.join("00000000000000000000.log");
    std::fs::write(&seg, batch(&[partition_record(2, &[2, 3], 1, 6)], 0)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["check", "--format", "jsonl"])
        .args([&pcap, &seg])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rules: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["rule"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        rules,
        ["recovery-state-reverted", "recovering-isr-not-leader"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn isr_broker_epoch_stale_against_a_register_broker_record() {
    // Broker 2 registered again (RegisterBrokerRecord epoch 90, in the fetched metadata log)
    // after its BrokerRegistration answer said 77: 77 is now stale.
    let log = [register_broker_record(2, 90)];
    let f = alter(&log, 0, &[(2, 77)]);
    assert_eq!(codes(&f), ["isr-broker-epoch-stale"]);
    assert_eq!(f[0].expected, "broker epoch 90 (or -1)");
    assert!(alter(&log, 0, &[(2, 90)]).is_empty());
}
