//! The probe's oracles against an in-process fake broker (a thread on 127.0.0.1:0 answering
//! from canned bytes): a timeout, a closed connection, a wrong correlation id, trailing bytes,
//! a version past the range answered, and clean answers; and the session's pcap read back by
//! `kinspect decode` (and tshark, when installed). Deterministic and fast.

use super::common::kinspect;
use kinspect::probe::{self, Config, Report};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

const METADATA: i16 = 3;
const HEARTBEAT: i16 = 12;
const LEAVE_GROUP: i16 = 13;
const DESCRIBE_GROUPS: i16 = 15;
const LIST_GROUPS: i16 = 16;
const API_VERSIONS: i16 = 18;

/// Advertised: each API at v0 only.
const ADVERTISED: [i16; 6] = [
    METADATA,
    HEARTBEAT,
    LEAVE_GROUP,
    DESCRIBE_GROUPS,
    LIST_GROUPS,
    API_VERSIONS,
];

fn frame(corr: i32, body: &[u8]) -> Vec<u8> {
    let mut f = ((4 + body.len()) as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(body);
    f
}

/// What the fake answers to (api key, version): `None` closes the connection.
fn answer(key: i16, v: i16, corr: i32) -> Option<Vec<u8>> {
    Some(match (key, v) {
        (API_VERSIONS, 0) => {
            let mut b = vec![0, 0];
            b.extend_from_slice(&(ADVERTISED.len() as i32).to_be_bytes());
            for k in ADVERTISED {
                b.extend_from_slice(&k.to_be_bytes());
                b.extend_from_slice(&[0, 0, 0, 0]);
            }
            frame(corr, &b)
        }
        // What Kafka does: a v0 body with UNSUPPORTED_VERSION and its own ApiVersions range.
        (API_VERSIONS, _) => frame(corr, &[0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 0]),
        (METADATA, 0) => frame(corr, &[0, 0, 0, 0, 0, 0, 0, 0]),
        (HEARTBEAT, 0) => return Some(Vec::new()), // never answered
        (DESCRIBE_GROUPS, 0) => frame(corr.wrapping_add(1000), &[0, 0, 0, 0]),
        (LIST_GROUPS, 0) => frame(corr, &[0, 0, 0, 0, 0, 0, 0xab, 0xcd]),
        // Past the range, answered as if supported.
        (LIST_GROUPS, 1) => frame(corr, &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        _ => return None,
    })
}

fn serve(mut s: TcpStream) {
    loop {
        let mut size = [0u8; 4];
        if s.read_exact(&mut size).is_err() {
            return;
        }
        let mut req = vec![0u8; u32::from_be_bytes(size) as usize];
        if s.read_exact(&mut req).is_err() || req.len() < 8 {
            return;
        }
        let key = i16::from_be_bytes([req[0], req[1]]);
        let v = i16::from_be_bytes([req[2], req[3]]);
        let corr = i32::from_be_bytes([req[4], req[5], req[6], req[7]]);
        match answer(key, v, corr) {
            None => return,
            Some(a) if a.is_empty() => {}
            Some(a) => {
                if s.write_all(&a).is_err() {
                    return;
                }
            }
        }
    }
}

fn fake_broker() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || serve(s));
        }
    });
    addr
}

fn probe_fake() -> (SocketAddr, Report) {
    let addr = fake_broker();
    let mut cfg = Config::new(addr, kinspect::protocol::builtin());
    cfg.variants = 0;
    cfg.timeout = Duration::from_millis(250);
    (addr, probe::run(&cfg).unwrap())
}

fn codes(r: &Report, api: &str, v: i16) -> Vec<&'static str> {
    r.rows()
        .into_iter()
        .find(|row| row.api == api && row.api_version == v)
        .map(|row| row.codes)
        .unwrap_or_default()
}

#[test]
fn every_oracle_fires_where_the_fake_misbehaves_and_nowhere_else() {
    let (_, r) = probe_fake();
    let t = r.table();
    assert_eq!(codes(&r, "ApiVersions", 0), ["clean"], "{t}");
    // The negotiation's v4 got the v0-shaped UNSUPPORTED_VERSION: refused, as it should be.
    assert_eq!(codes(&r, "ApiVersions", 4), ["past-range-refused"], "{t}");
    assert_eq!(codes(&r, "ApiVersions", 1), ["past-range-refused"], "{t}");
    assert_eq!(codes(&r, "Metadata", 0), ["clean"], "{t}");
    assert_eq!(codes(&r, "Metadata", 1), ["past-range-refused"], "{t}");
    assert_eq!(codes(&r, "Heartbeat", 0), ["timeout"], "{t}");
    assert_eq!(codes(&r, "LeaveGroup", 0), ["connection-closed"], "{t}");
    assert_eq!(
        codes(&r, "DescribeGroups", 0),
        ["correlation-mismatch"],
        "{t}"
    );
    assert_eq!(codes(&r, "ListGroups", 0), ["malformed-response"], "{t}");
    assert_eq!(codes(&r, "ListGroups", 1), ["past-range-answered"], "{t}");
    let trailing = r
        .findings
        .iter()
        .find(|f| f.code == "malformed-response")
        .unwrap();
    assert_eq!(trailing.diagnostics[0].code, "trailing-bytes");
    assert_eq!(trailing.diagnostics[0].offset, 14);
    let mismatch = r
        .findings
        .iter()
        .find(|f| f.code == "correlation-mismatch")
        .unwrap();
    assert!(
        mismatch.message.contains("sent correlation id"),
        "{}",
        mismatch.message
    );
    assert!(r.has_errors());
    // Deterministic: the same requests, byte for byte.
    let (_, again) = probe_fake();
    let reqs = |r: &Report| {
        r.findings
            .iter()
            .map(|f| f.request.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(reqs(&r), reqs(&again));
}

#[test]
fn non_loopback_addresses_are_refused_with_exit_2() {
    for cmd in ["probe", "fuzz"] {
        let o = kinspect(&[cmd, "192.0.2.1:9092"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a loopback address"), "{cmd}: {err}");
        assert!(
            err.starts_with(&format!("kinspect {cmd}: ")),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn the_session_pcap_decodes_in_kinspect_and_tshark() {
    let addr = fake_broker();
    let dir = std::env::temp_dir().join(format!("kinspect-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("probe.pcap");
    let a = addr.to_string();
    // A quick sweep, findings as JSON Lines, and where its output goes.
    let probe = |out: &[&str]| {
        let sweep = [
            "probe",
            &a,
            "--variants",
            "0",
            "--timeout",
            "250",
            "-f",
            "jsonl",
        ];
        kinspect(&[&sweep[..], out].concat())
    };
    let o = probe(&["--write-pcap", pcap.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let findings: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(findings
        .iter()
        .all(|f| f["finding"].is_string() && f["request_hex"].is_string()));
    // `-o FILE`: the same findings, in the file and not on standard output.
    let file = dir.join("findings.jsonl");
    let to_file = probe(&["-o", file.to_str().unwrap()]);
    assert_eq!(to_file.status.code(), Some(1));
    assert!(to_file.stdout.is_empty());
    let names = |lines: &str| -> Vec<String> {
        lines
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["finding"].to_string())
            .collect()
    };
    assert_eq!(
        names(&std::fs::read_to_string(&file).unwrap()),
        names(&String::from_utf8_lossy(&o.stdout))
    );
    let d = kinspect(&["decode", "-f", "jsonl", pcap.to_str().unwrap()]);
    let pdus: Vec<serde_json::Value> = String::from_utf8_lossy(&d.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests = pdus.iter().filter(|p| p["direction"] == "request").count();
    let sent = findings.iter().filter(|f| f["request_hex"] != "").count();
    assert_eq!(requests, sent, "every request sent is in the pcap");
    assert!(pdus
        .iter()
        .any(|p| p["api"] == "ApiVersions" && p["direction"] == "response"));
    if let Ok(t) = std::process::Command::new("tshark")
        .args([
            "-n",
            "-r",
            pcap.to_str().unwrap(),
            "-d",
            &format!("tcp.port=={},kafka", addr.port()),
            "-Y",
            "kafka",
            "-T",
            "fields",
            "-e",
            "kafka.api_key",
        ])
        .output()
    {
        let lines = String::from_utf8_lossy(&t.stdout).lines().count();
        assert!(
            lines >= sent,
            "tshark found {lines} Kafka PDUs, {sent} requests sent"
        );
    } else {
        println!("tshark not installed: the pcap was checked with kinspect decode only");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--api` and `--skip-api` take an API's key, or its name in any case, with or without its
/// Request suffix, repeated or comma-separated. A name no release knows is a usage error naming
/// the closest one, said before any connection (a typo used to select nothing, or skip nothing,
/// without a word).
#[test]
fn api_names_are_checked_and_select_what_they_name() {
    let addr = fake_broker().to_string();
    let apis = |extra: &[&str]| -> std::collections::BTreeSet<String> {
        let mut args = vec![
            "probe",
            &addr,
            "-f",
            "jsonl",
            "--variants",
            "0",
            "--timeout",
            "250",
        ];
        args.extend(extra);
        let o = kinspect(&args);
        assert!(o.status.code().is_some_and(|c| c < 2), "{extra:?}: {o:?}");
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["api"].to_string())
            .collect()
    };
    let all = apis(&[]);
    assert!(
        all.contains("\"Heartbeat\"") && all.contains("\"LeaveGroup\""),
        "{all:?}"
    );
    // By a name in another case with its Request suffix, and by key (Heartbeat is 12).
    for name in ["heartbeatREQUEST", "12"] {
        let only = apis(&["--api", name]);
        assert!(
            only.contains("\"Heartbeat\"") && !only.contains("\"LeaveGroup\""),
            "{name}: {only:?}"
        );
    }
    let skipped = apis(&["--skip-api", "heartbeat,LEAVEGROUP"]);
    assert!(
        !skipped.contains("\"Heartbeat\"") && !skipped.contains("\"LeaveGroup\""),
        "{skipped:?}"
    );
    assert!(skipped.contains("\"DescribeGroups\""), "{skipped:?}");
    for cmd in ["probe", "fuzz"] {
        for flag in ["--api", "--skip-api"] {
            let o = kinspect(&[cmd, &addr, flag, "Heartbeet"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{cmd} {flag}: {err}");
            assert!(
                err.starts_with(&format!("kinspect {cmd}: {flag}: no API named \"Heartbeet\" (did you mean `Heartbeat`?)")),
                "{cmd} {flag}: {err}"
            );
        }
    }
}
