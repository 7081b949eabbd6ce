//! Leader epochs (KIP-320), per client and partition: the LeaderEpoch a client is told in
//! Metadata (v7+) and DescribeTopicPartitions responses, and the epochs it then sends
//! (CurrentLeaderEpoch in Fetch v9+, ListOffsets v4+, OffsetForLeaderEpoch v2+;
//! CommittedLeaderEpoch in OffsetCommit v6+), with FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH
//! answers explained and followed.

use super::fields::{body, elems, int, topic, Topic};
use super::sessions::ClientKey;
use super::{frame_of, Finding, Findings, Followed, RuleId, Table};
use crate::limits::MAX_CHECK_PARTITIONS;
use crate::pdu::Pdu;
use std::net::SocketAddr;

const FETCH: i16 = 1;
const LIST_OFFSETS: i16 = 2;
const METADATA: i16 = 3;
const OFFSET_COMMIT: i16 = 8;
const OFFSET_FOR_LEADER_EPOCH: i16 = 23;
const DESCRIBE_TOPIC_PARTITIONS: i16 = 75;
const FENCED_LEADER_EPOCH: i64 = 74;
const UNKNOWN_LEADER_EPOCH: i64 = 75;

#[derive(Default)]
struct Part {
    /// Newest epoch the client was told, where, and by which broker.
    known: Option<(i32, u64, Option<SocketAddr>)>,
    /// The client was told -1 (and nothing newer).
    told_unknown: Option<u64>,
    /// Last epoch the client sent for it, and where.
    sent: Option<(i32, u64)>,
    /// A fencing answer not yet followed by fresh metadata: the epoch it fenced, where, and
    /// whether its re-use was reported.
    fenced: Option<(i32, u64, bool)>,
}

pub(super) struct Epochs {
    parts: Table<(ClientKey, u64, i32), Part>,
}

/// Where a message keeps its topics, their partitions, the partition index and the epoch.
struct Layout {
    topics: &'static str,
    partitions: &'static str,
    index: &'static str,
    epoch: &'static str,
}

fn request_layout(key: i16, version: i16) -> Option<Layout> {
    Some(match key {
        FETCH if version >= 9 => Layout {
            topics: "Topics",
            partitions: "Partitions",
            index: "Partition",
            epoch: "CurrentLeaderEpoch",
        },
        LIST_OFFSETS if version >= 4 => Layout {
            topics: "Topics",
            partitions: "Partitions",
            index: "PartitionIndex",
            epoch: "CurrentLeaderEpoch",
        },
        OFFSET_FOR_LEADER_EPOCH if version >= 2 => Layout {
            topics: "Topics",
            partitions: "Partitions",
            index: "Partition",
            epoch: "CurrentLeaderEpoch",
        },
        OFFSET_COMMIT if version >= 6 => Layout {
            topics: "Topics",
            partitions: "Partitions",
            index: "PartitionIndex",
            epoch: "CommittedLeaderEpoch",
        },
        _ => return None,
    })
}

/// Responses whose partitions carry an ErrorCode answering the request's epoch.
fn error_layout(key: i16) -> Option<(&'static str, &'static str, &'static str)> {
    match key {
        FETCH => Some(("Responses", "Partitions", "PartitionIndex")),
        LIST_OFFSETS => Some(("Topics", "Partitions", "PartitionIndex")),
        OFFSET_FOR_LEADER_EPOCH => Some(("Topics", "Partitions", "Partition")),
        _ => None,
    }
}

fn sentinel(pdu: &Pdu, field: &str, t: Topic<'_>, p: i32, e: i64, frame: u64) -> Finding {
    Finding::new(
        RuleId::EpochBadSentinel,
        vec![frame],
        format!("{field} {e} for {t}-{p}: an unknown leader epoch is -1"),
    )
    .expect("-1 or an epoch >= 0", e.to_string())
    .at(pdu)
}

impl Epochs {
    pub(super) fn new() -> Self {
        Epochs {
            parts: Table::new(
                MAX_CHECK_PARTITIONS,
                "client partitions",
                "MAX_CHECK_PARTITIONS",
            ),
        }
    }

    pub(super) fn request(&mut self, pdu: &Pdu, client: ClientKey, out: &mut Findings) {
        let (Some(key), Some(version)) = (pdu.api_key, pdu.api_version) else {
            return;
        };
        let Some(l) = request_layout(key, version) else {
            return;
        };
        let Some(b) = body(&pdu.tree) else {
            return;
        };
        let tree = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let committed = key == OFFSET_COMMIT;
        for te in elems(tree, b, l.topics) {
            let Some(t) = topic(pdu, te) else { continue };
            for pe in elems(tree, te, l.partitions) {
                let (Some(p), Some(e)) = (int(tree, pe, l.index), int(tree, pe, l.epoch)) else {
                    continue;
                };
                let p = p as i32;
                if e < -1 {
                    out.push(sentinel(pdu, l.epoch, t, p, e, frame));
                    continue;
                }
                let e = e as i32;
                let Some(st) = self.parts.entry((client, t.key(), p)) else {
                    continue;
                };
                if e == -1 {
                    continue;
                }
                match st.known {
                    Some((k, kf, broker)) if !committed && e < k => out.push(
                        Finding::new(
                            RuleId::StaleEpochUsed,
                            vec![kf, frame],
                            format!(
                                "{} {} {e} for {t}-{p}, but this client was told leader epoch {k} in frame {kf}{}",
                                pdu.api_name.unwrap_or("request"), l.epoch,
                                broker.map(|b| format!(" (by {b})")).unwrap_or_default()
                            ),
                        )
                        .expect(format!(">= {k}"), e.to_string())
                        .at(pdu),
                    ),
                    Some((k, kf, _)) if committed && e > k => out.push(
                        Finding::new(
                            RuleId::CommittedEpochAhead,
                            vec![kf, frame],
                            format!("OffsetCommit CommittedLeaderEpoch {e} for {t}-{p} is above epoch {k}, the newest this client was told (frame {kf})"),
                        )
                        .expect(format!("<= {k}"), e.to_string())
                        .at(pdu),
                    ),
                    None if e == 0 && st.told_unknown.is_some() => {
                        let at = st.told_unknown.unwrap_or(frame);
                        out.push(
                            Finding::new(
                                RuleId::EpochZeroAsUnknown,
                                vec![at, frame],
                                format!("{} 0 for {t}-{p}, but the only epoch this client was told (frame {at}) is -1, unknown", l.epoch),
                            )
                            .expect("-1", "0")
                            .at(pdu),
                        );
                    }
                    _ => {}
                }
                if let Some((fe, ff, reported)) = st.fenced.as_mut() {
                    if *fe == e && !*reported && !committed {
                        *reported = true;
                        out.push(
                            Finding::new(
                                RuleId::FencedEpochResent,
                                vec![*ff, frame],
                                format!("{} sends epoch {e} for {t}-{p} again, though frame {ff} answered it with a fencing error and no metadata for the partition came since", pdu.api_name.unwrap_or("request")),
                            )
                            .expect("a metadata refresh first", format!("epoch {e} again"))
                            .at(pdu),
                        );
                    }
                }
                if !committed {
                    st.sent = Some((e, frame));
                }
            }
        }
    }

    pub(super) fn response(&mut self, pdu: &Pdu, client: ClientKey, out: &mut Findings) {
        let (Some(key), Some(version), Some(b)) = (pdu.api_key, pdu.api_version, body(&pdu.tree))
        else {
            return;
        };
        let tree = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let broker = pdu.origin.conn.map(|c| c.server);
        if (key == METADATA && version >= 7) || key == DESCRIBE_TOPIC_PARTITIONS {
            for te in elems(tree, b, "Topics") {
                let Some(t) = topic(pdu, te) else { continue };
                for pe in elems(tree, te, "Partitions") {
                    let (Some(p), Some(e)) = (
                        int(tree, pe, "PartitionIndex"),
                        int(tree, pe, "LeaderEpoch"),
                    ) else {
                        continue;
                    };
                    let p = p as i32;
                    if e < -1 {
                        out.push(sentinel(pdu, "LeaderEpoch", t, p, e, frame));
                        continue;
                    }
                    let e = e as i32;
                    let Some(st) = self.parts.entry((client, t.key(), p)) else {
                        continue;
                    };
                    st.fenced = None;
                    match st.known {
                        Some((k, kf, kb)) if e < k && e >= 0 => out.push(
                            Finding::new(
                                RuleId::MetadataEpochRegressed,
                                vec![kf, frame],
                                format!(
                                    "leader epoch of {t}-{p} told to this client went back from {k} (frame {kf}{}) to {e}{}",
                                    kb.map(|b| format!(", by {b}")).unwrap_or_default(),
                                    broker.map(|b| format!(" (by {b})")).unwrap_or_default()
                                ),
                            )
                            .expect(format!(">= {k}"), e.to_string())
                            .at(pdu),
                        ),
                        _ if e >= 0 => st.known = Some((e, frame, broker)),
                        None if e == -1 => st.told_unknown = Some(frame),
                        _ => {}
                    }
                }
            }
            return;
        }
        let Some((topics, partitions, index)) = error_layout(key) else {
            return;
        };
        for te in elems(tree, b, topics) {
            let Some(t) = topic(pdu, te) else { continue };
            for pe in elems(tree, te, partitions) {
                let (Some(p), Some(err)) = (int(tree, pe, index), int(tree, pe, "ErrorCode"))
                else {
                    continue;
                };
                if err != FENCED_LEADER_EPOCH && err != UNKNOWN_LEADER_EPOCH {
                    continue;
                }
                let p = p as i32;
                let Some(st) = self.parts.entry((client, t.key(), p)) else {
                    continue;
                };
                let name = if err == FENCED_LEADER_EPOCH {
                    "FENCED_LEADER_EPOCH (the epoch sent is older than the leader's)"
                } else {
                    "UNKNOWN_LEADER_EPOCH (the epoch sent is newer than the broker's)"
                };
                let mut frames = Vec::with_capacity(3);
                let sent = match st.sent {
                    Some((e, f)) => {
                        frames.push(f);
                        format!("epoch {e} sent in frame {f}")
                    }
                    None => "no epoch seen sent".into(),
                };
                let told = match st.known {
                    Some((k, f, b)) => {
                        frames.push(f);
                        format!(
                            "leader epoch {k} last advertised to this client in frame {f}{}",
                            b.map(|b| format!(" by {b}")).unwrap_or_default()
                        )
                    }
                    None => "no leader epoch advertised to this client in the capture".into(),
                };
                frames.sort_unstable();
                frames.push(frame);
                out.push(
                    Finding::new(
                        RuleId::FencedEpochExplained,
                        frames,
                        format!("{t}-{p} answered {name}: {sent}; {told}"),
                    )
                    .expect(
                        st.known.map_or("-".into(), |k| format!("epoch {}", k.0)),
                        st.sent.map_or("-".into(), |s| format!("epoch {}", s.0)),
                    )
                    .at(pdu),
                );
                if let Some((e, _)) = st.sent {
                    st.fenced = Some((e, frame, false));
                }
            }
        }
    }

    /// (client, topic, partition) triples with a leader epoch told or used.
    pub(super) fn followed(&self) -> [Followed; 1] {
        [self.parts.followed("epochs")]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.parts.capped(frame));
    }
}
