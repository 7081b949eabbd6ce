//! Conversation rules across decoded PDUs: what no single frame can show — a response nobody
//! asked for, a client using a leader epoch older than the one it was told, a voter granting two
//! votes in one epoch.
//!
//! A [`Checker`] is fed the PDUs and capture notes of one input in capture order and hands back
//! [`Finding`]s as it goes (streaming: it never holds the capture). Its state is per connection,
//! client and partition, and quorum replica, every table capped by a `MAX_CHECK_*` constant of
//! [`crate::limits`]; when a cap refuses new state, that is itself reported once
//! ([`RuleId::StateCapped`]), so a silent rule is never mistaken for a passed one.
//!
//! Every rule is listed once, in [`RULES`]: stable code, severity, one-line statement, and its
//! source (the KIP and the Apache Kafka class that enforces it). Families, one file each:
//! `sessions` (request/response pairing, advertised versions), `epochs` (KIP-320 leader epochs),
//! `votes` (KRaft elections, KIP-595/KIP-853/KIP-996; also the quorum timeline), `recovery`
//! (KIP-704 leader recovery in AlterPartition and the metadata log), `producers` (KIP-98
//! sequences and epochs, KIP-890 transactions), `groups` (classic generations, KIP-848
//! member epochs and assignments).

mod epochs;
pub mod fields;
mod groups;
mod producers;
mod recovery;
mod sessions;
mod votes;

pub use votes::{Timeline, TimelineEvent};

use crate::diag::{Diagnostic, Severity};
use crate::pdu::{Conn, Direction, Origin, Pdu};
use std::collections::HashMap;
use std::hash::Hash;

/// One conversation rule.
#[derive(Debug)]
pub struct Rule {
    pub id: RuleId,
    /// Stable code, as printed and in JSON (`"rule"`).
    pub code: &'static str,
    pub severity: Severity,
    /// `sessions`, `epochs`, `votes`, `recovery`, `producers`, `groups`, `check`.
    pub family: &'static str,
    /// What must hold, in one line.
    pub statement: &'static str,
    pub kip: &'static str,
    /// The Apache Kafka class or file that enforces it (4.3.1 unless marked).
    pub source: &'static str,
}

macro_rules! rules {
    ($( $id:ident = $code:literal, $sev:ident, $family:literal, $kip:literal, $source:literal, $stmt:literal; )*) => {
        /// Names a rule of [`RULES`] (its index there).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RuleId { $($id),* }
        /// Every rule, once.
        pub static RULES: &[Rule] = &[ $( Rule {
            id: RuleId::$id, code: $code, severity: Severity::$sev, family: $family,
            statement: $stmt, kip: $kip, source: $source,
        } ),* ];
    };
}

rules! {
    StateCapped = "check-state-capped", Warning, "check", "-", "kinspect limits.rs (MAX_CHECK_*)",
        "a state table of the checker was full: rules needing new state there are not checked from this frame on";
    FindingsCapped = "check-findings-capped", Warning, "check", "-", "kinspect limits.rs (MAX_CHECK_FINDINGS_PER_PDU)",
        "one PDU broke rules more often than is listed: the first findings are listed, the rest counted by rule";
    ResponseWithoutRequest = "response-without-request", Warning, "sessions", "KIP-511 (protocol guide: correlation id)", "NetworkClient.java (correlation id matching)",
        "every response answers a request seen earlier on its connection (once the capture has seen a request there)";
    CorrelationIdReused = "correlation-id-reused", Error, "sessions", "protocol guide: request header", "NetworkClient.java (InFlightRequests: correlation id mismatch)",
        "a client never reuses a correlation id while a request with that id is still unanswered on the connection";
    VersionNotAdvertised = "version-not-advertised", Warning, "sessions", "KIP-35", "ApiVersionsResponse; NetworkClient.handleApiVersionsResponse",
        "a request's version lies in the range the broker advertised in its ApiVersions response";
    ApiNotAdvertised = "api-not-advertised", Warning, "sessions", "KIP-35", "ApiVersionsResponse; NodeApiVersions.latestUsableVersion",
        "a request's API is one the broker listed in its ApiVersions response";
    RequestAfterUnsupported = "request-after-unsupported-version", Warning, "sessions", "KIP-35", "NodeApiVersions / NetworkClient (UnsupportedVersionException)",
        "after UNSUPPORTED_VERSION for an API and version, the client does not send that API at that version again on the connection";
    MetadataEpochRegressed = "metadata-epoch-regressed", Warning, "epochs", "KIP-320", "clients Metadata.java (updateLatestMetadata ignores an older leader epoch)",
        "the LeaderEpoch a client is told for a partition (Metadata v7+, DescribeTopicPartitions) never goes backwards";
    StaleEpochUsed = "stale-epoch-used", Warning, "epochs", "KIP-320", "Fetcher / OffsetsForLeaderEpochClient (currentLeaderEpoch from Metadata); Partition.checkCurrentLeaderEpoch",
        "a client's CurrentLeaderEpoch (Fetch v9+, ListOffsets v4+, OffsetForLeaderEpoch v2+) is not older than the newest epoch it was told";
    CommittedEpochAhead = "committed-epoch-ahead", Warning, "epochs", "KIP-320", "ConsumerCoordinator (commits the epoch of the consumed record)",
        "OffsetCommit's CommittedLeaderEpoch (v6+) is not above the newest epoch the client was told for that partition";
    EpochBadSentinel = "epoch-bad-sentinel", Error, "epochs", "KIP-320", "RecordBatch.NO_PARTITION_LEADER_EPOCH (-1); field defaults -1",
        "an unknown leader epoch is -1: no leader-epoch field holds a value below -1 (INT32_MIN and the like)";
    EpochZeroAsUnknown = "epoch-zero-as-unknown", Warning, "epochs", "KIP-320", "RecordBatch.NO_PARTITION_LEADER_EPOCH (-1)",
        "a client that was told the epoch is unknown (-1) sends -1, not 0";
    FencedEpochExplained = "fenced-epoch-explained", Info, "epochs", "KIP-320", "Partition.checkCurrentLeaderEpoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH)",
        "FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH answers, with the epoch sent and the one the broker last advertised to the client";
    FencedEpochResent = "fenced-epoch-resent", Warning, "epochs", "KIP-320", "Fetcher / AbstractFetch (requestMetadataUpdate on FENCED_LEADER_EPOCH)",
        "after FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH a client refreshes metadata before sending that epoch again";
    VoteIllegalEpoch = "vote-illegal-epoch", Error, "votes", "KIP-595, KIP-996", "KafkaRaftClient.java:861 (isIllegalEpoch)",
        "a Vote's LastOffsetEpoch is below its ReplicaEpoch (a pre-vote: not above it)";
    VoteDoubleGrant = "vote-double-grant", Error, "votes", "KIP-595", "QuorumState.java:428-470 (unattachedAddVotedState), :886-933 (canGrantVote)",
        "a voter grants at most one standard vote per epoch";
    VoteGrantedByLeader = "vote-granted-by-leader", Error, "votes", "KIP-595, KIP-996", "LeaderState.java:1118-1126 (canGrantVote: always false)",
        "a leader rejects every vote and pre-vote in its epoch";
    VoteGrantedByFollower = "vote-granted-by-follower", Error, "votes", "KIP-996", "FollowerState.java:228-243 (canGrantVote)",
        "a follower grants only pre-votes, and only before it has fetched from the leader in that epoch";
    VoteGrantedByCandidate = "vote-granted-by-candidate", Error, "votes", "KIP-595", "CandidateState.java:140-159, ResignedState.java:144-158",
        "a candidate or resigned replica grants no standard vote in its epoch";
    PreVoteEpochBumped = "prevote-epoch-bumped", Error, "votes", "KIP-996", "QuorumState.java:605-636 (transitionToProspective: same epoch)",
        "a pre-vote carries the requester's current epoch: a Prospective does not bump its epoch";
    LeaderWithoutMajority = "leader-without-majority", Error, "votes", "KIP-595", "QuorumState.java:680-727 (transitionToLeader: majority granted)",
        "a replica that claims leadership of epoch E (BeginQuorumEpoch) was granted standard votes by a majority for E";
    ReplicaEpochRegressed = "replica-epoch-regressed", Error, "votes", "KIP-595", "QuorumState.java:380-420, :529-598 (epoch >= current)",
        "the epoch a replica states (Vote, BeginQuorumEpoch, EndQuorumEpoch, KRaft Fetch, their responses) never goes backwards";
    VoterIdMissing = "voter-id-missing", Warning, "votes", "KIP-853", "VoteRequest.json / BeginQuorumEpochRequest.json (VoterId 1+, default -1); KafkaRaftClient (INVALID_VOTER_KEY)",
        "Vote and BeginQuorumEpoch v1+ name the replica they are sent to (VoterId is not -1)";
    RecoveringIsrNotLeader = "recovering-isr-not-leader", Error, "recovery", "KIP-704", "PartitionChangeBuilder.java:347-356 (tryElection: unclean election sets ISR = [leader], RECOVERING)",
        "while a partition's LeaderRecoveryState is RECOVERING (PartitionRecord, PartitionChangeRecord) its ISR is the leader alone";
    RecoveryStateReverted = "recovery-state-reverted", Error, "recovery", "KIP-704", "ReplicationControlManager.java:1231-1236 (validateAlterPartitionData), PartitionChangeBuilder.java:352",
        "RECOVERED never goes back to RECOVERING without a leader change (metadata records; AlterPartition against the last state written)";
    RecoveringIsrExpanded = "recovering-isr-expanded", Error, "recovery", "KIP-704", "ReplicationControlManager.java:1221-1227 (validateAlterPartitionData: INVALID_REQUEST)",
        "a leader whose AlterPartition says RECOVERING does not ask for an ISR of more than one replica";
    IsrBrokerEpochStale = "isr-broker-epoch-stale", Warning, "recovery", "KIP-903, KIP-704", "ReplicationControlManager.java:1256-1275 (ineligibleReplicasForIsr: INELIGIBLE_REPLICA)",
        "AlterPartition v3+ NewIsrWithEpochs broker epochs are -1 or the epoch of the broker's latest RegisterBrokerRecord / BrokerRegistration answer";
    SequenceGap = "sequence-gap", Warning, "producers", "KIP-98", "ProducerAppendInfo.java:112-147 (checkSequence, inSequence); DefaultRecordBatch.incrementSequence",
        "per producer id, epoch and partition, each batch's BaseSequence follows the last one (wrapping after INT32_MAX to 0), or repeats one of the last five (a retry)";
    SequenceNotReset = "sequence-not-reset", Warning, "producers", "KIP-98, KIP-360", "ProducerAppendInfo.java:117-124 (new epoch: first sequence 0)",
        "the first batch under a new producer epoch (bumped, or granted by InitProducerId) has BaseSequence 0";
    ProducerErrorExplained = "producer-error-explained", Info, "producers", "KIP-98", "ProducerAppendInfo.java:96-143 (checkProducerEpoch, checkSequence)",
        "OUT_OF_ORDER_SEQUENCE_NUMBER / DUPLICATE_SEQUENCE_NUMBER / INVALID_PRODUCER_EPOCH answers, with what the batch sent and what the sequence expected";
    ProduceNotInTxn = "produce-not-in-transaction", Error, "producers", "KIP-98, KIP-890", "TransactionManager.maybeAddPartition; ReplicaManager (INVALID_TXN_STATE: partition not added)",
        "a transactional Produce below v12 goes only to partitions AddPartitionsToTxn added to the transaction (v12+ adds them itself, KIP-890)";
    ProduceAfterEndTxn = "produce-after-end-txn", Error, "producers", "KIP-98, KIP-890", "TransactionManager (no sends while committing/aborting); EndTxn v5 epoch bump",
        "no transactional Produce under an epoch while its EndTxn is unanswered, nor after an EndTxn v5+ bumped that epoch";
    GenerationRegressed = "generation-regressed", Warning, "groups", "KIP-62 (classic group protocol)", "ClassicGroup.java:829-845, GroupMetadataManager.java:5589-5621 (ILLEGAL_GENERATION)",
        "a classic member's SyncGroup, Heartbeat and OffsetCommit generation is not below the one its last JoinGroup answer gave it";
    FencedMemberNotRejoined = "fenced-member-not-rejoined", Error, "groups", "KIP-848", "GroupMetadataManager.java:1439-1455; AbstractMembershipManager.transitionToFenced (:377); ConsumerGroupHeartbeatRequest.JOIN_GROUP_MEMBER_EPOCH",
        "after FENCED_MEMBER_EPOCH a ConsumerGroupHeartbeat member rejoins with MemberEpoch 0 (or leaves with -1/-2)";
    PartitionAssignedTwice = "partition-assigned-twice", Error, "groups", "KIP-848", "GroupMetadataManager / CurrentAssignmentBuilder (partitions pending revocation); ConsumerProtocolAssignment.json",
        "no partition is assigned to two members of a group at the same member epoch (ConsumerGroupHeartbeat answers) or in one classic leader's SyncGroup";
    ImpossibleTransition = "impossible-transition", Error, "votes", "KIP-996", "QuorumState.java:35-83 (transition table), guards :350-727",
        "the replica states inferred from traffic change only as the KRaft transition table allows";
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.id == other.id
    }
}

impl RuleId {
    pub fn rule(self) -> &'static Rule {
        &RULES[self as usize]
    }
}

/// The rule with this code.
pub fn rule_by_code(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// One rule broken (or, for info rules, one event explained).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule: &'static Rule,
    /// Capture frame numbers (or input indexes, for inputs without frames) involved, the one
    /// that broke the rule last.
    pub frames: Vec<u64>,
    pub message: String,
    pub expected: String,
    pub seen: String,
    /// The API of the PDU that broke it.
    pub api: Option<&'static str>,
    pub connection: Option<Conn>,
    /// The field of the PDU that broke it and its byte offset, when one field did.
    pub field: Option<(&'static str, u64)>,
}

impl Finding {
    fn new(id: RuleId, frames: Vec<u64>, message: String) -> Self {
        Finding {
            rule: id.rule(),
            frames,
            message,
            expected: String::new(),
            seen: String::new(),
            api: None,
            connection: None,
            field: None,
        }
    }

    fn field(mut self, path: &'static str, offset: u64) -> Self {
        self.field = Some((path, offset));
        self
    }

    fn at(mut self, pdu: &Pdu) -> Self {
        self.api = pdu.api_name;
        self.connection = pdu.origin.conn;
        self
    }

    fn expect(mut self, expected: impl Into<String>, seen: impl Into<String>) -> Self {
        self.expected = expected.into();
        self.seen = seen.into();
        self
    }

    pub fn severity(&self) -> Severity {
        self.rule.severity
    }

    /// The finding as a PDU diagnostic (`decode --check`): the rule's code and severity, the
    /// field's path and offset when one field broke it (else path `check`, offset 0), and a
    /// message naming the frames involved and what was expected.
    pub fn diagnostic(&self) -> Diagnostic {
        let frames: Vec<String> = self.frames.iter().map(u64::to_string).collect();
        let mut m = format!("{} [frames {}]", self.message, frames.join(","));
        if !self.expected.is_empty() || !self.seen.is_empty() {
            m.push_str(&format!(
                " [expected {}; seen {}]",
                self.expected, self.seen
            ));
        }
        let (path, offset) = self.field.unwrap_or(("check", 0));
        Diagnostic::new(self.severity(), self.rule.code, path, offset, m)
    }
}

/// The frame number that names a PDU in findings (its input index when it has no frame).
pub fn frame_of(o: &Origin) -> u64 {
    o.frame.unwrap_or(o.index)
}

/// The findings of one PDU as the rules push them: the first
/// [`MAX_CHECK_FINDINGS_PER_PDU`](crate::limits::MAX_CHECK_FINDINGS_PER_PDU) are kept, the rest
/// only counted per rule, so that a PDU naming thousands of partitions cannot make the checker
/// hold thousands of findings (or print them).
#[derive(Default)]
pub(crate) struct Findings {
    kept: Vec<Finding>,
    /// Rules of the findings dropped, with how many each, in order of first drop.
    dropped: Vec<(&'static Rule, u64)>,
    /// The frame of the first finding dropped.
    first_dropped: Option<Vec<u64>>,
}

impl Findings {
    pub(crate) fn push(&mut self, f: Finding) {
        if self.kept.len() < crate::limits::MAX_CHECK_FINDINGS_PER_PDU {
            self.kept.push(f);
            return;
        }
        self.first_dropped.get_or_insert(f.frames);
        match self.dropped.iter_mut().find(|(r, _)| r.id == f.rule.id) {
            Some((_, n)) => *n += 1,
            None => self.dropped.push((f.rule, 1)),
        }
    }

    /// Starts the next PDU.
    fn clear(&mut self) {
        self.kept.clear();
        self.dropped.clear();
        self.first_dropped = None;
    }

    /// Ends the PDU's rules: the finding that counts those dropped (if any) goes after the ones
    /// kept. What is pushed to `kept` after this (the state caps: a handful per run) is never
    /// dropped.
    fn close(&mut self) {
        let Some(frames) = self.first_dropped.take() else {
            return;
        };
        let n: u64 = self.dropped.iter().map(|(_, n)| n).sum();
        let per_rule = self
            .dropped
            .iter()
            .map(|(r, n)| format!("{} {n}", r.code))
            .collect::<Vec<_>>()
            .join(", ");
        let cap = crate::limits::MAX_CHECK_FINDINGS_PER_PDU;
        self.kept.push(
            Finding::new(
                RuleId::FindingsCapped,
                frames,
                format!(
                    "{n} more findings on this PDU are not listed (limits::MAX_CHECK_FINDINGS_PER_PDU): {per_rule}"
                ),
            )
            .expect(format!("at most {cap} findings listed"), format!("{}", cap as u64 + n)),
        );
    }
}

/// A map that refuses new keys once it holds `cap` of them, and remembers that it did.
pub(crate) struct Table<K, V> {
    map: HashMap<K, V>,
    cap: usize,
    /// What one entry is ("connections"), and the limit's name.
    what: &'static str,
    limit: &'static str,
    hit: bool,
    reported: bool,
}

impl<K: Hash + Eq, V: Default> Table<K, V> {
    pub(crate) fn new(cap: usize, what: &'static str, limit: &'static str) -> Self {
        Table {
            map: HashMap::new(),
            cap,
            what,
            limit,
            hit: false,
            reported: false,
        }
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k)
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.map.iter_mut()
    }

    /// How many keys it holds, as what one of them is: entries are never removed, so this is how
    /// many the rules followed.
    pub(crate) fn followed(&self, family: &'static str) -> Followed {
        Followed {
            family,
            what: self.what,
            count: self.map.len(),
        }
    }

    /// The entry for `k`, created when there is room; `None` (and the cap noted) when not.
    pub(crate) fn entry(&mut self, k: K) -> Option<&mut V> {
        use std::collections::hash_map::Entry;
        let full = self.map.len() >= self.cap;
        match self.map.entry(k) {
            Entry::Occupied(o) => Some(o.into_mut()),
            Entry::Vacant(_) if full => {
                self.hit = true;
                None
            }
            Entry::Vacant(v) => Some(v.insert(V::default())),
        }
    }

    /// The once-only finding for a cap hit since the last call.
    pub(crate) fn capped(&mut self, frame: u64) -> Option<Finding> {
        if !self.hit || self.reported {
            return None;
        }
        self.reported = true;
        Some(
            Finding::new(
                RuleId::StateCapped,
                vec![frame],
                format!(
                    "state for more than {} {} is not kept (limits::{}): rules needing new {} are not checked from here on",
                    self.cap, self.what, self.limit, self.what
                ),
            )
            .expect(format!("at most {} {}", self.cap, self.what), format!("a {}th", self.cap + 1)),
        )
    }
}

/// One kind of state the rules followed (connections, client partitions, producers, ...) and
/// how many of it, so that a capture with no findings says whether the rules had anything to
/// judge: a rule family with nothing followed is silent, not passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Followed {
    /// The rule family that keeps it (`sessions`, `epochs`, ...).
    pub family: &'static str,
    /// What one of it is, plural (`"client partitions"`).
    pub what: &'static str,
    pub count: usize,
}

/// Something of the input the rules could not see, and how often: PDUs that did not decode
/// cleanly (the rules read what decoded), or a capture note by code: bytes never captured
/// (`gap`), a file cut short, a frame cut by the snap length, TLS, connections not recognised as
/// Kafka, a full connection table. A rule that saw nothing of a conversation is silent about it,
/// and this is what says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Missed {
    /// [`Missed::UNDECODED`], or the note's code.
    pub what: &'static str,
    /// The note's severity; error for PDUs with decoding errors.
    pub severity: Severity,
    pub count: u64,
}

impl Missed {
    /// What counts the PDUs with error diagnostics.
    pub const UNDECODED: &'static str = "PDUs with decoding errors";
}

/// What the rules followed: the PDUs checked and each kind of state with how many of it, and
/// what of the input they could not see; summed over inputs with [`Coverage::add`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub pdus: u64,
    /// In the order of [`Checker::coverage`]; empty until something was added.
    pub followed: Vec<Followed>,
    /// PDUs with decoding errors first (when any), then capture notes in order of first
    /// appearance; empty when the rules saw every byte as a decoded PDU.
    pub missed: Vec<Missed>,
}

impl Coverage {
    /// Adds another input's coverage (from a checker of this build: same kinds, same order).
    pub fn add(&mut self, other: &Coverage) {
        self.pdus += other.pdus;
        if self.followed.is_empty() {
            self.followed.clone_from(&other.followed);
        } else {
            for (sum, f) in self.followed.iter_mut().zip(&other.followed) {
                sum.count += f.count;
            }
        }
        for m in &other.missed {
            add_missed(&mut self.missed, m.what, m.severity, m.count);
        }
    }
}

/// Adds `count` of `what` to `list` (a handful of entries: the note codes are a fixed set), PDUs
/// with decoding errors first.
fn add_missed(list: &mut Vec<Missed>, what: &'static str, severity: Severity, count: u64) {
    match list.iter_mut().find(|m| m.what == what) {
        Some(m) => m.count += count,
        None => {
            let at = if what == Missed::UNDECODED {
                0
            } else {
                list.len()
            };
            list.insert(
                at,
                Missed {
                    what,
                    severity,
                    count,
                },
            )
        }
    }
}

/// A cap on something other than a [`Table`]'s keys (requests in flight): the first frame that
/// hit it, reported once.
#[derive(Default)]
pub(crate) struct CapHit {
    at: Option<u64>,
    reported: bool,
}

impl CapHit {
    /// Notes that `frame` found the cap full (the first such frame is kept).
    pub(crate) fn hit(&mut self, frame: u64) {
        self.at.get_or_insert(frame);
    }

    /// The once-only finding for a hit: more than `cap` `what` (limit `limit`), and what the
    /// rules lose by it.
    pub(crate) fn capped(
        &mut self,
        cap: usize,
        what: &str,
        limit: &str,
        lost: &str,
    ) -> Option<Finding> {
        let at = self.at.filter(|_| !self.reported)?;
        self.reported = true;
        Some(
            Finding::new(
                RuleId::StateCapped,
                vec![at],
                format!("more than {cap} {what} (limits::{limit}): {lost}"),
            )
            .expect(format!("at most {cap} in flight"), "more"),
        )
    }
}

/// Runs every rule over one input's PDUs and notes, in capture order.
pub struct Checker {
    sessions: sessions::Sessions,
    epochs: epochs::Epochs,
    votes: votes::Votes,
    recovery: recovery::Recovery,
    producers: producers::Producers,
    groups: groups::Groups,
    out: Findings,
    /// PDUs checked (requests, responses and batches of log files alike).
    pdus: u64,
    /// What the rules could not see (see [`Missed`]).
    missed: Vec<Missed>,
}

impl Default for Checker {
    fn default() -> Self {
        Self::new()
    }
}

impl Checker {
    pub fn new() -> Self {
        Checker {
            sessions: sessions::Sessions::new(),
            epochs: epochs::Epochs::new(),
            votes: votes::Votes::new(),
            recovery: recovery::Recovery::new(),
            producers: producers::Producers::new(),
            groups: groups::Groups::new(),
            out: Findings::default(),
            pdus: 0,
            missed: Vec::new(),
        }
    }

    /// Checks one decoded PDU; returns the findings it earned (drained on the next call).
    pub fn pdu(&mut self, pdu: &Pdu) -> std::vec::Drain<'_, Finding> {
        self.out.clear();
        self.pdus += 1;
        if pdu.tree.has_errors() {
            add_missed(&mut self.missed, Missed::UNDECODED, Severity::Error, 1);
        }
        let out = &mut self.out;
        match pdu.direction {
            Some(Direction::Request) if pdu.api_key.is_some() => {
                let client = self.sessions.request(pdu, out);
                self.epochs.request(pdu, client, out);
                let mut pending = self.votes.request(pdu, out);
                self.recovery.alter_partition(pdu, out);
                self.producers.request(pdu, out);
                if let Some(p) = self.groups.request(pdu, out) {
                    pending = p;
                }
                if let Some(id) = self.recovery.registration_request(pdu) {
                    pending = votes::Pending::Broker { id };
                }
                self.sessions.remember(pdu, pending);
            }
            Some(Direction::Response) => {
                let (req, client) = self.sessions.response(pdu, out);
                if pdu.api_key.is_some() {
                    self.epochs.response(pdu, client, out);
                    self.votes.response(pdu, req.as_ref(), out);
                    if let Some(votes::Pending::Broker { id }) = req.map(|r| r.pending) {
                        self.recovery.registration_response(pdu, id);
                    }
                    self.recovery.records(pdu, out);
                    self.producers.response(pdu, req.as_ref(), out);
                    if let Some(r) = req {
                        self.groups.response(pdu, r.pending, out);
                    }
                }
            }
            // A batch of a log segment or snapshot.
            None => self.recovery.records(pdu, out),
            _ => {}
        }
        let f = frame_of(&pdu.origin);
        self.out.close();
        let caps = &mut self.out.kept;
        self.sessions.capped(f, caps);
        self.epochs.capped(f, caps);
        self.votes.capped(f, caps);
        self.recovery.capped(f, caps);
        self.producers.capped(f, caps);
        self.groups.capped(f, caps);
        self.out.kept.drain(..)
    }

    /// A capture note: a gap or resync on a connection means the conversation there lost
    /// bytes, so what is in flight on it is forgotten rather than judged.
    /// Every note but `unanswered` (which is about the conversation, not what was captured of
    /// it) is counted as something the rules could not see.
    pub fn note(&mut self, origin: &Origin, diag: &Diagnostic) {
        if diag.code != "unanswered" {
            add_missed(&mut self.missed, diag.code, diag.severity, 1);
        }
        if matches!(
            diag.code,
            "gap" | "resync" | "frame-incomplete" | "outstanding-overflow"
        ) {
            if let Some(c) = origin.conn {
                self.sessions.lost_bytes(c);
                self.producers.lost_bytes(c);
            }
        }
    }

    /// What the rules follow so far: PDUs checked, and state family by family.
    pub fn coverage(&self) -> Coverage {
        let mut followed = Vec::with_capacity(10);
        followed.extend(self.sessions.followed());
        followed.extend(self.epochs.followed());
        followed.extend(self.votes.followed());
        followed.extend(self.recovery.followed());
        followed.extend(self.producers.followed());
        followed.extend(self.groups.followed());
        Coverage {
            pdus: self.pdus,
            followed,
            missed: self.missed.clone(),
        }
    }

    /// The quorum's timeline so far: elections, votes, leaders.
    pub fn timeline(&self) -> &Timeline {
        self.votes.timeline()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_listed_once_in_order_with_unique_codes() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.id as usize, i, "{}", r.code);
            assert_eq!(rule_by_code(r.code).map(|x| x.id), Some(r.id));
            assert!(!r.statement.is_empty() && !r.source.is_empty());
        }
    }

    #[test]
    fn a_full_table_refuses_new_keys_and_says_so_once() {
        let mut t: Table<u32, u32> = Table::new(2, "things", "MAX_THINGS");
        *t.entry(1).unwrap() = 10;
        *t.entry(2).unwrap() = 20;
        assert!(t.capped(5).is_none(), "not full yet");
        assert!(t.entry(3).is_none(), "the third key is refused");
        assert_eq!(t.entry(1).copied(), Some(10), "known keys still work");
        let f = t.capped(7).expect("the cap is reported");
        assert_eq!(f.rule.code, "check-state-capped");
        assert_eq!(f.frames, [7]);
        assert!(f.message.contains("limits::MAX_THINGS"), "{}", f.message);
        assert!(t.entry(4).is_none());
        assert!(t.capped(8).is_none(), "once");
    }

    #[test]
    fn coverage_counts_keys_and_sums_over_inputs() {
        let mut t: Table<u32, u32> = Table::new(2, "things", "MAX_THINGS");
        t.entry(1);
        t.entry(1);
        t.entry(2);
        t.entry(3);
        let f = t.followed("fam");
        assert_eq!(
            (f.family, f.what, f.count),
            ("fam", "things", 2),
            "keys held, not lookups"
        );
        let one = Coverage {
            pdus: 3,
            followed: vec![f],
            missed: Vec::new(),
        };
        let mut sum = Coverage::default();
        sum.add(&one);
        sum.add(&one);
        assert_eq!((sum.pdus, sum.followed[0].count), (6, 4));
        assert_eq!(sum.followed[0].what, "things");
    }

    #[test]
    fn what_was_missed_sums_by_kind_with_undecoded_pdus_first() {
        let mut a = Vec::new();
        add_missed(&mut a, "gap", Severity::Warning, 1);
        add_missed(&mut a, "tls", Severity::Info, 1);
        add_missed(&mut a, "gap", Severity::Warning, 2);
        add_missed(&mut a, Missed::UNDECODED, Severity::Error, 1);
        let whats = |l: &[Missed]| l.iter().map(|m| (m.what, m.count)).collect::<Vec<_>>();
        assert_eq!(whats(&a), [(Missed::UNDECODED, 1), ("gap", 3), ("tls", 1)]);
        let mut b = Vec::new();
        add_missed(&mut b, "capture-truncated", Severity::Error, 1);
        add_missed(&mut b, "gap", Severity::Warning, 5);
        let mut sum = Coverage::default();
        for list in [b, a] {
            sum.add(&Coverage {
                pdus: 1,
                followed: Vec::new(),
                missed: list,
            });
        }
        assert_eq!(
            whats(&sum.missed),
            [
                (Missed::UNDECODED, 1),
                ("capture-truncated", 1),
                ("gap", 8),
                ("tls", 1)
            ]
        );
    }

    #[test]
    fn a_cap_hit_is_reported_once_at_its_first_frame() {
        let mut c = CapHit::default();
        assert!(
            c.capped(4, "things", "MAX_THINGS", "lost").is_none(),
            "not hit"
        );
        c.hit(9);
        c.hit(12);
        let f = c
            .capped(4, "things", "MAX_THINGS", "lost")
            .expect("reported");
        assert_eq!(
            (f.rule.code, f.frames.as_slice()),
            ("check-state-capped", &[9][..])
        );
        assert_eq!(f.message, "more than 4 things (limits::MAX_THINGS): lost");
        c.hit(15);
        assert!(
            c.capped(4, "things", "MAX_THINGS", "lost").is_none(),
            "once"
        );
    }
}
