//! Scenario captures for the `check` tests: small scenario descriptions, encoded by an
//! independent implementation (the `kafka-protocol` crate), wrapped in request/response headers,
//! framed with the size prefix and written as a pcap of TCP conversations; then run through
//! `kinspect::capture::decoded::decode_capture` and a `kinspect::check::Checker`.
//!
//! KRaft scenarios are lines between three controllers, replica `i` listening on 10.0.0.i:9093:
//!
//! ```text
//! prevote 1 -> 2 epoch 4 last 3 : granted        # Vote v2 PreVote=true, and its answer
//! vote 1 -> 3 epoch 5 last 4 : rejected answer-epoch 6
//! begin 1 -> 2 epoch 5                            # BeginQuorumEpoch v1, answered without error
//! fetch 2 -> 1 epoch 5                            # Fetch v17 of __cluster_metadata, answered
//! end 1 -> 2 epoch 5                              # EndQuorumEpoch v1
//! ```
//! Options: `v N` (Vote version), `voter N` (VoterId sent; default the receiver), `last N`
//! (LastOffsetEpoch; default epoch-1), `answer-epoch N` (the answer's LeaderEpoch; default the
//! request's epoch).

use bytes::BytesMut;
use kafka_protocol::messages::{self as m, BrokerId, RequestHeader, ResponseHeader, TopicName};
use kafka_protocol::protocol::{Encodable, HeaderVersion, StrBytes};
use kinspect::capture::testgen::{self, Conversation, Link, TcpPacket};
use kinspect::capture::CaptureOptions;
use kinspect::check::{Checker, Finding, Timeline};
use kinspect::engine::decoded::{decode_capture, Decoded};
use std::collections::BTreeMap;
use std::net::SocketAddr;

pub fn request<M: Encodable + HeaderVersion>(
    key: i16,
    version: i16,
    corr: i32,
    body: &M,
) -> Vec<u8> {
    let h = RequestHeader::default()
        .with_request_api_key(key)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(StrBytes::from_static_str("scenario")));
    let mut b = BytesMut::new();
    h.encode(&mut b, M::header_version(version)).unwrap();
    body.encode(&mut b, version).unwrap();
    framed(&b)
}

pub fn response<M: Encodable + HeaderVersion>(version: i16, corr: i32, body: &M) -> Vec<u8> {
    let mut b = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(corr)
        .encode(&mut b, M::header_version(version))
        .unwrap();
    body.encode(&mut b, version).unwrap();
    framed(&b)
}

fn framed(b: &[u8]) -> Vec<u8> {
    let mut f = (b.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(b);
    f
}

/// TCP conversations between endpoints, interleaved in the order exchanges happen.
#[derive(Default)]
pub struct Net {
    convs: BTreeMap<(SocketAddr, SocketAddr), Conversation>,
    clock: i64,
    corr: i32,
    packets: Vec<TcpPacket>,
}

impl Net {
    pub fn new() -> Self {
        Net {
            clock: 1_714_557_600_000_000_000,
            ..Net::default()
        }
    }

    /// The next correlation id (unique across the capture).
    pub fn corr(&mut self) -> i32 {
        self.corr += 1;
        self.corr
    }

    /// Sends `bytes` from `client` (true) or `server` on the connection client→server, opened
    /// with a handshake the first time.
    pub fn send(
        &mut self,
        client: SocketAddr,
        server: SocketAddr,
        from_client: bool,
        bytes: &[u8],
    ) {
        self.clock += 1_000_000;
        let conv = self.convs.entry((client, server)).or_insert_with(|| {
            let mut c = Conversation::new(client, server);
            c.ts_ns = 0;
            c
        });
        let fresh = conv.packets.is_empty() && conv.ts_ns == 0;
        conv.ts_ns = self.clock;
        let before = conv.packets.len();
        if fresh {
            conv.handshake();
        }
        conv.send(from_client, bytes);
        self.clock = conv.ts_ns;
        self.packets.extend(conv.packets[before..].iter().cloned());
    }

    /// Packets so far: the frame number of the last one sent (a send is its data, then the
    /// peer's ACK).
    pub fn frames(&self) -> u64 {
        self.packets.len() as u64
    }

    /// The capture as a classic Ethernet pcap.
    pub fn pcap(&self) -> Vec<u8> {
        let recs = testgen::records(&Link::Ethernet, &self.packets, 65535);
        testgen::pcap(1, &recs, false, true, 65535)
    }
}

/// Replica `i`'s listener and its outgoing address towards replica `to`.
pub fn listener(i: i32) -> SocketAddr {
    format!("10.0.0.{i}:9093").parse().unwrap()
}
fn outgoing(i: i32, to: i32) -> SocketAddr {
    format!("10.0.0.{i}:{}", 40000 + to).parse().unwrap()
}

fn tn() -> TopicName {
    TopicName(StrBytes::from_static_str("__cluster_metadata"))
}

/// Encodes a KRaft scenario (see the module docs) as a pcap.
pub fn kraft_pcap(scenario: &str) -> Vec<u8> {
    let mut net = Net::new();
    for line in scenario.lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let kind = w[0];
        let from: i32 = w[1].parse().unwrap();
        assert_eq!(w[2], "->", "{line}");
        let to: i32 = w[3].parse().unwrap();
        let opt = |name: &str| -> Option<i32> {
            w.iter()
                .position(|x| *x == name)
                .map(|i| w[i + 1].parse().unwrap())
        };
        let epoch = opt("epoch").expect("epoch");
        let granted = w.contains(&"granted");
        let answer_epoch = opt("answer-epoch").unwrap_or(epoch);
        let voter = opt("voter").unwrap_or(to);
        let corr = net.corr();
        let (c, s) = (outgoing(from, to), listener(to));
        let (req, resp) = match kind {
            "prevote" | "vote" => {
                let v = opt("v").unwrap_or(2) as i16;
                let mut p = m::vote_request::PartitionData::default()
                    .with_partition_index(0)
                    .with_replica_epoch(epoch)
                    .with_replica_id(BrokerId(from))
                    .with_last_offset_epoch(opt("last").unwrap_or(epoch - 1))
                    .with_last_offset(100);
                if v >= 2 {
                    p = p.with_pre_vote(kind == "prevote");
                }
                let r = m::VoteRequest::default()
                    .with_cluster_id(Some(StrBytes::from_static_str("scenario-cluster")))
                    .with_voter_id(BrokerId(if v >= 1 { voter } else { -1 }))
                    .with_topics(vec![m::vote_request::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![p])]);
                let a = m::VoteResponse::default().with_topics(vec![
                    m::vote_response::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![m::vote_response::PartitionData::default()
                            .with_partition_index(0)
                            .with_leader_id(BrokerId(-1))
                            .with_leader_epoch(answer_epoch)
                            .with_vote_granted(granted)]),
                ]);
                (request(52, v, corr, &r), response(v, corr, &a))
            }
            "begin" => {
                let r = m::BeginQuorumEpochRequest::default()
                    .with_cluster_id(Some(StrBytes::from_static_str("scenario-cluster")))
                    .with_voter_id(BrokerId(voter))
                    .with_topics(vec![m::begin_quorum_epoch_request::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![
                            m::begin_quorum_epoch_request::PartitionData::default()
                                .with_partition_index(0)
                                .with_leader_id(BrokerId(from))
                                .with_leader_epoch(epoch),
                        ])])
                    .with_leader_endpoints(vec![
                        m::begin_quorum_epoch_request::LeaderEndpoint::default()
                            .with_name(StrBytes::from_static_str("CONTROLLER"))
                            .with_host(StrBytes::from_string(listener(from).ip().to_string()))
                            .with_port(9093),
                    ]);
                let a = m::BeginQuorumEpochResponse::default().with_topics(vec![
                    m::begin_quorum_epoch_response::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![
                            m::begin_quorum_epoch_response::PartitionData::default()
                                .with_partition_index(0)
                                .with_leader_id(BrokerId(from))
                                .with_leader_epoch(answer_epoch),
                        ]),
                ]);
                (request(53, 1, corr, &r), response(1, corr, &a))
            }
            "end" => {
                let r = m::EndQuorumEpochRequest::default()
                    .with_cluster_id(Some(StrBytes::from_static_str("scenario-cluster")))
                    .with_topics(vec![m::end_quorum_epoch_request::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![
                            m::end_quorum_epoch_request::PartitionData::default()
                                .with_partition_index(0)
                                .with_leader_id(BrokerId(from))
                                .with_leader_epoch(epoch),
                        ])])
                    .with_leader_endpoints(vec![
                        m::end_quorum_epoch_request::LeaderEndpoint::default()
                            .with_name(StrBytes::from_static_str("CONTROLLER"))
                            .with_host(StrBytes::from_string(listener(from).ip().to_string()))
                            .with_port(9093),
                    ]);
                let a = m::EndQuorumEpochResponse::default().with_topics(vec![
                    m::end_quorum_epoch_response::TopicData::default()
                        .with_topic_name(tn())
                        .with_partitions(vec![
                            m::end_quorum_epoch_response::PartitionData::default()
                                .with_partition_index(0)
                                .with_leader_id(BrokerId(from))
                                .with_leader_epoch(epoch),
                        ]),
                ]);
                (request(54, 1, corr, &r), response(1, corr, &a))
            }
            "fetch" => {
                let id = uuid::Uuid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
                let r = m::FetchRequest::default()
                    .with_cluster_id(Some(StrBytes::from_static_str("scenario-cluster")))
                    .with_replica_state(
                        m::fetch_request::ReplicaState::default()
                            .with_replica_id(BrokerId(from))
                            .with_replica_epoch(-1),
                    )
                    .with_max_wait_ms(500)
                    .with_topics(vec![m::fetch_request::FetchTopic::default()
                        .with_topic_id(id)
                        .with_partitions(vec![m::fetch_request::FetchPartition::default()
                            .with_partition(0)
                            .with_current_leader_epoch(epoch)
                            .with_fetch_offset(100)
                            .with_last_fetched_epoch(epoch - 1)])]);
                let a = m::FetchResponse::default().with_responses(vec![
                    m::fetch_response::FetchableTopicResponse::default()
                        .with_topic_id(id)
                        .with_partitions(vec![m::fetch_response::PartitionData::default()
                            .with_partition_index(0)
                            .with_high_watermark(100)]),
                ]);
                (request(1, 17, corr, &r), response(17, corr, &a))
            }
            k => panic!("unknown scenario step {k}"),
        };
        net.send(c, s, true, &req);
        net.send(c, s, false, &resp);
    }
    net.pcap()
}

/// Every finding and the timeline of a capture (which must decode without errors).
pub fn check(pcap: &[u8]) -> (Vec<Finding>, Timeline) {
    let opts = CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    // CHECK_DUMP=DIR keeps each scenario capture, to look at with `kinspect decode`.
    if let Ok(dir) = std::env::var("CHECK_DUMP") {
        let name = format!(
            "{dir}/scenario-{:016x}.pcap",
            kinspect::check::fields::fnv(pcap)
        );
        std::fs::write(name, pcap).unwrap();
    }
    let mut checker = Checker::new();
    let mut found = Vec::new();
    let mut undecoded = Vec::new();
    decode_capture(
        pcap,
        &opts,
        kinspect::protocol::builtin(),
        &mut |d| match d {
            Decoded::Pdu(p) => {
                // A response to no request cannot decode (some scenarios send one on purpose).
                if p.tree.has_errors() && p.tree.errors().any(|d| d.code != "missing-hints") {
                    undecoded.push(format!(
                        "{:?} {:?}: {:?}",
                        p.origin.frame,
                        p.api_name,
                        p.tree.errors().next()
                    ));
                }
                found.extend(checker.pdu(p));
            }
            Decoded::Note(o, n) => checker.note(o, n),
        },
    )
    .unwrap();
    assert!(
        undecoded.is_empty(),
        "the scenario decodes cleanly: {undecoded:?}"
    );
    (found, checker.timeline().clone())
}

/// The rule codes of a scenario's findings, in order.
pub fn kraft_codes(scenario: &str) -> Vec<&'static str> {
    check(&kraft_pcap(scenario))
        .0
        .iter()
        .map(|f| f.rule.code)
        .collect()
}
