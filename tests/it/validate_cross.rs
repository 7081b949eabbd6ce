//! Cross-file rules (several files of one directory; the marked one carries the diagnostic,
//! marked as in tests/validate_rules.rs), and specs Kafka accepts that must not be errors: each
//! is a rule's boundary, per release.

use crate::validate_support;

use kinspect::schema::diag::Severity;
use kinspect::schema::validate::{validate_files, Release};
use validate_support::{show, unmark, E, W};

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
        "a blank flexibleVersions parses as none",
        "4.3",
        &[(
            "d/FooData.json",
            r#"{ "type": "data", "name": "FooData", "validVersions": "0-1", "flexibleVersions": " ", "fields": [] }"#,
        )],
    ),
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
