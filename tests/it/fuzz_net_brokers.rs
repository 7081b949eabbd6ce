//! `kinspect fuzz` against the real brokers tests/it/brokers.rs starts (librdkafka's mock,
//! tansu), bounded to a few seconds each: cases are sent, answers decoded, and two runs with one
//! seed (each on a fresh broker) send the same first cases.

use super::brokers::{mock, require, tansu, Broker};
use kinspect::probe::fuzz::{self, FuzzReport};
use std::time::Duration;

fn run(b: &Broker) -> FuzzReport {
    let mut cfg = fuzz::Config::new(b.addr, kinspect::protocol::builtin());
    cfg.seed = 11;
    cfg.cases = Some(1500);
    cfg.seconds = Some(3.0);
    cfg.timeout = Duration::from_millis(500);
    // Neither broker can be restarted on its port: a death is reported, not minimised at length.
    cfg.restart_wait = Duration::from_millis(500);
    cfg.minimise_budget = 20;
    cfg.max_findings = 5;
    let r = fuzz::run(&cfg).expect("the fuzzer runs");
    println!("{} {}", b.name, r.summary(cfg.protocol));
    r
}

fn check(name: &str, start: fn() -> Result<Broker, String>) {
    let test = format!("fuzz_{name}_short_run_is_deterministic");
    let Some(b1) = require(&test, start()) else {
        return;
    };
    let a = run(&b1);
    drop(b1);
    let Some(b2) = require(&test, start()) else {
        return;
    };
    let b = run(&b2);
    for r in [&a, &b] {
        assert!(r.stats.cases >= 64, "{}", r.stats.cases);
        assert!(r.stats.decoded > 0, "answers decoded");
        assert!(r.coverage.len() > 5);
    }
    let n = a.first_cases.len().min(b.first_cases.len());
    assert!(n >= 64, "{n}");
    assert_eq!(
        a.first_cases[..n],
        b.first_cases[..n],
        "the same seed sends the same cases"
    );
}

#[test]
fn fuzz_mock_short_run_is_deterministic() {
    check("mock", mock);
}

#[test]
fn fuzz_tansu_short_run_is_deterministic() {
    check("tansu", tansu);
}

/// librdkafka's mock stores what it is given: a Produce whose batch has a CRC that does not
/// match (or a codec that does not exist) is answered with error 0 for its partition, where
/// Kafka answers CORRUPT_MESSAGE. The fuzzer must say so on its own, from Produce cases alone.
#[test]
fn fuzz_finds_the_mock_accepting_corrupt_batches() {
    let Some(b) = require("fuzz_finds_the_mock_accepting_corrupt_batches", mock()) else {
        return;
    };
    let mut cfg = fuzz::Config::new(b.addr, kinspect::protocol::builtin());
    cfg.seed = 5;
    cfg.apis.only = vec!["Produce".into()];
    cfg.cases = Some(2000);
    cfg.seconds = Some(10.0);
    cfg.timeout = Duration::from_millis(500);
    cfg.restart_wait = Duration::from_millis(500);
    cfg.minimise_budget = 20;
    cfg.max_findings = 10;
    let r = fuzz::run(&cfg).expect("the fuzzer runs");
    let accepted: Vec<_> = r
        .findings
        .iter()
        .filter(|s| s.finding.code == "accepted-corrupt-batch")
        .collect();
    assert!(
        !accepted.is_empty(),
        "no accepted-corrupt-batch: {}",
        r.summary(cfg.protocol)
    );
    for s in accepted {
        let seq = &s.reproducer.sequence;
        assert!(
            seq.iter()
                .any(|c| kinspect::probe::fuzz::exec::MUST_REFUSE.contains(&c.mutator.as_str())),
            "{:?}",
            seq.iter().map(|c| &c.mutator).collect::<Vec<_>>()
        );
    }
}
