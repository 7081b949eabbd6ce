//! `kinspect apis`, run as a user runs it, checked against an independent reading of Kafka's
//! spec files (comments stripped, read with serde_json).

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn in_range(s: &str, v: i64) -> bool {
    let s = s.trim();
    if s == "none" || s.is_empty() {
        return false;
    }
    if let Some(a) = s.strip_suffix('+') {
        return v >= a.parse::<i64>().unwrap();
    }
    match s.split_once('-') {
        Some((a, b)) => (a.parse::<i64>().unwrap()..=b.parse().unwrap()).contains(&v),
        None => s.parse::<i64>().unwrap() == v,
    }
}

/// Field names at version `v`, nested as "Topics.Partitions.Index", from the spec file.
fn oracle_fields(spec: &Value, fields: &Value, v: i64, prefix: &str, out: &mut Vec<String>) {
    for f in fields.as_array().into_iter().flatten() {
        let versions = f["versions"]
            .as_str()
            .or(f["taggedVersions"].as_str())
            .unwrap();
        if !in_range(versions, v) {
            continue;
        }
        let name = format!("{prefix}{}", f["name"].as_str().unwrap());
        out.push(name.clone());
        let ty = f["type"].as_str().unwrap().trim_start_matches("[]");
        let sub = if f.get("fields").is_some() {
            f["fields"].clone()
        } else {
            spec["commonStructs"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == ty)
                .map(|s| s["fields"].clone())
                .unwrap_or(Value::Null)
        };
        oracle_fields(spec, &sub, v, &format!("{name}."), out);
    }
}

fn json_fields(fields: &Value, prefix: &str, out: &mut Vec<String>) {
    for f in fields.as_array().into_iter().flatten() {
        let name = format!("{prefix}{}", f["name"].as_str().unwrap());
        out.push(name.clone());
        json_fields(&f["fields"], &format!("{name}."), out);
    }
}

fn message_dir(shared: &Path, release: &str) -> PathBuf {
    shared
        .join("kafka-schemas")
        .join(release)
        .join("clients/src/main/resources/common/message")
}

#[test]
fn lists_all_93_api_keys_with_marks() {
    let o = common::kinspect(&["apis"]);
    assert!(o.status.success());
    let text = common::stdout(&o);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start().starts_with(|c: char| c.is_ascii_digit()) && !l.contains("APIs.")
        })
        .collect();
    assert!(text.contains("93 APIs."), "{text}");
    assert_eq!(rows.len(), 93, "{text}");
    let row = |k: &str| {
        rows.iter()
            .find(|r| r.split_whitespace().next() == Some(k))
            .copied()
            .unwrap()
    };
    assert!(
        row("0").contains("Produce")
            && row("0").contains("3-13")
            && row("0").contains("v0-2 only in 3.9.0")
    );
    assert!(row("4").contains("removed in 4.3.1"), "{}", row("4"));
    assert!(
        row("22").contains("0-6*") && row("22").contains("unstable"),
        "{}",
        row("22")
    );
    assert!(row("88").contains("new in 4.3.1"), "{}", row("88"));
    assert!(
        row("74").contains("named ListClientMetricsResources in 3.9.0"),
        "{}",
        row("74")
    );
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn json_listing_matches_the_spec_files() {
    let o = common::kinspect(&["apis", "--format", "json"]);
    assert!(o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let apis = v["apis"].as_array().unwrap();
    assert_eq!(apis.len(), 93);
    let Some(shared) = common::shared_or_skip("json_listing_matches_the_spec_files") else {
        return;
    };
    for release in ["4.3.1", "3.9.0"] {
        let mut checked = 0;
        for e in std::fs::read_dir(message_dir(&shared, release))
            .unwrap()
            .flatten()
        {
            if e.path().extension().is_none_or(|x| x != "json") {
                continue;
            }
            let spec = common::read_spec(&e.path());
            if spec["type"] != "request" {
                continue;
            }
            let key = spec["apiKey"].as_i64().unwrap();
            let api = apis
                .iter()
                .find(|a| a["api_key"] == key)
                .unwrap_or_else(|| panic!("key {key}"));
            let r = api["releases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["release"] == release)
                .unwrap();
            let name = spec["name"]
                .as_str()
                .unwrap()
                .strip_suffix("Request")
                .unwrap();
            assert_eq!(r["name"], name);
            let valid = spec["validVersions"].as_str().unwrap();
            for ver in 0..40 {
                let shown = r["valid_versions"].as_str().unwrap();
                assert_eq!(
                    in_range(shown, ver),
                    in_range(valid, ver),
                    "{release} {name} v{ver}: {shown} vs {valid}"
                );
            }
            assert_eq!(
                r["latest_version_unstable"],
                spec["latestVersionUnstable"].as_bool().unwrap_or(false)
            );
            checked += 1;
        }
        assert!(checked >= 88, "{release}: {checked}");
    }
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn fields_at_a_version_match_the_spec_files() {
    let Some(shared) = common::shared_or_skip("fields_at_a_version_match_the_spec_files") else {
        return;
    };
    // (api, version, release whose files describe it): old, new, renamed, nested common structs.
    let cases = [
        ("Vote", 1, "4.3.1"),
        ("Vote", 2, "4.3.1"),
        ("0", 2, "3.9.0"),
        ("Produce", 13, "4.3.1"),
        ("Fetch", 17, "4.3.1"),
        ("LeaderAndIsr", 7, "3.9.0"),
        ("ListConfigResources", 1, "4.3.1"),
        ("ConsumerGroupHeartbeat", 1, "4.3.1"),
        ("ApiVersions", 4, "4.3.1"),
    ];
    for (api, v, release) in cases {
        let o = common::kinspect(&["apis", api, "--version", &v.to_string(), "--format", "json"]);
        assert!(
            o.status.success(),
            "{api} v{v}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        for side in ["request", "response"] {
            let s = &got[side];
            assert_eq!(s["release"], release, "{api} v{v} {side}");
            let file =
                message_dir(&shared, release).join(format!("{}.json", s["spec"].as_str().unwrap()));
            let spec = common::read_spec(&file);
            let mut want = Vec::new();
            oracle_fields(&spec, &spec["fields"], v, "", &mut want);
            let mut have = Vec::new();
            json_fields(&s["fields"], "", &mut have);
            assert_eq!(have, want, "{api} v{v} {side}");
        }
    }
}

#[test]
fn text_table_shows_types_tags_and_defaults() {
    let o = common::kinspect(&["apis", "Vote", "--version", "1"]);
    let text = common::stdout(&o);
    assert!(
        text.starts_with("VoteRequest v1 (4.3.1, flexible)"),
        "{text}"
    );
    let line = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or("")
            .to_string()
    };
    assert!(
        line("ClusterId").contains("string")
            && line("ClusterId").contains("yes")
            && line("ClusterId").ends_with("null")
    );
    assert!(
        line("NodeEndpoints").contains("[]NodeEndpoint") && line("NodeEndpoints").contains("tag 0")
    );
    // Nested fields are indented under their parent.
    assert!(
        text.lines().any(|l| l.starts_with("      ReplicaEpoch ")),
        "{text}"
    );
}

#[test]
fn unknown_api_and_version_are_usage_errors() {
    let o = common::kinspect(&["apis", "Prodce"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `Produce`?"));
    let o = common::kinspect(&["apis", "Produce", "--version", "99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("4.3.1 3-13, 3.9.0 0-11"));
    assert_eq!(common::kinspect(&["apis", "9999"]).status.code(), Some(2));
    assert_eq!(
        common::kinspect(&["apis", "--version", "1"]).status.code(),
        Some(2)
    );
}

#[test]
fn schemas_overlay_wins_for_its_api_and_broken_overlay_is_refused() {
    let dir = std::env::temp_dir().join(format!("kinspect-apis-overlay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let req = r#"// a KIP draft
{ "apiKey": 52, "type": "request", "listeners": ["controller"], "name": "VoteRequest",
  "validVersions": "0-3", "flexibleVersions": "0+",
  "fields": [ { "name": "ClusterId", "type": "string", "versions": "0+", "nullableVersions": "0+" },
              { "name": "Draft", "type": "bool", "versions": "3+" } ] }"#;
    let resp = r#"{ "apiKey": 52, "type": "response", "name": "VoteResponse", "validVersions": "0-3",
  "flexibleVersions": "0+", "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+" } ] }"#;
    std::fs::write(dir.join("VoteRequest.json"), req).unwrap();
    std::fs::write(dir.join("VoteResponse.json"), resp).unwrap();
    let d = dir.to_str().unwrap();
    let o = common::kinspect(&[
        "--schemas",
        d,
        "apis",
        "vote",
        "--version",
        "3",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["request"]["release"], "overlay");
    assert_eq!(v["request"]["fields"][1]["name"], "Draft");
    // Other APIs still come from the built-in releases.
    let o = common::kinspect(&[
        "--schemas",
        d,
        "apis",
        "Produce",
        "--version",
        "2",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["request"]["release"], "3.9.0");
    std::fs::write(
        dir.join("Broken.json"),
        "{\"type\": \"data\", \"name\": \"B\", \"validVersions\": \"0\", \"ignoreable\": 1}",
    )
    .unwrap();
    let o = common::kinspect(&["--schemas", d, "apis"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Broken.json:1:53: error[unknown-property]"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_struct_that_contains_itself_is_listed_once() {
    // Kafka's grammar lets a common struct hold itself; two such fields would double the
    // listing at every level without the guard.
    let dir = std::env::temp_dir().join(format!("kinspect-apis-recursive-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fields = r#"[{ "name": "Left", "type": "Node", "versions": "0+" },
                     { "name": "Right", "type": "[]Node", "versions": "0+" }]"#;
    for (kind, name) in [("request", "Request"), ("response", "Response")] {
        let spec = format!(
            r#"{{ "apiKey": 9000, "type": "{kind}", "name": "Tree{name}", "validVersions": "0",
                 "flexibleVersions": "0+", "fields": [{{ "name": "Root", "type": "Node", "versions": "0+" }}],
                 "commonStructs": [{{ "name": "Node", "versions": "0+", "fields": {fields} }}] }}"#
        );
        std::fs::write(dir.join(format!("Tree{name}.json")), spec).unwrap();
    }
    let d = dir.to_str().unwrap();
    let o = common::kinspect(&["--schemas", d, "apis", "Tree", "--version", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = common::stdout(&o);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("Node")).collect();
    // Root, then Left and Right under it; their own Node fields are not expanded again.
    assert_eq!(rows.len(), 6, "{text}");
    let o = common::kinspect(&[
        "--schemas",
        d,
        "apis",
        "Tree",
        "--version",
        "0",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let root = &v["request"]["fields"][0];
    assert_eq!(root["fields"][1]["name"], "Right");
    assert!(root["fields"][1].get("fields").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
