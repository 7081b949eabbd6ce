//! The built-in protocol: the committed bundle is exactly what `kinspect bundle` makes from
//! Kafka's folders, every spec in it matches its file, and the registry answers as the spec
//! files say (an independent reading of the files is the oracle).

use crate::common;

use kinspect::pdu::Direction;
use kinspect::protocol::registry::BUILTIN_BUNDLE;
use kinspect::protocol::{builtin, CoordinatorGroup, Protocol};
use kinspect::schema::{bundle, load_spec};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `N`, `A-B`, `A+` (to 32767), `none`: the versions a spec's validVersions lists.
fn version_list(s: &str) -> Vec<i16> {
    let s = s.trim();
    if s == "none" {
        return vec![];
    }
    let (lo, hi) = if let Some(a) = s.strip_suffix('+') {
        (a.parse().unwrap(), i16::MAX)
    } else if let Some((a, b)) = s.split_once('-') {
        (a.parse().unwrap(), b.parse().unwrap())
    } else {
        let n = s.parse().unwrap();
        (n, n)
    };
    (lo..=hi).collect()
}

/// (type, apiKey, validVersions, name) of every spec file of a release, read with serde_json.
fn oracle(release_dir: &Path) -> Vec<(String, Option<i64>, String, String)> {
    common::json_files(release_dir)
        .iter()
        .map(|p| {
            let v: serde_json::Value = serde_json::from_str(&common::strip_comments(
                &std::fs::read_to_string(p).unwrap(),
            ))
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (
                v["type"].as_str().unwrap().to_string(),
                v["apiKey"].as_i64(),
                v["validVersions"].as_str().unwrap().to_string(),
                v["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn committed_bundle_is_what_the_bundle_command_makes() {
    let Some(shared) = common::shared_or_skip("committed_bundle_is_what_the_bundle_command_makes")
    else {
        return;
    };
    let out = std::env::temp_dir().join(format!("kinspect-bundle-{}.json", std::process::id()));
    let s = shared.join("kafka-schemas");
    let status = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("bundle")
        .arg("--release")
        .arg(format!("4.3.1={}", s.join("4.3.1").display()))
        .arg("--release")
        .arg(format!("3.9.0={}", s.join("3.9.0").display()))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let fresh = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let committed =
        std::fs::read_to_string(common::repo().join("src/protocol/builtin.json")).unwrap();
    assert!(
        fresh == committed,
        "src/protocol/builtin.json is stale: regenerate it with `kinspect bundle --release 4.3.1=… --release 3.9.0=… -o src/protocol/builtin.json`"
    );
}

#[test]
fn bundle_holds_facts_only() {
    let text = std::fs::read_to_string(common::repo().join("src/protocol/builtin.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    fn walk(v: &serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(a) = m.get("about") {
                    assert_eq!(a, "", "about prose must not be bundled");
                }
                m.values().for_each(walk);
            }
            serde_json::Value::Array(a) => a.iter().for_each(walk),
            _ => {}
        }
    }
    walk(&v);
    assert!(!text.contains("Licensed to the Apache"));
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn every_bundled_spec_matches_its_file() {
    let Some(shared) = common::shared_or_skip("every_bundled_spec_matches_its_file") else {
        return;
    };
    let p = builtin();
    assert_eq!(p.releases(), ["4.3.1", "3.9.0"]);
    let mut paths = BTreeSet::new();
    let mut per_release: BTreeMap<&str, usize> = BTreeMap::new();
    for (release, spec) in p.specs() {
        let file = shared.join("kafka-schemas").join(release).join(&*spec.path);
        let text = std::fs::read_to_string(&file).unwrap();
        let (loaded, _) = load_spec(&spec.path, &text);
        assert_eq!(
            bundle::facts(&loaded.unwrap()),
            bundle::facts(spec),
            "{release} {}",
            spec.path
        );
        paths.insert(spec.path.to_string());
        *per_release.entry(release).or_default() += 1;
    }
    for (release, n) in per_release {
        assert_eq!(
            n,
            common::json_files(&shared.join("kafka-schemas").join(release)).len(),
            "{release}"
        );
    }
    assert_eq!(paths.len(), 290, "distinct spec files over both releases");
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn api_keys_and_combinations_match_the_spec_files() {
    let p = builtin();
    let keys = p.api_keys();
    assert_eq!(keys.len(), 93);
    // Every (api, version, direction) the registry resolves.
    let mut resolved = 0;
    for &k in &keys {
        for v in 0..=200i16 {
            for d in [Direction::Request, Direction::Response] {
                resolved += usize::from(p.message(k, v, d).is_some());
            }
        }
    }
    let Some(shared) = common::shared_or_skip("api_keys_and_combinations_match_the_spec_files")
    else {
        assert_eq!(resolved, 722, "the issue's count");
        return;
    };
    let mut union: BTreeMap<(i64, &str), BTreeSet<i16>> = BTreeMap::new();
    let files: Vec<_> = ["4.3.1", "3.9.0"]
        .iter()
        .flat_map(|r| oracle(&shared.join("kafka-schemas").join(r)))
        .collect();
    for (ty, key, valid, _) in &files {
        if ty == "request" || ty == "response" {
            union
                .entry((key.unwrap(), ty.as_str()))
                .or_default()
                .extend(version_list(valid));
        }
    }
    let oracle_keys: BTreeSet<i64> = union.keys().map(|(k, _)| *k).collect();
    assert_eq!(
        oracle_keys
            .into_iter()
            .map(|k| k as i16)
            .collect::<Vec<_>>(),
        keys
    );
    let expected: usize = union.values().map(BTreeSet::len).sum();
    assert_eq!(expected, 722, "the issue's count, from the files");
    assert_eq!(resolved, expected);
    for ((k, ty), versions) in &union {
        let d = if *ty == "request" {
            Direction::Request
        } else {
            Direction::Response
        };
        for &v in versions {
            assert!(p.message(*k as i16, v, d).is_some(), "api {k} v{v} {ty}");
        }
    }
}

#[test]
fn release_resolution_follows_the_versions() {
    let p = builtin();
    let rel = |k, v, d| p.message(k, v, d).map(|r| (r.release, &*r.spec.name));
    for v in 0..=2 {
        assert_eq!(
            rel(0, v, Direction::Request),
            Some(("3.9.0", "ProduceRequest")),
            "Produce v{v}"
        );
    }
    assert_eq!(
        rel(0, 3, Direction::Request),
        Some(("4.3.1", "ProduceRequest"))
    );
    for v in 0..=7 {
        assert_eq!(
            rel(4, v, Direction::Request),
            Some(("3.9.0", "LeaderAndIsrRequest")),
            "LeaderAndIsr v{v}"
        );
    }
    assert_eq!(rel(4, 8, Direction::Request), None);
    // API 74 was renamed; 4.3.1 knows versions 3.9.0 does too, so 4.3.1's spec wins there.
    assert_eq!(p.api_name(74), Some("ListConfigResources"));
    assert_eq!(
        rel(74, 0, Direction::Response),
        Some(("4.3.1", "ListConfigResourcesResponse"))
    );
    assert_eq!(p.api_name(56), Some("AlterPartition"));
    assert_eq!(p.api_key("AlterPartitionRequest"), Some(56));
    assert_eq!(
        p.api_key("listclientmetricsresources"),
        Some(74),
        "3.9.0's name still finds the key"
    );
    assert_eq!(p.api_key("produce"), Some(0));
    assert_eq!(p.api_key("Nope"), None);
    assert_eq!(p.api_names().len(), 94, "93 keys, API 74 under two names");
    // Vote v1: 4.3.1's spec, whose field names are Replica*, not 3.9.0's Candidate*.
    let vote = p.message(52, 1, Direction::Request).unwrap();
    assert_eq!(vote.release, "4.3.1");
    let topics = vote
        .spec
        .fields
        .iter()
        .find(|f| &*f.name == "Topics")
        .unwrap();
    let parts = vote
        .spec
        .struct_fields(topics)
        .iter()
        .find(|f| &*f.name == "Partitions")
        .unwrap();
    let names: Vec<&str> = vote
        .spec
        .struct_fields(parts)
        .iter()
        .map(|f| &*f.name)
        .collect();
    assert!(
        names.contains(&"ReplicaEpoch") && names.contains(&"PreVote"),
        "{names:?}"
    );
    let versions = p.api_versions(52);
    assert_eq!(versions.len(), 2);
    assert_eq!((versions[0].release, versions[0].valid.hi), ("4.3.1", 2));
    assert_eq!((versions[1].release, versions[1].valid.hi), ("3.9.0", 1));
}

#[test]
fn headers_names_metadata_and_coordinator_records() {
    let p = builtin();
    assert_eq!(
        p.header(Direction::Request, 0).map(|r| r.release),
        Some("3.9.0")
    );
    assert_eq!(
        p.header(Direction::Request, 2).map(|r| r.release),
        Some("4.3.1")
    );
    assert_eq!(
        p.header(Direction::Response, 1).map(|r| &*r.spec.name),
        Some("ResponseHeader")
    );
    assert!(p.header(Direction::Response, 2).is_none());
    for n in [
        "LeaderChangeMessage",
        "SnapshotHeaderRecord",
        "VotersRecord",
        "KRaftVersionRecord",
        "EndTxnMarker",
    ] {
        assert_eq!(p.by_name(n).map(|r| &*r.spec.name), Some(n));
    }
    assert_eq!(
        p.metadata_record(3, 0).map(|r| &*r.spec.name),
        Some("PartitionRecord")
    );
    assert!(p.metadata_record(3, 99).is_none());
    let key = |g, t| p.coordinator_key(g, t).map(|r| (r.release, &*r.spec.name));
    let value = |g, t, v| {
        p.coordinator_value(g, t, v)
            .map(|r| (r.release, &*r.spec.name))
    };
    assert_eq!(
        key(CoordinatorGroup::Group, 0),
        Some(("4.3.1", "LegacyOffsetCommitKey"))
    );
    assert_eq!(
        key(CoordinatorGroup::Group, 1),
        Some(("4.3.1", "OffsetCommitKey"))
    );
    assert_eq!(
        value(CoordinatorGroup::Group, 1, 3),
        Some(("4.3.1", "OffsetCommitValue"))
    );
    assert_eq!(
        key(CoordinatorGroup::Group, 9),
        Some(("3.9.0", "ShareGroupPartitionMetadataKey"))
    );
    assert_eq!(
        value(CoordinatorGroup::Group, 9, 0),
        Some(("3.9.0", "ShareGroupPartitionMetadataValue"))
    );
    assert_eq!(
        key(CoordinatorGroup::Transaction, 0),
        Some(("4.3.1", "TransactionLogKey"))
    );
    assert_eq!(
        value(CoordinatorGroup::Transaction, 0, 1),
        Some(("4.3.1", "TransactionLogValue"))
    );
    assert_eq!(
        key(CoordinatorGroup::Share, 1),
        Some(("4.3.1", "ShareUpdateKey"))
    );
    assert!(key(CoordinatorGroup::Share, 9).is_none());
    assert!(value(CoordinatorGroup::Group, 1, 99).is_none());
}

#[test]
fn heads_agree_with_their_specs() {
    let lazy = bundle::parse_lazy(BUILTIN_BUNDLE).unwrap();
    assert_eq!(lazy.heads.len(), lazy.lines.len());
    for (head, line) in lazy.heads.iter().zip(&lazy.lines) {
        let spec = bundle::parse_spec(line).unwrap();
        assert_eq!(&bundle::SpecHead::of(&spec), head, "{}", head.path);
    }
}

#[test]
fn damaged_bundles_are_refused_not_panicked_on() {
    let text = BUILTIN_BUNDLE;
    let cut = text.len() / 2;
    let mut cases = vec![
        String::new(),
        "{}".to_string(),
        text[..cut].to_string(),
        text.replacen("\"kinspect_bundle\":1", "\"kinspect_bundle\":2", 1),
        text.replacen("\"specs\":[0,", "\"specs\":[99999,", 1),
        // One spec line fewer than heads.
        text.replacen(",\n{", ",", 1),
    ];
    if let Some(i) = text.find("\"validVersions\":\"") {
        cases.push(format!(
            "{}\"validVersions\":\"x{}",
            &text[..i],
            &text[i + 17..]
        ));
    }
    for (i, c) in cases.iter().enumerate() {
        assert!(bundle::parse(c).is_err(), "case {i} should be refused");
    }
}

#[test]
fn builtin_loads_fast() {
    let t = std::time::Instant::now();
    let p = Protocol::from_bundle_text(BUILTIN_BUNDLE).unwrap();
    let lazy = t.elapsed();
    let t = std::time::Instant::now();
    let n = p.specs().count();
    let all = t.elapsed();
    eprintln!("built-in protocol: heads in {lazy:?}, all {n} specs parsed in a further {all:?}");
    // Generous bounds for an unoptimized test build on a loaded machine.
    assert!(lazy.as_millis() < 200, "{lazy:?}");
    assert!(all.as_millis() < 3000, "{all:?}");
}
