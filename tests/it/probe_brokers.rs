//! `kinspect probe` against real brokers (tests/it/brokers.rs starts them on loopback): the
//! defects already visible in ../shared/captures must be found by the probe on its own, and
//! what a broker does right must be reported clean.

use super::brokers::{group_members, mock, require, tansu};
use kinspect::probe::{self, Config, Report};
use std::time::Duration;

fn sweep(addr: std::net::SocketAddr, only: &[&str]) -> Report {
    let mut cfg = Config::new(addr, kinspect::protocol::builtin());
    cfg.apis.only = only.iter().map(|s| s.to_string()).collect();
    cfg.variants = 1;
    cfg.seed = 7;
    cfg.timeout = Duration::from_millis(1000);
    cfg.deadline = Duration::from_secs(40);
    probe::run(&cfg).expect("the probe runs")
}

fn has(r: &Report, code: &str, api: &str, v: i16) -> bool {
    r.findings
        .iter()
        .any(|f| f.code == code && f.api == Some(api) && f.api_version == v)
}

fn verdict(r: &Report, api: &str, v: i16) -> &'static str {
    r.rows()
        .iter()
        .find(|row| row.api == api && row.api_version == v)
        .map_or("absent", |row| row.verdict)
}

#[test]
fn probe_finds_the_mock_clusters_defects() {
    let Some(b) = require("probe_finds_the_mock_clusters_defects", mock()) else {
        return;
    };
    let r = sweep(b.addr, &["ApiVersions", "ListOffsets", "Metadata"]);
    println!("{}", r.table());
    // An UNSUPPORTED_VERSION answer valid neither as the version asked nor as the v0 fallback:
    // at the negotiation (v4) and in the sweep, past the advertised 0-2 (v3).
    for v in [3, 4] {
        assert!(
            has(&r, "malformed-response", "ApiVersions", v),
            "ApiVersions v{v}"
        );
    }
    // ListOffsets v5 answers carry four bytes after the body.
    let lo = r
        .findings
        .iter()
        .find(|f| {
            f.code == "malformed-response" && f.api == Some("ListOffsets") && f.api_version == 5
        })
        .expect("ListOffsets v5 malformed");
    assert!(
        lo.diagnostics.iter().any(|d| d.code == "trailing-bytes"),
        "{:?}",
        lo.diagnostics
    );
    assert!(lo.message.contains("4 bytes"), "{}", lo.message);
    for v in 0..=2 {
        assert_eq!(verdict(&r, "ApiVersions", v), "clean", "ApiVersions v{v}");
        assert_eq!(verdict(&r, "Metadata", v), "clean", "Metadata v{v}");
    }
    // Metadata v3 is past the mock's range: it closes the connection, as Kafka does.
    assert_eq!(verdict(&r, "Metadata", 3), "past-range-refused");
}

#[test]
fn probe_finds_tansus_defects() {
    let Some(b) = require("probe_finds_tansus_defects", tansu()) else {
        return;
    };
    let r = sweep(b.addr, &["ApiVersions", "Metadata", "OffsetFetch"]);
    println!("{}", r.table());
    // Metadata v13 is past tansu's advertised 0-12, yet answered, with a v12-shaped body: the
    // top-level ErrorCode v13 added is missing.
    assert!(has(&r, "past-range-answered", "Metadata", 13));
    let m = r
        .findings
        .iter()
        .find(|f| {
            f.code == "malformed-response" && f.api == Some("Metadata") && f.api_version == 13
        })
        .expect("Metadata v13 malformed");
    assert!(
        m.diagnostics
            .iter()
            .any(|d| d.code == "truncated" && d.path == "body.ErrorCode"),
        "{:?}",
        m.diagnostics
    );
    // OffsetFetch v3 with Topics null (all topics): the answer lacks its Topics array.
    let of = r
        .findings
        .iter()
        .find(|f| {
            f.code == "malformed-response" && f.api == Some("OffsetFetch") && f.api_version == 3
        })
        .expect("OffsetFetch v3 malformed");
    assert_eq!(of.variant, "nulls");
    for v in 0..=4 {
        assert_eq!(verdict(&r, "ApiVersions", v), "clean", "ApiVersions v{v}");
    }
    for v in [1, 4, 12] {
        assert_eq!(verdict(&r, "Metadata", v), "clean", "Metadata v{v}");
    }
}

/// tansu runs under `timeout` (its lifetime bound); dropping the handle once killed only
/// `timeout`, and the broker lived on, orphaned.
#[test]
fn dropping_a_broker_handle_kills_the_broker_not_only_its_timeout_wrapper() {
    let Some(b) = require(
        "dropping_a_broker_handle_kills_the_broker_not_only_its_timeout_wrapper",
        tansu(),
    ) else {
        return;
    };
    let pgid = b.pid();
    let before = group_members(pgid);
    assert!(
        before.iter().any(|(_, name)| name.contains("tansu")),
        "tansu is in the handle's process group: {before:?}"
    );
    drop(b);
    let end = std::time::Instant::now() + Duration::from_secs(5);
    let mut left = group_members(pgid);
    while !left.is_empty() && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
        left = group_members(pgid);
    }
    assert!(left.is_empty(), "still running after drop: {left:?}");
}
