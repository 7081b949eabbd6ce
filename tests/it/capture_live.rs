//! Live capture (feature `live`, needs libpcap and root/CAP_NET_RAW, skipped otherwise): real
//! Kafka frames taken from a bundled capture are exchanged over loopback TCP while
//! `kinspect capture -i lo` runs, and must come out decoded, matched and in order — and the
//! `-w` pcap stream must read back to the same frames.
#![cfg(feature = "live")]

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::pdu::Direction;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Requests and responses of TCP stream 1 of mock-kcat-none.pcap (ApiVersions, Produce).
fn real_frames() -> Vec<(Direction, Vec<u8>)> {
    let bytes = std::fs::read(common::captures_dir().join("mock-kcat-none.pcap")).unwrap();
    let mut v = Vec::new();
    read_capture(&bytes[..], &CaptureOptions::default(), &mut |e| {
        if let Event::Frame {
            origin,
            hints,
            data,
        } = e
        {
            if origin.conn.unwrap().stream == 1 {
                v.push((hints.direction.unwrap(), data.to_vec()));
            }
        }
    })
    .unwrap();
    v
}

/// Plays the conversation over loopback: the client writes each request, the server reads it
/// and answers with the recorded response.
fn play(port_listener: TcpListener, frames: &[(Direction, Vec<u8>)]) {
    let port = port_listener.local_addr().unwrap().port();
    let reqs: Vec<Vec<u8>> = frames
        .iter()
        .filter(|f| f.0 == Direction::Request)
        .map(|f| f.1.clone())
        .collect();
    let resps: Vec<Vec<u8>> = frames
        .iter()
        .filter(|f| f.0 == Direction::Response)
        .map(|f| f.1.clone())
        .collect();
    let server = std::thread::spawn(move || {
        let (mut s, _) = port_listener.accept().unwrap();
        for (req, resp) in reqs.iter().zip(&resps) {
            let mut buf = vec![0u8; req.len()];
            s.read_exact(&mut buf).unwrap();
            s.write_all(resp).unwrap();
        }
    });
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let reqs: Vec<Vec<u8>> = frames
        .iter()
        .filter(|f| f.0 == Direction::Request)
        .map(|f| f.1.clone())
        .collect();
    let resps: Vec<usize> = frames
        .iter()
        .filter(|f| f.0 == Direction::Response)
        .map(|f| f.1.len())
        .collect();
    for (req, n) in reqs.iter().zip(resps) {
        c.write_all(req).unwrap();
        let mut buf = vec![0u8; n];
        c.read_exact(&mut buf).unwrap();
    }
    drop(c);
    server.join().unwrap();
}

fn can_capture() -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["capture", "-i", "lo", "-c", "0"])
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "SKIPPED live capture: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out.status.success()
}

/// Runs `kinspect capture -i lo --port P ARGS` around one played conversation; returns stdout.
fn capture_around(extra: &[&str], frames: &[(Direction, Vec<u8>)]) -> Vec<u8> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let mut args = vec!["capture", "-i", "lo", "--port", &port];
    args.extend_from_slice(extra);
    let child = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    play(listener, frames);
    // Output is flushed per PDU (per packet with -w): stopping the capture loses nothing.
    std::thread::sleep(Duration::from_millis(700));
    let mut child = child;
    let _ = child.kill();
    child.wait_with_output().unwrap().stdout
}

#[test]
fn live_loopback_conversation_is_decoded_as_it_arrives() {
    if !can_capture() {
        return;
    }
    let frames = real_frames();
    let out = capture_around(&["--format", "jsonl"], &frames);
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pdus: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l.get("api_key").is_some())
        .collect();
    assert_eq!(pdus.len(), frames.len(), "stdout: {text}");
    for (p, f) in pdus.iter().zip(&frames) {
        assert_eq!(p["direction"], f.0.as_str());
        assert_eq!(p["length"].as_u64(), Some(f.1.len() as u64 - 4));
        assert!(
            p["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["severity"] != "error" || d["code"] == "trailing-bytes"),
            "{p}"
        );
    }
    // Responses carry their request's frame and a latency.
    assert!(pdus
        .iter()
        .filter(|p| p["direction"] == "response")
        .all(|p| p["request_frame"].is_u64() && p["latency_us"].is_number()));
}

#[test]
fn live_pcap_stream_reads_back_to_the_same_frames() {
    if !can_capture() {
        return;
    }
    let frames = real_frames();
    let pcap = capture_around(&["-w", "-"], &frames);
    let mut got = Vec::new();
    read_capture(&pcap[..], &CaptureOptions::default(), &mut |e| {
        if let Event::Frame { hints, data, .. } = e {
            got.push((hints.direction.unwrap(), data.to_vec()));
        }
    })
    .unwrap();
    assert_eq!(got, frames);
}

/// `-Y/--filter` is the display filter here too, as in `decode`: only the PDUs it selects are
/// printed (with `--pairs`, each with its answer). The capture filter is `--bpf`.
#[test]
fn live_display_filter_selects_the_pdus_shown() {
    if !can_capture() {
        return;
    }
    let frames = real_frames();
    // Produce requests by their API key (bytes 4..6 of the frame), and as many answers: the
    // server in `play` answers each request in turn.
    let produce = frames
        .iter()
        .filter(|f| f.0 == Direction::Request && f.1[4..6] == [0, 0])
        .count();
    assert!(produce > 0);
    for (extra, want) in [
        (
            &["-Y", "api == Produce and direction == request"][..],
            produce,
        ),
        (
            &["-Y", "api == Produce and direction == request", "--pairs"][..],
            2 * produce,
        ),
    ] {
        let mut args = vec!["--format", "jsonl"];
        args.extend_from_slice(extra);
        let out = capture_around(&args, &frames);
        let text = String::from_utf8_lossy(&out);
        let pdus: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|l: &serde_json::Value| l.get("api_key").is_some())
            .collect();
        assert_eq!(pdus.len(), want, "{extra:?}: {text}");
        assert!(pdus.iter().all(|p| p["api_key"] == 0), "{text}");
    }
}

/// `kinspect capture ARGS`, stopped after 10 s if it has not ended (a capture that started
/// would wait for packets): its exit code (`None`: it had to be stopped) and stderr.
fn capture_within_10s(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("capture")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (code, err)
}

/// A BPF expression given to `--filter` is a display filter that does not compile: said before
/// any capture starts, with the way to the capture filter; a display filter does not go with
/// writing the packets.
#[test]
fn a_bpf_expression_in_filter_points_to_bpf() {
    let (code, err) = capture_within_10s(&["-i", "lo", "-c", "1", "--filter", "tcp port 9092"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("unknown field `tcp`"), "{err}");
    assert!(err.contains("(a BPF capture filter is --bpf)"), "{err}");
    let (code, err) =
        capture_within_10s(&["-i", "lo", "-c", "1", "-Y", "api == Produce", "-o", "-"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("with -o the packets are written as captured"),
        "{err}"
    );
}
