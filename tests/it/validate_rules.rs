//! Broken specs of our own for the message and struct rules: each is a small spec inline, with
//! `$` written just before the token the diagnostic must point at. The expected line:column is
//! where that marker sits (the table also states the line, as a check on the table itself); the
//! test removes the marker, validates, and requires a diagnostic with that code, severity and
//! place. Fields, defaults and lints: tests/validate_rules_fields.rs; cross-file rules and what
//! Kafka accepts: tests/validate_cross.rs.

use crate::validate_support;

use validate_support::{assert_all_found, Case, E, I, W};

#[test]
fn message_and_struct_rules_report_their_code_at_the_mistake() {
    assert_all_found(CASES);
}

const CASES: &[Case] = &[
    // ---- messages (M) ----
    Case {
        name: "m4-missing-flexible",
        release: "4.3",
        code: "missing-flexible-versions",
        severity: E,
        line: 1,
        text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "0-1",
  "fields": []
}"#,
    },
    Case {
        name: "m4-missing-flexible-3.9-empty",
        release: "3.9",
        code: "missing-flexible-versions",
        severity: E,
        line: 1,
        text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "none",
  "fields": []
}"#,
    },
    Case {
        name: "m4-null-flexible",
        release: "4.3",
        code: "missing-flexible-versions",
        severity: E,
        line: 1,
        text: r#"${
  "type": "data",
  "name": "FooData",
  "validVersions": "0-1",
  "flexibleVersions": null,
  "fields": []
}"#,
    },
    Case {
        name: "m3-empty-valid-3.9",
        release: "3.9",
        code: "empty-valid-versions",
        severity: E,
        line: 4,
        text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "none",
  "flexibleVersions": "none",
  "fields": []
}"#,
    },
    Case {
        name: "m3-reversed-valid-3.9",
        release: "3.9",
        code: "empty-valid-versions",
        severity: E,
        line: 4,
        text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "3-1",
  "flexibleVersions": "none",
  "fields": []
}"#,
    },
    Case {
        name: "m5-flexible-closed",
        release: "4.3",
        code: "flexible-versions-not-open-ended",
        severity: E,
        line: 5,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  $"flexibleVersions": "0-2",
  "fields": []
}"#,
    },
    Case {
        name: "m6-unbounded",
        release: "4.3",
        code: "unbounded-valid-versions",
        severity: E,
        line: 4,
        text: r#"{
  "type": "data",
  "name": "FooData",
  $"validVersions": "0+",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m7-listeners-on-data",
        release: "4.3",
        code: "listeners-not-request",
        severity: E,
        line: 6,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  $"listeners": ["broker"],
  "fields": []
}"#,
    },
    Case {
        name: "m7-zkbroker-4.3",
        release: "4.3",
        code: "unknown-listener",
        severity: E,
        line: 4,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  "listeners": [$"zkBroker", "broker"],
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m7-zkbroker-single-value",
        release: "4.3",
        code: "unknown-listener",
        severity: E,
        line: 4,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  "listeners": $"zkBroker",
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m8-unstable-response",
        release: "4.3",
        code: "unstable-not-request",
        severity: E,
        line: 7,
        text: r#"{
  "apiKey": 1000,
  "type": "response",
  "name": "FooResponse",
  "validVersions": "0-1",
  "flexibleVersions": "0+",
  $"latestVersionUnstable": true,
  "fields": []
}"#,
    },
    Case {
        name: "m14-request-without-key",
        release: "4.3",
        code: "missing-api-key",
        severity: E,
        line: 1,
        text: r#"${
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m14-metadata-without-key",
        release: "3.9",
        code: "missing-api-key",
        severity: E,
        line: 1,
        text: r#"${
  "type": "metadata",
  "name": "FooRecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m11-coordinator-value-without-key",
        release: "4.3",
        code: "missing-api-key",
        severity: E,
        line: 1,
        text: r#"${
  "type": "coordinator-value",
  "name": "FooValue",
  "validVersions": "0",
  "flexibleVersions": "none",
  "fields": []
}"#,
    },
    Case {
        name: "x6-negative-key",
        release: "4.3",
        code: "negative-api-key",
        severity: W,
        line: 2,
        text: r#"{
  $"apiKey": -3,
  "type": "metadata",
  "name": "FooRecord",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m10-coordinator-key-versions",
        release: "4.3",
        code: "coordinator-key-versions",
        severity: E,
        line: 4,
        text: r#"{
  "apiKey": 7,
  "type": "coordinator-key",
  $"validVersions": "0-1",
  "name": "FooKey",
  "flexibleVersions": "none",
  "fields": []
}"#,
    },
    Case {
        name: "m10-coordinator-key-flexible",
        release: "4.3",
        code: "coordinator-key-flexible",
        severity: E,
        line: 5,
        text: r#"{
  "apiKey": 7,
  "type": "coordinator-key",
  "validVersions": "0",
  $"flexibleVersions": "0+",
  "name": "FooKey",
  "fields": []
}"#,
    },
    Case {
        name: "m9-coordinator-in-3.9",
        release: "3.9",
        code: "unsupported-spec-type",
        severity: E,
        line: 3,
        text: r#"{
  "apiKey": 7,
  $"type": "coordinator-value",
  "validVersions": "0",
  "flexibleVersions": "none",
  "name": "FooValue",
  "fields": []
}"#,
    },
    Case {
        name: "m15-request-suffix",
        release: "4.3",
        code: "name-suffix",
        severity: E,
        line: 4,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  $"name": "FooReq",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m15-response-suffix",
        release: "3.9",
        code: "name-suffix",
        severity: E,
        line: 4,
        text: r#"{
  "apiKey": 1000,
  "type": "response",
  $"name": "Response",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "m12-deprecated-beyond",
        release: "4.3",
        code: "deprecated-outside-valid",
        severity: W,
        line: 6,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-2",
  "flexibleVersions": "0+",
  $"deprecatedVersions": "0-5",
  "fields": []
}"#,
    },
    Case {
        name: "hv-proposed",
        release: "4.3",
        code: "proposed-property",
        severity: I,
        line: 7,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "2+",
  "fields": []
}"#,
    },
    Case {
        name: "hv-outside-valid",
        release: "4.3",
        code: "header-versions-outside-valid",
        severity: E,
        line: 7,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "2-5",
  "fields": []
}"#,
    },
    Case {
        name: "hv-not-api",
        release: "3.9",
        code: "header-versions-not-api",
        severity: E,
        line: 5,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-3",
  $"headerVersions": "0-3",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
    Case {
        name: "hv-not-flexible",
        release: "4.3",
        code: "header-versions-not-flexible",
        severity: W,
        line: 7,
        text: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  $"headerVersions": "1-3",
  "fields": []
}"#,
    },
    // ---- structs (S) ----
    Case {
        name: "s1-duplicate-tag",
        release: "4.3",
        code: "duplicate-tag",
        severity: E,
        line: 8,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 },
    { "name": "B", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 0 },
    { "name": "C", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 1 }
  ]
}"#,
    },
    Case {
        name: "s1-duplicate-tag-nested",
        release: "3.9",
        code: "duplicate-tag",
        severity: E,
        line: 9,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s2-tag-gap",
        release: "4.3",
        code: "tag-gap",
        severity: E,
        line: 7,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 1 }
  ]
}"#,
    },
    Case {
        name: "s2-tag-gap-middle",
        release: "4.3",
        code: "tag-gap",
        severity: E,
        line: 9,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0 },
    { "name": "B", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 4 },
    { "name": "C", "type": "int32", "versions": "0+", "taggedVersions": "0+", $"tag": 2 }
  ]
}"#,
    },
    Case {
        name: "s3-duplicate-name-4.3",
        release: "4.3",
        code: "duplicate-field-name",
        severity: E,
        line: 8,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" },
    { $"name": "A", "type": "int64", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "s3-duplicate-name-3.9",
        release: "3.9",
        code: "duplicate-field-name",
        severity: W,
        line: 8,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+" },
    { $"name": "A", "type": "int64", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "s3-case-collision",
        release: "4.3",
        code: "field-name-case-collision",
        severity: W,
        line: 8,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "TopicId", "type": "uuid", "versions": "0+" },
    { $"name": "topicID", "type": "uuid", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "s10-inline-disjoint",
        release: "4.3",
        code: "struct-versions-disjoint",
        severity: E,
        line: 7,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0-2",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Items", "type": "[]Item", $"versions": "3+", "fields": [
      { "name": "A", "type": "int32", "versions": "0+" }
    ]}
  ]
}"#,
    },
    Case {
        name: "s10-nested-disjoint",
        release: "3.9",
        code: "struct-versions-disjoint",
        severity: E,
        line: 9,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s10-common-empty",
        release: "4.3",
        code: "struct-versions-disjoint",
        severity: E,
        line: 10,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s8-common-lower-case",
        release: "4.3",
        code: "struct-name-case",
        severity: E,
        line: 10,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s6-common-twice",
        release: "4.3",
        code: "duplicate-common-struct",
        severity: E,
        line: 11,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s6-common-redefined-inline",
        release: "4.3",
        code: "common-struct-inline-fields",
        severity: E,
        line: 8,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s5-inline-twice",
        release: "4.3",
        code: "duplicate-struct",
        severity: E,
        line: 10,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s5-ghost-twice",
        release: "3.9",
        code: "duplicate-struct",
        severity: E,
        line: 8,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "First", "type": "Ghost", "versions": "0+" },
    { "name": "Second", $"type": "[]Ghost", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "s7-unknown-struct",
        release: "4.3",
        code: "unknown-struct",
        severity: W,
        line: 7,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "Things", $"type": "[]Ghost", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "s-unused-common",
        release: "4.3",
        code: "unused-common-struct",
        severity: W,
        line: 10,
        text: r#"{
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
}"#,
    },
    Case {
        name: "s9-top-level-map-key",
        release: "4.3",
        code: "top-level-map-key",
        severity: E,
        line: 7,
        text: r#"{
  "type": "data",
  "name": "FooData",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", $"mapKey": true }
  ]
}"#,
    },
];
