//! `kinspect decode -f fields -e …` against tshark's `-T fields -e …` on the bundled captures
//! (tshark 4.0.17 or later, run here; the test is ignored, and says so, without it).
//!
//! Where they agree exactly: frame, correlation id and API key of every Kafka PDU; topics,
//! partitions and non-zero error codes per frame on the librdkafka-mock captures (versions
//! tshark decodes). Where they do not, the bytes decide:
//! - responses tshark leaves without an API key (Metadata v12, ApiVersions v3 and other
//!   flexible versions it does not know; requests cut by a 128-byte snap length): kinspect's
//!   key is the one tshark itself reads in the request frame kinspect matched them to;
//! - tansu's Metadata v12: tshark reads the flexible body with the v9 layout (a partition id of
//!   -1770606433 and error 8506 in frame 28, the request's topic as `[ Null ]` in frame 36),
//!   while kinspect's decode accounts for every byte (`topics=ckadmin,ckadmin-tmp`).

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `-d tcp.port==P,kafka` for the capture's broker ports (captures/MANIFEST.tsv).
fn decode_as(path: &Path) -> Vec<String> {
    let name = path.file_stem().unwrap().to_str().unwrap();
    let manifest = std::fs::read_to_string(common::captures_dir().join("MANIFEST.tsv")).unwrap();
    let ports = manifest
        .lines()
        .find_map(|l| {
            let mut c = l.split('\t');
            (c.next() == Some(name)).then(|| c.next().unwrap().to_string())
        })
        .unwrap_or_else(|| "9092".into());
    ports
        .split(',')
        .flat_map(|p| ["-d".to_string(), format!("tcp.port=={p},kafka")])
        .collect()
}

/// tshark's `-T fields` rows (all occurrences, comma-joined) for the frames `filter` selects.
pub fn tshark_fields(path: &Path, filter: &str, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-n").arg("-r").arg(path).args(decode_as(path));
    cmd.args(["-Y", filter, "-T", "fields", "-E", "occurrence=a"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    rows(&String::from_utf8(out.stdout).unwrap())
}

fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// kinspect's rows for `args` (after `decode`) on `path`.
pub fn kinspect_rows(path: &Path, args: &[&str]) -> Vec<Vec<String>> {
    let mut a = vec!["decode"];
    a.extend_from_slice(args);
    a.push(path.to_str().unwrap());
    let out = common::kinspect(&a);
    assert!(
        out.status.code().unwrap_or(9) <= 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    rows(&common::stdout(&out))
}

/// Per frame (column 0), the distinct values of column 1.
fn per_frame(rows: &[Vec<String>], skip_zero: bool) -> BTreeMap<u64, BTreeSet<String>> {
    let mut m: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for r in rows {
        let e = m.entry(r[0].parse().unwrap()).or_default();
        for v in r.get(1).map_or("", |s| s).split(',') {
            if !(v.is_empty() || skip_zero && v == "0") {
                e.insert(v.to_string());
            }
        }
    }
    m.retain(|_, v| !v.is_empty());
    m
}

fn mock_captures() -> Vec<std::path::PathBuf> {
    common::bundled_captures()
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("mock-") && !n.contains("snaplen")
        })
        .collect()
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn frame_correlation_id_api_key_and_size_are_tsharks() {
    let mut checked = 0;
    for path in common::bundled_captures() {
        let t = tshark_fields(
            &path,
            "kafka",
            &[
                "frame.number",
                "kafka.correlation_id",
                "kafka.api_key",
                "kafka.len",
            ],
        );
        let k = kinspect_rows(
            &path,
            &[
                "-e",
                "last_frame",
                "-e",
                "correlation_id",
                "-e",
                "api_key",
                "-e",
                "request_frame",
                "-e",
                "direction",
                "-e",
                "size",
            ],
        );
        // Several PDUs in one frame are one tshark row, values comma-joined.
        let mut by_frame: BTreeMap<u64, Vec<&Vec<String>>> = BTreeMap::new();
        for r in &k {
            by_frame.entry(r[0].parse().unwrap()).or_default().push(r);
        }
        let tshark_keys: BTreeMap<u64, String> = t
            .iter()
            .map(|r| (r[0].parse().unwrap(), r[2].clone()))
            .collect();
        assert_eq!(
            by_frame.keys().collect::<Vec<_>>(),
            t.iter()
                .map(|r| r[0].parse::<u64>().unwrap())
                .collect::<Vec<_>>()
                .iter()
                .collect::<Vec<_>>(),
            "{}: the frames holding Kafka PDUs",
            path.display()
        );
        for r in &t {
            let frame: u64 = r[0].parse().unwrap();
            let ours = &by_frame[&frame];
            let corr: Vec<&str> = ours.iter().map(|x| x[1].as_str()).collect();
            assert_eq!(
                corr.join(","),
                r[1],
                "{}: frame {frame}: correlation ids",
                path.display()
            );
            // `size` is the frame's bytes with its size prefix, as captured: tshark's
            // `kafka.len` (the prefix's value) + 4, but for a frame the snap length cut short,
            // of which tshark shows the length declared and kinspect the bytes it has.
            let cut = path.to_string_lossy().contains("snaplen");
            for (x, len) in ours.iter().zip(r[3].split(',')) {
                let (size, len): (u64, u64) = (x[5].parse().unwrap(), len.parse().unwrap());
                assert!(
                    size == len + 4 || (cut && size < len + 4 && size <= 128),
                    "{}: frame {frame}: size {size}, kafka.len {len}",
                    path.display()
                );
            }
            let keys: Vec<&str> = ours.iter().map(|x| x[2].as_str()).collect();
            if !r[2].is_empty() {
                assert_eq!(
                    keys.join(","),
                    r[2],
                    "{}: frame {frame}: API keys",
                    path.display()
                );
            } else {
                // tshark could not match the response: its request frame, as tshark reads it.
                for x in ours {
                    assert_eq!(
                        x[4],
                        "response",
                        "{}: frame {frame}: tshark gives every request a key",
                        path.display()
                    );
                    let req: u64 = x[3].parse().unwrap();
                    assert_eq!(
                        tshark_keys.get(&req).map(String::as_str),
                        Some(x[2].as_str()),
                        "{}: frame {frame}: the API key of request frame {req}",
                        path.display()
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 1500, "{checked} frames compared");
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn topics_partitions_and_errors_are_tsharks_where_it_decodes_the_versions() {
    for path in mock_captures() {
        for (ours, theirs, skip_zero) in [
            ("topic", "kafka.topic_name", false),
            ("partition", "kafka.partition_id", false),
            // tshark lists every error code, 0 too; `error_code` is the non-zero ones.
            ("error_code", "kafka.error", true),
            ("api_version", "kafka.api_version", false),
        ] {
            let t = per_frame(
                &tshark_fields(&path, "kafka", &["frame.number", theirs]),
                skip_zero,
            );
            let mut k = per_frame(
                &kinspect_rows(&path, &["-e", "last_frame", "-e", ours]),
                false,
            );
            if ours == "api_version" {
                // tshark shows the version on requests only.
                let req = per_frame(
                    &kinspect_rows(
                        &path,
                        &[
                            "-Y",
                            "direction == request",
                            "-e",
                            "last_frame",
                            "-e",
                            "api_version",
                        ],
                    ),
                    false,
                );
                k = req;
            }
            assert_eq!(k, t, "{}: {ours} vs tshark's {theirs}", path.display());
        }
    }
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn a_responses_client_id_is_its_requests_as_tshark_reads_it() {
    for path in mock_captures() {
        let t: BTreeMap<String, String> = tshark_fields(
            &path,
            "kafka.client_id",
            &["frame.number", "kafka.client_id"],
        )
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
        let k = kinspect_rows(
            &path,
            &[
                "-Y",
                "direction == response",
                "-e",
                "request_frame",
                "-e",
                "client_id",
            ],
        );
        assert!(!k.is_empty());
        for r in &k {
            assert_eq!(
                t.get(&r[0]),
                Some(&r[1]),
                "{}: response to frame {}",
                path.display(),
                r[0]
            );
        }
    }
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn tshark_misreads_tansus_metadata_v12_and_kinspect_does_not() {
    let path = common::captures_dir().join("tansu-confluent-admin.pcap");
    let t = tshark_fields(
        &path,
        "frame.number == 28 || frame.number == 36",
        &[
            "frame.number",
            "kafka.topic_name",
            "kafka.partition_id",
            "kafka.error",
        ],
    );
    assert!(
        t[0][2].contains("-1770606433") && t[0][3].contains("8506"),
        "{t:?}"
    );
    assert_eq!(t[1][1], "[ Null ]", "{t:?}");
    let k = kinspect_rows(
        &path,
        &[
            "-Y",
            "last_frame in {28, 36}",
            "-e",
            "last_frame",
            "-e",
            "version",
            "-e",
            "topic",
            "-e",
            "error",
        ],
    );
    let k: Vec<String> = k.iter().map(|r| r.join(" ")).collect();
    assert_eq!(
        k,
        ["28 12 ckadmin ", "28 12 ckadmin-tmp ", "36 12 ckadmin "]
    );
    // And every byte of both frames is accounted for: no diagnostics.
    let out = common::kinspect(&[
        "decode",
        "-Y",
        "last_frame in {28, 36}",
        "-f",
        "summary",
        path.to_str().unwrap(),
    ]);
    assert!(
        !common::stdout(&out).contains('['),
        "{}",
        common::stdout(&out)
    );
}

#[test]
fn rows_line_up_by_element_and_quote_as_csv() {
    let path = common::captures_dir().join("mock-kcat-group.pcap");
    let k = kinspect_rows(
        &path,
        &[
            "-Y",
            "last_frame == 56",
            "-e",
            "frame",
            "-e",
            "api",
            "-e",
            "topic",
            "-e",
            "partition",
            "--header",
            "--separator",
            ",",
        ],
    );
    // An OffsetFetch v5 request (group kcat-group) for partitions 0 and 1 of topic grp: one row
    // per partition, its topic repeated.
    let k: Vec<String> = k.iter().map(|r| r.join("|")).collect();
    assert_eq!(
        k,
        [
            "frame,api,topic,partition",
            "56,OffsetFetch,grp,0",
            "56,OffsetFetch,grp,1"
        ]
    );
    // Several values of a column in one row are comma-joined, hence quoted with --separator ,.
    let k = kinspect_rows(
        &path,
        &[
            "-Y",
            "last_frame == 56",
            "-e",
            "frame",
            "-e",
            "partition",
            "--separator",
            ",",
        ],
    );
    let frame_level: Vec<String> = k.iter().map(|r| r.join("|")).collect();
    assert_eq!(frame_level, ["56,0", "56,1"]);
    let out = common::kinspect(&[
        "decode",
        "-Y",
        "last_frame == 56",
        "-e",
        "frame",
        "-e",
        "body.Topics[].PartitionIndexes[]",
        "-e",
        "body.Topics",
        "--separator",
        ",",
        path.to_str().unwrap(),
    ]);
    assert_eq!(common::stdout(&out), "56,0,1\n56,1,1\n");
    let out = common::kinspect(&[
        "decode",
        "-Y",
        "last_frame == 56",
        "-e",
        "frame",
        "-e",
        "partition",
        "-e",
        "body.Topics[].Name",
        "-e",
        "body.Topics",
        "--separator",
        ";",
        path.to_str().unwrap(),
    ]);
    assert_eq!(common::stdout(&out), "56;0;grp;1\n56;1;grp;1\n");
}

#[test]
fn fields_flags_are_checked() {
    let c = common::captures_dir().join("mock-kcat-none.pcap");
    let c = c.to_str().unwrap();
    for (args, msg) in [
        (vec!["decode", "-f", "fields", c], "at least one -e FIELD"),
        (
            vec!["decode", "-f", "jsonl", "-e", "frame", c],
            "go with --format fields",
        ),
        (vec!["decode", "-e", "nope", c], "unknown field `nope`"),
    ] {
        let out = common::kinspect(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn fields_and_filters_print_the_same_on_one_thread_and_two() {
    let run = |threads: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
            .args(args)
            .current_dir(common::repo())
            .env("KINSPECT_THREADS", threads)
            .output()
            .unwrap();
        (out.status.code(), out.stdout)
    };
    for path in common::bundled_captures() {
        let p = path.to_str().unwrap();
        for args in [
            vec![
                "decode",
                "-e",
                "frame",
                "-e",
                "api",
                "-e",
                "topic",
                "-e",
                "partition",
                "-e",
                "error",
                "--header",
                p,
            ],
            vec!["decode", "-f", "jsonl", "-Y", "topic or error", p],
        ] {
            let one = run("1", &args);
            assert!(!one.1.is_empty() || args.len() < 9, "{args:?}");
            assert_eq!(one, run("2", &args), "{args:?}");
        }
    }
}

/// `diagnostic` (the codes of a PDU's diagnostics, as tshark's `_ws.expert`) names the PDUs tshark
/// calls malformed (its rows beside each capture: the librdkafka mock's ApiVersions v3 answers,
/// whose bodies do not end where their length does, `trailing-bytes`) and the PDUs whose
/// packets the capture cut (the pcap's record headers: `incl_len < orig_len`), and no other, on
/// the mock captures where tshark decodes every version.
#[test]
fn diagnostic_names_the_pdus_tshark_and_the_capture_say_are_broken() {
    for name in [
        "mock-kcat-none",
        "mock-kcat-gzip",
        "mock-kcat-snappy",
        "mock-kcat-zstd",
        "mock-kcat-snaplen128",
    ] {
        let pcap = common::captures_dir().join(format!("{name}.pcap"));
        let cut = common::cut_packets(&pcap);
        let mut malformed = BTreeSet::new();
        let mut broken = BTreeSet::new();
        for c in common::tshark_summary(&pcap) {
            let frame: u64 = c[0].parse().unwrap();
            if c[11] == "yes" {
                assert_eq!(
                    c[12],
                    "Dissected message does not end at the pdu length offset"
                );
                malformed.insert(frame);
            }
            if c[11] == "yes" || cut[frame as usize - 1] {
                broken.insert(frame);
            }
        }
        let frames = |filter: &str| -> BTreeSet<u64> {
            let o = common::kinspect(&[
                "decode",
                "-e",
                "frame",
                "-Y",
                filter,
                pcap.to_str().unwrap(),
            ]);
            assert!(o.status.code().is_some_and(|c| c < 2), "{filter}: {o:?}");
            common::stdout(&o)
                .lines()
                .map(|l| l.parse().unwrap())
                .collect()
        };
        assert!(!malformed.is_empty(), "{name}");
        assert_eq!(frames("diagnostic"), broken, "{name}");
        assert_eq!(
            frames(r#"diagnostic == "trailing-bytes""#),
            malformed,
            "{name}"
        );
        assert_eq!(
            frames(r#"diagnostic and not diagnostic in {"trailing-bytes", "truncated"}"#),
            BTreeSet::new(),
            "{name}"
        );
    }
    // Rows without the column say on stderr why the run exits 1; with it, or with nothing
    // broken shown, nothing is said.
    let pcap = common::captures_dir().join("mock-kcat-none.pcap");
    let run = |args: &[&str]| {
        let mut a = vec!["decode", "-e", "frame"];
        a.extend_from_slice(args);
        a.push(pcap.to_str().unwrap());
        let o = common::kinspect(&a);
        (
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.status.code(),
        )
    };
    let hint = "kinspect decode: PDUs shown carry error diagnostics (hence exit 1): -e diagnostic \
                names them in each row, -Y diagnostic shows only them\n";
    assert_eq!(run(&[]), (hint.to_string(), Some(1)));
    assert_eq!(run(&["-e", "diagnostic"]), (String::new(), Some(1)));
    assert_eq!(run(&["-Y", "api == Produce"]), (String::new(), Some(0)));
}
