//! KRaft elections (KIP-595, KIP-853, KIP-996): Vote and pre-vote requests and answers,
//! BeginQuorumEpoch, EndQuorumEpoch and the replicas' Fetch of `__cluster_metadata`. Each
//! replica's election state (Unattached, Voted, Prospective, Candidate, Leader, Follower,
//! Resigned) is inferred from what it sends and answers, following the transition table of
//! `QuorumState.java:35-83`, and the granting rules of each state's `canGrantVote` are checked on
//! every granted vote. Only what a replica itself says moves its state, so a message lost on the
//! way is never held against it.
//!
//! Replicas are named by their ids: a request names its sender (ReplicaId, LeaderId); the
//! answering replica is the request's VoterId (v1+), else the replica learnt to listen on the
//! connection's server address.

use super::fields::{body, boolean, elems, int, int_any, member, topic, Topic};
use super::{frame_of, Finding, Findings, Followed, RuleId, Table};
use crate::limits::{MAX_CHECK_ELECTIONS, MAX_CHECK_REPLICAS, MAX_CHECK_TIMELINE_EVENTS};
use crate::pdu::Pdu;
use std::fmt::Write as _;
use std::net::SocketAddr;

const FETCH: i16 = 1;
const VOTE: i16 = 52;
const BEGIN_QUORUM_EPOCH: i16 = 53;
const END_QUORUM_EPOCH: i16 = 54;

/// What a KRaft request leaves for its response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pending {
    #[default]
    None,
    Vote {
        replica: i32,
        voter: i32,
        epoch: i32,
        pre_vote: bool,
    },
    Begin {
        leader: i32,
        voter: i32,
        epoch: i32,
    },
    Fetch {
        replica: i32,
        epoch: i32,
    },
    /// A BrokerRegistration request of this broker (for the epoch its answer gives).
    Broker {
        id: i32,
    },
    /// A JoinGroup of this group (FNV of its id).
    Group {
        group: u64,
    },
    /// A ConsumerGroupHeartbeat of this group, with the member epoch sent.
    Member {
        group: u64,
        epoch: i32,
    },
}

/// An election state, as `QuorumState` names them ("Voted" is Unattached with a voted key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    #[default]
    Unknown,
    Unattached,
    Voted(i32),
    Prospective,
    Candidate,
    Leader,
    /// Of this leader (-1: not known).
    Follower(i32),
    Resigned,
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Unknown => f.write_str("unknown"),
            State::Unattached => f.write_str("Unattached"),
            State::Voted(c) => write!(f, "Voted (for {c})"),
            State::Prospective => f.write_str("Prospective"),
            State::Candidate => f.write_str("Candidate"),
            State::Leader => f.write_str("Leader"),
            State::Follower(-1) => f.write_str("Follower"),
            State::Follower(l) => write!(f, "Follower (of {l})"),
            State::Resigned => f.write_str("Resigned"),
        }
    }
}

#[derive(Default)]
struct Replica {
    epoch: i32,
    state: State,
    /// Frame of the evidence for `state`.
    frame: u64,
    /// Standard vote granted: (epoch, candidate, frame).
    voted: Option<(i32, i32, u64)>,
    /// Successful fetch from the leader in this epoch: its frame.
    fetched: Option<(i32, u64)>,
}

#[derive(Default)]
struct Tally {
    /// Voters that granted, with the frame of each grant.
    granted: Vec<(i32, u64)>,
    claimed: bool,
}

/// One line of the quorum timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    pub frame: u64,
    pub ts_ns: Option<i64>,
    pub epoch: i32,
    pub text: String,
}

/// The quorum's history as traffic shows it: elections, votes, leaders, resignations.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub events: Vec<TimelineEvent>,
    /// Events past [`MAX_CHECK_TIMELINE_EVENTS`], counted only.
    pub dropped: u64,
}

impl Timeline {
    fn push(&mut self, pdu: &Pdu, epoch: i32, text: String) {
        if self.events.len() >= MAX_CHECK_TIMELINE_EVENTS {
            self.dropped += 1;
            return;
        }
        self.events.push(TimelineEvent {
            frame: frame_of(&pdu.origin),
            ts_ns: pdu.origin.ts_ns,
            epoch,
            text,
        });
    }

    /// The timeline as text, one block per epoch: time since the first event, frame, event.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let t0 = self.events.iter().find_map(|e| e.ts_ns);
        let mut epoch = None;
        for e in &self.events {
            if epoch != Some(e.epoch) {
                epoch = Some(e.epoch);
                let _ = writeln!(s, "epoch {}", e.epoch);
            }
            let t = match (e.ts_ns, t0) {
                (Some(t), Some(t0)) => format!("+{:.6}s", (t - t0) as f64 / 1e9),
                _ => "-".into(),
            };
            let _ = writeln!(s, "  {t:>12}  frame {:<6} {}", e.frame, e.text);
        }
        if self.dropped > 0 {
            let _ = writeln!(
                s,
                "({} more events not kept: limits::MAX_CHECK_TIMELINE_EVENTS)",
                self.dropped
            );
        }
        s
    }
}

pub(super) struct Votes {
    replicas: Table<i32, Replica>,
    /// Replica listening on a server address.
    addrs: Table<SocketAddr, i32>,
    tallies: Table<(i32, i32), Tally>,
    /// Leader of each epoch, as claimed (BeginQuorumEpoch).
    leaders: Table<i32, (i32, u64)>,
    /// Distinct voter ids seen in Vote traffic, for the majority.
    voters: Vec<i32>,
    timeline: Timeline,
}

fn is_metadata_topic(pdu: &Pdu, t: u32) -> bool {
    matches!(topic(pdu, t), Some(Topic::Name("__cluster_metadata")))
}

/// The first partition struct of a KRaft request or response (the metadata partition).
fn first_partition(pdu: &Pdu, b: u32, topics: &str) -> Option<(u32, u32)> {
    let tree = &pdu.tree;
    let t = elems(tree, b, topics).next()?;
    let p = elems(tree, t, "Partitions").next()?;
    Some((t, p))
}

impl Votes {
    pub(super) fn new() -> Self {
        Votes {
            replicas: Table::new(MAX_CHECK_REPLICAS, "quorum replicas", "MAX_CHECK_REPLICAS"),
            addrs: Table::new(
                MAX_CHECK_REPLICAS,
                "replica addresses",
                "MAX_CHECK_REPLICAS",
            ),
            tallies: Table::new(MAX_CHECK_ELECTIONS, "elections", "MAX_CHECK_ELECTIONS"),
            leaders: Table::new(MAX_CHECK_ELECTIONS, "epochs", "MAX_CHECK_ELECTIONS"),
            voters: Vec::new(),
            timeline: Timeline::default(),
        }
    }

    pub(super) fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    fn voter_seen(&mut self, id: i32) {
        if id >= 0 && !self.voters.contains(&id) && self.voters.len() < MAX_CHECK_REPLICAS {
            self.voters.push(id);
        }
    }

    fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    /// The replica answering on this PDU's connection: `named` when the request named it,
    /// else the one learnt for the server address.
    fn responder(&mut self, pdu: &Pdu, named: i32) -> i32 {
        let server = pdu.origin.conn.map(|c| c.server);
        if named >= 0 {
            if let Some(s) = server {
                if let Some(slot) = self.addrs.entry(s) {
                    *slot = named;
                }
            }
            return named;
        }
        server
            .and_then(|s| self.addrs.get(&s).copied())
            .unwrap_or(-1)
    }

    /// Moves replica `id` to `to` in `epoch`, reporting a regression or a transition the table
    /// does not allow. Returns the state it was in, when known, at the same epoch.
    fn transition(
        &mut self,
        id: i32,
        to: State,
        epoch: i32,
        pdu: &Pdu,
        out: &mut Findings,
    ) -> Option<State> {
        if id < 0 {
            return None;
        }
        let frame = frame_of(&pdu.origin);
        let r = self.replicas.entry(id)?;
        if r.state == State::Unknown {
            *r = Replica {
                epoch,
                state: to,
                frame,
                ..Replica::default()
            };
            return None;
        }
        let (from, e) = (r.state, r.epoch);
        if epoch < e {
            out.push(
                Finding::new(
                    RuleId::ReplicaEpochRegressed,
                    vec![r.frame, frame],
                    format!("replica {id} states epoch {epoch} ({}), but it was at epoch {e} ({from}) in frame {}", pdu.api_name.unwrap_or("?"), r.frame),
                )
                .expect(format!("epoch >= {e}"), format!("epoch {epoch}"))
                .at(pdu),
            );
            return None;
        }
        let why: Option<&str> = if epoch == e {
            match (from, to) {
                (State::Leader, State::Prospective | State::Candidate) => Some("a leader does not stand for election in its own epoch (transitionToProspective: not from Leader)"),
                (f, State::Candidate) if f != State::Candidate => Some("Candidate at epoch E comes only from Prospective at E-1 (transitionToCandidate bumps the epoch)"),
                (f, State::Leader) if !matches!(f, State::Candidate | State::Leader) => Some("Leader comes only from Candidate in the same epoch (transitionToLeader)"),
                (State::Leader, State::Follower(_)) => Some("a leader does not become a follower in its own epoch (transitionToFollower)"),
                (State::Resigned, State::Follower(_)) => Some("a resigned leader follows only a leader of a larger epoch"),
                (State::Follower(a), State::Follower(b)) if a >= 0 && b >= 0 && a != b => Some("two leaders in one epoch"),
                (f, State::Resigned) if !matches!(f, State::Leader | State::Resigned) => Some("Resigned comes only from Leader (transitionToResigned)"),
                _ => None,
            }
        } else {
            match (from, to) {
                (State::Leader, State::Candidate) if epoch == e + 1 => Some("a leader must resign (EndQuorumEpoch) and become Prospective before it stands for the next epoch"),
                _ => None,
            }
        };
        if let Some(why) = why {
            out.push(
                Finding::new(
                    RuleId::ImpossibleTransition,
                    vec![r.frame, frame],
                    format!("replica {id}: {from} at epoch {e} (frame {}) to {to} at epoch {epoch}: {why}", r.frame),
                )
                .expect(format!("a transition allowed from {from} at epoch {e}"), format!("{to} at epoch {epoch}"))
                .at(pdu),
            );
        }
        let keep = if epoch == e { Some(from) } else { None };
        if epoch > e {
            r.fetched = None;
            r.voted = r.voted.filter(|v| v.0 == epoch);
        }
        // A replica that was voted or prospective stays so when another message restates it.
        r.state = match (from, to) {
            (State::Voted(c), State::Unattached) if epoch == e => State::Voted(c),
            _ => to,
        };
        r.epoch = epoch;
        r.frame = frame;
        keep
    }

    pub(super) fn request(&mut self, pdu: &Pdu, out: &mut Findings) -> Pending {
        let (Some(key), Some(version), Some(b)) = (pdu.api_key, pdu.api_version, body(&pdu.tree))
        else {
            return Pending::None;
        };
        match key {
            VOTE => self.vote_request(pdu, version, b, out),
            BEGIN_QUORUM_EPOCH => self.begin_request(pdu, version, b, out),
            END_QUORUM_EPOCH => {
                let Some((_, p)) = first_partition(pdu, b, "Topics") else {
                    return Pending::None;
                };
                let t = &pdu.tree;
                let (Some(l), Some(e)) = (int(t, p, "LeaderId"), int(t, p, "LeaderEpoch")) else {
                    return Pending::None;
                };
                let (l, e) = (l as i32, e as i32);
                self.transition(l, State::Resigned, e, pdu, out);
                self.timeline
                    .push(pdu, e, format!("{l} resigns (EndQuorumEpoch)"));
                Pending::None
            }
            FETCH => self.fetch_request(pdu, b, out),
            _ => Pending::None,
        }
    }

    fn vote_request(&mut self, pdu: &Pdu, version: i16, b: u32, out: &mut Findings) -> Pending {
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let voter_id = int(t, b, "VoterId").map_or(-1, |v| v as i32);
        if version >= 1 && voter_id < 0 {
            out.push(
                Finding::new(
                    RuleId::VoterIdMissing,
                    vec![frame],
                    format!(
                        "Vote v{version} with VoterId {voter_id}: v1+ names the replica it asks"
                    ),
                )
                .expect("the voter's id", voter_id.to_string())
                .at(pdu),
            );
        }
        let Some((_, p)) = first_partition(pdu, b, "Topics") else {
            return Pending::None;
        };
        let (Some(r), Some(e)) = (
            int_any(t, p, &["ReplicaId", "CandidateId"]),
            int_any(t, p, &["ReplicaEpoch", "CandidateEpoch"]),
        ) else {
            return Pending::None;
        };
        let (r, e) = (r as i32, e as i32);
        let pre_vote = boolean(t, p, "PreVote").unwrap_or(false);
        let last = int(t, p, "LastOffsetEpoch").unwrap_or(-1);
        let illegal = if pre_vote {
            last > i64::from(e)
        } else {
            last >= i64::from(e)
        };
        if illegal {
            let rel = if pre_vote { "<=" } else { "<" };
            out.push(
                Finding::new(
                    RuleId::VoteIllegalEpoch,
                    vec![frame],
                    format!("{} from {r}: LastOffsetEpoch {last} with ReplicaEpoch {e}; the receiver answers INVALID_REQUEST", if pre_vote { "pre-vote" } else { "vote" }),
                )
                .expect(format!("LastOffsetEpoch {rel} {e}"), last.to_string())
                .at(pdu),
            );
        }
        self.voter_seen(r);
        let voter = self.responder(pdu, voter_id);
        self.voter_seen(voter);
        if pre_vote {
            if let Some(rep) = self.replicas.get(&r) {
                if rep.state != State::Unknown && e > rep.epoch {
                    out.push(
                        Finding::new(
                            RuleId::PreVoteEpochBumped,
                            vec![rep.frame, frame],
                            format!("pre-vote from {r} for epoch {e}, but {r} was at epoch {} (frame {}) and nothing it saw since has a higher epoch: a Prospective keeps its epoch", rep.epoch, rep.frame),
                        )
                        .expect(format!("ReplicaEpoch {}", rep.epoch), format!("ReplicaEpoch {e}"))
                        .at(pdu),
                    );
                }
            }
            self.transition(r, State::Prospective, e, pdu, out);
        } else {
            self.transition(r, State::Candidate, e, pdu, out);
            let _ = self.tallies.entry((r, e));
        }
        Pending::Vote {
            replica: r,
            voter,
            epoch: e,
            pre_vote,
        }
    }

    fn begin_request(&mut self, pdu: &Pdu, version: i16, b: u32, out: &mut Findings) -> Pending {
        let t = &pdu.tree;
        let frame = frame_of(&pdu.origin);
        let voter_id = int(t, b, "VoterId").map_or(-1, |v| v as i32);
        if version >= 1 && voter_id < 0 {
            out.push(
                Finding::new(RuleId::VoterIdMissing, vec![frame], format!("BeginQuorumEpoch v{version} with VoterId {voter_id}: v1+ names the replica it tells"))
                    .expect("the voter's id", voter_id.to_string())
                    .at(pdu),
            );
        }
        let Some((_, p)) = first_partition(pdu, b, "Topics") else {
            return Pending::None;
        };
        let (Some(l), Some(e)) = (int(t, p, "LeaderId"), int(t, p, "LeaderEpoch")) else {
            return Pending::None;
        };
        let (l, e) = (l as i32, e as i32);
        let voter = self.responder(pdu, voter_id);
        // The election happened inside the capture when the leader was seen standing for this
        // epoch or at the epoch before it.
        let observed = self.tallies.get(&(l, e)).is_some()
            || self
                .replicas
                .get(&l)
                .is_some_and(|r| r.state != State::Unknown && r.epoch >= e - 1 && r.epoch <= e);
        let majority = self.majority();
        if observed {
            if let Some(tally) = self.tallies.entry((l, e)) {
                let votes = tally.granted.len() + 1;
                if !tally.claimed {
                    tally.claimed = true;
                    if votes < majority {
                        let mut frames: Vec<u64> = tally.granted.iter().map(|g| g.1).collect();
                        frames.push(frame);
                        out.push(
                            Finding::new(
                                RuleId::LeaderWithoutMajority,
                                frames,
                                format!("{l} claims leadership of epoch {e} with {votes} vote(s) (its own and {} granted) of {} voters seen", tally.granted.len(), self.voters.len().max(1)),
                            )
                            .expect(format!(">= {majority} votes"), format!("{votes}"))
                            .at(pdu),
                        );
                    }
                    let from: Vec<String> = tally.granted.iter().map(|g| g.0.to_string()).collect();
                    let text = format!(
                        "{l} is leader (BeginQuorumEpoch; votes from {l}{}{})",
                        if from.is_empty() { "" } else { ", " },
                        from.join(", ")
                    );
                    self.timeline.push(pdu, e, text);
                }
            }
        } else if self.leaders.get(&e).is_none() {
            self.timeline
                .push(pdu, e, format!("{l} is leader (BeginQuorumEpoch)"));
        }
        if let Some(slot) = self.leaders.entry(e) {
            if slot.1 == 0 {
                *slot = (l, frame);
            }
        }
        self.transition(l, State::Leader, e, pdu, out);
        Pending::Begin {
            leader: l,
            voter,
            epoch: e,
        }
    }

    fn fetch_request(&mut self, pdu: &Pdu, b: u32, out: &mut Findings) -> Pending {
        let t = &pdu.tree;
        let Some((te, p)) = first_partition(pdu, b, "Topics") else {
            return Pending::None;
        };
        if !is_metadata_topic(pdu, te) {
            return Pending::None;
        }
        let replica = member(t, b, "ReplicaState")
            .and_then(|s| int(t, s, "ReplicaId"))
            .or_else(|| int(t, b, "ReplicaId"));
        let (Some(r), Some(e)) = (replica, int(t, p, "CurrentLeaderEpoch")) else {
            return Pending::None;
        };
        let (r, e) = (r as i32, e as i32);
        if r < 0 || e < 0 {
            return Pending::None;
        }
        let leader = self.leaders.get(&e).map_or(-1, |l| l.0);
        if leader >= 0 {
            if let Some(s) = pdu.origin.conn.map(|c| c.server) {
                if let Some(slot) = self.addrs.entry(s) {
                    *slot = leader;
                }
            }
        }
        let was = self.replicas.get(&r).map(|x| (x.state, x.epoch));
        self.transition(r, State::Follower(leader), e, pdu, out);
        if !was.is_some_and(|(s, we)| we == e && matches!(s, State::Follower(_))) {
            self.timeline.push(
                pdu,
                e,
                format!(
                    "{r} fetches from {}",
                    if leader >= 0 {
                        leader.to_string()
                    } else {
                        "the leader".into()
                    }
                ),
            );
        }
        Pending::Fetch {
            replica: r,
            epoch: e,
        }
    }

    pub(super) fn response(
        &mut self,
        pdu: &Pdu,
        req: Option<&super::sessions::Inflight>,
        out: &mut Findings,
    ) {
        let Some(req) = req else { return };
        let Some(b) = body(&pdu.tree) else { return };
        let t = &pdu.tree;
        let top_error = int(t, b, "ErrorCode").unwrap_or(0);
        match req.pending {
            Pending::None
            | Pending::Broker { .. }
            | Pending::Group { .. }
            | Pending::Member { .. } => {}
            Pending::Vote {
                replica,
                voter,
                epoch,
                pre_vote,
            } => {
                let Some((_, p)) = first_partition(pdu, b, "Topics") else {
                    return;
                };
                let granted = boolean(t, p, "VoteGranted").unwrap_or(false);
                let their = int(t, p, "LeaderEpoch").map(|v| v as i32);
                let kind = if pre_vote { "pre-vote" } else { "vote" };
                self.timeline.push(
                    pdu,
                    epoch,
                    format!(
                        "{replica} asks {} for a {kind}: {}",
                        if voter >= 0 {
                            voter.to_string()
                        } else {
                            "?".into()
                        },
                        if granted { "granted" } else { "rejected" }
                    ),
                );
                let Some(their) = their else { return };
                // The requester learns a higher epoch from the answer (KafkaRaftClient
                // handleVoteResponse: maybeTransition), so a later pre-vote may carry it.
                if self
                    .replicas
                    .get(&replica)
                    .is_some_and(|r| r.state != State::Unknown && their > r.epoch)
                {
                    self.transition(replica, State::Unattached, their, pdu, out);
                }
                if top_error != 0 || voter < 0 {
                    return;
                }
                // The voter's state before granting: a request of a higher epoch first moves
                // it to Unattached at that epoch, pre-vote or not (KafkaRaftClient.java:890-892).
                let before = self
                    .replicas
                    .get(&voter)
                    .map(|r| (r.state, r.epoch, r.voted, r.fetched));
                if their > before.map_or(-1, |b| b.1)
                    || before.is_some_and(|b| b.0 == State::Unknown)
                {
                    self.transition(voter, State::Unattached, their, pdu, out);
                } else if their < before.map_or(-1, |b| b.1) {
                    self.transition(voter, State::Unattached, their, pdu, out);
                    return;
                }
                let frame = frame_of(&pdu.origin);
                if !granted || their != epoch {
                    return;
                }
                let (state, voted, fetched) = match before {
                    Some((s, e, v, f)) if e == epoch => (s, v, f),
                    _ => (State::Unattached, None, None),
                };
                let broke = match state {
                    State::Leader => Some((RuleId::VoteGrantedByLeader, format!("{voter}, leader of epoch {epoch}, granted a {kind} to {replica}"), vec![frame])),
                    State::Follower(l) if !pre_vote => Some((RuleId::VoteGrantedByFollower, format!("{voter}, follower of {l} in epoch {epoch}, granted a standard vote to {replica}"), vec![frame])),
                    State::Follower(l) => fetched.filter(|f| f.0 == epoch).map(|(_, ff)| (RuleId::VoteGrantedByFollower, format!("{voter} granted a pre-vote to {replica} after fetching from leader {l} in epoch {epoch} (frame {ff})"), vec![ff, frame])),
                    State::Candidate | State::Resigned if !pre_vote => Some((RuleId::VoteGrantedByCandidate, format!("{voter}, {state} in epoch {epoch}, granted a standard vote to {replica}"), vec![frame])),
                    _ => None,
                };
                if let Some((rule, msg, frames)) = broke {
                    out.push(
                        Finding::new(rule, frames, msg)
                            .expect(format!("{kind} rejected"), "granted")
                            .at(pdu),
                    );
                    return;
                }
                if pre_vote {
                    return;
                }
                if let Some((ve, c, vf)) = voted {
                    if ve == epoch && c != replica {
                        out.push(
                            Finding::new(
                                RuleId::VoteDoubleGrant,
                                vec![vf, frame],
                                format!("{voter} granted its vote in epoch {epoch} to {replica}, having granted it to {c} in frame {vf}"),
                            )
                            .expect(format!("only {c}"), format!("{c} and {replica}"))
                            .at(pdu),
                        );
                        return;
                    }
                }
                if let Some(v) = self.replicas.get_mut(&voter) {
                    v.voted = Some((epoch, replica, frame));
                    if matches!(v.state, State::Unattached | State::Unknown) {
                        v.state = State::Voted(replica);
                        v.frame = frame;
                    }
                }
                if let Some(tally) = self.tallies.entry((replica, epoch)) {
                    if !tally.granted.iter().any(|g| g.0 == voter) {
                        tally.granted.push((voter, frame));
                    }
                }
            }
            Pending::Begin {
                leader,
                voter,
                epoch,
            } => {
                let Some((_, p)) = first_partition(pdu, b, "Topics") else {
                    return;
                };
                if top_error == 0 && int(t, p, "ErrorCode") == Some(0) {
                    self.transition(voter, State::Follower(leader), epoch, pdu, out);
                    if voter >= 0 {
                        self.timeline
                            .push(pdu, epoch, format!("{voter} follows {leader}"));
                    }
                }
            }
            Pending::Fetch { replica, epoch } => {
                let Some((_, p)) = first_partition(pdu, b, "Responses") else {
                    return;
                };
                if top_error == 0 && int(t, p, "ErrorCode") == Some(0) {
                    let frame = frame_of(&pdu.origin);
                    if let Some(r) = self.replicas.get_mut(&replica) {
                        if r.epoch == epoch && r.fetched.is_none() {
                            r.fetched = Some((epoch, frame));
                        }
                    }
                }
            }
        }
    }

    /// Quorum replicas whose state is inferred, and elections ((candidate, epoch) tallies).
    pub(super) fn followed(&self) -> [Followed; 2] {
        [
            self.replicas.followed("votes"),
            self.tallies.followed("votes"),
        ]
    }

    pub(super) fn capped(&mut self, frame: u64, out: &mut Vec<Finding>) {
        out.extend(self.replicas.capped(frame));
        out.extend(self.addrs.capped(frame));
        out.extend(self.tallies.capped(frame));
        out.extend(self.leaders.capped(frame));
    }
}
