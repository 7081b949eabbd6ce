//! End-to-end checks of `kinspect decode` and `kinspect encode` on every bundled capture:
//! - the JSON Lines name the same PDUs as tshark's summary (frame, direction, api key, version,
//!   correlation id) — tshark is the independent oracle;
//! - `--annotate` spans nest and never overlap, and the root covers the frame exactly;
//! - `decode --format jsonl | encode --format raw` gives back exactly the frames the capture
//!   reader delivered (the printer's JSON is what the encoder reads, so this checks the JSON
//!   writer's every value: base64, uuids, floats, nulls, tagged fields).

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

fn kinspect(args: &[&str], stdin: Option<&[u8]>) -> (Vec<u8>, String, i32) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kinspect"));
    c.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = c.spawn().unwrap();
    if let Some(data) = stdin {
        let mut si = child.stdin.take().unwrap();
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = si.write_all(&data);
        });
    }
    let out = child.wait_with_output().unwrap();
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into(),
        out.status.code().unwrap_or(-1),
    )
}

fn jsonl(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("invalid JSON line ({e}): {l}")))
        .collect()
}

/// (frame, direction, api_key, api_version, correlation_id) of each row of NAME.summary.tsv
/// where tshark knew the API (it leaves it empty for a response whose request it missed).
fn tshark_rows(pcap: &std::path::Path) -> BTreeSet<(u64, String, i64, i64, i64)> {
    let tsv = std::fs::read_to_string(pcap.with_extension("summary.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(2).is_some_and(|k| !k.is_empty()))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn jsonl_names_the_pdus_tshark_found() {
    for pcap in common::bundled_captures() {
        let p = pcap.to_str().unwrap();
        let (out, err, _) = kinspect(&["decode", "--format", "jsonl", p], None);
        let pdus = jsonl(&out);
        let ours: BTreeSet<(u64, String, i64, i64, i64)> = pdus
            .iter()
            .filter(|v| v.get("note").is_none() && v.get("api_key").is_some())
            .map(|v| {
                (
                    v["last_frame"].as_u64().unwrap(),
                    v["direction"].as_str().unwrap().to_string(),
                    v["api_key"].as_i64().unwrap(),
                    v["api_version"].as_i64().unwrap(),
                    v["correlation_id"].as_i64().unwrap(),
                )
            })
            .collect();
        let missing: Vec<_> = tshark_rows(&pcap).difference(&ours).cloned().collect();
        assert!(
            missing.is_empty(),
            "{p}: tshark found PDUs the CLI did not print: {missing:?}\nstderr: {err}"
        );
    }
}

/// Checks that the annotated members of `v` (an annotated value) nest inside `[lo, hi)` of the
/// same buffer and do not overlap each other; returns the number of annotated members seen.
fn check_nesting(v: &Value, lo: u64, hi: u64, buf: u64, path: &str) -> usize {
    let mut n = 0;
    let mut cursor = lo;
    let members: Vec<(String, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, v)| (format!("{path}.{k}"), v)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{path}[{i}]"), v))
            .collect(),
        _ => return 0,
    };
    for (p, m) in members {
        let (Some(off), Some(len), Some(inner)) =
            (m.get("offset"), m.get("length"), m.get("value"))
        else {
            // `_unknown_tagged_fields` holds annotated elements; anything else is a leaf.
            if p.ends_with("._unknown_tagged_fields") {
                n += check_nesting(m, cursor, hi, buf, &p);
            }
            continue;
        };
        let (off, len) = (off.as_u64().unwrap(), len.as_u64().unwrap());
        let b = m.get("buffer").and_then(Value::as_u64).unwrap_or(0);
        n += 1;
        if b == buf {
            assert!(
                off >= cursor && off + len <= hi,
                "{p}: {off}+{len} outside {cursor}..{hi}"
            );
            cursor = off + len;
        }
        n += check_nesting(inner, off, off + len, b, &p);
    }
    n
}

#[test]
fn annotated_spans_nest_without_overlap() {
    for pcap in common::bundled_captures() {
        let p = pcap.to_str().unwrap();
        let (out, _, _) = kinspect(&["decode", "--format", "jsonl", "--annotate", p], None);
        let mut seen = 0;
        for v in jsonl(&out).iter().filter(|v| v.get("header").is_some()) {
            let len = v["length"].as_u64().unwrap();
            let mut n = 0;
            let mut cursor = 0;
            for key in ["size_prefix", "header", "body"] {
                if let Some(m) = v.get(key) {
                    let (o, l) = (m["offset"].as_u64().unwrap(), m["length"].as_u64().unwrap());
                    assert!(
                        o >= cursor && o + l <= len,
                        "{p} frame {}: {key} {o}+{l} outside {cursor}..{len}",
                        v["frame"]
                    );
                    cursor = o + l;
                    n += 1 + check_nesting(&m["value"], o, o + l, 0, key);
                }
            }
            let trailing = v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["code"] == "trailing-bytes");
            if !trailing
                && v["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|d| d["severity"] != "error")
            {
                assert_eq!(
                    cursor, len,
                    "{p} frame {}: members end at {cursor}, frame at {len}",
                    v["frame"]
                );
            }
            seen += n;
        }
        assert!(seen > 0, "{p}: no annotated members");
    }
}

#[test]
fn decode_then_encode_gives_back_every_frame() {
    let (mut total, mut checked) = (0usize, 0usize);
    for pcap in common::bundled_captures() {
        let p = pcap.to_str().unwrap();
        // The frames as the capture reader delivers them: the bytes the CLI decoded.
        let mut frames: Vec<Vec<u8>> = Vec::new();
        let f = std::fs::File::open(&pcap).unwrap();
        read_capture(f, &CaptureOptions::default(), &mut |ev| {
            if let Event::Frame { data, .. } = ev {
                frames.push(data.to_vec());
            }
        })
        .unwrap();
        let (out, _, _) = kinspect(&["decode", "--format", "jsonl", p], None);
        let text = String::from_utf8(out).unwrap();
        let decoded: Vec<(&str, Value)> = text
            .lines()
            .map(|l| (l, serde_json::from_str::<Value>(l).unwrap()))
            .filter(|(_, v)| v.get("note").is_none())
            .collect();
        assert_eq!(
            decoded.len(),
            frames.len(),
            "{p}: one JSON object per frame"
        );
        // Only frames that decoded without errors are expected to round-trip.
        let mut lines = Vec::new();
        let mut want = Vec::new();
        for ((line, v), f) in decoded.iter().zip(&frames) {
            let clean = v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d["severity"] != "error");
            if clean {
                lines.extend_from_slice(line.as_bytes());
                lines.push(b'\n');
                want.push(f.clone());
            }
        }
        total += frames.len();
        checked += want.len();
        let (raw, err, code) = kinspect(&["encode", "--format", "raw", "-"], Some(&lines));
        assert_eq!(code, 0, "{p}: encode failed: {err}");
        let want: Vec<u8> = want.concat();
        if raw != want {
            let at = raw
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(raw.len().min(want.len()));
            panic!(
                "{p}: re-encoded bytes differ from the capture's at byte {at} of {} ({} encoded)",
                want.len(),
                raw.len()
            );
        }
    }
    // The frames left out carry real errors: packets cut by a snap length, and the mock
    // broker's malformed ApiVersions v3 responses (see tests/golden/diag-trailing-bytes).
    assert!(
        checked * 100 >= total * 90,
        "only {checked} of {total} frames were clean enough to re-encode"
    );
}

/// A tshark `-x` dump of a whole capture (committed as a golden input, so tshark is not needed
/// here) decodes to the same PDUs as the capture itself, apart from the clock.
#[test]
fn tshark_x_dump_of_a_capture_decodes_like_the_capture() {
    let dump = common::repo().join("tests/golden/hex-tshark-x-capture/input.hex");
    let pcap = common::captures_dir().join("tansu-kcat-apiversions-fail.pcap");
    let strip = |out: Vec<u8>| -> Vec<Value> {
        jsonl(&out)
            .into_iter()
            .map(|mut v| {
                let o = v.as_object_mut().unwrap();
                o.remove("ts");
                o.remove("latency_us");
                v
            })
            .collect()
    };
    let (a, _, ca) = kinspect(
        &["decode", "--format", "jsonl", dump.to_str().unwrap()],
        None,
    );
    let (b, _, cb) = kinspect(
        &["decode", "--format", "jsonl", pcap.to_str().unwrap()],
        None,
    );
    let (a, b) = (strip(a), strip(b));
    assert_eq!(a.len(), 8);
    assert_eq!(a, b);
    assert_eq!(ca, cb);
}

/// JSON that does not parse is named by its line and column once (serde_json's own message
/// ends with the place, which the prefix already gives), and stops the run with exit 2.
#[test]
fn encode_names_the_place_of_bad_json_once() {
    // Column 18 is the `}` where `true` was expected to go on.
    let input = b"{\"direction\": tru}\n";
    let (_, err, code) = kinspect(&["encode", "-"], Some(input));
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "kinspect encode: -:1:18: invalid JSON: expected ident",
        "{err}"
    );
}
