//! Producer rules (KIP-98 sequences and epochs, KIP-890 transactions) on client conversations
//! encoded by the kafka-protocol crate (messages, and record batches by its RecordBatchEncoder
//! with the producer id, epoch and sequences set); each rule fires on one conversation and stays
//! silent on the same one without the fault. The real captures (idempotent and transactional
//! producers) are checked clean in `check_cli`.

use crate::check_support::{check, request, response, Net};
use bytes::Bytes;
use indexmap::IndexMap;
use kafka_protocol::messages::{
    add_partitions_to_txn_request as apt, produce_request, produce_response,
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, EndTxnRequest, EndTxnResponse,
    InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse, ProducerId,
    TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{Record, TimestampType};
use kinspect::check::Finding;
use std::net::SocketAddr;

const PID: i64 = 4000;

fn ends() -> (SocketAddr, SocketAddr) {
    (
        "10.0.1.1:50000".parse().unwrap(),
        "10.0.0.1:9092".parse().unwrap(),
    )
}

fn orders() -> TopicName {
    TopicName(StrBytes::from_static_str("orders"))
}

fn txn_id() -> TransactionalId {
    TransactionalId(StrBytes::from_static_str("tx-1"))
}

#[derive(Clone, Copy)]
enum Step {
    /// InitProducerId answered with (PID, epoch).
    Init(i16),
    /// Produce to orders-`partition`: epoch, base sequence, records, answered with this error.
    Produce {
        partition: i32,
        epoch: i16,
        base: i32,
        n: i32,
        txn: bool,
        version: i16,
        error: i16,
    },
    /// One Produce v9 to orders-0 .. orders-`partitions`, every batch of one record at `base`,
    /// answered without error.
    ProduceMany { partitions: i32, base: i32 },
    /// AddPartitionsToTxn v3 of orders-`partition`.
    Add(i32, i16),
    /// EndTxn request (version, epoch).
    EndRequest(i16, i16),
    /// Its answer (v5+: with the bumped epoch).
    EndAnswer(i16, i16),
}
use Step::*;

fn produce(partition: i32, epoch: i16, base: i32, n: i32) -> Step {
    Produce {
        partition,
        epoch,
        base,
        n,
        txn: false,
        version: 9,
        error: 0,
    }
}

fn tproduce(partition: i32, epoch: i16, base: i32, version: i16) -> Step {
    Produce {
        partition,
        epoch,
        base,
        n: 1,
        txn: true,
        version,
        error: 0,
    }
}

fn batch(epoch: i16, base: i32, n: i32, txn: bool) -> Bytes {
    let records: Vec<Record> = (0..n)
        .map(|i| Record {
            transactional: txn,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: PID,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: base.wrapping_add(i),
            timestamp: 1_767_225_600_000,
            key: None,
            value: Some(Bytes::from_static(b"v")),
            headers: IndexMap::new(),
        })
        .collect();
    bytes::Bytes::from(crate::common::kp_batch(&records))
}

fn run(steps: &[Step]) -> Vec<Finding> {
    let mut net = Net::new();
    let (c, s) = ends();
    let mut end_corr = 0;
    for &step in steps {
        let corr = net.corr();
        match step {
            Init(epoch) => {
                let q = InitProducerIdRequest::default()
                    .with_transactional_id(Some(txn_id()))
                    .with_transaction_timeout_ms(60000);
                net.send(c, s, true, &request(22, 4, corr, &q));
                let a = InitProducerIdResponse::default()
                    .with_producer_id(ProducerId(PID))
                    .with_producer_epoch(epoch);
                net.send(c, s, false, &response(4, corr, &a));
            }
            Produce {
                partition,
                epoch,
                base,
                n,
                txn,
                version,
                error,
            } => {
                let q = ProduceRequest::default()
                    .with_transactional_id(txn.then(txn_id))
                    .with_acks(-1)
                    .with_timeout_ms(30000)
                    .with_topic_data(vec![produce_request::TopicProduceData::default()
                        .with_name(orders())
                        .with_partition_data(vec![
                            produce_request::PartitionProduceData::default()
                                .with_index(partition)
                                .with_records(Some(batch(epoch, base, n, txn))),
                        ])]);
                // To the partition leader; the transaction coordinator is 10.0.0.1.
                let s = "10.0.0.2:9092".parse().unwrap();
                net.send(c, s, true, &request(0, version, corr, &q));
                let a = ProduceResponse::default().with_responses(vec![
                    produce_response::TopicProduceResponse::default()
                        .with_name(orders())
                        .with_partition_responses(vec![
                            produce_response::PartitionProduceResponse::default()
                                .with_index(partition)
                                .with_error_code(error),
                        ]),
                ]);
                net.send(c, s, false, &response(version, corr, &a));
            }
            ProduceMany { partitions, base } => {
                let q = ProduceRequest::default()
                    .with_acks(-1)
                    .with_timeout_ms(30000)
                    .with_topic_data(vec![produce_request::TopicProduceData::default()
                        .with_name(orders())
                        .with_partition_data(
                            (0..partitions)
                                .map(|p| {
                                    produce_request::PartitionProduceData::default()
                                        .with_index(p)
                                        .with_records(Some(batch(0, base, 1, false)))
                                })
                                .collect(),
                        )]);
                let s = "10.0.0.2:9092".parse().unwrap();
                net.send(c, s, true, &request(0, 9, corr, &q));
                let a = ProduceResponse::default().with_responses(vec![
                    produce_response::TopicProduceResponse::default()
                        .with_name(orders())
                        .with_partition_responses(
                            (0..partitions)
                                .map(|p| {
                                    produce_response::PartitionProduceResponse::default()
                                        .with_index(p)
                                })
                                .collect(),
                        ),
                ]);
                net.send(c, s, false, &response(9, corr, &a));
            }
            Add(partition, epoch) => {
                let q = AddPartitionsToTxnRequest::default()
                    .with_v3_and_below_transactional_id(txn_id())
                    .with_v3_and_below_producer_id(ProducerId(PID))
                    .with_v3_and_below_producer_epoch(epoch)
                    .with_v3_and_below_topics(vec![apt::AddPartitionsToTxnTopic::default()
                        .with_name(orders())
                        .with_partitions(vec![partition])]);
                net.send(c, s, true, &request(24, 3, corr, &q));
                net.send(
                    c,
                    s,
                    false,
                    &response(3, corr, &AddPartitionsToTxnResponse::default()),
                );
            }
            EndRequest(version, epoch) => {
                end_corr = corr;
                let q = EndTxnRequest::default()
                    .with_transactional_id(txn_id())
                    .with_producer_id(ProducerId(PID))
                    .with_producer_epoch(epoch)
                    .with_committed(true);
                net.send(c, s, true, &request(26, version, corr, &q));
            }
            EndAnswer(version, epoch) => {
                let a = EndTxnResponse::default()
                    .with_producer_id(ProducerId(PID))
                    .with_producer_epoch(epoch);
                net.send(c, s, false, &response(version, end_corr, &a));
            }
        }
    }
    check(&net.pcap()).0
}

fn codes(steps: &[Step]) -> Vec<&'static str> {
    run(steps).iter().map(|f| f.rule.code).collect()
}

#[test]
fn sequence_gap() {
    assert!(codes(&[Init(0), produce(0, 0, 0, 3), produce(0, 0, 3, 2)]).is_empty());
    assert_eq!(
        codes(&[Init(0), produce(0, 0, 0, 3), produce(0, 0, 4, 2)]),
        ["sequence-gap"]
    );
    // A retry of a recent batch is not a gap; other partitions have their own sequences.
    assert!(codes(&[
        Init(0),
        produce(0, 0, 0, 3),
        produce(0, 0, 3, 2),
        produce(0, 0, 0, 3),
        produce(1, 0, 0, 1),
    ])
    .is_empty());
    // The wrap at INT32_MAX (a capture that starts mid-stream: no InitProducerId seen).
    assert!(codes(&[produce(0, 0, i32::MAX - 1, 2), produce(0, 0, 0, 1)]).is_empty());
    assert_eq!(
        codes(&[produce(0, 0, i32::MAX - 1, 2), produce(0, 0, 1, 1)]),
        ["sequence-gap"]
    );
}

#[test]
fn sequence_not_reset() {
    assert_eq!(
        codes(&[Init(0), produce(0, 0, 5, 1)]),
        ["sequence-not-reset"]
    );
    assert!(codes(&[Init(0), produce(0, 0, 0, 1)]).is_empty());
    // A bumped epoch starts again at 0.
    assert_eq!(
        codes(&[produce(0, 0, 0, 3), produce(0, 1, 3, 1)]),
        ["sequence-not-reset"]
    );
    assert!(codes(&[produce(0, 0, 0, 3), produce(0, 1, 0, 1)]).is_empty());
}

#[test]
fn producer_errors_are_explained_with_what_was_sent_and_expected() {
    let f = run(&[
        Init(0),
        produce(0, 0, 0, 3),
        Produce {
            partition: 0,
            epoch: 0,
            base: 5,
            n: 2,
            txn: false,
            version: 9,
            error: 45,
        },
    ]);
    let codes: Vec<_> = f.iter().map(|f| f.rule.code).collect();
    assert_eq!(codes, ["sequence-gap", "producer-error-explained"]);
    let e = &f[1];
    assert!(
        e.message.contains("OUT_OF_ORDER_SEQUENCE_NUMBER"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("sequences 5..=6 (2 records)"),
        "{}",
        e.message
    );
    assert_eq!(
        e.expected,
        format!(
            "epoch 0, base sequence 3 (after the batch of frame {})",
            e.frames[0]
        )
    );
    assert_eq!(e.seen, "epoch 0, base sequence 5");
    assert_eq!(
        e.frames.len(),
        3,
        "the batch before, the request, the answer"
    );
    // No error, nothing to explain.
    assert_eq!(
        run(&[Init(0), produce(0, 0, 0, 3), produce(0, 0, 3, 2)]).len(),
        0
    );
    // A retry answered DUPLICATE_SEQUENCE_NUMBER is explained too.
    let d = run(&[
        Init(0),
        produce(0, 0, 0, 3),
        Produce {
            partition: 0,
            epoch: 0,
            base: 0,
            n: 3,
            txn: false,
            version: 9,
            error: 46,
        },
    ]);
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("DUPLICATE_SEQUENCE_NUMBER"));
}

#[test]
fn produce_not_in_transaction() {
    assert!(codes(&[Init(0), Add(0, 0), tproduce(0, 0, 0, 9)]).is_empty());
    assert_eq!(
        codes(&[Init(0), Add(0, 0), tproduce(1, 0, 0, 9)]),
        ["produce-not-in-transaction"]
    );
    // Produce v12 (transactions V2, KIP-890) adds the partition itself.
    assert!(codes(&[Init(0), tproduce(1, 0, 0, 12)]).is_empty());
    // After EndTxn the next transaction starts empty.
    assert_eq!(
        codes(&[
            Init(0),
            Add(0, 0),
            tproduce(0, 0, 0, 9),
            EndRequest(3, 0),
            EndAnswer(3, 0),
            tproduce(0, 0, 1, 9),
        ]),
        ["produce-not-in-transaction"]
    );
    assert!(codes(&[
        Init(0),
        Add(0, 0),
        tproduce(0, 0, 0, 9),
        EndRequest(3, 0),
        EndAnswer(3, 0),
        Add(0, 0),
        tproduce(0, 0, 1, 9),
    ])
    .is_empty());
}

#[test]
fn produce_after_end_txn() {
    // Sent while EndTxn is unanswered.
    assert_eq!(
        codes(&[
            Init(0),
            Add(0, 0),
            EndRequest(3, 0),
            tproduce(0, 0, 0, 9),
            EndAnswer(3, 0),
        ]),
        ["produce-after-end-txn"]
    );
    // EndTxn v5 bumped the epoch to 1: epoch 0 is finished, epoch 1 is the one.
    assert_eq!(
        codes(&[
            Init(0),
            tproduce(0, 0, 0, 12),
            EndRequest(5, 0),
            EndAnswer(5, 1),
            tproduce(0, 0, 1, 12),
        ]),
        ["produce-after-end-txn"]
    );
    assert!(codes(&[
        Init(0),
        tproduce(0, 0, 0, 12),
        EndRequest(5, 0),
        EndAnswer(5, 1),
        tproduce(0, 1, 0, 12),
    ])
    .is_empty());
}

#[test]
fn findings_capped_per_pdu() {
    let cap = kinspect::limits::MAX_CHECK_FINDINGS_PER_PDU;
    // One Produce to cap + 76 partitions, each batch the first of epoch 0 at sequence 5: a
    // sequence-not-reset for every partition, of which `cap` are listed and the rest counted.
    let over = run(&[
        Init(0),
        ProduceMany {
            partitions: cap as i32 + 76,
            base: 5,
        },
    ]);
    assert_eq!(over.len(), cap + 1);
    assert!(over[..cap]
        .iter()
        .all(|f| f.rule.code == "sequence-not-reset"));
    let last = &over[cap];
    assert_eq!(last.rule.code, "check-findings-capped");
    assert_eq!(last.frames, over[cap - 1].frames, "the same PDU");
    assert!(
        last.message
            .starts_with("76 more findings on this PDU are not listed")
            && last.message.ends_with(": sequence-not-reset 76"),
        "{}",
        last.message
    );
    assert_eq!(
        (last.expected.as_str(), last.seen.clone()),
        (
            format!("at most {cap} findings listed").as_str(),
            (cap + 76).to_string()
        )
    );
    // At the cap itself every finding is listed; with sequence 0 there is none.
    let at = codes(&[
        Init(0),
        ProduceMany {
            partitions: cap as i32,
            base: 5,
        },
    ]);
    assert_eq!(at.len(), cap);
    assert!(at.iter().all(|c| *c == "sequence-not-reset"));
    assert!(codes(&[
        Init(0),
        ProduceMany {
            partitions: cap as i32 + 76,
            base: 0,
        },
    ])
    .is_empty());
}
