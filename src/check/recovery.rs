//! Leader recovery (KIP-704), per partition: the LeaderRecoveryState (0 RECOVERED, 1 RECOVERING)
//! and the ISR a controller writes in `__cluster_metadata` (PartitionRecord, PartitionChangeRecord:
//! in Fetch responses of the metadata topic, in KRaft log segments and snapshots), and what
//! partition leaders ask for in AlterPartition. Broker epochs come from RegisterBrokerRecord and
//! BrokerRegistration answers, to judge the epochs of AlterPartition's NewIsrWithEpochs (v3+).
//!
//! Facts (Apache Kafka `metadata/`, read at 1eb7644349cb):
//! - `PartitionChangeBuilder.tryElection` (:347-356): an unclean election sets the ISR to the
//!   new leader alone and the state to RECOVERING, in the same record.
//! - `ReplicationControlManager.validateAlterPartitionData` (:1221-1236): INVALID_REQUEST for
//!   an ISR of more than one replica while RECOVERING, and for RECOVERED → RECOVERING.
//! - `ReplicationControlManager.ineligibleReplicasForIsr` (:1256-1275): INELIGIBLE_REPLICA when
//!   a BrokerEpoch other than -1 differs from the broker's registration epoch.
//! - `LeaderRecoveryState.changeTo` / PartitionChangeRecord.json: -1 (tag 5 absent) = unchanged;
//!   Leader -2 (tag 1 absent) = unchanged; Isr null (tag 0 absent) = unchanged.

use super::fields::{body, elems, int, member, text, uuid, Topic};
use super::{frame_of, Finding, Findings, Followed, RuleId, Table};
use crate::limits::{MAX_CHECK_BROKER_EPOCHS, MAX_CHECK_ISR, MAX_CHECK_RECOVERY_PARTITIONS};
use crate::pdu::Pdu;
use crate::wire::tree::{Kind, NodeId, Tree, Value};

const FETCH: i16 = 1;
const ALTER_PARTITION: i16 = 56;
const BROKER_REGISTRATION: i16 = 62;
/// Metadata record api keys (`type: metadata` specs).
const REGISTER_BROKER_RECORD: i64 = 0;
const PARTITION_RECORD: i64 = 3;
const PARTITION_CHANGE_RECORD: i64 = 5;
const RECOVERING: i64 = 1;

/// A partition's state as the metadata log last wrote it.
#[derive(Default)]
struct Part {
    known: bool,
    leader: i32,
    isr: Vec<i32>,
    recovery: i64,
    /// The frame (or input index) of the record that set `recovery`.
    frame: u64,
}

pub(super) struct Recovery {
    parts: Table<([u8; 16], i32), Part>,
    /// Broker id → (registration epoch, frame).
    brokers: Table<i32, (i64, u64)>,
}

fn ints(tree: &Tree, id: NodeId, name: &str) -> Option<Vec<i32>> {
    let a = member(tree, id, name)?;
    let n = tree.node(a);
    if n.kind != Kind::Array || n.value == Value::Null {
        return None;
    }
    Some(
        tree.children(a)
            .take(MAX_CHECK_ISR)
            .filter_map(|c| match tree.node(c).value {
                Value::Int(v) => Some(v as i32),
                _ => None,
            })
            .collect(),
    )
}

fn id_text(u: [u8; 16]) -> String {
    Topic::Id(u).to_string()
}

fn state_name(s: i64) -> &'static str {
    match s {
        0 => "RECOVERED",
        1 => "RECOVERING",
        _ => "?",
    }
}

impl Recovery {
    pub(super) fn new() -> Self {
        Recovery {
            parts: Table::new(
                MAX_CHECK_RECOVERY_PARTITIONS,
                "metadata partitions",
                "MAX_CHECK_RECOVERY_PARTITIONS",
            ),
            brokers: Table::new(
                MAX_CHECK_BROKER_EPOCHS,
                "broker registrations",
                "MAX_CHECK_BROKER_EPOCHS",
            ),
        }
    }

    /// A PDU without direction (a batch of a log segment or snapshot), or a Fetch response:
    /// the metadata records it carries.
    pub(super) fn records(&mut self, pdu: &Pdu, out: &mut Findings) {
        let tree = &pdu.tree;
        if tree.nodes.is_empty() {
            return;
        }
        if pdu.api_key == Some(FETCH) {
            // Only the metadata topic's partitions are walked.
            let Some(b) = body(tree) else { return };
            for te in elems(tree, b, "Responses") {
                let name = super::fields::topic(pdu, te);
                if name == Some(Topic::Name("__cluster_metadata")) {
                    let n = tree.node(te);
                    self.scan(pdu, te + 1, n.end, out);
                }
            }
        } else if pdu.direction.is_none() {
            self.scan(pdu, 0, tree.nodes.len() as NodeId, out);
        }
    }

    /// Every metadata record value (`FrameVersion`, `ApiKey`, `Data`) among nodes `from..to`.
    fn scan(&mut self, pdu: &Pdu, from: NodeId, to: NodeId, out: &mut Findings) {
        let tree = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let mut i = from;
        while i < to {
            let n = tree.node(i);
            if n.name == "Value" && n.kind == Kind::Struct {
                if let (Some(k), Some(d)) = (
                    tree.child(i, "FrameVersion")
                        .and_then(|_| int(tree, i, "ApiKey")),
                    tree.child(i, "Data"),
                ) {
                    match k {
                        REGISTER_BROKER_RECORD => {
                            if let (Some(id), Some(e)) =
                                (int(tree, d, "BrokerId"), int(tree, d, "BrokerEpoch"))
                            {
                                if let Some(slot) = self.brokers.entry(id as i32) {
                                    *slot = (e, frame);
                                }
                            }
                        }
                        PARTITION_RECORD => self.partition_record(pdu, d, out),
                        PARTITION_CHANGE_RECORD => self.change_record(pdu, d, out),
                        _ => {}
                    }
                }
                i = n.end;
                continue;
            }
            i += 1;
        }
    }

    fn partition_record(&mut self, pdu: &Pdu, d: NodeId, out: &mut Findings) {
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let (Some(topic), Some(p)) = (uuid(t, d, "TopicId"), int(t, d, "PartitionId")) else {
            return;
        };
        let leader = int(t, d, "Leader").unwrap_or(-1) as i32;
        let recovery = int(t, d, "LeaderRecoveryState").unwrap_or(0);
        let isr = ints(t, d, "Isr").unwrap_or_default();
        let Some(st) = self.parts.entry((topic, p as i32)) else {
            return;
        };
        *st = Part {
            known: true,
            leader,
            isr,
            recovery,
            frame,
        };
        recovering_isr(
            pdu,
            "PartitionRecord",
            topic,
            p as i32,
            st,
            vec![frame],
            out,
        );
    }

    fn change_record(&mut self, pdu: &Pdu, d: NodeId, out: &mut Findings) {
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let (Some(topic), Some(p)) = (uuid(t, d, "TopicId"), int(t, d, "PartitionId")) else {
            return;
        };
        let p = p as i32;
        let leader = int(t, d, "Leader").unwrap_or(-2);
        let recovery = int(t, d, "LeaderRecoveryState").unwrap_or(-1);
        let isr = ints(t, d, "Isr");
        let Some(st) = self.parts.entry((topic, p)) else {
            return;
        };
        if !st.known {
            // Nothing known before: only a record that states all three can be judged alone.
            if let (true, Some(isr)) = (leader >= -1 && recovery >= 0, isr) {
                *st = Part {
                    known: true,
                    leader: leader as i32,
                    isr,
                    recovery,
                    frame,
                };
                recovering_isr(pdu, "PartitionChangeRecord", topic, p, st, vec![frame], out);
            }
            return;
        }
        let leader_changed = leader != -2 && leader as i32 != st.leader;
        if st.recovery == 0 && recovery == RECOVERING && !leader_changed {
            out.push(
                Finding::new(
                    RuleId::RecoveryStateReverted,
                    vec![st.frame, frame],
                    format!(
                        "PartitionChangeRecord sets {}-{p} back to RECOVERING without a leader change (leader {} stays; RECOVERED since frame {})",
                        id_text(topic), st.leader, st.frame
                    ),
                )
                .expect("RECOVERING only with a new leader (unclean election)", "RECOVERED -> RECOVERING, same leader")
                .at(pdu),
            );
        }
        let before = st.frame;
        if leader != -2 {
            st.leader = leader as i32;
        }
        if let Some(isr) = isr {
            st.isr = isr;
        }
        if recovery >= 0 {
            st.recovery = recovery;
            st.frame = frame;
        }
        recovering_isr(
            pdu,
            "PartitionChangeRecord",
            topic,
            p,
            st,
            vec![before, frame],
            out,
        );
    }

    /// An AlterPartition request: its ISR and recovery state against the metadata log's.
    pub(super) fn alter_partition(&mut self, pdu: &Pdu, out: &mut Findings) {
        let (Some(ALTER_PARTITION), Some(b)) = (pdu.api_key, body(&pdu.tree)) else {
            return;
        };
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let sender = int(t, b, "BrokerId").unwrap_or(-1);
        for te in elems(t, b, "Topics") {
            let id = uuid(t, te, "TopicId");
            let tname = match (id, text(t, te, "TopicName")) {
                (Some(u), _) => id_text(u),
                (None, Some(n)) => n.to_string(),
                _ => continue,
            };
            for pe in elems(t, te, "Partitions") {
                let Some(p) = int(t, pe, "PartitionIndex") else {
                    continue;
                };
                let p = p as i32;
                let recovery = int(t, pe, "LeaderRecoveryState").unwrap_or(0);
                let with_epochs: Vec<(i32, i64)> = member(t, pe, "NewIsrWithEpochs")
                    .map(|a| {
                        t.children(a)
                            .take(MAX_CHECK_ISR)
                            .filter_map(|e| {
                                Some((int(t, e, "BrokerId")? as i32, int(t, e, "BrokerEpoch")?))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let isr: Vec<i32> = match ints(t, pe, "NewIsr") {
                    Some(v) if with_epochs.is_empty() => v,
                    _ => with_epochs.iter().map(|e| e.0).collect(),
                };
                let known = id.and_then(|u| self.parts.get(&(u, p))).filter(|s| s.known);
                if recovery == RECOVERING && isr.len() > 1 {
                    let mut frames = known.map(|s| vec![s.frame]).unwrap_or_default();
                    frames.push(frame);
                    out.push(
                        Finding::new(
                            RuleId::RecoveringIsrExpanded,
                            frames,
                            format!(
                                "AlterPartition from broker {sender} asks for ISR {isr:?} of {tname}-{p} while its LeaderRecoveryState is RECOVERING: a recovering leader keeps the ISR to itself"
                            ),
                        )
                        .expect("an ISR of the leader alone while RECOVERING", format!("{isr:?}"))
                        .at(pdu),
                    );
                }
                if let Some(s) = known {
                    let epoch = int(t, pe, "LeaderEpoch").unwrap_or(-1);
                    // The controller judges against its current state, whatever the epoch
                    // sent: a leader change to RECOVERING shows in the log first.
                    if s.recovery == 0 && recovery == RECOVERING {
                        out.push(
                            Finding::new(
                                RuleId::RecoveryStateReverted,
                                vec![s.frame, frame],
                                format!(
                                    "AlterPartition from broker {sender} asks to set {tname}-{p} back to RECOVERING in leader epoch {epoch}, RECOVERED since frame {}",
                                    s.frame
                                ),
                            )
                            .expect("RECOVERED (or a leader change first)", "RECOVERING")
                            .at(pdu),
                        );
                    }
                }
                for &(broker, epoch) in &with_epochs {
                    let Some(&(reg, rf)) = self.brokers.get(&broker) else {
                        continue;
                    };
                    if epoch != -1 && epoch != reg {
                        out.push(
                            Finding::new(
                                RuleId::IsrBrokerEpochStale,
                                vec![rf, frame],
                                format!(
                                    "AlterPartition NewIsrWithEpochs names broker {broker} of {tname}-{p} with broker epoch {epoch}, but its latest registration (frame {rf}) has epoch {reg}: the controller answers INELIGIBLE_REPLICA"
                                ),
                            )
                            .expect(format!("broker epoch {reg} (or -1)"), epoch.to_string())
                            .at(pdu),
                        );
                    }
                }
            }
        }
    }

    /// A BrokerRegistration request's broker id, for its answer.
    pub(super) fn registration_request(&self, pdu: &Pdu) -> Option<i32> {
        if pdu.api_key != Some(BROKER_REGISTRATION) {
            return None;
        }
        let b = body(&pdu.tree)?;
        int(&pdu.tree, b, "BrokerId").map(|v| v as i32)
    }

    /// A BrokerRegistration answer: the epoch the controller gave broker `id`.
    pub(super) fn registration_response(&mut self, pdu: &Pdu, id: i32) {
        let Some(b) = body(&pdu.tree) else { return };
        let t = &pdu.tree;
        if int(t, b, "ErrorCode") != Some(0) {
            return;
        }
        if let (Some(e), Some(slot)) = (int(t, b, "BrokerEpoch"), self.brokers.entry(id)) {
            *slot = (e, frame_of(&pdu.origin));
        }
    }

    /// Partitions of the metadata log, and brokers whose registration epoch is known.
    pub(super) fn followed(&self) -> [Followed; 2] {
        [
            self.parts.followed("recovery"),
            self.brokers.followed("recovery"),
        ]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.parts.capped(frame));
        out.extend(self.brokers.capped(frame));
    }
}

/// RECOVERING with an ISR other than the leader alone.
fn recovering_isr(
    pdu: &Pdu,
    what: &str,
    topic: [u8; 16],
    p: i32,
    st: &Part,
    frames: Vec<u64>,
    out: &mut Findings,
) {
    if st.recovery != RECOVERING || st.isr == [st.leader] {
        return;
    }
    let mut frames = frames;
    frames.dedup();
    out.push(
        Finding::new(
            RuleId::RecoveringIsrNotLeader,
            frames,
            format!(
                "{what} leaves {}-{p} {} with ISR {:?} and leader {}: while recovering, the ISR is the leader alone",
                id_text(topic),
                state_name(st.recovery),
                st.isr,
                st.leader
            ),
        )
        .expect(format!("ISR [{}]", st.leader), format!("ISR {:?}", st.isr))
        .at(pdu),
    );
}
