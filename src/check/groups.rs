//! Consumer groups: classic generations (JoinGroup answers; SyncGroup, Heartbeat and
//! OffsetCommit requests) and the KIP-848 protocol (ConsumerGroupHeartbeat: member epochs,
//! fencing, assignments).
//!
//! Facts (Apache Kafka, read at 1eb7644349cb):
//! - `group-coordinator/.../classic/ClassicGroup.java:829-845` and `GroupMetadataManager`
//!   (:5366, :5589, :5621): a request whose generation is not the group's is ILLEGAL_GENERATION.
//!   A member's generation only grows: each rebalance gives a higher one.
//! - `GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid` (:1439-1455):
//!   FENCED_MEMBER_EPOCH for an epoch ahead of or behind the coordinator's; the client then
//!   (`AbstractMembershipManager.transitionToFenced`, :377; `AbstractHeartbeatRequestManager`
//!   :392) rejoins with `JOIN_GROUP_MEMBER_EPOCH` = 0 (`ConsumerGroupHeartbeatRequest.java:38`);
//!   -1 and -2 leave the group.
//! - The coordinator assigns a partition to a new owner only once the old one revoked it
//!   (KIP-848 "partitions pending revocation"): two members never own the same partition at
//!   the same member epoch.

use super::fields::{body, elems, int, int_any, text, uuid};
use super::{frame_of, votes::Pending, Finding, RuleId, Table};
use crate::limits::{MAX_CHECK_ASSIGNMENT, MAX_CHECK_GROUP_MEMBERS};
use crate::pdu::Pdu;
use crate::wire::tree::Value;

const OFFSET_COMMIT: i16 = 8;
const JOIN_GROUP: i16 = 11;
const HEARTBEAT: i16 = 12;
const SYNC_GROUP: i16 = 14;
const CONSUMER_GROUP_HEARTBEAT: i16 = 68;
const FENCED_MEMBER_EPOCH: i64 = 110;

#[derive(Default)]
struct Member {
    /// Highest classic generation the coordinator gave this member, and where.
    generation: Option<(i32, u64)>,
    /// A FENCED_MEMBER_EPOCH answer not yet followed by a heartbeat: (epoch sent, frame).
    fenced: Option<(i32, u64)>,
    /// Latest KIP-848 answer: member epoch, frame, owned (topic id, partition).
    epoch: i32,
    frame: u64,
    owned: Vec<([u8; 16], i32)>,
}

pub(super) struct Groups {
    members: Table<(u64, u64), Member>,
}

fn key(s: &str) -> u64 {
    super::fields::fnv(s.as_bytes())
}

impl Groups {
    pub(super) fn new() -> Self {
        Groups {
            members: Table::new(
                MAX_CHECK_GROUP_MEMBERS,
                "group members",
                "MAX_CHECK_GROUP_MEMBERS",
            ),
        }
    }

    /// Checks a request; returns what its answer needs (the group of a JoinGroup).
    pub(super) fn request(&mut self, pdu: &Pdu, out: &mut Vec<Finding>) -> Option<Pending> {
        let (Some(k), Some(b)) = (pdu.api_key, body(&pdu.tree)) else {
            return None;
        };
        let t = &pdu.tree;
        let group = text(t, b, "GroupId")?;
        let g = key(group);
        let frame = frame_of(&pdu.origin);
        match k {
            JOIN_GROUP => return Some(Pending::Group { group: g }),
            SYNC_GROUP | HEARTBEAT | OFFSET_COMMIT => {
                let member = text(t, b, "MemberId").unwrap_or("");
                let gen = int_any(t, b, &["GenerationId", "GenerationIdOrMemberEpoch"])?;
                if gen < 0 || member.is_empty() {
                    return None;
                }
                let m = self.members.get(&(g, key(member)))?;
                if let Some((known, kf)) = m.generation {
                    if (gen as i32) < known {
                        out.push(
                            Finding::new(
                                RuleId::GenerationRegressed,
                                vec![kf, frame],
                                format!(
                                    "{} of member {member} in group {group} with generation {gen}, but the JoinGroup answer of frame {kf} gave it generation {known}",
                                    pdu.api_name.unwrap_or("request")
                                ),
                            )
                            .expect(format!("generation >= {known}"), gen.to_string())
                            .at(pdu),
                        );
                    }
                }
            }
            CONSUMER_GROUP_HEARTBEAT => {
                let member = text(t, b, "MemberId").unwrap_or("");
                let epoch = int(t, b, "MemberEpoch")? as i32;
                let pending = Some(Pending::Member { group: g, epoch });
                let Some(m) = self.members.get_mut(&(g, key(member))) else {
                    return pending;
                };
                if let Some((sent, ff)) = m.fenced.take() {
                    if epoch > 0 {
                        out.push(
                            Finding::new(
                                RuleId::FencedMemberNotRejoined,
                                vec![ff, frame],
                                format!(
                                    "member {member} of group {group} heartbeats with epoch {epoch} after frame {ff} answered its epoch {sent} FENCED_MEMBER_EPOCH: a fenced member rejoins with epoch 0"
                                ),
                            )
                            .expect("MemberEpoch 0 (or -1/-2 to leave)", epoch.to_string())
                            .at(pdu),
                        );
                    }
                }
                if epoch < 0 {
                    m.owned.clear();
                }
                return pending;
            }
            _ => {}
        }
        None
    }

    pub(super) fn response(&mut self, pdu: &Pdu, pending: Pending, out: &mut Vec<Finding>) {
        let Some(b) = body(&pdu.tree) else { return };
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        match pending {
            Pending::Group { group } => {
                let (Some(0), Some(gen), Some(member)) = (
                    int(t, b, "ErrorCode"),
                    int(t, b, "GenerationId"),
                    text(t, b, "MemberId"),
                ) else {
                    return;
                };
                if let Some(m) = self.members.entry((group, key(member))) {
                    if m.generation.is_none_or(|(g, _)| gen as i32 >= g) {
                        m.generation = Some((gen as i32, frame));
                    }
                }
            }
            Pending::Member { group, epoch: sent } => {
                let err = int(t, b, "ErrorCode").unwrap_or(0);
                let Some(member) = text(t, b, "MemberId").filter(|m| !m.is_empty()) else {
                    return;
                };
                let mk = key(member);
                if err == FENCED_MEMBER_EPOCH {
                    if let Some(m) = self.members.entry((group, mk)) {
                        m.fenced = Some((sent, frame));
                        m.owned.clear();
                    }
                    return;
                }
                if err != 0 {
                    return;
                }
                let Some(epoch) = int(t, b, "MemberEpoch").map(|e| e as i32) else {
                    return;
                };
                let assignment = super::fields::member(t, b, "Assignment")
                    .filter(|&a| t.node(a).value != Value::Null);
                let Some(m) = self.members.entry((group, mk)) else {
                    return;
                };
                m.epoch = epoch;
                m.frame = frame;
                let Some(a) = assignment else {
                    // No assignment in the answer: unchanged.
                    return;
                };
                m.owned.clear();
                for tp in elems(t, a, "TopicPartitions") {
                    let Some(id) = uuid(t, tp, "TopicId") else {
                        continue;
                    };
                    for p in elems(t, tp, "Partitions") {
                        if let Value::Int(p) = t.node(p).value {
                            if m.owned.len() < MAX_CHECK_ASSIGNMENT {
                                m.owned.push((id, p as i32));
                            }
                        }
                    }
                }
                let mine = std::mem::take(&mut m.owned);
                for (&(g2, m2), other) in self.members.iter_mut() {
                    if g2 != group || m2 == mk || other.epoch != epoch || other.owned.is_empty() {
                        continue;
                    }
                    if let Some(&(id, p)) = mine.iter().find(|x| other.owned.contains(x)) {
                        out.push(
                            Finding::new(
                                RuleId::PartitionAssignedTwice,
                                vec![other.frame, frame],
                                format!(
                                    "partition {}-{p} is assigned to member {member} at member epoch {epoch}, and was assigned to another member of the group at the same epoch (frame {})",
                                    super::fields::Topic::Id(id),
                                    other.frame
                                ),
                            )
                            .expect("one owner per partition", "two")
                            .at(pdu),
                        );
                    }
                }
                if let Some(m) = self.members.get_mut(&(group, mk)) {
                    m.owned = mine;
                }
            }
            _ => {}
        }
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.members.capped(frame));
    }
}
