//! The KIP draft seeds (tests/fixtures/seeds, extracted as they stand on the wiki): every
//! mistake they carry is reported at its line, with the suggestion a reader needs, and the
//! VoteRequest draft's PreVote field, added to version 1 which Kafka already ships, is
//! reported as a wire incompatibility against the built-in protocol.

use crate::common;

use kinspect::protocol::registry::builtin;
use kinspect::schema::compat::{self, BaselineSpec};
use kinspect::schema::diag::SchemaDiag;
use kinspect::schema::validate::{check_files, Release};
use std::sync::Arc;

fn seeds() -> Vec<(String, String)> {
    let dir = common::repo().join("tests/fixtures/seeds");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            (
                format!("seeds/{}", p.file_name().unwrap().to_string_lossy()),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// (file, code, line, text that must be on that line, suggestion)
const EXPECTED: &[(&str, &str, u32, &str, Option<&str>)] = &[
    (
        "LeaderAndIsrRequest.json",
        "invalid-type",
        77,
        "\"booleanbool\"",
        Some("bool"),
    ),
    (
        "AlterIsrRequest.json",
        "invalid-type",
        24,
        "\"booleanbool\"",
        Some("bool"),
    ),
    (
        "AlterIsrRequest.json",
        "unknown-property",
        24,
        "\"ignoreable\"",
        Some("ignorable"),
    ),
    (
        "AlterIsrResponse.json",
        "invalid-type",
        27,
        "\"booleanbool\"",
        Some("bool"),
    ),
    (
        "AlterIsrResponse.json",
        "unknown-property",
        27,
        "\"ignoreable\"",
        Some("ignorable"),
    ),
    (
        "AlterIsrResponse.json",
        "non-json-whitespace",
        29,
        "\u{a0}",
        None,
    ),
    (
        "PartitionRecord.json",
        "invalid-type",
        23,
        "\"booleanbool\"",
        Some("bool"),
    ),
    (
        "PartitionRecord.json",
        "non-json-whitespace",
        25,
        "\u{a0}",
        None,
    ),
    (
        "VoteRequest.json",
        "invalid-type",
        27,
        "\"boolean\"",
        Some("bool"),
    ),
];

#[test]
fn every_seed_mistake_is_reported_at_its_line() {
    let files = seeds();
    assert_eq!(files.len(), 5, "five draft messages");
    for release in Release::ALL {
        let (_, diags) = check_files(&files, release);
        for (file, code, line, token, suggestion) in EXPECTED {
            let path = format!("seeds/{file}");
            let text = &files.iter().find(|(p, _)| *p == path).unwrap().1;
            let on_line = text.lines().nth(*line as usize - 1).unwrap_or("");
            assert!(
                on_line.contains(token),
                "fixture drift: {file}:{line} no longer holds {token:?}"
            );
            let found: Vec<&SchemaDiag> = diags
                .iter()
                .filter(|d| *d.file == path && d.code == *code && d.pos.line == *line)
                .collect();
            assert!(
                !found.is_empty(),
                "{release}: no {code} at {file}:{line}; got:\n{}",
                listing(&diags)
            );
            assert!(found.iter().all(|d| d.is_error()));
            // The column is that of the offending token on the line.
            let at = on_line
                .find(token)
                .map(|b| on_line[..b].chars().count() as u32 + 1)
                .unwrap();
            assert!(
                found.iter().any(|d| d.pos.col == at),
                "{release}: {code} at {file}:{line} should point at column {at}: {found:?}"
            );
            if let Some(s) = suggestion {
                assert!(
                    found.iter().any(|d| d.suggestion.as_deref() == Some(*s)),
                    "{file}:{line}: suggestion {s}"
                );
            }
        }
    }
}

#[test]
fn a_non_breaking_space_does_not_hide_the_rest_of_the_file() {
    // AlterIsrResponse.json's U+00A0 stop Kafka's parser on line 29; kinspect reports them and
    // reads on, so the file's model (and every check after the loader) still exists.
    let files = seeds();
    let (checked, diags) = check_files(&files, Release::V4_3);
    let resp = checked
        .iter()
        .find(|c| c.file.ends_with("AlterIsrResponse.json"))
        .unwrap();
    assert!(resp.spec.is_some(), "read past the stray spaces");
    let nbsp: Vec<_> = diags
        .iter()
        .filter(|d| d.file.ends_with("AlterIsrResponse.json") && d.code == "non-json-whitespace")
        .collect();
    assert_eq!(
        nbsp.len(),
        1,
        "four U+00A0 on one line make one report: {nbsp:?}"
    );
    assert!(nbsp[0].message.contains("non-breaking space"));
}

#[test]
fn the_vote_draft_adds_pre_vote_to_a_version_kafka_already_ships() {
    let files: Vec<(String, String)> = seeds()
        .into_iter()
        .filter(|(p, _)| p.ends_with("VoteRequest.json"))
        .collect();
    let (checked, _) = check_files(&files, Release::V4_3);
    let changed: Vec<(Arc<str>, &kinspect::schema::model::MessageSpec)> = checked
        .iter()
        .filter_map(|c| c.spec.as_ref().map(|s| (c.file.clone(), s)))
        .collect();
    assert_eq!(changed.len(), 1);
    let baseline: Vec<BaselineSpec> = builtin()
        .specs()
        .map(|(origin, spec)| BaselineSpec { origin, spec })
        .collect();
    let diags = compat::check(&changed, &baseline);
    let pre = diags
        .iter()
        .find(|d| d.code == "compat-field-added" && d.path == "Topics.Partitions.PreVote")
        .unwrap_or_else(|| panic!("PreVote not reported:\n{}", listing(&diags)));
    assert!(pre.is_error());
    assert_eq!(pre.pos.line, 27, "the PreVote field's line");
    assert!(pre.message.contains("version(s) 1,"), "{}", pre.message);
    // The draft's renamed epoch keeps the wire: information, not an error.
    let renamed = diags
        .iter()
        .find(|d| d.code == "compat-field-renamed" && d.path == "Topics.Partitions.ProposedEpoch");
    assert!(
        renamed.is_some_and(|d| !d.is_error() && d.pos.line == 19),
        "{}",
        listing(&diags)
    );
}

fn listing(d: &[SchemaDiag]) -> String {
    d.iter().map(|d| format!("  {d}\n")).collect()
}
