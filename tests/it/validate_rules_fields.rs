//! Broken specs of our own for the field, default and JSON-lint rules, and the loader's own
//! findings as validate-schema reports them (see tests/validate_rules.rs for the format).

use crate::validate_support;

use validate_support::{assert_all_found, Case, E, W};

#[test]
fn field_default_and_lint_rules_report_their_code_at_the_mistake() {
    assert_all_found(CASES);
}

const CASES: &[Case] = &[
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
    Case { name: "j1-nbsp", release: "4.3", code: "non-json-whitespace", severity: E, line: 6, text: "{\n  \"type\": \"data\",\n  \"name\": \"FooData\",\n  \"validVersions\": \"0\",\n  \"flexibleVersions\": \"0+\",\n  $\u{a0}\"fields\": []\n}" },
    Case { name: "j-missing-comma", release: "4.3", code: "json-syntax", severity: E, line: 4, text: "{\n  \"type\": \"data\",\n  \"name\": \"FooData\"\n  $\"validVersions\": \"0\",\n  \"flexibleVersions\": \"0+\",\n  \"fields\": []\n}" },
    Case { name: "j1-hash-comment", release: "3.9", code: "hash-comment", severity: E, line: 3, text: "{\n  \"type\": \"data\",\n  $# Kafka's parser knows only // and /* */ comments\n  \"name\": \"FooData\",\n  \"validVersions\": \"0\",\n  \"flexibleVersions\": \"0+\",\n  \"fields\": []\n}" },
    Case { name: "j3-trailing-content", release: "4.3", code: "trailing-content", severity: E, line: 7, text: "{\n  \"type\": \"data\",\n  \"name\": \"FooData\",\n  \"validVersions\": \"0\",\n  \"flexibleVersions\": \"0+\",\n  \"fields\": []\n}$}\n" },
];
