//! `kinspect stats` on every bundled capture, against tshark (4.0.17): requests per API and
//! version and response counts against `NAME.summary.tsv`; error codes and client ids against
//! tshark's full JSON decode (`../shared/captures/NAME.tshark.json`, skipped without ../shared).

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn stats(path: &Path) -> (Value, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["stats", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.code().unwrap())
}

/// tshark's rows: (direction, api_key, api_version) counts, api unknown as -1.
fn tshark_counts(path: &Path) -> BTreeMap<(String, i64, i64), u64> {
    let text = std::fs::read_to_string(path.with_extension("summary.tsv")).unwrap();
    let mut m = BTreeMap::new();
    for l in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = l.split('\t').collect();
        let num = |s: &str| s.parse::<i64>().unwrap_or(-1);
        *m.entry((f[1].to_string(), num(f[2]), num(f[4])))
            .or_default() += 1;
    }
    m
}

#[test]
fn pdus_per_api_and_version_match_tshark() {
    for path in common::bundled_captures() {
        let (v, code) = stats(&path);
        assert!(code == 0 || code == 1, "{}: exit {code}", path.display());
        let theirs = tshark_counts(&path);
        let mut ours: BTreeMap<(String, i64, i64), u64> = BTreeMap::new();
        for a in v["apis"].as_array().unwrap() {
            let (k, ver) = (
                a["api_key"].as_i64().unwrap(),
                a["api_version"].as_i64().unwrap(),
            );
            let n = a["requests"].as_u64().unwrap();
            if n > 0 {
                ours.insert(("request".into(), k, ver), n);
            }
        }
        let their_requests: BTreeMap<_, _> = theirs
            .iter()
            .filter(|(k, _)| k.0 == "request")
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(
            ours,
            their_requests,
            "{}: requests per API and version",
            path.display()
        );
        // Every response tshark saw is counted; kinspect also names the API of those whose
        // request tshark could not dissect ("Request missing").
        let their_responses: u64 = theirs
            .iter()
            .filter(|(k, _)| k.0 == "response")
            .map(|(_, v)| v)
            .sum();
        assert_eq!(
            v["responses"].as_u64(),
            Some(their_responses),
            "{}",
            path.display()
        );
        assert_eq!(
            v["unidentified"].as_u64(),
            Some(0),
            "{}: every response matched its request",
            path.display()
        );
        // Every matched response gave a latency.
        let lat: u64 = v["latency"]
            .as_object()
            .unwrap()
            .values()
            .map(|l| l["count"].as_u64().unwrap())
            .sum();
        assert_eq!(lat, their_responses, "{}", path.display());
    }
}

fn tshark_json(shared: &Path, name: &str) -> Value {
    serde_json::from_slice(
        &std::fs::read(shared.join("captures").join(format!("{name}.tshark.json"))).unwrap(),
    )
    .unwrap()
}

fn walk<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    match x {
                        Value::Array(a) => out.extend(a.iter()),
                        x => out.push(x),
                    }
                } else {
                    walk(x, key, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk(x, key, out)),
        _ => {}
    }
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn error_codes_and_client_ids_match_tsharks_decode() {
    let Some(shared) = common::shared_or_skip("error_codes_and_client_ids_match_tsharks_decode")
    else {
        return;
    };
    for path in common::bundled_captures() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let (v, _) = stats(&path);
        let t = tshark_json(&shared, &name);
        let mut errs = Vec::new();
        walk(&t, "kafka.error", &mut errs);
        let mut theirs: BTreeMap<i64, u64> = BTreeMap::new();
        for e in errs {
            let code: i64 = e.as_str().unwrap().parse().unwrap();
            // tshark reads fields of versions it does not support (flexible Metadata, Fetch…)
            // at the wrong offsets and reports "codes" such as 8506 that Kafka never defined;
            // only codes Kafka defines are comparable.
            if code != 0
                && i16::try_from(code)
                    .ok()
                    .and_then(kinspect::protocol::errors::error_name)
                    .is_some()
            {
                *theirs.entry(code).or_default() += 1;
            }
        }
        let mut ours: BTreeMap<i64, u64> = BTreeMap::new();
        for e in v["errors"].as_array().unwrap() {
            *ours.entry(e["error_code"].as_i64().unwrap()).or_default() +=
                e["count"].as_u64().unwrap();
        }
        assert_eq!(ours, theirs, "{name}: error codes");
        // Only the request header's client id sits directly in tshark's kafka layer; deeper
        // ones are members' ids inside group descriptions.
        let mut theirs: BTreeMap<String, u64> = BTreeMap::new();
        for pkt in t.as_array().unwrap() {
            let kafka = &pkt["_source"]["layers"]["kafka"];
            let pdus: Vec<&Value> = match kafka {
                Value::Array(a) => a.iter().collect(),
                Value::Null => Vec::new(),
                x => vec![x],
            };
            for k in pdus {
                if let Some(id) = k.get("kafka.client_id").and_then(Value::as_str) {
                    *theirs.entry(id.to_string()).or_default() += 1;
                }
            }
        }
        let ours: BTreeMap<String, u64> = v["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["client_id"].as_str().unwrap_or("").to_string(),
                    c["requests"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ours, theirs, "{name}: requests per client id");
    }
}

#[test]
fn a_text_report_names_errors_and_latencies() {
    let path = common::captures_dir().join("tansu-confluent-admin.pcap");
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("stats")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // JoinGroup v5 answered MEMBER_ID_REQUIRED (79) once: the classic two-step join.
    assert!(
        text.contains("JoinGroup (11)") && text.contains("MEMBER_ID_REQUIRED (79)"),
        "{text}"
    );
    assert!(
        text.contains("\"ck-admin-cons\"") && text.contains("31 requests"),
        "{text}"
    );
    assert!(text.contains("Latency per API"), "{text}");
}

#[test]
fn unreadable_inputs_exit_2_with_the_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["stats", "/nonexistent/x.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let readme = common::captures_dir().join("README.md");
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("stats")
        .arg(&readme)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("at byte 0"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Several captures are counted together: tshark's request counts of each, summed, are the
/// counts of one `stats` run over all of them (it used to take one file).
#[test]
fn several_captures_are_counted_together_as_tshark_counts_each() {
    let paths = common::bundled_captures();
    let mut theirs: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    let mut their_responses = 0u64;
    for p in &paths {
        for ((dir, k, v), n) in tshark_counts(p) {
            if dir == "request" {
                *theirs.entry((k, v)).or_default() += n;
            } else {
                their_responses += n;
            }
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["stats", "--format", "json"])
        .args(&paths)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ours: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    for a in v["apis"].as_array().unwrap() {
        let n = a["requests"].as_u64().unwrap();
        if n > 0 {
            let key = (
                a["api_key"].as_i64().unwrap(),
                a["api_version"].as_i64().unwrap(),
            );
            *ours.entry(key).or_default() += n;
        }
    }
    assert_eq!(ours, theirs);
    assert_eq!(v["responses"].as_u64(), Some(their_responses));
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), paths.len());
    assert_eq!(
        v["file"].as_str(),
        Some(&*format!("{} and {} more", files[0], paths.len() - 1))
    );
}

/// `stats` counts captures: a partition folder, a log segment or a hex dump given to it is
/// refused with what it is and who reads it (a folder used to be read as a log, reported as
/// "0 packets, 0 TCP connections" and one unidentified PDU; a segment or a dump got only the
/// capture reader's "expected a pcap magic"). A capture beside them is still counted.
#[test]
fn a_log_or_a_hex_dump_given_to_stats_is_named_and_a_capture_beside_it_counted() {
    let records = common::repo().join("tests/fixtures/records");
    let folder = records.join("__consumer_offsets-0");
    let segments = std::fs::read_dir(&folder)
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.len() == 24 && n.ends_with(".log") && n[..20].bytes().all(|b| b.is_ascii_digit())
        })
        .count();
    assert_eq!(segments, 1);
    let segment = folder.join("00000000000000000000.log");
    let dump = records.join("lz4-kafka-checksum-magic2.hex");
    let capture = common::captures_dir().join("mock-kcat-none.pcap");
    let alone = common::kinspect(&["stats", capture.to_str().unwrap()]);
    assert_eq!(alone.status.code(), Some(1), "the mock's ApiVersions reply");
    let o = common::kinspect(&[
        "stats",
        folder.to_str().unwrap(),
        segment.to_str().unwrap(),
        dump.to_str().unwrap(),
        capture.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let said = |path: &Path, what: &str| {
        let line = format!("kinspect stats: {}: ", path.display());
        let line = err.lines().find(|l| l.starts_with(&line)).unwrap_or("");
        assert!(line.contains(what), "{what}: {err}");
        assert!(
            line.ends_with("`kinspect decode` and `kinspect records` read it when its kind is left to detection)"),
            "{line:?}"
        );
    };
    said(
        &folder,
        "a partition folder (1 log segment), not a pcap or pcapng capture",
    );
    said(&segment, "(it looks like a Kafka log file:");
    said(&dump, "(it looks like a hex dump:");
    assert_eq!(
        common::stdout(&o),
        common::stdout(&alone),
        "the capture counted as alone"
    );
}
