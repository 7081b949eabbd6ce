//! KIP-320 leader-epoch rules on small client captures encoded by the kafka-protocol crate: the
//! client 10.0.1.1 is told an epoch by Metadata and then uses one; each rule fires on one
//! conversation and stays silent on the same one without the fault.

use crate::check_support::{check, request, response, Net};
use kafka_protocol::messages::metadata_response::{
    MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    fetch_request, fetch_response, list_offsets_request, offset_commit_request, BrokerId,
    FetchRequest, FetchResponse, ListOffsetsRequest, MetadataRequest, MetadataResponse,
    OffsetCommitRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use std::net::SocketAddr;

fn ends() -> (SocketAddr, SocketAddr) {
    (
        "10.0.1.1:50000".parse().unwrap(),
        "10.0.0.1:9092".parse().unwrap(),
    )
}

fn orders() -> TopicName {
    TopicName(StrBytes::from_static_str("orders"))
}

/// One step of a client conversation.
enum Step {
    /// Metadata v12 answered with orders-0 at this leader epoch.
    Told(i32),
    /// Fetch v12 of orders-0 with this CurrentLeaderEpoch, answered with this error code.
    Fetch(i32, i16),
    /// ListOffsets v7 with this CurrentLeaderEpoch.
    ListOffsets(i32),
    /// OffsetCommit v8 with this CommittedLeaderEpoch.
    Commit(i32),
}

fn codes(steps: &[Step]) -> Vec<&'static str> {
    let mut net = Net::new();
    let (c, s) = ends();
    for step in steps {
        let corr = net.corr();
        let (req, resp) = match *step {
            Step::Told(epoch) => {
                let r =
                    MetadataResponse::default().with_topics(vec![MetadataResponseTopic::default()
                        .with_name(Some(orders()))
                        .with_partitions(vec![MetadataResponsePartition::default()
                            .with_partition_index(0)
                            .with_leader_id(BrokerId(1))
                            .with_leader_epoch(epoch)])]);
                (
                    request(3, 12, corr, &MetadataRequest::default()),
                    response(12, corr, &r),
                )
            }
            Step::Fetch(epoch, error) => {
                let q = FetchRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_topics(vec![fetch_request::FetchTopic::default()
                        .with_topic(orders())
                        .with_partitions(vec![fetch_request::FetchPartition::default()
                            .with_partition(0)
                            .with_current_leader_epoch(epoch)])]);
                let a = FetchResponse::default().with_responses(vec![
                    fetch_response::FetchableTopicResponse::default()
                        .with_topic(orders())
                        .with_partitions(vec![fetch_response::PartitionData::default()
                            .with_partition_index(0)
                            .with_error_code(error)]),
                ]);
                (request(1, 12, corr, &q), response(12, corr, &a))
            }
            Step::ListOffsets(epoch) => {
                let q = ListOffsetsRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_topics(vec![list_offsets_request::ListOffsetsTopic::default()
                        .with_name(orders())
                        .with_partitions(vec![
                            list_offsets_request::ListOffsetsPartition::default()
                                .with_partition_index(0)
                                .with_current_leader_epoch(epoch),
                        ])]);
                (request(2, 7, corr, &q), Vec::new())
            }
            Step::Commit(epoch) => {
                let q = OffsetCommitRequest::default()
                    .with_group_id(StrBytes::from_static_str("g").into())
                    .with_topics(vec![
                        offset_commit_request::OffsetCommitRequestTopic::default()
                            .with_name(orders())
                            .with_partitions(vec![
                                offset_commit_request::OffsetCommitRequestPartition::default()
                                    .with_partition_index(0)
                                    .with_committed_leader_epoch(epoch),
                            ]),
                    ]);
                (request(8, 8, corr, &q), Vec::new())
            }
        };
        net.send(c, s, true, &req);
        if !resp.is_empty() {
            net.send(c, s, false, &resp);
        }
    }
    check(&net.pcap()).0.iter().map(|f| f.rule.code).collect()
}

use Step::*;

#[test]
fn stale_epoch_used() {
    assert_eq!(codes(&[Told(7), Fetch(6, 0)]), ["stale-epoch-used"]);
    assert!(codes(&[Told(7), Fetch(7, 0)]).is_empty());
    assert_eq!(codes(&[Told(7), ListOffsets(3)]), ["stale-epoch-used"]);
    assert!(
        codes(&[Told(7), ListOffsets(-1)]).is_empty(),
        "-1: the client does not say"
    );
}

#[test]
fn metadata_epoch_regressed() {
    assert_eq!(codes(&[Told(7), Told(6)]), ["metadata-epoch-regressed"]);
    assert!(codes(&[Told(7), Told(8)]).is_empty());
}

#[test]
fn committed_epoch_ahead() {
    assert_eq!(codes(&[Told(7), Commit(8)]), ["committed-epoch-ahead"]);
    assert!(codes(&[Told(7), Commit(7)]).is_empty());
}

#[test]
fn epoch_bad_sentinel() {
    assert_eq!(codes(&[Fetch(i32::MIN, 0)]), ["epoch-bad-sentinel"]);
    assert!(codes(&[Fetch(-1, 0)]).is_empty());
    assert_eq!(codes(&[Told(-2)]), ["epoch-bad-sentinel"]);
}

#[test]
fn epoch_zero_as_unknown() {
    assert_eq!(
        codes(&[Told(-1), ListOffsets(0)]),
        ["epoch-zero-as-unknown"]
    );
    assert!(codes(&[Told(-1), ListOffsets(-1)]).is_empty());
    assert!(
        codes(&[Told(0), ListOffsets(0)]).is_empty(),
        "0 is a real first epoch"
    );
}

#[test]
fn fenced_epoch_explained_and_resent() {
    // FENCED_LEADER_EPOCH (74) is explained: info.
    assert_eq!(codes(&[Told(7), Fetch(7, 74)]), ["fenced-epoch-explained"]);
    assert!(codes(&[Told(7), Fetch(7, 0)]).is_empty());
    // Sending the fenced epoch again without fresh metadata.
    assert_eq!(
        codes(&[Told(7), Fetch(7, 74), Fetch(7, 0)]),
        ["fenced-epoch-explained", "fenced-epoch-resent"]
    );
    assert_eq!(
        codes(&[Told(7), Fetch(7, 74), Told(8), Fetch(8, 0)]),
        ["fenced-epoch-explained"]
    );
}

#[test]
fn the_explanation_names_the_epoch_sent_and_the_one_advertised() {
    let mut net = Net::new();
    let (c, s) = ends();
    let r = MetadataResponse::default().with_topics(vec![MetadataResponseTopic::default()
        .with_name(Some(orders()))
        .with_partitions(vec![MetadataResponsePartition::default()
            .with_partition_index(0)
            .with_leader_epoch(9)])]);
    net.send(c, s, true, &request(3, 12, 1, &MetadataRequest::default()));
    net.send(c, s, false, &response(12, 1, &r));
    let q = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_topics(vec![fetch_request::FetchTopic::default()
            .with_topic(orders())
            .with_partitions(vec![fetch_request::FetchPartition::default()
                .with_partition(0)
                .with_current_leader_epoch(10)])]);
    let a = FetchResponse::default().with_responses(vec![
        fetch_response::FetchableTopicResponse::default()
            .with_topic(orders())
            .with_partitions(vec![fetch_response::PartitionData::default()
                .with_partition_index(0)
                .with_error_code(75)]),
    ]);
    net.send(c, s, true, &request(1, 12, 2, &q));
    net.send(c, s, false, &response(12, 2, &a));
    let found = check(&net.pcap()).0;
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.rule.code, "fenced-epoch-explained");
    assert!(f.message.contains("UNKNOWN_LEADER_EPOCH"), "{}", f.message);
    assert!(f.message.contains("epoch 10 sent"), "{}", f.message);
    assert!(
        f.message.contains("leader epoch 9 last advertised"),
        "{}",
        f.message
    );
    assert_eq!(
        (f.expected.as_str(), f.seen.as_str()),
        ("epoch 9", "epoch 10")
    );
    assert_eq!(
        f.frames.len(),
        3,
        "Metadata answer, Fetch request, its answer: {:?}",
        f.frames
    );
    assert_eq!(f.api, Some("Fetch"));
}
