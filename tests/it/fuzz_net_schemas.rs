//! `--schemas` end to end: the KIP-996 draft VoteRequest (seed 001, `boolean` corrected to
//! `bool`; tests/fixtures/kip996) is probed and fuzzed against a fake broker advertising Vote
//! 0-1, and the v1 requests on the wire carry the draft's new `PreVote` field.

use super::fuzz_net_fake::{fake, standard, Verdict, API_VERSIONS, METADATA};
use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::probe::{self, fuzz};
use std::sync::Arc;
use std::time::Duration;

const VOTE: i16 = 52;
const APIS: [(i16, i16, i16); 3] = [(METADATA, 0, 0), (API_VERSIONS, 0, 0), (VOTE, 0, 1)];

fn overlay() -> &'static kinspect::protocol::Protocol {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kip996");
    kinspect::protocol::load(Some(&dir)).unwrap()
}

fn vote_fake() -> super::fuzz_net_fake::Fake {
    fake(
        Arc::new(|req: &[u8], _: &mut Vec<u8>| {
            if req.len() >= 8 && i16::from_be_bytes([req[0], req[1]]) == VOTE {
                // Header v1 (its tagged section), ErrorCode 0, Topics [], no tags.
                let mut f = 9u32.to_be_bytes().to_vec();
                f.extend_from_slice(&req[4..8]);
                f.extend_from_slice(&[0, 0, 0, 1, 0]);
                return Verdict::Answer(f);
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(100),
    )
}

/// The Vote v1 requests the fake received that decode cleanly with the overlay: how many,
/// and how many PreVote fields they carry (each one bool byte right after LastOffset, one per
/// partition).
fn prevotes(seen: &[Vec<u8>], proto: &'static kinspect::protocol::Protocol) -> (usize, usize) {
    let mut d = kinspect::records::decoder(proto);
    let (mut v1, mut with) = (0, 0);
    for r in seen {
        if r.len() < 4 || i16::from_be_bytes([r[0], r[1]]) != VOTE || r[2..4] != [0, 1] {
            continue;
        }
        let mut p = Pdu::default();
        let h = Hints {
            direction: Some(Direction::Request),
            has_size_prefix: Some(false),
            ..Hints::default()
        };
        d.decode_frame(r, &h, &mut p);
        if p.tree.has_errors() {
            continue;
        }
        v1 += 1;
        let nodes = &p.tree.nodes;
        let parts = nodes.iter().filter(|n| n.name == "PartitionIndex").count();
        let pre: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].name == "PreVote")
            .collect();
        assert_eq!(parts, pre.len(), "every partition carries PreVote");
        for i in pre {
            let prev = &nodes[i - 1];
            assert_eq!(prev.name, "LastOffset");
            assert_eq!((nodes[i].len, nodes[i].offset), (1, prev.offset + 8));
            assert!(r[nodes[i].offset as usize] <= 1, "a bool byte");
            with += 1;
        }
    }
    (v1, with)
}

#[test]
fn the_drafts_vote_v1_is_probed_and_fuzzed_with_prevote_on_the_wire() {
    let proto = overlay();
    // The built-in protocol's Vote v1 (KIP-853) has no PreVote: the overlay's is the one used.
    let spec = kinspect::probe::generate::request_spec(proto, VOTE, 1).unwrap();
    assert!(spec.fields.iter().any(|f| &*f.name == "Topics"));
    let f = vote_fake();
    let mut cfg = probe::Config::new(f.addr, proto);
    cfg.apis.only = vec!["Vote".into()];
    cfg.timeout = Duration::from_millis(300);
    let r = probe::run(&cfg).unwrap();
    assert!(
        r.findings
            .iter()
            .any(|x| x.api_key == VOTE && x.api_version == 1 && x.code == "clean"),
        "{}",
        r.table()
    );
    let (v1, with) = prevotes(&f.seen.lock().unwrap(), proto);
    assert!(
        v1 >= 3 && with >= 1,
        "probe: {with} PreVote fields in {v1} Vote v1 requests"
    );

    f.seen.lock().unwrap().clear();
    let mut fc = fuzz::Config::new(f.addr, proto);
    fc.apis.only = vec!["Vote".into()];
    fc.cases = Some(200);
    fc.timeout = Duration::from_millis(300);
    let rep = fuzz::run(&fc).unwrap();
    assert!(
        rep.coverage.contains_key(&(VOTE, 1)),
        "{}",
        rep.summary(proto)
    );
    let (v1, with) = prevotes(&f.seen.lock().unwrap(), proto);
    assert!(
        v1 >= 10 && with >= 10,
        "fuzz: {with} PreVote fields in {v1} Vote v1 requests"
    );
    assert!(rep.stats.decoded > 0);
}
