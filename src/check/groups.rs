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
//!   the same member epoch. A classic group's leader assigns each partition to one member
//!   (`ConsumerPartitionAssignor`, `ConsumerProtocolAssignment.json`).

use super::fields::{body, elems, int, int_any, text, uuid};
use super::{frame_of, votes::Pending, Finding, Findings, Followed, RuleId, Table};
use crate::limits::{MAX_CHECK_ASSIGNMENT, MAX_CHECK_GROUP_MEMBERS};
use crate::pdu::Pdu;
use crate::wire::tree::{NodeId, Value};

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
    pub(super) fn request(&mut self, pdu: &Pdu, out: &mut Findings) -> Option<Pending> {
        let (Some(k), Some(b)) = (pdu.api_key, body(&pdu.tree)) else {
            return None;
        };
        let t = &pdu.tree;
        let group = text(t, b, "GroupId")?;
        let g = key(group);
        let frame = frame_of(&pdu.origin);
        match k {
            JOIN_GROUP => return Some(Pending::Group { group: g }),
            SYNC_GROUP if super::fields::elems(t, b, "Assignments").nth(1).is_some() => {
                self.classic_assignments(pdu, b, group, out);
                let member = text(t, b, "MemberId").unwrap_or("");
                let gen = int_any(t, b, &["GenerationId"])?;
                self.generation_used(pdu, group, g, member, gen, frame, out);
            }
            SYNC_GROUP | HEARTBEAT | OFFSET_COMMIT => {
                let member = text(t, b, "MemberId").unwrap_or("");
                let gen = int_any(t, b, &["GenerationId", "GenerationIdOrMemberEpoch"])?;
                self.generation_used(pdu, group, g, member, gen, frame, out);
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

    #[allow(clippy::too_many_arguments)]
    fn generation_used(
        &self,
        pdu: &Pdu,
        group: &str,
        g: u64,
        member: &str,
        gen: i64,
        frame: u64,
        out: &mut Findings,
    ) {
        if gen < 0 || member.is_empty() {
            return;
        }
        let Some(m) = self.members.get(&(g, key(member))) else {
            return;
        };
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

    /// A classic leader's SyncGroup: the consumer-protocol assignments of one generation must
    /// not share a partition.
    fn classic_assignments(&self, pdu: &Pdu, b: NodeId, group: &str, out: &mut Findings) {
        let t = &pdu.tree;
        let mut seen: Vec<(&str, i32, &str)> = Vec::new();
        for a in elems(t, b, "Assignments") {
            let member = text(t, a, "MemberId").unwrap_or("");
            let Some(n) = super::fields::member(t, a, "Assignment").map(|n| t.node(n)) else {
                continue;
            };
            let Value::Bytes(span) = n.value else {
                continue;
            };
            let Some(parts) = consumer_assignment(t.bytes(n.buf, span)) else {
                continue;
            };
            for (topic, p) in parts {
                if let Some(&(_, _, other)) = seen
                    .iter()
                    .find(|&&(tp, pp, o)| tp == topic && pp == p && o != member)
                {
                    out.push(
                        Finding::new(
                            RuleId::PartitionAssignedTwice,
                            vec![frame_of(&pdu.origin)],
                            format!(
                                "the leader's SyncGroup of group {group} assigns {topic}-{p} to both {other} and {member} in one generation"
                            ),
                        )
                        .expect("one owner per partition", "two")
                        .at(pdu),
                    );
                    return;
                }
                if seen.len() < MAX_CHECK_ASSIGNMENT {
                    seen.push((topic, p, member));
                }
            }
        }
    }

    pub(super) fn response(&mut self, pdu: &Pdu, pending: Pending, out: &mut Findings) {
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

    /// (group, member) pairs.
    pub(super) fn followed(&self) -> [Followed; 1] {
        [self.members.followed("groups")]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.members.capped(frame));
    }
}

/// A `ConsumerProtocolAssignment` (int16 version, then `AssignedPartitions`: int32 count of
/// {int16-length topic, int32 count of int32 partitions}; `UserData` after is not read): its
/// (topic, partition)s, at most `MAX_CHECK_ASSIGNMENT`; `None` when it does not parse.
fn consumer_assignment(b: &[u8]) -> Option<Vec<(&str, i32)>> {
    let mut at = 2usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = b.get(at..at.checked_add(n)?)?;
        at += n;
        Some(s)
    };
    take(0)?;
    let i32_of = |s: &[u8]| i32::from_be_bytes([s[0], s[1], s[2], s[3]]);
    let topics = i32_of(take(4)?);
    let mut out = Vec::new();
    for _ in 0..topics.max(0) {
        let len = i16::from_be_bytes(take(2)?.try_into().ok()?);
        let topic = std::str::from_utf8(take(len.max(0) as usize)?).ok()?;
        let n = i32_of(take(4)?);
        for _ in 0..n.max(0) {
            let p = i32_of(take(4)?);
            if out.len() >= MAX_CHECK_ASSIGNMENT {
                return Some(out);
            }
            out.push((topic, p));
        }
    }
    (b.len() >= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::consumer_assignment;

    #[test]
    fn a_real_consumer_assignment_parses_and_a_cut_one_does_not() {
        // The leader's SyncGroup assignment in captures/mock-confluent-group.pcap (base64
        // AAAAAAABAARjZ3JwAAAAAgAAAAAAAAABAAAAAA==): v0, topic cgrp, partitions 0 and 1.
        let b = [
            0, 0, 0, 0, 0, 1, 0, 4, b'c', b'g', b'r', b'p', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0,
            0, 0, 0,
        ];
        assert_eq!(
            consumer_assignment(&b),
            Some(vec![("cgrp", 0), ("cgrp", 1)])
        );
        assert_eq!(consumer_assignment(&b[..20]), None);
        assert_eq!(
            consumer_assignment(&[0, 0, 0x7f, 0xff, 0xff, 0xff]),
            None,
            "no 2 Gi topics"
        );
    }
}
