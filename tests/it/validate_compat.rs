//! Wire compatibility against a baseline, case by case: a baseline spec and a changed spec
//! inline, `$` marking where the finding must point in the changed spec (as in
//! tests/validate_rules.rs). What changes the bytes of a version peers already speak is an
//! error; renames and tagged additions are information.

use crate::validate_support;

use kinspect::schema::compat::{check, BaselineSpec};
use kinspect::schema::diag::{SchemaDiag, Severity};
use kinspect::schema::load::load_spec;
use std::sync::Arc;
use validate_support::{show, unmark, E, I, W};

struct Case {
    name: &'static str,
    code: &'static str,
    severity: Severity,
    path: &'static str,
    base: &'static str,
    new: &'static str,
}

fn run(base: &str, new: &str) -> Vec<SchemaDiag> {
    let (b, bd) = load_spec("base.json", base);
    assert!(
        bd.iter().all(|d| !d.is_error()),
        "baseline loads: {}",
        show(&bd)
    );
    let (n, nd) = load_spec("new.json", new);
    assert!(
        nd.iter().all(|d| !d.is_error()),
        "changed spec loads: {}",
        show(&nd)
    );
    let (b, n) = (b.unwrap(), n.unwrap());
    check(
        &[(Arc::from("new.json"), &n)],
        &[BaselineSpec {
            origin: "base.json",
            spec: &b,
        }],
    )
}

#[test]
fn each_change_is_reported_where_it_is_made() {
    let mut failures = Vec::new();
    for c in CASES {
        let (new, line, col) = unmark(c.new);
        let diags = run(c.base, &new);
        let hit = diags.iter().any(|d| {
            d.code == c.code
                && d.severity == c.severity
                && d.path == c.path
                && d.pos.line == line
                && d.pos.col == col
        });
        if !hit {
            failures.push(format!(
                "{}: expected {}[{}] {} at {line}:{col}, got:\n{}",
                c.name,
                c.severity.as_str(),
                c.code,
                c.path,
                show(&diags)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_identical_spec_or_a_renamed_struct_type_changes_nothing() {
    let renamed_type = BASE.replace("[]Topic", "[]TopicV2");
    for new in [BASE.to_string(), renamed_type] {
        let d = run(BASE, &new);
        assert!(d.is_empty(), "{}", show(&d));
    }
}

#[test]
fn an_unstable_baseline_version_may_change() {
    let base = BASE.replace(
        "\"flexibleVersions\"",
        "\"latestVersionUnstable\": true, \"flexibleVersions\"",
    );
    let new = base.replace(r#"{ "name": "Id", "type": "int32", "versions": "0+" }"#, r#"{ "name": "Id", "type": "int64", "versions": "2+" }, { "name": "OldId", "type": "int32", "versions": "0-1" }"#);
    let d = run(&base, &new);
    assert!(d.iter().all(|d| !d.is_error()), "{}", show(&d));
    assert!(
        d.iter().any(|d| d.code == "compat-unstable-skipped"),
        "{}",
        show(&d)
    );
    // Without the flag, the same change breaks version 2.
    let d = run(BASE, &new.replace("\"latestVersionUnstable\": true, ", ""));
    assert!(
        d.iter()
            .any(|d| d.code == "compat-field-retyped" || d.code == "compat-field-added"),
        "{}",
        show(&d)
    );
}

const BASE: &str = r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#;

const CASES: &[Case] = &[
    Case {
        name: "retyped",
        code: "compat-field-retyped",
        severity: E,
        path: "Id",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", $"type": "int64", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "made-nullable",
        code: "compat-nullability-changed",
        severity: E,
        path: "Label",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+", $"nullableVersions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "moved-to-tagged",
        code: "compat-tagging-changed",
        severity: E,
        path: "Label",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+", $"taggedVersions": "1+", "tag": 1 },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "moved",
        code: "compat-field-moved",
        severity: E,
        path: "Id",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { $"name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "removed-nested",
        code: "compat-field-removed",
        severity: E,
        path: "Topics.Epoch",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    ${ "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "removed-top",
        code: "compat-field-removed",
        severity: E,
        path: "Label",
        base: BASE,
        new: r#"${
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "added-nested",
        code: "compat-field-added",
        severity: E,
        path: "Topics.Size",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" },
      { $"name": "Size", "type": "int64", "versions": "2+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "renamed",
        code: "compat-field-renamed",
        severity: I,
        path: "Topics.LeaderEpoch",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { $"name": "LeaderEpoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "flexible-changed",
        code: "compat-flexible-changed",
        severity: E,
        path: "flexibleVersions",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  $"flexibleVersions": "2+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "tagged-added",
        code: "compat-tagged-added",
        severity: I,
        path: "Extra",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 },
    { "name": "Extra", "type": "string", "versions": "1+", "taggedVersions": "1+", $"tag": 1 }
  ]
}"#,
    },
    Case {
        name: "tagged-removed",
        code: "compat-tagged-removed",
        severity: I,
        path: "Hint",
        base: BASE,
        new: r#"${
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]}
  ]
}"#,
    },
    Case {
        name: "versions-dropped",
        code: "compat-versions-removed",
        severity: W,
        path: "validVersions",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "FooRequest",
  $"validVersions": "1-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }
  ]
}"#,
    },
    Case {
        name: "matched-by-api-key",
        code: "compat-field-added",
        severity: E,
        path: "Extra",
        base: BASE,
        new: r#"{
  "apiKey": 1000,
  "type": "request",
  "name": "BarRequest",
  "validVersions": "0-2",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Id", "type": "int32", "versions": "0+" },
    { "name": "Label", "type": "string", "versions": "0+" },
    { "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
      { "name": "Name", "type": "string", "versions": "0+" },
      { "name": "Epoch", "type": "int32", "versions": "1+" }
    ]},
    { "name": "Hint", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 },
    { $"name": "Extra", "type": "int8", "versions": "0+" }
  ]
}"#,
    },
    Case {
        name: "no-counterpart",
        code: "compat-new-spec",
        severity: I,
        path: "",
        base: BASE,
        new: r#"${
  "apiKey": 1001,
  "type": "request",
  "name": "NewRequest",
  "validVersions": "0",
  "flexibleVersions": "0+",
  "fields": []
}"#,
    },
];
