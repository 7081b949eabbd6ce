//! Broken specs of our own, one or more per rule: each is a small spec inline, with `$` written
//! just before the token the diagnostic must point at. The expected line:column is where that
//! marker sits (the table also states the line, as a check on the table itself); the test
//! removes the marker, validates, and requires a diagnostic with that code, severity and place.

use kinspect::schema::diag::{SchemaDiag, Severity};
use kinspect::schema::validate::{validate_files, Release};

struct Case {
    name: &'static str,
    release: &'static str,
    code: &'static str,
    severity: Severity,
    line: u32,
    text: &'static str,
}

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;
const I: Severity = Severity::Info;

/// Removes the `$` marker and returns the text with the marker's 1-based line and column
/// (columns count characters, as editors do).
fn unmark(marked: &str) -> (String, u32, u32) {
    let at = marked
        .find('$')
        .expect("every case marks its mistake with $");
    let before = &marked[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() as u32 + 1;
    let mut text = marked.to_string();
    text.remove(at);
    assert!(!text.contains('$'), "one marker per case");
    (text, line, col)
}

fn show(diags: &[SchemaDiag]) -> String {
    diags.iter().map(|d| format!("  {d}\n")).collect()
}

#[test]
fn every_rule_reports_its_code_at_the_mistake() {
    assert!(CASES.len() + CROSS.len() >= 60, "at least 60 broken specs");
    let mut failures = Vec::new();
    for c in CASES {
        let (text, line, col) = unmark(c.text);
        assert_eq!(
            line, c.line,
            "{}: the table's line disagrees with its marker",
            c.name
        );
        let release = Release::parse(c.release).unwrap();
        let file = format!("cases/{}.json", c.name);
        let diags = validate_files(&[(file, text)], release);
        let hit = diags.iter().any(|d| {
            d.code == c.code && d.severity == c.severity && d.pos.line == line && d.pos.col == col
        });
        if !hit {
            failures.push(format!(
                "{} ({}): expected {}[{}] at {line}:{col}, got:\n{}",
                c.name,
                c.release,
                c.severity.as_str(),
                c.code,
                show(&diags)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Cross-file cases: several files of one directory; the marked one carries the diagnostic.
struct Cross {
    name: &'static str,
    release: &'static str,
    code: &'static str,
    severity: Severity,
    line: u32,
    /// (path, text); exactly one text holds the marker.
    files: &'static [(&'static str, &'static str)],
}

#[test]
fn cross_file_rules_report_at_the_mistake() {
    let mut failures = Vec::new();
    for c in CROSS {
        let mut files = Vec::new();
        let mut expect = None;
        for (path, text) in c.files {
            if text.contains('$') {
                let (t, line, col) = unmark(text);
                expect = Some((path.to_string(), line, col));
                files.push((path.to_string(), t));
            } else {
                files.push((path.to_string(), text.to_string()));
            }
        }
        let (file, line, col) = expect.expect("one file is marked");
        assert_eq!(
            line, c.line,
            "{}: the table's line disagrees with its marker",
            c.name
        );
        let diags = validate_files(&files, Release::parse(c.release).unwrap());
        let hit = diags.iter().any(|d| {
            d.code == c.code
                && d.severity == c.severity
                && *d.file == *file
                && d.pos.line == line
                && d.pos.col == col
        });
        if !hit {
            failures.push(format!(
                "{}: expected {}[{}] at {file}:{line}:{col}, got:\n{}",
                c.name,
                c.severity.as_str(),
                c.code,
                show(&diags)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} cross-file cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What Kafka accepts must not be an error (each is a rule's boundary, per release).
#[test]
fn accepted_specs_have_no_errors() {
    for (name, release, files) in ACCEPTED {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let diags = validate_files(&files, Release::parse(release).unwrap());
        let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).cloned().collect();
        assert!(
            errors.is_empty(),
            "{name} ({release}) should have no error:\n{}",
            show(&errors)
        );
    }
}

const CASES: &[Case] = &[
    // ---- messages (M) ----
    Case { name: "m4-missing-flexible", release: "4.3", code: "missing-flexible-versions", severity: E, line: 1, text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "0-1",
  "fields": []
}"# },
    Case { name: "m4-missing-flexible-3.9-empty", release: "3.9", code: "missing-flexible-versions", severity: E, line: 1, text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "none",
  "fields": []
}"# },
    Case { name: "m4-blank-flexible", release: "4.3", code: "missing-flexible-versions", severity: E, line: 1, text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "0-1",
  "flexibleVersions": " ",
  "fields": []
}"# },
    Case { name: "m3-empty-valid-3.9", release: "3.9", code: "empty-valid-versions", severity: E, line: 4, text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "none",
  "flexibleVersions": "none",
  "fields": []
}"# },
    Case { name: "m3-reversed-valid-3.9", release: "3.9", code: "empty-valid-versions", severity: E, line: 4, text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "3-1",
  "flexibleVersions": "none",
  "fields": []
}"# },
    Case { name: "m5-flexible-closed", release: "4.3", code: "flexible-versions-not-open-ended", severity: E, line: 5, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  $"flexibleVersions": "0-2",
  "fields": []
}"# },
    Case { name: "m6-unbounded", release: "4.3", code: "unbounded-valid-versions", severity: E, line: 4, text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "0+",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m7-listeners-on-data", release: "4.3", code: "listeners-not-request", severity: E, line: 6, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  $"listeners": ["broker"],
  "fields": []
}"# },
    Case { name: "m7-zkbroker-4.3", release: "4.3", code: "unknown-listener", severity: E, line: 4, text: r#"{
  "apiKey": 1000,
  "type": "request",
  "listeners": [$"zkBroker", "broker"],
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m7-zkbroker-single-value", release: "4.3", code: "unknown-listener", severity: E, line: 4, text: r#"{
  "apiKey": 1000,
  "type": "request",
  "listeners": $"zkBroker",
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m8-unstable-response", release: "4.3", code: "unstable-not-request", severity: E, line: 7, text: r#"{
  "apiKey": 1000,
  "type": "response",
  "name": "FooResponse",
  "validVersions": "0-1",
  "flexibleVersions": "0+",
  $"latestVersionUnstable": true,
  "fields": []
}"# },
    Case { name: "m14-request-without-key", release: "4.3", code: "missing-api-key", severity: E, line: 1, text: r#"${
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m14-metadata-without-key", release: "3.9", code: "missing-api-key", severity: E, line: 1, text: r#"${
  "type": "metadata",
  "name": "FooRecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m11-coordinator-value-without-key", release: "4.3", code: "missing-api-key", severity: E, line: 1, text: r#"${
  "type": "coordinator-value",
  "name": "FooValue",
  "validVersions": "0",
  "flexibleVersions": "none",
  "fields": []
}"# },
    Case { name: "x6-negative-key", release: "4.3", code: "negative-api-key", severity: W, line: 2, text: r#"{
  $"apiKey": -3,
  "type": "metadata",
  "name": "FooRecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m10-coordinator-key-versions", release: "4.3", code: "coordinator-key-versions", severity: E, line: 4, text: r#"{
  "apiKey": 7,
  "type": "coordinator-key",
  $"validVersions": "0-1",
  "name": "FooKey",
  "flexibleVersions": "none",
  "fields": []
}"# },
    Case { name: "m10-coordinator-key-flexible", release: "4.3", code: "coordinator-key-flexible", severity: E, line: 5, text: r#"{
  "apiKey": 7,
  "type": "coordinator-key",
  "validVersions": "0",
  $"flexibleVersions": "0+",
  "name": "FooKey",
  "fields": []
}"# },
    Case { name: "m9-coordinator-in-3.9", release: "3.9", code: "unsupported-spec-type", severity: E, line: 3, text: r#"{
  "apiKey": 7,
  $"type": "coordinator-value",
  "validVersions": "0",
  "flexibleVersions": "none",
  "name": "FooValue",
  "fields": []
}"# },
    Case { name: "m15-request-suffix", release: "4.3", code: "name-suffix", severity: E, line: 4, text: r#"{
  "apiKey": 1000,
  "type": "request",
  $"name": "FooReq",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m15-response-suffix", release: "3.9", code: "name-suffix", severity: E, line: 4, text: r#"{
  "apiKey": 1000,
  "type": "response",
  $"name": "Response",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "m12-deprecated-beyond", release: "4.3", code: "deprecated-outside-valid", severity: W, line: 6, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-2",
  "flexibleVersions": "0+",
  $"deprecatedVersions": "0-5",
  "fields": []
}"# },
    Case { name: "hv-proposed", release: "4.3", code: "proposed-property", severity: I, line: 7, text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "2+",
  "fields": []
}"# },
    Case { name: "hv-outside-valid", release: "4.3", code: "header-versions-outside-valid", severity: E, line: 7, text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "2-5",
  "fields": []
}"# },
    Case { name: "hv-not-api", release: "3.9", code: "header-versions-not-api", severity: E, line: 5, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  $"headerVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "hv-not-flexible", release: "4.3", code: "header-versions-not-flexible", severity: W, line: 7, text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "1-3",
  "fields": []
}"# },
    // ---- structs (S) ----
    Case { name: "s1-duplicate-tag", release: "4.3", code: "duplicate-tag", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 },
    { "name": "B", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 0 },
    { "name": "C", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 1 }
  ]
}"# },
    Case { name: "s1-duplicate-tag-nested", release: "3.9", code: "duplicate-tag", severity: E, line: 9, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "taggedVersions": "0+", "tag": 0 },
      { "name": "B", "type": "int32", "taggedVersions": "0+", $"tag": 0 }
    ]}
  ]
}"# },
    Case { name: "s2-tag-gap", release: "4.3", code: "tag-gap", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 1 }
  ]
}"# },
    Case { name: "s2-tag-gap-middle", release: "4.3", code: "tag-gap", severity: E, line: 9, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 },
    { "name": "B", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 4 },
    { "name": "C", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 2 }
  ]
}"# },
    Case { name: "s3-duplicate-name-4.3", release: "4.3", code: "duplicate-field-name", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" },
    { $"name": "A", "type": "int64", "versions": "0+" }
  ]
}"# },
    Case { name: "s3-duplicate-name-3.9", release: "3.9", code: "duplicate-field-name", severity: W, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" },
    { $"name": "A", "type": "int64", "versions": "0+" }
  ]
}"# },
    Case { name: "s3-case-collision", release: "4.3", code: "field-name-case-collision", severity: W, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "TopicId", "type": "uuid", "versions": "0+" },
    { $"name": "topicID", "type": "uuid", "versions": "0+" }
  ]
}"# },
    Case { name: "s10-inline-disjoint", release: "4.3", code: "struct-versions-disjoint", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-2",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", $"versions": "3+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "s10-nested-disjoint", release: "3.9", code: "struct-versions-disjoint", severity: E, line: 9, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-5",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Outer", "type": "[]Outer", "versions": "0-2", "fields": [
      { "name": "Inner", "type": "Inner",
        $"versions": "4+", "fields": [
        { "name": "A", "type": "int32", "versions": "0+" }
      ]}
    ]}
  ]
}"# },
    Case { name: "s10-common-empty", release: "4.3", code: "struct-versions-disjoint", severity: E, line: 10, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+" }
  ],
  "commonStructs": [
    { "name": "Item", $"versions": "none", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "s8-common-lower-case", release: "4.3", code: "struct-name-case", severity: E, line: 10, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" }
  ],
  "commonStructs": [
    { $"name": "item", "versions": "0+", "fields": [] }
  ]
}"# },
    Case { name: "s6-common-twice", release: "4.3", code: "duplicate-common-struct", severity: E, line: 11, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+" }
  ],
  "commonStructs": [
    { "name": "Item", "versions": "0+", "fields": [] },
    { $"name": "Item", "versions": "0+", "fields": [] }
  ]
}"# },
    Case { name: "s6-common-redefined-inline", release: "4.3", code: "common-struct-inline-fields", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+",
      $"fields": [ { "name": "B", "type": "int32", "versions": "0+" } ] }
  ],
  "commonStructs": [
    { "name": "Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "s5-inline-twice", release: "4.3", code: "duplicate-struct", severity: E, line: 10, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "First", "type": "[]Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]},
    { "name": "Second", $"type": "[]Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "s5-ghost-twice", release: "3.9", code: "duplicate-struct", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "First", "type": "Ghost", "versions": "0+" },
    { "name": "Second", $"type": "[]Ghost", "versions": "0+" }
  ]
}"# },
    Case { name: "s7-unknown-struct", release: "4.3", code: "unknown-struct", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Things", $"type": "[]Ghost", "versions": "0+" }
  ]
}"# },
    Case { name: "s-unused-common", release: "4.3", code: "unused-common-struct", severity: W, line: 10, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" }
  ],
  "commonStructs": [
    { $"name": "Lonely", "versions": "0+", "fields": [] }
  ]
}"# },
    Case { name: "s9-top-level-map-key", release: "4.3", code: "top-level-map-key", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"mapKey": true }
  ]
}"# },
    // ---- fields (F) ----
    Case { name: "f1-underscore", release: "4.3", code: "invalid-field-name", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { $"name": "leader_epoch", "type": "int32", "versions": "0+" }
  ]
}"# },
    Case { name: "f1-leading-digit", release: "3.9", code: "invalid-field-name", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
      { $"name": "2ndLeader", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "f4-nullable-int", release: "4.3", code: "nullable-not-allowed", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"nullableVersions": "0+" }
  ]
}"# },
    Case { name: "f4-nullable-uuid", release: "3.9", code: "nullable-not-allowed", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "uuid", "versions": "0+", $"nullableVersions": "0+" }
  ]
}"# },
    Case { name: "f5-nullable-beyond", release: "4.3", code: "nullable-outside-versions", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "string", "versions": "2+", $"nullableVersions": "0+" }
  ]
}"# },
    Case { name: "f6-fields-on-int", release: "4.3", code: "fields-on-non-struct", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+",
      $"fields": [ { "name": "B", "type": "int32", "versions": "0+" } ] }
  ]
}"# },
    Case { name: "f6-fields-on-int-array", release: "4.3", code: "fields-ignored", severity: W, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "[]int32", "versions": "0+",
      $"fields": [ { "name": "B", "type": "int32", "versions": "0+" } ] }
  ]
}"# },
    Case { name: "f7-override-on-int", release: "4.3", code: "flexible-override-type", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"flexibleVersions": "none" }
  ]
}"# },
    Case { name: "f7-override-not-subset", release: "4.3", code: "flexible-override-not-subset", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  "fields": [
    { "name": "A", "type": "string", "versions": "0+", $"flexibleVersions": "1+" }
  ]
}"# },
    Case { name: "f8-tag-and-map-key", release: "4.3", code: "tag-with-map-key", severity: E, line: 9, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0,
        $"mapKey": true }
    ]}
  ]
}"# },
    Case { name: "f8-tag-without-tagged-versions", release: "4.3", code: "tag-without-tagged-versions", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"tag": 0 }
  ]
}"# },
    Case { name: "f10-partly-nullable-tagged", release: "4.3", code: "tagged-nullable-partial", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "string", "versions": "0+", "taggedVersions": "1+", "tag": 0,
      $"nullableVersions": "2+" }
  ]
}"# },
    Case { name: "f9-tagged-closed", release: "3.9", code: "tagged-versions-not-open-ended", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"taggedVersions": "1-2", "tag": 0 }
  ]
}"# },
    Case { name: "f9-tagged-beyond-versions", release: "4.3", code: "tagged-outside-versions", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "2+", $"taggedVersions": "1+", "tag": 0 }
  ]
}"# },
    Case { name: "f9-tagged-without-tag", release: "4.3", code: "tagged-versions-without-tag", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"taggedVersions": "0+" }
  ]
}"# },
    Case { name: "f9-tagged-not-flexible", release: "4.3", code: "tagged-not-flexible", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"taggedVersions": "1+", "tag": 0 }
  ]
}"# },
    Case { name: "f9-tagged-not-flexible-nested", release: "3.9", code: "tagged-not-flexible", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "3+",
  "fields": [
    { "name": "Items", "type": "[]Item", "versions": "0+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+", $"taggedVersions": "2+", "tag": 0 }
    ]}
  ]
}"# },
    Case { name: "f11-tagged-records", release: "4.3", code: "tagged-records", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "R", "type": "records", "versions": "0+", $"taggedVersions": "0+", "tag": 0 }
  ]
}"# },
    Case { name: "f11-records-array", release: "4.3", code: "records-array", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "R", $"type": "[]records", "versions": "0+" }
  ]
}"# },
    Case { name: "f12-zero-copy-string", release: "4.3", code: "zero-copy-type", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "string", "versions": "0+", $"zeroCopy": true }
  ]
}"# },
    Case { name: "f13-topic-name-int", release: "4.3", code: "entity-type-mismatch", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"entityType": "topicName" }
  ]
}"# },
    Case { name: "f13-broker-ids-int64", release: "3.9", code: "entity-type-mismatch", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "[]int64", "versions": "0+", $"entityType": "brokerId" }
  ]
}"# },
    Case { name: "f13-producer-id-int32", release: "4.3", code: "entity-type-mismatch", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"entityType": "producerId" }
  ]
}"# },
    Case { name: "f16-never-on-wire", release: "4.3", code: "field-outside-valid-versions", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-2",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", $"versions": "5+" }
  ]
}"# },
    // ---- defaults (D) ----
    Case { name: "d1-bool-yes", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "bool", "versions": "0+", $"default": "yes" }
  ]
}"# },
    Case { name: "d2-int8-hex-range", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int8", "versions": "0+", $"default": "0xff" }
  ]
}"# },
    Case { name: "d2-int16-upper-hex", release: "3.9", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int16", "versions": "0+", $"default": "0X10" }
  ]
}"# },
    Case { name: "d2-int32-overflow", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"default": 2147483648 }
  ]
}"# },
    Case { name: "d2-int64-fraction", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int64", "versions": "0+", $"default": "1.5" }
  ]
}"# },
    Case { name: "d2-uint16-range", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "uint16", "versions": "0+", $"default": "70000" }
  ]
}"# },
    Case { name: "d2-uint32-negative", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "uint32", "versions": "0+", $"default": "-1" }
  ]
}"# },
    Case { name: "d2a-leading-zero", release: "4.3", code: "leading-zero-default", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"default": "010" }
  ]
}"# },
    Case { name: "d3-uuid-not-base64url", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "uuid", "versions": "0+", $"default": "H3KKO4NTRPaC+tEmm3vW7A" }
  ]
}"# },
    Case { name: "d3-uuid-short", release: "3.9", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "uuid", "versions": "0+", $"default": "AAAA" }
  ]
}"# },
    Case { name: "d4-float-word", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "float64", "versions": "0+", $"default": "one" }
  ]
}"# },
    Case { name: "d5-null-string-not-nullable", release: "4.3", code: "null-default-not-nullable", severity: E, line: 8, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "string", "versions": "0+", "nullableVersions": "1+",
      $"default": "null" }
  ]
}"# },
    Case { name: "d6-bytes-text", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "bytes", "versions": "0+", $"default": "abc" }
  ]
}"# },
    Case { name: "d7-records-default", release: "4.3", code: "records-default-ignored", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "R", "type": "records", "versions": "0+", "nullableVersions": "0+", $"default": "abc" }
  ]
}"# },
    Case { name: "d8-struct-braces", release: "4.3", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "S", "type": "Item", "versions": "0+", $"default": "{}", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "d8-null-struct-not-nullable", release: "4.3", code: "null-default-not-nullable", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "S", "type": "Item", "versions": "0+", $"default": "null", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"# },
    Case { name: "d9-array-brackets", release: "3.9", code: "invalid-default", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "[]int32", "versions": "0+", $"default": "[]" }
  ]
}"# },
    // ---- lints read from the JSON ----
    Case { name: "lint-duplicate-key", release: "4.3", code: "duplicate-key", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"versions": "1+" }
  ]
}"# },
    Case { name: "lint-duplicate-message-key", release: "3.9", code: "duplicate-key", severity: W, line: 5, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  $"validVersions": "0-4",
  "flexibleVersions": "0+",
  "fields": []
}"# },
    Case { name: "lint-reversed-field-range", release: "4.3", code: "reversed-range", severity: W, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": $"2-1" }
  ]
}"# },
    Case { name: "lint-reversed-valid-4.3", release: "4.3", code: "reversed-range", severity: W, line: 4, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": $"3-1",
  "fields": []
}"# },
    // ---- what the loader reports, as validate-schema shows it ----
    Case { name: "j2-ignoreable", release: "4.3", code: "unknown-property", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"ignoreable": true }
  ]
}"# },
    Case { name: "f3-booleanbool", release: "3.9", code: "invalid-type", severity: E, line: 7, text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": $"booleanbool", "versions": "0+", "default": "false" }
  ]
}"# },
    Case { name: "j1-nbsp", release: "4.3", code: "json-syntax", severity: E, line: 6, text: "{\n  \"type\": \"data\",\n  \"name\": \"FooData\",\n  \"validVersions\": \"0\",\n  \"flexibleVersions\": \"0+\",\n  $\u{a0}\"fields\": []\n}" },
];

const REQ_1000: &str = r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": []
}"#;
const RESP_1000: &str = r#"{
  "apiKey": 1000,
  "type": "response",
  "name": "FooResponse",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": []
}"#;

const CROSS: &[Cross] = &[
    Cross {
        name: "x1-two-requests",
        release: "4.3",
        code: "duplicate-api-key",
        severity: E,
        line: 2,
        files: &[
            ("d/FooRequest.json", REQ_1000),
            ("d/FooResponse.json", RESP_1000),
            (
                "d/GooRequest.json",
                r#"{
  $"apiKey": 1000,
  "type": "request",
  "name": "GooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": []
}"#,
            ),
        ],
    },
    Cross {
        name: "x2-request-alone",
        release: "3.9",
        code: "missing-response",
        severity: E,
        line: 2,
        files: &[
            ("d/FooResponse.json", RESP_1000),
            (
                "d/BarRequest.json",
                r#"{
  $"apiKey": 1001,
  "type": "request",
  "name": "BarRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
            ),
            ("d/FooRequest.json", REQ_1000),
        ],
    },
    Cross {
        name: "x2-response-alone",
        release: "4.3",
        code: "missing-request",
        severity: E,
        line: 2,
        files: &[(
            "d/BarResponse.json",
            r#"{
  $"apiKey": 1001,
  "type": "response",
  "name": "BarResponse",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
        )],
    },
    Cross {
        name: "x3-pair-differs",
        release: "4.3",
        code: "pair-versions-differ",
        severity: W,
        line: 5,
        files: &[
            ("d/FooRequest.json", REQ_1000),
            (
                "d/FooResponse.json",
                r#"{
  "apiKey": 1000,
  "type": "response",
  "name": "FooResponse",
  $"validVersions": "0-3",
  "flexibleVersions": "1+",
  "fields": []
}"#,
            ),
        ],
    },
    Cross {
        name: "x4-metadata-twice",
        release: "3.9",
        code: "duplicate-metadata-key",
        severity: E,
        line: 2,
        files: &[
            (
                "m/ARecord.json",
                r#"{
  "apiKey": 3,
  "type": "metadata",
  "name": "ARecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
            ),
            (
                "m/BRecord.json",
                r#"{
  $"apiKey": 3,
  "type": "metadata",
  "name": "BRecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
            ),
        ],
    },
    Cross {
        name: "x5-value-twice",
        release: "4.3",
        code: "duplicate-coordinator-key",
        severity: E,
        line: 2,
        files: &[
            (
                "g/AKey.json",
                r#"{ "apiKey": 4, "type": "coordinator-key", "name": "AKey", "validVersions": "0", "flexibleVersions": "none", "fields": [] }"#,
            ),
            (
                "g/AValue.json",
                r#"{ "apiKey": 4, "type": "coordinator-value", "name": "AValue", "validVersions": "0", "flexibleVersions": "0+", "fields": [] }"#,
            ),
            (
                "g/BValue.json",
                r#"{
  $"apiKey": 4,
  "type": "coordinator-value",
  "name": "BValue",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
            ),
        ],
    },
    Cross {
        name: "x5-key-without-value",
        release: "4.3",
        code: "coordinator-missing-value",
        severity: E,
        line: 1,
        files: &[(
            "g/AKey.json",
            r#"{ $"apiKey": 4, "type": "coordinator-key", "name": "AKey", "validVersions": "0", "flexibleVersions": "none", "fields": [] }"#,
        )],
    },
    Cross {
        name: "x5-value-without-key",
        release: "4.3",
        code: "coordinator-missing-key",
        severity: E,
        line: 3,
        files: &[(
            "g/AValue.json",
            r#"{
  "type": "coordinator-value",
  $"apiKey": 9, "name": "AValue", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [] }"#,
        )],
    },
    Cross {
        name: "x-same-name-twice",
        release: "4.3",
        code: "duplicate-spec-name",
        severity: W,
        line: 1,
        files: &[
            (
                "d/A.json",
                r#"{ "type": "data", "name": "SameData", "validVersions": "0", "flexibleVersions": "0+", "fields": [] }"#,
            ),
            (
                "d/B.json",
                r#"{ "type": "data", $"name": "SameData", "validVersions": "0", "flexibleVersions": "0+", "fields": [] }"#,
            ),
        ],
    },
];

type Files = &'static [(&'static str, &'static str)];

const ACCEPTED: &[(&str, &str, Files)] = &[
    (
        "4.x removed API: validVersions none, no flexibleVersions",
        "4.3",
        &[
            (
                "d/GoneRequest.json",
                r#"{ "apiKey": 4, "type": "request", "listeners": ["broker"], "name": "GoneRequest", "validVersions": "none", "fields": [ { "name": "A", "type": "int32", "versions": "0+" } ] }"#,
            ),
            (
                "d/GoneResponse.json",
                r#"{ "apiKey": 4, "type": "response", "name": "GoneResponse", "validVersions": "none", "fields": [] }"#,
            ),
        ],
    ),
    (
        "3.9 zkBroker listener and duplicate field names",
        "3.9",
        &[
            (
                "d/FooRequest.json",
                r#"{ "apiKey": 1000, "type": "request", "listeners": ["zkBroker", "broker"], "name": "FooRequest", "validVersions": "0-2", "flexibleVersions": "1+",
           "fields": [ { "name": "A", "type": "int32", "versions": "0+" }, { "name": "A", "type": "int32", "versions": "0+" } ] }"#,
            ),
            ("d/FooResponse.json", RESP_1000),
        ],
    ),
    (
        "Jackson coercions, a field never on the wire, an undefined struct, null struct default",
        "4.3",
        &[(
            "d/FooData.json",
            r#"{ "type": "data", "name": "FooData", "validVersions": 2, "flexibleVersions": "0+",
           "fields": [
             { "name": "A", "type": "int32", "versions": "5+", "default": -1, "ignorable": "true" },
             { "name": "G", "type": "[]Ghost", "versions": "0+" },
             { "name": "S", "type": "Item", "versions": "0+", "nullableVersions": "0+", "default": "null", "taggedVersions": "0+", "tag": 0, "fields": [] },
             { "name": "U", "type": "uuid", "versions": "0+", "default": "H3KKO4NTRPaCWtEmm3vW7A" },
             { "name": "H", "type": "int8", "versions": "0+", "default": "0x7f" },
             { "name": "B", "type": "bool", "versions": "0+", "default": "TRUE" },
             { "name": "F", "type": "float64", "versions": "0+", "default": "1e3" },
             { "name": "group", "type": "string", "versions": "0+", "default": "null", "nullableVersions": "0+" }
           ] }"#,
        )],
    ),
    (
        "the same apiKey in two directories",
        "4.3",
        &[
            ("a/FooRequest.json", REQ_1000),
            ("a/FooResponse.json", RESP_1000),
            ("b/FooRequest.json", REQ_1000),
            ("b/FooResponse.json", RESP_1000),
        ],
    ),
    (
        "3.9 data-form coordinator record without apiKey",
        "3.9",
        &[(
            "g/OffsetCommitKey.json",
            r#"{ "type": "data", "name": "OffsetCommitKey", "validVersions": "0-1", "flexibleVersions": "none",
           "fields": [ { "name": "group", "type": "string", "versions": "0-1" } ] }"#,
        )],
    ),
];
