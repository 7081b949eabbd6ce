//! `kinspect check`: the real captures carry no error findings (and exactly the warnings the
//! note explains), the JSON Lines contract, exit codes and the quorum timeline.

use crate::check_support::kraft_pcap;
use crate::common;
use serde_json::Value as J;
use std::collections::BTreeSet;
use std::process::Command;

fn kinspect(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .output()
        .expect("run kinspect");
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn real_captures_have_no_error_findings_and_only_the_explained_warning() {
    let mut files: Vec<String> = std::fs::read_dir(common::captures_dir())
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".pcap") || p.ends_with(".pcapng"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    let mut args = vec!["check", "--format", "jsonl"];
    args.extend(files.iter().map(String::as_str));
    let (out, code) = kinspect(&args);
    assert_eq!(code, 0, "{out}");
    let found: Vec<J> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(String, &str, &J)> = found
        .iter()
        .map(|f| {
            let file = f["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string();
            (file, f["rule"].as_str().unwrap(), &f["frames"])
        })
        .collect();
    // kafka-python asks tansu for Metadata v13, which tansu's ApiVersions answer (0..=12) did not
    // offer; tansu answers it anyway.
    assert_eq!(
        got,
        [(
            "tansu-kafkapython3-admin-sweep.pcap".to_string(),
            "version-not-advertised",
            &J::from(vec![160])
        )]
    );
    let f = &found[0];
    for key in [
        "rule",
        "severity",
        "frames",
        "message",
        "expected",
        "seen",
        "api",
        "connection",
    ] {
        assert!(f.get(key).is_some(), "{key} in {f}");
    }
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["api"], "Metadata");
    assert_eq!(f["connection"]["server"], "127.0.0.1:9092");
}

#[test]
fn exit_codes_text_and_timeline() {
    let dir = std::env::temp_dir().join(format!("kinspect-check-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clean = dir.join("clean.pcap");
    std::fs::write(
        &clean,
        kraft_pcap("vote 1 -> 2 epoch 5 : granted\nvote 1 -> 3 epoch 5 : rejected\nbegin 1 -> 2 epoch 5\nbegin 1 -> 3 epoch 5"),
    )
    .unwrap();
    let double = dir.join("double.pcap");
    std::fs::write(
        &double,
        kraft_pcap("vote 1 -> 2 epoch 5 : granted\nvote 3 -> 2 epoch 5 : granted"),
    )
    .unwrap();
    let (out, code) = kinspect(&["check", "--timeline", clean.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("quorum timeline\nepoch 5\n"), "{out}");
    assert!(
        out.contains("1 is leader (BeginQuorumEpoch; votes from 1, 2)"),
        "{out}"
    );
    assert!(out.contains("findings per rule\n  (none)"), "{out}");
    let (out, code) = kinspect(&["check", double.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("vote-double-grant"))
        .unwrap();
    assert!(line.contains(" error "), "{line}");
    assert!(
        out.contains("vote-double-grant                  error         1"),
        "{out}"
    );
    let (_, code) = kinspect(&["check", dir.join("missing.pcap").to_str().unwrap()]);
    assert_eq!(code, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decode_check_adds_findings_to_the_pdu_diagnostics() {
    let dir = std::env::temp_dir().join(format!("kinspect-decode-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let double = dir.join("double.pcap");
    std::fs::write(
        &double,
        kraft_pcap("vote 1 -> 2 epoch 5 : granted\nvote 3 -> 2 epoch 5 : granted"),
    )
    .unwrap();
    let file = double.to_str().unwrap();
    // Summary (two threads otherwise) and JSON Lines: the rules run in capture order either way.
    for threads in ["1", "2"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
            .args(["decode", "--check", "--format", "jsonl", file])
            .env("KINSPECT_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "an error-level rule fired");
        let pdus: Vec<J> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let found: Vec<(&J, &J)> = pdus
            .iter()
            .flat_map(|p| {
                p["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| d["path"] == "check")
                    .map(move |d| (p, d))
            })
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        let (pdu, d) = found[0];
        assert_eq!(d["code"], "vote-double-grant");
        assert_eq!(d["severity"], "error");
        assert_eq!(pdu["api"], "Vote");
        let m = d["message"].as_str().unwrap();
        assert!(m.contains("[frames "), "{m}");
        assert!(m.contains("[expected "), "{m}");
        for key in ["severity", "code", "path", "offset", "message"] {
            assert!(d.get(key).is_some(), "{key} in {d}");
        }
    }
    // Without --check the same capture decodes cleanly.
    let (out, code) = kinspect(&["decode", "--format", "jsonl", file]);
    assert_eq!(code, 0);
    assert!(!out.contains("vote-double-grant"));
    // `--errors-only` sees the finding: the rules run before the filters.
    let (out, _) = kinspect(&[
        "decode",
        "--check",
        "--errors-only",
        "--format",
        "jsonl",
        file,
    ]);
    assert_eq!(out.lines().count(), 1, "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_real_idempotent_and_transactional_producer_is_clean() {
    let cap = common::repo().join("captures/producers/mock-kcat-idempotent-txn.pcap");
    let cap = cap.to_str().unwrap();
    let mut args = vec!["check", "--format", "jsonl", cap];
    for p in ["33129", "39367", "45455", "41877", "37973", "33167"] {
        args.extend(["--port", p]);
    }
    let (out, code) = kinspect(&args);
    assert_eq!((out.as_str(), code), ("", 0));
    // The rules had something to judge: idempotent batches on four partitions with sequences
    // 0 and 4, and one transactional batch after AddPartitionsToTxn.
    args[0] = "decode";
    args[2] = "jsonl";
    let (out, _) = kinspect(&args);
    let mut batches = Vec::new();
    // What `check` says it followed, counted here from the decoded PDUs: every PDU, the
    // connections that carried a request, the producer ids granted or written with, and each
    // producer id's partitions.
    let (mut pdus, mut conns, mut pids, mut pid_parts) =
        (0, BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for l in out.lines() {
        let p: J = serde_json::from_str(l).unwrap();
        pdus += 1;
        if p["direction"] == "request" {
            conns.insert(p["connection"]["stream"].as_u64().unwrap());
        }
        if p["api"] == "InitProducerId"
            && p["direction"] == "response"
            && p["body"]["ErrorCode"] == 0
        {
            pids.insert(p["body"]["ProducerId"].as_i64().unwrap());
        }
        if p["api"] != "Produce" || p["direction"] != "request" {
            continue;
        }
        for t in p["body"]["TopicData"].as_array().unwrap() {
            for pd in t["PartitionData"].as_array().unwrap() {
                for b in pd["Records"].as_array().unwrap() {
                    let pid = b["ProducerId"].as_i64().unwrap();
                    if pid >= 0 {
                        pids.insert(pid);
                        pid_parts.insert((
                            pid,
                            t["Name"].as_str().unwrap().to_string(),
                            pd["Index"].as_i64().unwrap(),
                        ));
                    }
                    batches.push((
                        pd["Index"].as_i64().unwrap(),
                        b["BaseSequence"].as_i64().unwrap(),
                        b["Attributes"]["IsTransactional"].as_bool().unwrap(),
                    ));
                }
            }
        }
    }
    batches.sort();
    assert_eq!(
        batches,
        [
            (0, 0, false),
            (0, 4, false),
            (1, 0, false),
            (1, 0, true),
            (1, 4, false),
            (2, 0, false),
            (2, 4, false),
            (3, 0, false),
            (3, 4, false)
        ]
    );
    args[0] = "check";
    args[2] = "text";
    let (out, _) = kinspect(&args);
    let followed = |what: &str| -> usize {
        let row = out
            .lines()
            .skip_while(|l| *l != "what the rules followed")
            .find(|l| l.get(2..36).is_some_and(|w| w.trim_end() == what))
            .unwrap_or_else(|| panic!("no {what} row in\n{out}"));
        row.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(followed("PDUs"), pdus);
    assert_eq!(followed("connections"), conns.len());
    assert_eq!(followed("producers"), pids.len());
    assert_eq!(followed("producer partitions"), pid_parts.len());
    // The idempotent producer's four partitions and the transactional one's single partition.
    assert_eq!((pids.len(), pid_parts.len()), (2, 5));
}

#[test]
fn a_filter_narrows_the_findings_shown_not_the_conversation_the_rules_follow() {
    let dir = std::env::temp_dir().join(format!("kinspect-check-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let double = dir.join("double.pcap");
    // Voter 2 grants 1 (connection 0), then 3 (connection 1), both in epoch 5: the second
    // grant breaks the rule, and only the first one shows why.
    std::fs::write(
        &double,
        kraft_pcap("vote 1 -> 2 epoch 5 : granted\nvote 3 -> 2 epoch 5 : granted"),
    )
    .unwrap();
    let f = double.to_str().unwrap();
    let (out, code) = kinspect(&["check", "-Y", "stream == 1", f]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("vote-double-grant                  error         1"),
        "{out}"
    );
    let (out, code) = kinspect(&["check", "-Y", "stream == 0", f]);
    assert_eq!(code, 0, "{out}");
    // Nothing above the counts, so no blank line to set them apart. The rules still followed
    // the whole conversation: two requests and their answers, each on its own connection;
    // replicas 1, 2 and 3; candidates 1 and 3 in epoch 5, two elections.
    assert_eq!(
        out,
        "findings per rule\n  (none)\n\nwhat the rules followed\n\
         \x20 PDUs                                             4\n\
         \x20 connections                        sessions      2\n\
         \x20 brokers with ApiVersions           sessions      0\n\
         \x20 client partitions                  epochs        0\n\
         \x20 quorum replicas                    votes         3\n\
         \x20 elections                          votes         2\n\
         \x20 metadata partitions                recovery      0\n\
         \x20 broker registrations               recovery      0\n\
         \x20 producers                          producers     0\n\
         \x20 producer partitions                producers     0\n\
         \x20 group members                      groups        0\n"
    );
    // --pairs: the request selected, its response's finding shown.
    let (out, code) = kinspect(&[
        "check",
        "--pairs",
        "-Y",
        "stream == 1 and direction == request",
        f,
    ]);
    assert_eq!(code, 1, "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `check --rules` lists every rule, and the README's rules table is that list, row for row:
/// code, severity, what must hold, and "KIP; source". Each test the table names as where the
/// rule fires exists.
#[test]
fn the_readme_rules_table_is_what_check_rules_lists() {
    let (out, code) = kinspect(&["check", "--rules", "-f", "jsonl"]);
    assert_eq!(code, 0, "{out}");
    let rules: Vec<J> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(rules.len() >= 30, "{out}");
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    let head = "| code | severity | what must hold | Kafka source | fires / stays silent in |";
    let table: Vec<Vec<String>> = readme
        .lines()
        .skip_while(|l| *l != head)
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let got: Vec<Vec<String>> = rules
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            vec![
                format!("`{}`", s("rule")),
                s("severity"),
                s("statement"),
                format!("{}; {}", s("kip"), s("source")),
            ]
        })
        .collect();
    let want: Vec<Vec<String>> = table.iter().map(|row| row[..4].to_vec()).collect();
    assert_eq!(
        got, want,
        "README rules table against `kinspect check --rules`"
    );
    // The tests named in the last column: `module::name` is `fn name` in tests/it/module.rs
    // (`check::tests::name`: src/check/mod.rs); a name after `, …` is abbreviated, skipped.
    for row in &table {
        for group in row[4].split('`').skip(1).step_by(2) {
            for name in group.split([',', ';']).map(str::trim) {
                let Some((module, f)) = name.split_once("::") else {
                    continue;
                };
                let (file, f) = match f.strip_prefix("tests::") {
                    Some(f) => (common::repo().join(format!("src/{module}/mod.rs")), f),
                    None => (common::repo().join(format!("tests/it/{module}.rs")), f),
                };
                let src = std::fs::read_to_string(&file)
                    .unwrap_or_else(|e| panic!("{}: {e} (named for {})", file.display(), row[0]));
                assert!(
                    src.contains(&format!("fn {f}(")),
                    "{} names {name}, not in {}",
                    row[0],
                    file.display()
                );
            }
        }
    }
    // Text: a line naming each rule, its severity and family.
    let (text, code) = kinspect(&["check", "--rules"]);
    assert_eq!(code, 0);
    assert!(
        text.contains(
            "sequence-gap (warning, producers)\n    per producer id, epoch and partition"
        ),
        "{text}"
    );
    // Files and --rules do not go together.
    let (_, code) = kinspect(&["check", "--rules", "captures/mock-kcat-none.pcap"]);
    assert_eq!(code, 2);
}

/// A capture cut inside a packet record, and one whose packets were cut by the snap length: the
/// rules cannot see what is missing, and `check` says what that was. The expectations come from
/// the pcap's own record headers (walked here) and from tshark's rows beside the capture.
#[test]
fn what_the_rules_could_not_see() {
    let src = common::captures_dir().join("mock-kcat-none.pcap");
    let pcap = std::fs::read(&src).unwrap();
    let starts: Vec<usize> = common::pcap_records(&pcap).iter().map(|r| r.0).collect();
    // Cut ten bytes into the data of record 100 (frame 100): frames 1-99 are whole.
    let cut_frame = 100;
    let cut = starts[cut_frame - 1] + 16 + 10;
    let dir = std::env::temp_dir().join(format!("kinspect-check-unseen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut_file = dir.join("cut.pcap");
    std::fs::write(&cut_file, &pcap[..cut]).unwrap();
    // tshark's Kafka PDUs it calls malformed, in the frames kept.
    let tsv = std::fs::read_to_string(src.with_extension("summary.tsv")).unwrap();
    let malformed = tsv
        .lines()
        .skip(1)
        .filter(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            c[0].parse::<usize>().unwrap() < cut_frame && c[11] == "yes"
        })
        .count();
    assert!(malformed > 0, "the kept frames hold malformed PDUs");
    let (out, code) = kinspect(&["check", cut_file.to_str().unwrap()]);
    // The exit code stays the rules': none fired.
    assert_eq!(code, 0, "{out}");
    let unseen: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "what the rules could not see")
        .collect();
    assert_eq!(
        unseen,
        [
            "what the rules could not see".to_string(),
            format!("  PDUs with decoding errors          error     {malformed:>5}"),
            "  capture-truncated                  error         1".to_string(),
            "  (`kinspect decode -f summary` shows each at its frame; `--errors-only` the errors)"
                .to_string(),
        ],
        "{out}"
    );
    // JSON Lines stays one object per finding: nothing.
    let (out, code) = kinspect(&["check", "-f", "jsonl", cut_file.to_str().unwrap()]);
    assert_eq!((out.as_str(), code), ("", 0));
    std::fs::remove_dir_all(&dir).unwrap();

    // Every packet cut to 128 bytes: frames cut short, one note each where the stream ended or
    // skipped inside a frame; tshark has no row for most of them, so only their presence is
    // checked, and that the whole capture is not said to be missed.
    let snap = common::captures_dir().join("mock-kcat-snaplen128.pcap");
    let (out, _) = kinspect(&["check", snap.to_str().unwrap()]);
    let unseen: Vec<&str> = out
        .lines()
        .skip_while(|l| *l != "what the rules could not see")
        .collect();
    assert!(
        unseen.iter().any(|l| l.starts_with("  frame-incomplete ")),
        "{out}"
    );
    // A clean capture has no such section.
    let clean = common::captures_dir().join("tansu-kafkapython3-codecs.pcap");
    let (out, code) = kinspect(&["check", clean.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(!out.contains("could not see"), "{out}");
}

/// `--strict`: a capture the rules could not see whole fails, named on stderr with what was
/// missed; a clean one passes; info notes alone (TLS, traffic that is not Kafka) do not fail it.
#[test]
fn strict_fails_what_the_rules_could_not_see_whole() {
    let dir = common::captures_dir();
    let snap = dir.join("mock-kcat-snaplen128.pcap");
    let clean = dir.join("tansu-kafkapython3-codecs.pcap");
    for format in ["text", "jsonl"] {
        let o = common::kinspect(&[
            "check",
            "--strict",
            "-f",
            format,
            snap.to_str().unwrap(),
            clean.to_str().unwrap(),
        ]);
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "only the damaged capture is named: {err}");
        assert!(
            lines[0].starts_with(&format!(
                "kinspect check: {}: the rules could not see all of it (--strict): PDUs with decoding errors ",
                snap.display()
            )) && lines[0].contains(", frame-incomplete "),
            "{err}"
        );
        // Without --strict the exit code is the rules' alone.
        let o = common::kinspect(&["check", "-f", format, snap.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0));
        let o = common::kinspect(&["check", "--strict", "-f", format, clean.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0));
        assert!(o.stderr.is_empty());
    }
    // A connection that carried TLS on a Kafka port: an info note, which --strict lets pass.
    // Built from a TLS ClientHello's first bytes on port 9092, answered by a ServerHello's.
    let mut conv = kinspect::capture::testgen::Conversation::new(
        "10.0.0.1:40000".parse().unwrap(),
        "10.0.0.2:9092".parse().unwrap(),
    );
    conv.handshake();
    conv.send(
        true,
        &[0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00],
    );
    conv.send(
        false,
        &[0x16, 0x03, 0x03, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00],
    );
    conv.close();
    let recs = kinspect::capture::testgen::records(
        &kinspect::capture::testgen::Link::Ethernet,
        &conv.packets,
        usize::MAX,
    );
    let pcap = kinspect::capture::testgen::pcap(1, &recs, false, true, 262_144);
    let tls = std::env::temp_dir().join(format!("kinspect-strict-tls-{}.pcap", std::process::id()));
    std::fs::write(&tls, pcap).unwrap();
    let o = common::kinspect(&["check", "--strict", tls.to_str().unwrap()]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("\n  tls                                info          1\n"),
        "{out}"
    );
    assert_eq!(o.status.code(), Some(0), "{out}");
    std::fs::remove_file(&tls).unwrap();
}
