//! Group rules on conversations encoded by the kafka-protocol crate: classic generations
//! (JoinGroup answers, then Heartbeat / SyncGroup / OffsetCommit) and KIP-848
//! ConsumerGroupHeartbeat (fencing, assignments); each rule fires on one conversation and stays
//! silent on the same one without the fault. The real group captures (confluent-kafka against
//! the librdkafka mock and tansu, kcat -G) are checked clean in `check_cli`.

use crate::check_support::{check, request, response, Net};
use bytes::BytesMut;
use kafka_protocol::messages::{
    consumer_group_heartbeat_response as cgr, consumer_protocol_assignment as cpa,
    sync_group_request, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    ConsumerProtocolAssignment, GroupId, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest,
    JoinGroupResponse, OffsetCommitRequest, OffsetCommitResponse, SyncGroupRequest,
    SyncGroupResponse, TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use std::net::SocketAddr;

fn ends(client: u8) -> (SocketAddr, SocketAddr) {
    (
        format!("10.0.1.{client}:50000").parse().unwrap(),
        "10.0.0.1:9092".parse().unwrap(),
    )
}

fn group() -> GroupId {
    GroupId(StrBytes::from_static_str("g"))
}

fn s(x: &'static str) -> StrBytes {
    StrBytes::from_static_str(x)
}

#[derive(Clone, Copy)]
enum Step {
    /// JoinGroup v5 by member m1 answered with this generation.
    Join(i32),
    /// Heartbeat v4 / OffsetCommit v8 of m1 with this generation.
    Beat(i32),
    Commit(i32),
    /// ConsumerGroupHeartbeat v0 from client `c` (member "m<c>") with this epoch, answered with
    /// (error, epoch, assigned partitions of topic [9; 16]).
    Cgh(u8, i32, i16, i32, &'static [i32]),
    /// The leader's SyncGroup v3 (generation 3): member "m<i>" gets these partitions of
    /// "orders", as a ConsumerProtocolAssignment v0 (int16 version, then the struct, as
    /// `ConsumerProtocol.serializeAssignment` writes it).
    Sync(&'static [&'static [i32]]),
}
use Step::*;

fn codes(steps: &[Step]) -> Vec<&'static str> {
    let mut net = Net::new();
    for &step in steps {
        let corr = net.corr();
        let (c, srv) = ends(1);
        match step {
            Join(gen) => {
                let q = JoinGroupRequest::default()
                    .with_group_id(group())
                    .with_session_timeout_ms(10000)
                    .with_rebalance_timeout_ms(10000)
                    .with_member_id(s(""))
                    .with_protocol_type(s("consumer"));
                net.send(c, srv, true, &request(11, 5, corr, &q));
                let a = JoinGroupResponse::default()
                    .with_generation_id(gen)
                    .with_protocol_name(Some(s("range")))
                    .with_leader(s("m1"))
                    .with_member_id(s("m1"));
                net.send(c, srv, false, &response(5, corr, &a));
            }
            Beat(gen) => {
                let q = HeartbeatRequest::default()
                    .with_group_id(group())
                    .with_generation_id(gen)
                    .with_member_id(s("m1"));
                net.send(c, srv, true, &request(12, 4, corr, &q));
                net.send(
                    c,
                    srv,
                    false,
                    &response(4, corr, &HeartbeatResponse::default()),
                );
            }
            Commit(gen) => {
                let q = OffsetCommitRequest::default()
                    .with_group_id(group())
                    .with_generation_id_or_member_epoch(gen)
                    .with_member_id(s("m1"));
                net.send(c, srv, true, &request(8, 8, corr, &q));
                net.send(
                    c,
                    srv,
                    false,
                    &response(8, corr, &OffsetCommitResponse::default()),
                );
            }
            Sync(members) => {
                let assignments = members
                    .iter()
                    .enumerate()
                    .map(|(i, parts)| {
                        let a =
                            ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
                                cpa::TopicPartition::default()
                                    .with_topic(TopicName(s("orders")))
                                    .with_partitions(parts.to_vec()),
                            ]);
                        let mut b = BytesMut::from(&0i16.to_be_bytes()[..]);
                        a.encode(&mut b, 0).unwrap();
                        sync_group_request::SyncGroupRequestAssignment::default()
                            .with_member_id(StrBytes::from_string(format!("m{}", i + 1)))
                            .with_assignment(b.freeze())
                    })
                    .collect();
                let q = SyncGroupRequest::default()
                    .with_group_id(group())
                    .with_generation_id(3)
                    .with_member_id(s("m1"))
                    .with_assignments(assignments);
                net.send(c, srv, true, &request(14, 3, corr, &q));
                net.send(
                    c,
                    srv,
                    false,
                    &response(3, corr, &SyncGroupResponse::default()),
                );
            }
            Cgh(client, epoch, error, answer_epoch, parts) => {
                let (c, srv) = ends(client);
                let member = StrBytes::from_string(format!("m{client}"));
                let q = ConsumerGroupHeartbeatRequest::default()
                    .with_group_id(group())
                    .with_member_id(member.clone())
                    .with_member_epoch(epoch)
                    .with_rebalance_timeout_ms(30000);
                net.send(c, srv, true, &request(68, 0, corr, &q));
                let mut a = ConsumerGroupHeartbeatResponse::default()
                    .with_error_code(error)
                    .with_member_id(Some(member))
                    .with_member_epoch(answer_epoch)
                    .with_heartbeat_interval_ms(3000);
                if error == 0 {
                    a = a.with_assignment(Some(cgr::Assignment::default().with_topic_partitions(
                        vec![cgr::TopicPartitions::default()
                            .with_topic_id(uuid::Uuid::from_bytes([9; 16]))
                            .with_partitions(parts.to_vec())],
                    )));
                }
                net.send(c, srv, false, &response(0, corr, &a));
            }
        }
    }
    check(&net.pcap()).0.iter().map(|f| f.rule.code).collect()
}

#[test]
fn generation_regressed() {
    assert!(codes(&[Join(3), Beat(3), Commit(3), Join(4), Beat(4)]).is_empty());
    assert_eq!(
        codes(&[Join(3), Join(4), Beat(3)]),
        ["generation-regressed"]
    );
    assert_eq!(codes(&[Join(4), Commit(2)]), ["generation-regressed"]);
    assert!(
        codes(&[Join(4), Commit(-1)]).is_empty(),
        "-1: a commit outside the group protocol"
    );
}

#[test]
fn fenced_member_not_rejoined() {
    // Fenced at epoch 5: the member rejoins with 0.
    assert!(codes(&[
        Cgh(1, 0, 0, 5, &[0]),
        Cgh(1, 5, 110, -1, &[]),
        Cgh(1, 0, 0, 7, &[0]),
    ])
    .is_empty());
    assert_eq!(
        codes(&[
            Cgh(1, 0, 0, 5, &[0]),
            Cgh(1, 5, 110, -1, &[]),
            Cgh(1, 5, 0, 7, &[0]),
        ]),
        ["fenced-member-not-rejoined"]
    );
}

#[test]
fn partition_assigned_twice() {
    assert!(codes(&[Cgh(1, 0, 0, 3, &[0, 1]), Cgh(2, 0, 0, 3, &[2])]).is_empty());
    assert_eq!(
        codes(&[Cgh(1, 0, 0, 3, &[0, 1]), Cgh(2, 0, 0, 3, &[1, 2])]),
        ["partition-assigned-twice"]
    );
    // At another epoch: a reassignment in progress, not judged.
    assert!(codes(&[Cgh(1, 0, 0, 3, &[0, 1]), Cgh(2, 0, 0, 4, &[1, 2])]).is_empty());
    // After member 1 left (epoch -1), its partitions are free.
    assert!(codes(&[
        Cgh(1, 0, 0, 3, &[0, 1]),
        Cgh(1, -1, 0, -1, &[]),
        Cgh(2, 0, 0, 3, &[1]),
    ])
    .is_empty());
}

#[test]
fn partition_assigned_twice_by_a_classic_leader() {
    assert!(codes(&[Join(3), Sync(&[&[0, 1], &[2]])]).is_empty());
    assert_eq!(
        codes(&[Join(3), Sync(&[&[0, 1], &[1, 2]])]),
        ["partition-assigned-twice"]
    );
    // The SyncGroup's generation is judged too.
    assert_eq!(
        codes(&[Join(4), Sync(&[&[0], &[1]])]),
        ["generation-regressed"]
    );
}
