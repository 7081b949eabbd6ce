//! KRaft election rules on scenario captures encoded by the kafka-protocol crate: for every rule
//! one scenario where it fires and one, otherwise identical, where it stays silent.

use crate::check_support::{check, kraft_codes, kraft_pcap};

/// A clean election with pre-vote: 1 is Prospective at 4, wins the pre-vote, stands at 5, wins,
/// and 2 and 3 follow.
const ELECTION: &str = "
prevote 1 -> 2 epoch 4 : granted
prevote 1 -> 3 epoch 4 : granted
vote 1 -> 2 epoch 5 : granted
vote 1 -> 3 epoch 5 : granted
begin 1 -> 2 epoch 5
begin 1 -> 3 epoch 5
fetch 2 -> 1 epoch 5
fetch 3 -> 1 epoch 5
";

fn with(extra: &str) -> String {
    format!("{ELECTION}{extra}")
}

#[test]
fn a_clean_election_with_pre_vote_is_silent_and_makes_a_timeline() {
    let (found, timeline) = check(&kraft_pcap(ELECTION));
    assert!(found.is_empty(), "{found:#?}");
    let text = timeline.render();
    assert!(text.contains("epoch 4\n"), "{text}");
    assert!(text.contains("1 asks 2 for a pre-vote: granted"), "{text}");
    assert!(
        text.contains("1 is leader (BeginQuorumEpoch; votes from 1, 2, 3)"),
        "{text}"
    );
    assert!(text.contains("2 follows 1"), "{text}");
}

/// 1 and 3 stand at 5 together; 2 votes for 1 only and 1 and 3 each keep their own vote, so
/// neither has a majority at 5 (no BeginQuorumEpoch); 3 times out, goes back to Prospective at 5,
/// wins the pre-vote and then epoch 6.
const SPLIT_VOTE: &str = "
vote 1 -> 2 epoch 5 : granted
vote 3 -> 2 epoch 5 : rejected
vote 1 -> 3 epoch 5 : rejected
vote 3 -> 1 epoch 5 : rejected
prevote 3 -> 1 epoch 5 : granted
vote 3 -> 1 epoch 6 : granted
vote 3 -> 2 epoch 6 : granted
begin 3 -> 1 epoch 6
begin 3 -> 2 epoch 6
";

#[test]
fn a_split_vote_then_a_new_election_is_silent() {
    assert_eq!(kraft_codes(SPLIT_VOTE), Vec::<&str>::new());
}

/// The two scenarios the README shows (`kinspect check --timeline`) are checked-in pcaps; they
/// must be what the scenario encoder writes (`BLESS=1` rewrites them).
#[test]
fn readme_scenario_captures_are_the_encoded_scenarios() {
    let dir = crate::common::repo().join("captures/scenarios");
    for (name, scenario) in [
        ("kraft-prevote-election.pcap", ELECTION),
        ("kraft-split-vote.pcap", SPLIT_VOTE),
    ] {
        crate::common::generated_fixture(&dir.join(name), &kraft_pcap(scenario));
    }
}

#[test]
fn vote_double_grant() {
    let base = "vote 1 -> 2 epoch 5 : granted\n";
    assert_eq!(
        kraft_codes(&format!("{base}vote 3 -> 2 epoch 5 : granted")),
        ["vote-double-grant"]
    );
    assert!(kraft_codes(&format!("{base}vote 3 -> 2 epoch 5 : rejected")).is_empty());
    // The same candidate asking twice is granted twice.
    assert!(kraft_codes(&format!("{base}vote 1 -> 2 epoch 5 : granted")).is_empty());
}

#[test]
fn vote_granted_by_leader() {
    assert_eq!(
        kraft_codes(&with("prevote 3 -> 1 epoch 5 : granted")),
        ["vote-granted-by-leader"]
    );
    assert!(kraft_codes(&with("prevote 3 -> 1 epoch 5 : rejected")).is_empty());
}

#[test]
fn vote_granted_by_follower_after_fetching() {
    let no_fetch = ELECTION.replace("fetch 2 -> 1 epoch 5\n", "");
    // 2 fetched from 1 in epoch 5: it must reject the pre-vote (FollowerState.canGrantVote).
    assert_eq!(
        kraft_codes(&with("prevote 3 -> 2 epoch 5 : granted")),
        ["vote-granted-by-follower"]
    );
    // 2 follows 1 but never fetched: granting a pre-vote is allowed.
    assert!(kraft_codes(&format!("{no_fetch}prevote 3 -> 2 epoch 5 : granted")).is_empty());
}

#[test]
fn vote_granted_by_candidate() {
    let base = "vote 1 -> 3 epoch 5 : rejected\n";
    assert_eq!(
        kraft_codes(&format!("{base}vote 2 -> 1 epoch 5 : granted")),
        ["vote-granted-by-candidate"]
    );
    assert!(kraft_codes(&format!("{base}vote 2 -> 1 epoch 5 : rejected")).is_empty());
}

#[test]
fn prevote_epoch_bumped() {
    let fired = "prevote 1 -> 2 epoch 4 : rejected\nprevote 1 -> 3 epoch 5 : rejected";
    assert_eq!(kraft_codes(fired), ["prevote-epoch-bumped"]);
    // 2 answered with epoch 5: 1 learnt it, so its next pre-vote may carry it.
    let silent =
        "prevote 1 -> 2 epoch 4 : rejected answer-epoch 5\nprevote 1 -> 3 epoch 5 : rejected";
    assert!(kraft_codes(silent).is_empty());
}

#[test]
fn vote_illegal_epoch() {
    assert_eq!(
        kraft_codes("vote 1 -> 2 epoch 5 last 5 : rejected"),
        ["vote-illegal-epoch"]
    );
    assert!(kraft_codes("vote 1 -> 2 epoch 5 last 4 : rejected").is_empty());
    // A pre-vote may carry its log's epoch, not a later one (KafkaRaftClient.java:861).
    assert!(kraft_codes("prevote 1 -> 2 epoch 5 last 5 : rejected").is_empty());
    assert_eq!(
        kraft_codes("prevote 1 -> 2 epoch 5 last 6 : rejected"),
        ["vote-illegal-epoch"]
    );
}

#[test]
fn leader_without_majority() {
    let claim = "begin 1 -> 2 epoch 5\nbegin 1 -> 3 epoch 5\n";
    let lost = format!("vote 1 -> 2 epoch 5 : rejected\nvote 1 -> 3 epoch 5 : rejected\n{claim}");
    assert_eq!(kraft_codes(&lost), ["leader-without-majority"]);
    let won = format!("vote 1 -> 2 epoch 5 : rejected\nvote 1 -> 3 epoch 5 : granted\n{claim}");
    assert!(kraft_codes(&won).is_empty());
}

#[test]
fn replica_epoch_regressed() {
    assert_eq!(
        kraft_codes("prevote 1 -> 2 epoch 5 : rejected\nprevote 1 -> 3 epoch 4 : rejected"),
        ["replica-epoch-regressed"]
    );
    assert!(
        kraft_codes("prevote 1 -> 2 epoch 5 : rejected\nprevote 1 -> 3 epoch 5 : rejected")
            .is_empty()
    );
}

#[test]
fn voter_id_missing() {
    assert_eq!(
        kraft_codes("vote 1 -> 2 epoch 5 v 1 voter -1 : granted"),
        ["voter-id-missing"]
    );
    assert!(kraft_codes("vote 1 -> 2 epoch 5 v 1 : granted").is_empty());
    // v0 has no VoterId at all.
    assert!(kraft_codes("vote 1 -> 2 epoch 5 v 0 : granted").is_empty());
}

#[test]
fn impossible_transitions() {
    // 2 voted for 1 in epoch 5; it cannot then stand in epoch 5 (Candidate bumps the epoch).
    let voted = "vote 1 -> 2 epoch 5 : granted\n";
    assert_eq!(
        kraft_codes(&format!("{voted}vote 2 -> 3 epoch 5 : rejected")),
        ["impossible-transition"]
    );
    assert!(kraft_codes(&format!("{voted}vote 2 -> 3 epoch 6 : rejected")).is_empty());
    // A leader stands for the next epoch only after resigning.
    assert_eq!(
        kraft_codes(&with("vote 1 -> 2 epoch 6 : rejected")),
        ["impossible-transition"]
    );
    assert!(kraft_codes(&with("end 1 -> 2 epoch 5\nvote 1 -> 2 epoch 6 : rejected")).is_empty());
    // Two leaders in one epoch: 2 cannot follow 3 in the epoch it follows 1.
    let one = "begin 1 -> 2 epoch 5\n";
    assert_eq!(
        kraft_codes(&format!("{one}begin 3 -> 2 epoch 5")),
        ["impossible-transition"]
    );
    assert!(kraft_codes(&format!("{one}begin 3 -> 2 epoch 6")).is_empty());
}
