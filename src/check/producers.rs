//! Idempotent and transactional producers, from the v2 batch headers of Produce requests
//! (ProducerId, ProducerEpoch, BaseSequence, LastOffsetDelta, IsTransactional — readable with
//! `headers_only`), InitProducerId answers, AddPartitionsToTxn and EndTxn.
//!
//! Facts (Apache Kafka, read at 1eb7644349cb):
//! - `storage/.../ProducerAppendInfo.java` `checkSequence` (:112-143): under a new epoch the
//!   first sequence is 0; in an epoch each batch starts right after the last (`inSequence`,
//!   :145-147: last + 1, or 0 after INT32_MAX); `checkProducerEpoch` (:96-110): an older epoch
//!   is INVALID_PRODUCER_EPOCH. A retried batch (same base sequence as one of the last five,
//!   `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`) is answered DUPLICATE_SEQUENCE_NUMBER or its
//!   first offset, not judged here as a gap.
//! - `DefaultRecordBatch.incrementSequence` (:556): the wrap at INT32_MAX.
//! - KIP-890: Produce v12+ (with AddPartitionsToTxn v5 / EndTxn v5) is transactions V2, where
//!   the broker adds a partition to the transaction itself; below v12 a transactional Produce
//!   goes to partitions added by AddPartitionsToTxn first (`TransactionManager.maybeAddPartition`;
//!   otherwise INVALID_TXN_STATE, ReplicaManager "Partition was not added to the transaction").
//!   EndTxn v5+ answers with the bumped epoch: the old one is then finished.

use super::fields::{body, boolean, elems, int, member, member_any, topic, Topic};
use super::{frame_of, CapHit, Finding, Findings, Followed, RuleId, Table};
use crate::limits::{
    MAX_CHECK_PRODUCERS, MAX_CHECK_PRODUCER_PARTITIONS, MAX_CHECK_PRODUCE_INFLIGHT,
    MAX_CHECK_TXN_PARTITIONS,
};
use crate::pdu::{Conn, Pdu};
use crate::wire::tree::NodeId;
use std::collections::HashMap;

const PRODUCE: i16 = 0;
const INIT_PRODUCER_ID: i16 = 22;
const ADD_PARTITIONS_TO_TXN: i16 = 24;
const END_TXN: i16 = 26;
const OUT_OF_ORDER_SEQUENCE_NUMBER: i64 = 45;
const DUPLICATE_SEQUENCE_NUMBER: i64 = 46;
const INVALID_PRODUCER_EPOCH: i64 = 47;
/// Batches a broker remembers per producer and partition (`NUM_BATCHES_TO_RETAIN`).
const RETAINED: usize = 5;

/// `DefaultRecordBatch.incrementSequence`.
pub(super) fn increment_sequence(seq: i32, by: i32) -> i32 {
    if seq > i32::MAX - by {
        by - (i32::MAX - seq) - 1
    } else {
        seq + by
    }
}

/// One producer's sequence state on one partition.
#[derive(Default)]
struct Seq {
    epoch: i16,
    /// Next base sequence expected, and the frame of the batch that set it.
    next: i32,
    frame: u64,
    recent: [i32; RETAINED],
    n: usize,
}

#[derive(Default)]
struct Producer {
    /// The epoch an InitProducerId answer (or an EndTxn v5 answer) gave, and where.
    granted: Option<(i16, u64)>,
    /// The transaction's partitions are known from its start (an InitProducerId or EndTxn answer
    /// was seen): `Some(frame of that start)`.
    txn_from: Option<u64>,
    added: Vec<(u64, i32)>,
    added_capped: bool,
    /// An EndTxn of this epoch: (epoch, frame, answered, v5+).
    ended: Option<(i16, u64, bool, bool)>,
}

/// What a Produce request sent to one partition, for its answer.
#[derive(Clone, Copy)]
struct Sent {
    topic: u64,
    partition: i32,
    pid: i64,
    epoch: i16,
    base: i32,
    count: i32,
    /// The next sequence expected before it, and where that came from.
    expected: Option<(i32, i16, u64)>,
}

pub(super) struct Producers {
    seqs: Table<(i64, u64, i32), Seq>,
    producers: Table<i64, Producer>,
    inflight: HashMap<(Conn, i32), (u64, Vec<Sent>)>,
    inflight_capped: CapHit,
}

/// A v2 batch's producer fields: (pid, epoch, base sequence, record count, transactional).
fn batch_fields(t: &crate::wire::tree::Tree, b: NodeId) -> Option<(i64, i16, i32, i32, bool)> {
    let pid = int(t, b, "ProducerId")?;
    let epoch = int(t, b, "ProducerEpoch")? as i16;
    let seq = int(t, b, "BaseSequence")? as i32;
    let delta = int(t, b, "LastOffsetDelta")? as i32;
    let attrs = member(t, b, "Attributes")?;
    if boolean(t, attrs, "IsControlBatch") == Some(true) {
        return None;
    }
    let txn = boolean(t, attrs, "IsTransactional").unwrap_or(false);
    Some((pid, epoch, seq, delta.saturating_add(1), txn))
}

impl Producers {
    pub(super) fn new() -> Self {
        Producers {
            seqs: Table::new(
                MAX_CHECK_PRODUCER_PARTITIONS,
                "producer partitions",
                "MAX_CHECK_PRODUCER_PARTITIONS",
            ),
            producers: Table::new(MAX_CHECK_PRODUCERS, "producers", "MAX_CHECK_PRODUCERS"),
            inflight: HashMap::new(),
            inflight_capped: CapHit::default(),
        }
    }

    pub(super) fn request(&mut self, pdu: &Pdu, out: &mut Findings) {
        let (Some(key), Some(b)) = (pdu.api_key, body(&pdu.tree)) else {
            return;
        };
        match key {
            PRODUCE => self.produce(pdu, b, out),
            ADD_PARTITIONS_TO_TXN => self.add_partitions(pdu, b),
            END_TXN => {
                let t = &pdu.tree;
                if let (Some(pid), Some(e)) = (int(t, b, "ProducerId"), int(t, b, "ProducerEpoch"))
                {
                    let v5 = pdu.api_version.unwrap_or(0) >= 5;
                    if let Some(p) = self.producers.entry(pid) {
                        p.ended = Some((e as i16, frame_of(&pdu.origin), false, v5));
                    }
                }
            }
            _ => {}
        }
    }

    fn add_partitions(&mut self, pdu: &Pdu, b: NodeId) {
        let t = &pdu.tree;
        let mut add = |pid: i64, topics: NodeId| {
            let Some(p) = self.producers.entry(pid) else {
                return;
            };
            for te in t.children(topics) {
                let Some(name) = topic(pdu, te) else { continue };
                for pe in elems(t, te, "Partitions") {
                    if let crate::wire::tree::Value::Int(i) = t.node(pe).value {
                        let k = (name.key(), i as i32);
                        if p.added.contains(&k) {
                            continue;
                        }
                        if p.added.len() >= MAX_CHECK_TXN_PARTITIONS {
                            p.added_capped = true;
                        } else {
                            p.added.push(k);
                        }
                    }
                }
            }
        };
        if let (Some(pid), Some(topics)) = (
            int(t, b, "V3AndBelowProducerId").or_else(|| int(t, b, "ProducerId")),
            member_any(t, b, &["V3AndBelowTopics", "Topics"]),
        ) {
            add(pid, topics);
        }
        for tx in elems(t, b, "Transactions") {
            // VerifyOnly (v4+, broker to coordinator) adds nothing.
            if boolean(t, tx, "VerifyOnly") == Some(true) {
                continue;
            }
            if let (Some(pid), Some(topics)) = (int(t, tx, "ProducerId"), member(t, tx, "Topics")) {
                add(pid, topics);
            }
        }
    }

    fn produce(&mut self, pdu: &Pdu, b: NodeId, out: &mut Findings) {
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let version = pdu.api_version.unwrap_or(0);
        let mut sent = Vec::new();
        for te in elems(t, b, "TopicData") {
            let Some(name) = topic(pdu, te) else { continue };
            let tk = name.key();
            for pe in elems(t, te, "PartitionData") {
                let Some(p) = int(t, pe, "Index") else {
                    continue;
                };
                let p = p as i32;
                for bn in elems(t, pe, "Records") {
                    let Some((pid, epoch, base, count, txn)) = batch_fields(t, bn) else {
                        continue;
                    };
                    if pid < 0 {
                        continue;
                    }
                    if txn {
                        self.transactional(pdu, name, p, pid, epoch, version, out);
                    }
                    if base < 0 {
                        continue;
                    }
                    let expected = self.sequence(pdu, name, p, pid, epoch, base, count, out);
                    sent.push(Sent {
                        topic: tk,
                        partition: p,
                        pid,
                        epoch,
                        base,
                        count,
                        expected,
                    });
                }
            }
        }
        if sent.is_empty() {
            return;
        }
        if let (Some(c), Some(corr)) = (pdu.origin.conn, pdu.correlation_id) {
            if self.inflight.len() >= MAX_CHECK_PRODUCE_INFLIGHT {
                self.inflight_capped.hit(frame);
            } else {
                self.inflight.insert((c, corr), (frame, sent));
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn transactional(
        &mut self,
        pdu: &Pdu,
        name: Topic<'_>,
        p: i32,
        pid: i64,
        epoch: i16,
        version: i16,
        out: &mut Findings,
    ) {
        let frame = frame_of(&pdu.origin);
        let Some(st) = self.producers.entry(pid) else {
            return;
        };
        if let Some((e, ef, answered, v5)) = st.ended {
            if e == epoch && (!answered || v5) {
                let why = if answered {
                    "its EndTxn v5+ (frame {ef}) finished that epoch: the answer's bumped epoch is the one to use"
                } else {
                    "its EndTxn (frame {ef}) is not answered yet"
                };
                out.push(
                    Finding::new(
                        RuleId::ProduceAfterEndTxn,
                        vec![ef, frame],
                        format!(
                            "transactional Produce of producer {pid} epoch {epoch} to {name}-{p}, but {}",
                            why.replace("{ef}", &ef.to_string())
                        ),
                    )
                    .expect(
                        if answered { format!("an epoch above {e}") } else { "the EndTxn answer first".into() },
                        format!("epoch {epoch}"),
                    )
                    .at(pdu),
                );
                return;
            }
        }
        // Transactions V2 (Produce v12+) add partitions implicitly.
        if version >= 12 || st.added_capped {
            return;
        }
        let Some(from) = st.txn_from else { return };
        if !st.added.contains(&(name.key(), p)) {
            out.push(
                Finding::new(
                    RuleId::ProduceNotInTxn,
                    vec![from, frame],
                    format!(
                        "transactional Produce v{version} of producer {pid} to {name}-{p}, which no AddPartitionsToTxn added to the transaction begun after frame {from}"
                    ),
                )
                .expect(format!("AddPartitionsToTxn for {name}-{p} first"), "none")
                .at(pdu),
            );
            // Once per partition and transaction.
            if st.added.len() < MAX_CHECK_TXN_PARTITIONS {
                st.added.push((name.key(), p));
            }
        }
    }

    /// Judges a batch's base sequence; returns what was expected before it.
    #[allow(clippy::too_many_arguments)]
    fn sequence(
        &mut self,
        pdu: &Pdu,
        name: Topic<'_>,
        p: i32,
        pid: i64,
        epoch: i16,
        base: i32,
        count: i32,
        out: &mut Findings,
    ) -> Option<(i32, i16, u64)> {
        let frame = frame_of(&pdu.origin);
        let granted = self.producers.get(&pid).and_then(|s| s.granted);
        let fresh = self.seqs.get(&(pid, name.key(), p)).is_none();
        let s = self.seqs.entry((pid, name.key(), p))?;
        let before = (!fresh).then_some((s.next, s.epoch, s.frame));
        let what = format!("producer {pid} epoch {epoch} on {name}-{p}");
        if fresh {
            // A first batch under an epoch the capture saw granted starts at 0.
            if let Some((_, gf)) = granted.filter(|g| g.0 == epoch) {
                if base != 0 {
                    out.push(
                        Finding::new(
                            RuleId::SequenceNotReset,
                            vec![gf, frame],
                            format!("{what}: the first batch under the epoch granted in frame {gf} has base sequence {base}"),
                        )
                        .expect("base sequence 0", base.to_string())
                        .at(pdu),
                    );
                }
            }
        } else if epoch > s.epoch {
            if base != 0 {
                out.push(
                    Finding::new(
                        RuleId::SequenceNotReset,
                        vec![s.frame, frame],
                        format!(
                            "{what}: the epoch went from {} (frame {}) to {epoch}, but the base sequence is {base}",
                            s.epoch, s.frame
                        ),
                    )
                    .expect("base sequence 0 under a new epoch", base.to_string())
                    .at(pdu),
                );
            }
        } else if epoch == s.epoch && base != s.next && !s.recent[..s.n].contains(&base) {
            out.push(
                Finding::new(
                    RuleId::SequenceGap,
                    vec![s.frame, frame],
                    format!(
                        "{what}: base sequence {base}, but the batch of frame {} ended the sequence before {} (nor is it a retry of the last {RETAINED} batches)",
                        s.frame, s.next
                    ),
                )
                .expect(format!("base sequence {}", s.next), base.to_string())
                .at(pdu),
            );
        } else if epoch < s.epoch {
            // An older epoch: the broker answers INVALID_PRODUCER_EPOCH (explained there).
            return before;
        }
        if epoch != s.epoch {
            s.n = 0;
        }
        let next = increment_sequence(base, count.max(1));
        // A retry does not move the expectation back.
        if fresh || epoch != s.epoch || base == s.next {
            s.next = next;
            s.frame = frame;
        }
        s.epoch = epoch;
        if !s.recent[..s.n].contains(&base) {
            if s.n == RETAINED {
                s.recent.rotate_left(1);
                s.n -= 1;
            }
            s.recent[s.n] = base;
            s.n += 1;
        }
        before
    }

    pub(super) fn response(
        &mut self,
        pdu: &Pdu,
        req: Option<&super::sessions::Inflight>,
        out: &mut Findings,
    ) {
        let (Some(key), Some(b)) = (pdu.api_key, body(&pdu.tree)) else {
            return;
        };
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        match key {
            INIT_PRODUCER_ID if int(t, b, "ErrorCode") == Some(0) => {
                if let (Some(pid), Some(e)) = (int(t, b, "ProducerId"), int(t, b, "ProducerEpoch"))
                {
                    if let Some(p) = self.producers.entry(pid) {
                        *p = Producer {
                            granted: Some((e as i16, frame)),
                            txn_from: Some(frame),
                            ..Producer::default()
                        };
                    }
                }
            }
            END_TXN => {
                let ok = int(t, b, "ErrorCode") == Some(0);
                let bumped = (int(t, b, "ProducerId"), int(t, b, "ProducerEpoch"));
                let Some(rf) = req.map(|r| r.frame) else {
                    return;
                };
                for (_, p) in self.producers.iter_mut() {
                    let Some((e, ef, answered, v5)) = p.ended.as_mut() else {
                        continue;
                    };
                    if *ef != rf {
                        continue;
                    }
                    *answered = true;
                    if !ok {
                        p.ended = None;
                        continue;
                    }
                    // The next transaction starts empty.
                    p.txn_from = Some(frame);
                    p.added.clear();
                    p.added_capped = false;
                    if *v5 {
                        if let (Some(_), Some(ne)) = bumped {
                            if ne as i16 != *e {
                                p.granted = Some((ne as i16, frame));
                            }
                        }
                    } else {
                        p.ended = None;
                    }
                }
            }
            PRODUCE => self.produce_response(pdu, b, frame, out),
            _ => {}
        }
    }

    fn produce_response(&mut self, pdu: &Pdu, b: NodeId, frame: u64, out: &mut Findings) {
        let (Some(c), Some(corr)) = (pdu.origin.conn, pdu.correlation_id) else {
            return;
        };
        let Some((rf, sent)) = self.inflight.remove(&(c, corr)) else {
            return;
        };
        let t = &pdu.tree;
        for te in elems(t, b, "Responses") {
            let Some(name) = topic(pdu, te) else { continue };
            for pe in elems(t, te, "PartitionResponses") {
                let (Some(p), Some(err)) = (int(t, pe, "Index"), int(t, pe, "ErrorCode")) else {
                    continue;
                };
                let ename = match err {
                    OUT_OF_ORDER_SEQUENCE_NUMBER => "OUT_OF_ORDER_SEQUENCE_NUMBER",
                    DUPLICATE_SEQUENCE_NUMBER => "DUPLICATE_SEQUENCE_NUMBER",
                    INVALID_PRODUCER_EPOCH => "INVALID_PRODUCER_EPOCH",
                    _ => continue,
                };
                let p = p as i32;
                let Some(s) = sent
                    .iter()
                    .find(|s| s.topic == name.key() && s.partition == p)
                else {
                    continue;
                };
                let last = increment_sequence(s.base, s.count - 1);
                let mut frames = Vec::with_capacity(3);
                let expected = match s.expected {
                    Some((next, e, f)) => {
                        frames.push(f);
                        if err == INVALID_PRODUCER_EPOCH {
                            format!("epoch {e} or newer (seen in frame {f})")
                        } else {
                            format!(
                                "epoch {e}, base sequence {next} (after the batch of frame {f})"
                            )
                        }
                    }
                    None => "no earlier batch of this producer and partition in the capture".into(),
                };
                frames.push(rf);
                frames.push(frame);
                let mut f = Finding::new(
                    RuleId::ProducerErrorExplained,
                    frames,
                    format!(
                        "{name}-{p} answered {ename}: frame {rf} sent producer {} epoch {} sequences {}..={last} ({} records); expected {expected}",
                        s.pid, s.epoch, s.base, s.count
                    ),
                )
                .at(pdu);
                f.expected = expected;
                f.seen = format!("epoch {}, base sequence {}", s.epoch, s.base);
                out.push(f);
            }
        }
    }

    /// Producer ids, and (producer id, topic, partition) sequences.
    pub(super) fn followed(&self) -> [Followed; 2] {
        [
            self.producers.followed("producers"),
            self.seqs.followed("producers"),
        ]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.seqs.capped(frame));
        out.extend(self.producers.capped(frame));
        out.extend(self.inflight_capped.capped(
            MAX_CHECK_PRODUCE_INFLIGHT,
            "unanswered Produce requests",
            "MAX_CHECK_PRODUCE_INFLIGHT",
            "their answers are not explained",
        ));
    }

    /// Bytes of a connection were lost: its Produce requests will not be answered in view.
    pub(super) fn lost_bytes(&mut self, c: Conn) {
        self.inflight.retain(|k, _| k.0 != c);
    }
}

#[cfg(test)]
mod tests {
    use super::increment_sequence;

    #[test]
    fn sequences_wrap_at_int32_max_as_kafka_does() {
        assert_eq!(increment_sequence(0, 5), 5);
        assert_eq!(increment_sequence(i32::MAX - 4, 5), 0);
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(i32::MAX - 1, 5), 3);
    }
}
