//! Wire compatibility against a baseline, case by case: a baseline spec and a changed spec
//! inline, `$` marking where the finding must point in the changed spec (as in
//! tests/validate_rules.rs). What changes the bytes of a version peers already speak is an
//! error; renames and tagged additions are information.

use crate::costly_spec::costly_spec;
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

/// At most 1,024 versions are compared; the rest are named, not passed over in silence.
#[test]
fn versions_past_the_compared_thousand_are_named() {
    let base = BASE.replace(
        "\"validVersions\": \"0-2\"",
        "\"validVersions\": \"0-2000\"",
    );
    let (new, line, col) = unmark(&base.replace("\"validVersions\"", "$\"validVersions\""));
    let d = run(&base, &new);
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert_eq!(
        (
            d[0].code,
            d[0].severity,
            &*d[0].path,
            d[0].pos.line,
            d[0].pos.col
        ),
        ("compat-versions-capped", I, "validVersions", line, col)
    );
    assert!(
        d[0].message
            .starts_with("version(s) 1024-2000 are not compared"),
        "{}",
        d[0].message
    );
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

/// Kafka 4.3.1's specs against 3.9.0's (both built in) take a small part of the comparison's
/// work limit. Given exactly the work they take, the findings are the same and nothing is
/// incomplete; given one unit less or half, the spec where the work ran out says which versions
/// were not compared, one more warning counts the specs after it, and what the specs before it
/// found is unchanged.
#[test]
fn kafkas_own_releases_compare_well_within_the_work_limit() {
    use kinspect::limits::MAX_COMPAT_WORK;
    use kinspect::protocol::builtin;
    use kinspect::schema::compat::check_within;
    use kinspect::schema::model::MessageSpec;
    let changed: Vec<(Arc<str>, &MessageSpec)> = builtin()
        .specs()
        .filter(|(r, _)| *r == "4.3.1")
        .map(|(r, s)| (Arc::from(format!("{r}/{}", s.path)), s))
        .collect();
    let baseline: Vec<BaselineSpec> = builtin()
        .specs()
        .filter(|(r, _)| *r == "3.9.0")
        .map(|(origin, spec)| BaselineSpec { origin, spec })
        .collect();
    let (full, used) = check_within(&changed, &baseline, MAX_COMPAT_WORK);
    assert!(used > 0 && used < MAX_COMPAT_WORK / 100, "{used} units");
    assert!(full.iter().all(|d| d.code != "compat-incomplete"));
    assert!(
        full.iter().any(|d| d.code == "compat-field-added"),
        "{}",
        show(&full)
    );

    let (exact, used_exact) = check_within(&changed, &baseline, used);
    assert_eq!(used_exact, used);
    assert_eq!(show(&exact), show(&full));

    // Specs with a counterpart, by what the full run said: all but those `compat-new-spec`.
    let new_specs: Vec<&Arc<str>> = full
        .iter()
        .filter(|d| d.code == "compat-new-spec")
        .map(|d| &d.file)
        .collect();
    let of = |diags: &[SchemaDiag], files: &[(Arc<str>, &MessageSpec)]| -> Vec<String> {
        diags
            .iter()
            .filter(|d| files.iter().any(|(f, _)| *f == d.file))
            .map(|d| d.to_string())
            .collect()
    };
    // One unit short, the work runs out in the last spec compared; half, in the middle.
    for limit in [used - 1, used / 2] {
        let (short, _) = check_within(&changed, &baseline, limit);
        let stopped: Vec<&SchemaDiag> = short
            .iter()
            .filter(|d| d.code == "compat-incomplete" && d.message.contains("not (all) compared"))
            .collect();
        assert_eq!(stopped.len(), 1, "{limit}: {}", show(&short));
        let at = changed
            .iter()
            .position(|(f, _)| *f == stopped[0].file)
            .unwrap();
        assert_eq!(of(&short, &changed[..at]), of(&full, &changed[..at]));
        // The specs after it with a counterpart are counted in one warning, at the first of
        // them, and nothing else is said about them.
        let waiting: Vec<&Arc<str>> = changed[at + 1..]
            .iter()
            .map(|(f, _)| f)
            .filter(|f| !new_specs.contains(f))
            .collect();
        let later: Vec<&SchemaDiag> = short
            .iter()
            .filter(|d| changed[at + 1..].iter().any(|(f, _)| *f == d.file))
            .filter(|d| d.code != "compat-new-spec")
            .collect();
        if limit == used - 1 {
            assert!(waiting.is_empty() && later.is_empty(), "{}", show(&short));
            continue;
        }
        assert!(waiting.len() > 1, "half the work leaves specs to compare");
        assert_eq!(later.len(), 1, "{}", show(&short));
        assert_eq!(
            (later[0].code, &later[0].file),
            ("compat-incomplete", waiting[0])
        );
        assert!(
            later[0]
                .message
                .contains(&format!(" and the {} specs after it", waiting.len() - 1)),
            "{}: {}",
            waiting.len(),
            later[0].message
        );
    }
}

/// A spec of 16 structs of 1,000 fields in reverse order at 1,024 versions took 70 s to compare
/// (a 1,000 × 1,000 alignment per struct per version). All its fields say `0+`, so the versions
/// are one class and it is compared once; with each field starting at a version of its own
/// (1,024 classes) the work limit stops it and says where.
#[test]
fn a_spec_of_many_fields_and_versions_is_compared_within_the_work_limit() {
    for starts in [false, true] {
        let (b, _) = load_spec("base.json", &costly_spec("ProduceRequest", false, starts));
        let (n, _) = load_spec("new.json", &costly_spec("ProduceRequest", true, starts));
        let (b, n) = (b.unwrap(), n.unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let diags = check(
                &[(Arc::from("new.json"), &n)],
                &[BaselineSpec {
                    origin: "base.json",
                    spec: &b,
                }],
            );
            let _ = tx.send(diags);
        });
        // Not a timing: a regression to the old loop would run for minutes; this fails it
        // instead of hanging the suite.
        let diags = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the comparison ends");
        let incomplete: Vec<&SchemaDiag> = diags
            .iter()
            .filter(|d| d.code == "compat-incomplete")
            .collect();
        let moved = diags
            .iter()
            .filter(|d| d.code == "compat-field-moved")
            .count();
        if starts {
            assert_eq!(incomplete.len(), 1, "{}", show(&diags));
            assert_eq!(incomplete[0].path, "validVersions");
        } else {
            // One class: every field but one per struct moved (the alignment keeps one), in
            // every version.
            assert!(
                incomplete.is_empty(),
                "{}",
                show(&incomplete.into_iter().cloned().collect::<Vec<_>>())
            );
            assert_eq!(moved, 16 * 999, "{}", moved);
            let one = diags
                .iter()
                .find(|d| d.code == "compat-field-moved")
                .unwrap();
            assert!(
                one.message.contains("in version(s) 0-1023 of base.json"),
                "{}",
                one.message
            );
        }
    }
}
