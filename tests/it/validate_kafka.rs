//! Kafka's own spec folders as the oracle: every folder of a release validates with zero errors
//! under that release's rules (as Kafka's generator of that release accepts them), and each
//! release's generator rejects what the other release changed (as measured with Kafka's own
//! generators: reference/kafka-generator-rules.md, "Empirical check").

use crate::common;

use kinspect::schema::diag::SchemaDiag;
use kinspect::schema::validate::files::read_inputs;
use kinspect::schema::validate::{validate_files, Release};
use std::path::{Path, PathBuf};

/// The folders holding spec files under one release (the generator runs once per folder).
fn spec_folders(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut has_json = false;
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                has_json = true;
            }
        }
        if has_json {
            out.push(d);
        }
    }
    out.sort();
    out
}

fn validate_folder(dir: &Path, release: Release) -> (usize, Vec<SchemaDiag>) {
    let inputs = read_inputs(&[dir.to_path_buf()]).unwrap();
    assert!(
        inputs.diags.is_empty(),
        "{}: unreadable files",
        dir.display()
    );
    let n = inputs.files.len();
    (n, validate_files(&inputs.files, release))
}

fn errors(d: &[SchemaDiag]) -> Vec<String> {
    d.iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect()
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn every_release_folder_is_valid_under_its_own_release() {
    let Some(shared) =
        common::shared_or_skip("every_release_folder_is_valid_under_its_own_release")
    else {
        return;
    };
    for (name, release, expect_folders) in
        [("4.3.1", Release::V4_3, 9), ("3.9.0", Release::V3_9, 8)]
    {
        let folders = spec_folders(&shared.join("kafka-schemas").join(name));
        assert_eq!(folders.len(), expect_folders, "{name}: spec folders");
        let mut files = 0;
        for dir in &folders {
            let (n, diags) = validate_folder(dir, release);
            files += n;
            let e = errors(&diags);
            assert!(
                e.is_empty(),
                "{} under {release}: {} errors:\n{}",
                dir.display(),
                e.len(),
                e.join("\n")
            );
        }
        // Every spec file counted, the generator's own test specs included.
        let expect_files = if name == "4.3.1" { 286 } else { 245 };
        assert_eq!(files, expect_files, "{name}: files validated");
    }
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn the_3_9_clients_folder_fails_under_4_3_on_zk_broker() {
    let Some(shared) =
        common::shared_or_skip("the_3_9_clients_folder_fails_under_4_3_on_zk_broker")
    else {
        return;
    };
    let dir = shared.join("kafka-schemas/3.9.0/clients/src/main/resources/common/message");
    let (_, diags) = validate_folder(&dir, Release::V4_3);
    let e: Vec<&SchemaDiag> = diags.iter().filter(|d| d.is_error()).collect();
    assert!(!e.is_empty());
    assert!(
        e.iter().all(|d| d.code == "unknown-listener"),
        "only zkBroker separates them:\n{}",
        errors(&diags).join("\n")
    );
    // LeaderAndIsrRequest.json line 19: "listeners": ["zkBroker"]
    let lai = e
        .iter()
        .find(|d| d.file.ends_with("/LeaderAndIsrRequest.json"))
        .expect("LeaderAndIsr uses zkBroker");
    let text = std::fs::read_to_string(dir.join("LeaderAndIsrRequest.json")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"zkBroker\""))
        .unwrap() as u32
        + 1;
    assert_eq!(lai.pos.line, line);
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn the_4_3_stop_replica_request_fails_under_3_9() {
    let Some(shared) = common::shared_or_skip("the_4_3_stop_replica_request_fails_under_3_9")
    else {
        return;
    };
    let dir = shared.join("kafka-schemas/4.3.1/clients/src/main/resources/common/message");
    let (_, diags) = validate_folder(&dir, Release::V3_9);
    let stop: Vec<&SchemaDiag> = diags
        .iter()
        .filter(|d| d.is_error() && d.file.ends_with("/StopReplicaRequest.json"))
        .collect();
    let codes: Vec<&str> = stop.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"missing-flexible-versions"), "{codes:?}");
    assert!(codes.contains(&"empty-valid-versions"), "{codes:?}");
    // And under 4.3 the same file is fine.
    let (_, d43) = validate_folder(&dir, Release::V4_3);
    assert!(errors(&d43).is_empty());
}

/// Kafka keeps the wire of every version it ships: 4.3.1 against 3.9.0 breaks nothing in a
/// version both releases ship, except where upstream changed an early-access record in place.
/// The renames are the ones the upstream history records (reference/seeds-vs-upstream.md §4:
/// Vote v2 renamed Candidate* to Replica*; API 74 ListClientMetricsResources became
/// ListConfigResources).
#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn kafka_4_3_is_wire_compatible_with_3_9_where_both_ship_a_version() {
    let Some(shared) =
        common::shared_or_skip("kafka_4_3_is_wire_compatible_with_3_9_where_both_ship_a_version")
    else {
        return;
    };
    use kinspect::schema::compat::{check, BaselineSpec};
    use kinspect::schema::validate::check_files;
    use std::sync::Arc;
    let load = |release: &str| {
        let inputs = read_inputs(&[shared.join("kafka-schemas").join(release)]).unwrap();
        let (checked, _) = check_files(&inputs.files, Release::V4_3);
        checked
    };
    let new = load("4.3.1");
    let old = load("3.9.0");
    let changed: Vec<(Arc<str>, &kinspect::schema::model::MessageSpec)> = new
        .iter()
        .filter_map(|c| c.spec.as_ref().map(|s| (c.file.clone(), s)))
        .collect();
    let baseline: Vec<BaselineSpec> = old
        .iter()
        .filter_map(|c| {
            c.spec.as_ref().map(|spec| BaselineSpec {
                origin: &c.file,
                spec,
            })
        })
        .collect();
    assert_eq!(baseline.len(), 245);
    let diags = check(&changed, &baseline);

    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}", d))
        .collect();
    assert_eq!(errors.len(), 1, "{}", errors.join("\n"));
    let e = diags.iter().find(|d| d.is_error()).unwrap();
    assert!(
        e.file.ends_with("/ShareGroupMetadataValue.json")
            && e.code == "compat-field-added"
            && e.path == "MetadataHash"
    );
    // The oracle: the 3.9.0 record has no MetadataHash, the 4.3.1 one has it untagged at 0+.
    let gc = |r: &str| {
        std::fs::read_to_string(shared.join("kafka-schemas").join(r).join(
            "group-coordinator/src/main/resources/common/message/ShareGroupMetadataValue.json",
        ))
        .unwrap()
    };
    assert!(!gc("3.9.0").contains("MetadataHash"));
    let line = gc("4.3.1")
        .lines()
        .find(|l| l.contains("\"MetadataHash\""))
        .unwrap()
        .to_string();
    assert!(
        line.contains("\"versions\": \"0+\"") && !line.contains("tag"),
        "{line}"
    );

    let mut renames: Vec<(String, String)> = diags
        .iter()
        .filter(|d| d.code == "compat-field-renamed")
        .map(|d| {
            (
                d.file.rsplit('/').next().unwrap().to_string(),
                d.path.clone(),
            )
        })
        .collect();
    renames.sort();
    let expect = [
        ("ListConfigResourcesResponse.json", "ConfigResources"),
        (
            "ListConfigResourcesResponse.json",
            "ConfigResources.ResourceName",
        ),
        ("VoteRequest.json", "Topics.Partitions.ReplicaDirectoryId"),
        ("VoteRequest.json", "Topics.Partitions.ReplicaEpoch"),
        ("VoteRequest.json", "Topics.Partitions.ReplicaId"),
    ];
    assert_eq!(renames, expect.map(|(a, b)| (a.to_string(), b.to_string())));
}

/// The lints find real slips upstream: 3.9.0's DescribeTopicPartitions specs write "versions"
/// twice in one field (Kafka keeps the last).
#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn the_duplicate_key_lint_finds_kafka_3_9_slips() {
    let Some(shared) = common::shared_or_skip("the_duplicate_key_lint_finds_kafka_3_9_slips")
    else {
        return;
    };
    let dir = shared.join("kafka-schemas/3.9.0/clients/src/main/resources/common/message");
    let (_, diags) = validate_folder(&dir, Release::V3_9);
    let dups: Vec<&SchemaDiag> = diags.iter().filter(|d| d.code == "duplicate-key").collect();
    assert_eq!(dups.len(), 3, "{dups:?}");
    for d in dups {
        let text = std::fs::read_to_string(&*d.file).unwrap();
        let line = text.lines().nth(d.pos.line as usize - 1).unwrap();
        let key_at: String = line.chars().skip(d.pos.col as usize - 1).take(10).collect();
        assert_eq!(key_at, "\"versions\"", "{d}");
        assert_eq!(
            line.matches("\"versions\"").count()
                + text
                    .lines()
                    .nth(d.pos.line as usize - 2)
                    .unwrap()
                    .matches("\"versions\"")
                    .count(),
            2
        );
    }
}
