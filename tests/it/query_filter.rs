//! `--filter`/`-Y` against tshark's display filters on the same captures: the frames kinspect's
//! expression selects are the frames tshark's equivalent selects (tshark run here; ignored, and
//! said so, without it). Then what tshark cannot be asked: `--pairs`, the exit code and caret of
//! a bad expression, filters on `stats` and `check`.

use crate::common;
use crate::fields_cli::{kinspect_rows, tshark_fields};
use std::collections::BTreeSet;
use std::path::Path;

fn frames_k(path: &Path, expr: &str) -> BTreeSet<u64> {
    kinspect_rows(path, &["-Y", expr, "-e", "last_frame"])
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect()
}

fn frames_t(path: &Path, filter: &str) -> BTreeSet<u64> {
    tshark_fields(path, filter, &["frame.number"])
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect()
}

/// Four librdkafka-mock captures, versions tshark 4.0.17 decodes whole (see fields_cli), with
/// every API the filters name: produce, consume, a group, transactions, kafkajs (a run of
/// tshark per filter per capture: four keep the test under a minute on two cores).
fn mock_captures() -> Vec<std::path::PathBuf> {
    [
        "mock-kcat-none",
        "mock-kcat-group",
        "mock-confluent-txn",
        "mock-kafkajs",
    ]
    .iter()
    .map(|n| common::captures_dir().join(format!("{n}.pcap")))
    .collect()
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn selected_frames_are_the_ones_tshark_selects() {
    let pairs: &[(&str, &str)] = &[
        ("api == Produce", "kafka.api_key == 0"),
        (
            "api in {Fetch, ListOffsets}",
            "kafka.api_key == 1 || kafka.api_key == 2",
        ),
        (
            "api == Metadata and direction == request",
            "kafka.api_key == 3 && kafka.api_version",
        ),
        ("topic == \"codec\"", "kafka.topic_name == \"codec\""),
        ("topic contains \"rp\"", "kafka.topic_name contains \"rp\""),
        ("partition == 1", "kafka.partition_id == 1"),
        (
            "partition > 0 and api == Fetch",
            "kafka.partition_id > 0 && kafka.api_key == 1",
        ),
        ("error", "kafka.error > 0 || kafka.error < 0"),
        ("error == UNSUPPORTED_VERSION", "kafka.error == 35"),
        (
            "correlation_id in {3..5}",
            "kafka.correlation_id >= 3 && kafka.correlation_id <= 5",
        ),
        (
            "version >= 4 and direction == request",
            "kafka.api_version >= 4",
        ),
        (
            "client_id matches \"^rdk\" and direction == request",
            "kafka.client_id matches \"^rdk\"",
        ),
        (
            "not api == ApiVersions and stream == 2",
            "!(kafka.api_key == 18) && kafka && tcp.stream == 2",
        ),
    ];
    let mut compared = 0;
    for path in mock_captures() {
        for (ours, theirs) in pairs {
            let k = frames_k(&path, ours);
            let t = frames_t(&path, theirs);
            assert_eq!(
                k,
                t,
                "{}: -Y '{ours}' vs tshark -Y '{theirs}'",
                path.display()
            );
            compared += k.len();
        }
    }
    assert!(compared > 500, "{compared} frames selected in all");
}

#[test]
fn a_bad_expression_is_a_usage_error_with_a_caret() {
    let c = common::captures_dir().join("mock-kcat-none.pcap");
    for cmd in ["decode", "stats", "check"] {
        let out = common::kinspect(&[
            cmd,
            "-Y",
            "api == Produce and (topic == x",
            c.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.ends_with(
                "--filter: column 31: expected `)` to close the `(` at column 20, found the end of the expression\n  api == Produce and (topic == x\n                                ^\n"
            ),
            "{cmd}: {err}"
        );
        assert!(common::stdout(&out).is_empty());
    }
}

#[test]
fn pairs_show_each_selected_half_with_its_other_half() {
    let c = common::captures_dir().join("mock-kcat-none.pcap");
    let f = |args: &[&str]| -> Vec<String> {
        kinspect_rows(&c, args)
            .into_iter()
            .map(|r| r.join(" "))
            .collect()
    };
    // A response selected: its request comes right before it.
    let k = f(&[
        "--pairs",
        "-Y",
        "api == Produce and direction == response and correlation_id == 4",
        "-e",
        "last_frame",
        "-e",
        "direction",
    ]);
    assert_eq!(k, ["25 request", "26 response"]);
    // A request selected: its response follows, whatever it holds.
    let k = f(&[
        "--pairs",
        "-Y",
        "api == Metadata and topic == codec and direction == request",
        "-e",
        "last_frame",
        "-e",
        "request_frame",
    ]);
    let plain = f(&[
        "-Y",
        "api == Metadata and topic == codec",
        "-e",
        "last_frame",
        "-e",
        "request_frame",
    ]);
    assert_eq!(
        k, plain,
        "Metadata requests and responses both name the topic"
    );
    // Errors: the ApiVersions v3 responses mock brokers reject, with the requests that asked.
    let k = f(&[
        "--pairs",
        "-Y",
        "error == UNSUPPORTED_VERSION",
        "-e",
        "last_frame",
        "-e",
        "direction",
        "-e",
        "version",
    ]);
    assert_eq!(k.len(), 12, "{k:?}");
    for pair in k.chunks(2) {
        assert!(
            pair[0].ends_with("request 3") && pair[1].ends_with("response 3"),
            "{pair:?}"
        );
    }
    // Without a filter --pairs is refused.
    let out = common::kinspect(&["decode", "--pairs", c.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn stats_and_check_count_only_what_the_filter_selects() {
    let c = common::captures_dir().join("mock-kcat-none.pcap");
    let c = c.to_str().unwrap();
    let out = common::kinspect(&["stats", "--format", "json", "-Y", "api == Produce", c]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = j.to_string();
    let k = kinspect_rows(Path::new(c), &["-Y", "api == Produce", "-e", "frame"]).len();
    assert_eq!(k, 8);
    assert!(text.contains("\"Produce\""), "{text}");
    assert!(!text.contains("\"Metadata\""), "{text}");
    // check: findings about the selected connection only.
    let all = common::kinspect(&["check", c]);
    let one = common::kinspect(&["check", "-Y", "stream == 0", c]);
    assert!(one.status.code().unwrap() <= all.status.code().unwrap());
}

/// With `--pairs` the exit status follows the PDUs shown, as it does with a filter alone, in
/// every subcommand that shows PDUs: this capture's only error diagnostics are on the mock
/// brokers' malformed ApiVersions v3 replies (read from its JSON Lines here), so pairs of
/// Produce calls exit 0 and the pairs of those replies 1, whatever else the capture holds.
#[test]
fn the_exit_status_follows_what_pairs_showed_in_every_subcommand() {
    let c = common::captures_dir().join("mock-kcat-none.pcap");
    let c = c.to_str().unwrap();
    let out = common::kinspect(&["decode", "-f", "jsonl", c]);
    let mut with_errors = BTreeSet::new();
    for line in common::stdout(&out).lines() {
        let j: serde_json::Value = serde_json::from_str(line).unwrap();
        let errors = j["diagnostics"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["severity"] == "error"));
        if errors {
            with_errors.insert((
                j["api"].as_str().unwrap().to_string(),
                j["api_version"].as_i64(),
            ));
        }
    }
    assert_eq!(
        with_errors,
        BTreeSet::from([("ApiVersions".to_string(), Some(3))]),
        "the capture's errors are where this test expects them"
    );
    let dir = std::env::temp_dir().join(format!("kinspect-pairs-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("report.html");
    let report = report.to_str().unwrap();
    let tables = dir.join("tables");
    let tables = tables.to_str().unwrap();
    // (`records` is left out: it shows records, and exits as the PDUs that carry them say.)
    let runs: [&[&str]; 5] = [
        &["decode", "-f", "summary"],
        &["decode", "-f", "parquet", "-o", tables],
        &["stats"],
        &["report", "-o", report],
        &["decode", "-f", "fields", "-e", "frame"],
    ];
    for run in runs {
        for (filter, want) in [
            ("api == Produce", 0),
            ("api == ApiVersions and version == 3", 1),
        ] {
            let _ = std::fs::remove_dir_all(dir.join("tables"));
            let mut args = run.to_vec();
            args.extend(["--pairs", "-Y", filter, c]);
            let out = common::kinspect(&args);
            assert_eq!(
                out.status.code(),
                Some(want),
                "kinspect {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
