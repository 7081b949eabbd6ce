//! What a newcomer meets first (issue "defects found trying kinspect as a new user would"): an
//! input that is not Kafka says so instead of exiting silently or printing garbage, compressed
//! captures read as tshark reads them, and summary times count as tshark's do.

use crate::common;
use std::io::Write;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn markdown_is_refused_with_exit_2_and_where_it_is_not_an_input() {
    let o = common::kinspect(&["decode", "README.md"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing decoded as garbage");
    let e = stderr(&o);
    assert!(e.contains("README.md: 1:1: this input is Markdown"), "{e}");
    assert!(e.contains("--input raw"), "says how to force it: {e}");
    // Forced, it is read as raw frames (and, being no Kafka, full of errors).
    let forced = common::kinspect(&["decode", "--input", "raw", "README.md", "-f", "summary"]);
    assert_ne!(forced.status.code(), Some(2), "{}", stderr(&forced));
}

#[test]
fn an_empty_input_says_it_held_nothing_and_exits_0() {
    let o = common::kinspect(&["decode", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/null: empty: no Kafka frame in it"),
        "{}",
        stderr(&o)
    );
    // The same where the input is taken as a capture: by the commands that read only captures,
    // and when the kind is forced. (They said "expected a pcap or pcapng magic number, but the
    // input holds only 0 byte(s)" and exited 2, where `decode` and `report` exit 0.)
    for args in [
        &["stats", "/dev/null"][..],
        &["check", "/dev/null"],
        &["decode", "--input", "pcap", "/dev/null"],
    ] {
        let o = common::kinspect(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let who = format!(
            "kinspect {}: /dev/null: empty: no Kafka frame in it",
            args[0]
        );
        assert!(stderr(&o).contains(&who), "{args:?}: {}", stderr(&o));
        // Its report of nothing says "(none)" in every list that has no header row.
        if args[0] == "stats" {
            let out = String::from_utf8_lossy(&o.stdout);
            for list in [
                "Error codes in responses",
                "Clients by client id",
                "Diagnostics",
            ] {
                assert!(
                    out.contains(&format!("{list}\n  (none)\n")),
                    "{list}: {out}"
                );
            }
        }
    }
    // A capture with its header and no packet is no capture cut short either.
    let header_only = common::captures_dir().join("mock-kcat-none.pcap");
    let header = &std::fs::read(header_only).unwrap()[..24];
    let path =
        std::env::temp_dir().join(format!("kinspect-header-only-{}.pcap", std::process::id()));
    std::fs::write(&path, header).unwrap();
    let o = common::kinspect(&["stats", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("0 packets, no Kafka traffic recognised"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_capture_without_kafka_says_what_was_read_and_to_try_port() {
    let http = "tests/fixtures/http/http-only.pcap";
    let o = common::kinspect(&["decode", http, "-f", "summary"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "http-only.pcap: 37 packets, 3 TCP connections, no Kafka traffic recognised; try --port"
        ),
        "{}",
        stderr(&o)
    );
    let s = common::kinspect(&["stats", http]);
    let out = common::stdout(&s);
    assert!(
        out.starts_with(
            "tests/fixtures/http/http-only.pcap: 37 packets, 3 TCP connections (0 Kafka; 3 not recognised as Kafka"
        ),
        "{out}"
    );
    // A capture with Kafka says nothing of the kind.
    let k = common::kinspect(&["decode", "captures/mock-kcat-none.pcap", "-f", "summary"]);
    assert!(!stderr(&k).contains("no Kafka"), "{}", stderr(&k));
}

#[test]
fn gzip_and_zstd_captures_decode_as_the_plain_one() {
    let plain = std::fs::read(common::captures_dir().join("mock-kcat-none.pcap")).unwrap();
    let dir = std::env::temp_dir().join(format!("kinspect-first-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = dir.join("capture.pcap.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&plain).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let zst = dir.join("capture.pcap.zst");
    std::fs::write(&zst, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    let want = common::kinspect(&["decode", "-f", "jsonl", "captures/mock-kcat-none.pcap"]);
    for p in [&gz, &zst] {
        let got = common::kinspect(&["decode", "-f", "jsonl", p.to_str().unwrap()]);
        assert_eq!(got.status.code(), want.status.code(), "{}", stderr(&got));
        assert!(
            got.stdout == want.stdout,
            "{} decodes differently",
            p.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// tshark's `frame.time_relative` of each frame of a capture (tshark is the oracle).
fn tshark_relative(pcap: &str) -> Vec<(u64, String)> {
    let out = std::process::Command::new("tshark")
        .args([
            "-r",
            pcap,
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.time_relative",
        ])
        .current_dir(common::repo())
        .output()
        .expect("tshark runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (n, t) = l.split_once('\t')?;
            Some((n.parse().ok()?, t.to_string()))
        })
        .collect()
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn summary_times_count_from_the_first_packet_as_tsharks_do() {
    let pcap = "captures/mock-kcat-gzip.pcap";
    let tshark = tshark_relative(pcap);
    let o = common::kinspect(&["decode", pcap, "-f", "summary"]);
    let mut compared = 0;
    for line in common::stdout(&o).lines() {
        let mut cols = line.split_whitespace();
        let (Some(frame), Some(time)) = (cols.next(), cols.next()) else {
            continue;
        };
        let Ok(frame) = frame.parse::<u64>() else {
            continue;
        };
        let want = &tshark
            .iter()
            .find(|(n, _)| *n == frame)
            .expect("tshark has the frame")
            .1;
        // tshark prints nanoseconds, kinspect microseconds (both exact on a µs capture).
        assert_eq!(format!("{time}000"), *want, "frame {frame}");
        compared += 1;
    }
    assert!(compared > 50, "only {compared} lines compared");
}

#[test]
fn delta_times_are_the_same_on_one_thread_and_two() {
    let run = |threads: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kinspect"))
            .args([
                "decode",
                "captures/mock-kcat-group.pcap",
                "-f",
                "summary",
                "-t",
                "d",
            ])
            .current_dir(common::repo())
            .env("KINSPECT_THREADS", threads)
            .output()
            .unwrap()
            .stdout
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert!(
        one == run("2"),
        "delta times differ between one thread and two"
    );
}
