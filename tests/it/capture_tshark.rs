//! Every Kafka PDU Wireshark (tshark 4.0.17, the `NAME.summary.tsv` beside each bundled capture)
//! found is found by the capture reader with the same frame, direction, API key, API version,
//! correlation id, TCP stream, size and request frame — with and without the well-known Kafka
//! ports, so content detection alone must find every connection. The requests it says were
//! never answered are those tshark paired with no response.

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::pdu::Direction;
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
struct Seen {
    frame: u64,
    first_frame: u64,
    direction: Direction,
    api_key: Option<i16>,
    api_version: Option<i16>,
    correlation_id: Option<i32>,
    stream: u32,
    size: Option<i32>,
    request_frame: Option<u64>,
    sasl: bool,
}

fn be16(d: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes([*d.get(at)?, *d.get(at + 1)?]))
}
fn be32(d: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn read(path: &Path, default_ports: bool) -> (Vec<Seen>, Vec<String>) {
    let f = std::fs::File::open(path).unwrap();
    let opts = CaptureOptions {
        default_ports,
        ..CaptureOptions::default()
    };
    let mut seen = Vec::new();
    let mut notes = Vec::new();
    read_capture(std::io::BufReader::new(f), &opts, &mut |ev| match ev {
        Event::Frame {
            origin,
            hints,
            data,
        } => {
            let direction = hints
                .direction
                .expect("frames from captures carry a direction");
            let (api_key, api_version, correlation_id) = match direction {
                Direction::Request => (be16(data, 4), be16(data, 6), be32(data, 8)),
                Direction::Response => (hints.api_key, hints.api_version, be32(data, 4)),
            };
            seen.push(Seen {
                frame: origin.last_frame.unwrap(),
                first_frame: origin.frame.unwrap(),
                direction,
                api_key,
                api_version,
                correlation_id,
                stream: origin.conn.unwrap().stream,
                size: be32(data, 0),
                request_frame: hints.request_frame,
                sasl: hints.sasl_token,
            });
        }
        Event::Note { origin, diag } => notes.push(format!("frame {:?}: {diag}", origin.frame)),
    })
    .unwrap();
    (seen, notes)
}

struct Row {
    frame: u64,
    direction: Direction,
    api_key: Option<i16>,
    api_version: Option<i16>,
    correlation_id: i32,
    stream: u32,
    len: i32,
    request_frame: Option<u64>,
}

fn tshark_rows(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path.with_extension("summary.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (cf, cd, ck, cv, cc, cs, cl, cr) = (
        col("frame"),
        col("direction"),
        col("api_key"),
        col("api_version"),
        col("correlation_id"),
        col("tcp_stream"),
        col("kafka_len"),
        col("request_frame"),
    );
    lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let opt = |i: usize| {
                f.get(i)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse::<i64>().unwrap())
            };
            Row {
                frame: opt(cf).unwrap() as u64,
                direction: if f[cd] == "request" {
                    Direction::Request
                } else {
                    Direction::Response
                },
                api_key: opt(ck).map(|v| v as i16),
                api_version: opt(cv).map(|v| v as i16),
                correlation_id: opt(cc).unwrap() as i32,
                stream: opt(cs).unwrap() as u32,
                len: opt(cl).unwrap() as i32,
                request_frame: opt(cr).map(|v| v as u64),
            }
        })
        .collect()
}

/// Compares one capture; returns (tshark rows, kinspect frames, problems).
fn compare(path: &Path, default_ports: bool) -> (usize, usize, Vec<String>) {
    let rows = tshark_rows(path);
    let (seen, notes) = read(path, default_ports);
    let mut by_key: HashMap<(u64, bool, i32), &Seen> = HashMap::new();
    for s in &seen {
        if let Some(c) = s.correlation_id {
            by_key.insert((s.frame, s.direction == Direction::Request, c), s);
        }
    }
    let mut problems = Vec::new();
    for r in &rows {
        let Some(s) = by_key.get(&(r.frame, r.direction == Direction::Request, r.correlation_id))
        else {
            problems.push(format!(
                "frame {} {:?} correlation {}: tshark found it, kinspect did not",
                r.frame, r.direction, r.correlation_id
            ));
            continue;
        };
        let mut diff = Vec::new();
        if r.api_key.is_some() && r.api_key != s.api_key {
            diff.push(format!(
                "api_key tshark {:?} kinspect {:?}",
                r.api_key, s.api_key
            ));
        }
        if r.api_version.is_some() && r.api_version != s.api_version {
            diff.push(format!(
                "api_version tshark {:?} kinspect {:?}",
                r.api_version, s.api_version
            ));
        }
        if r.stream != s.stream {
            diff.push(format!("stream tshark {} kinspect {}", r.stream, s.stream));
        }
        if Some(r.len) != s.size {
            diff.push(format!("length tshark {} kinspect {:?}", r.len, s.size));
        }
        if r.request_frame.is_some() && r.request_frame != s.request_frame {
            diff.push(format!(
                "request_frame tshark {:?} kinspect {:?}",
                r.request_frame, s.request_frame
            ));
        }
        if s.sasl {
            diff.push("kinspect took it for a SASL token".into());
        }
        if !diff.is_empty() {
            problems.push(format!(
                "frame {} {:?} correlation {}: {}",
                r.frame,
                r.direction,
                r.correlation_id,
                diff.join(", ")
            ));
        }
    }
    let extra: Vec<&Seen> = seen
        .iter()
        .filter(|s| {
            !rows.iter().any(|r| {
                r.frame == s.frame
                    && (r.direction == Direction::Request) == (s.direction == Direction::Request)
                    && Some(r.correlation_id) == s.correlation_id
            })
        })
        .collect();
    for e in extra {
        problems.push(format!("kinspect found a PDU tshark did not: {e:?}"));
    }
    // Clean traffic gives no notes at all; the snap-length capture must say its frames were cut.
    let snapped = path.to_string_lossy().contains("snaplen");
    let incomplete = notes
        .iter()
        .filter(|n| n.contains("frame-incomplete"))
        .count();
    if snapped && incomplete == 0 {
        problems.push("every packet was cut to 128 bytes, yet no frame-incomplete note".into());
    }
    // Requests a connection left unanswered are named in `unanswered` notes, which must be
    // exactly the requests of tshark's rows with no later response of the same correlation id
    // on their TCP stream (in these captures, consumers closing with a long-poll Fetch in
    // flight). tshark does not pair tansu's responses itself, so the rows' ids decide.
    let (unanswered, others): (Vec<&String>, Vec<&String>) =
        notes.iter().partition(|n| n.contains("[unanswered]"));
    if !snapped {
        let answered = |q: &Row| {
            rows.iter().any(|r| {
                r.direction == Direction::Response
                    && r.stream == q.stream
                    && r.correlation_id == q.correlation_id
                    && r.frame > q.frame
            })
        };
        let mut theirs: Vec<u64> = rows
            .iter()
            .filter(|r| r.direction == Direction::Request && !answered(r))
            .map(|r| r.frame)
            .collect();
        let mut ours: Vec<u64> = unanswered
            .iter()
            .flat_map(|n| {
                // "... never answered before <why>: API vN corr=C (frame F), ..."
                let list = n.rsplit_once(": ").unwrap().1;
                list.split(", ").map(|item| {
                    let f = item.rsplit_once("(frame ").unwrap().1;
                    f.trim_end_matches(')').parse::<u64>().unwrap()
                })
            })
            .collect();
        theirs.sort_unstable();
        ours.sort_unstable();
        if ours != theirs {
            problems.push(format!(
                "unanswered requests: tshark {theirs:?}, kinspect {ours:?}"
            ));
        }
    }
    if !snapped && !others.is_empty() {
        problems.push(format!("{} note(s) on clean traffic", others.len()));
    }
    if !problems.is_empty() || std::env::var_os("SHOW_NOTES").is_some() {
        problems.extend(notes);
    }
    (rows.len(), seen.len(), problems)
}

fn check_all(default_ports: bool) {
    let mut report = Vec::new();
    for path in common::bundled_captures() {
        let (rows, found, problems) = compare(&path, default_ports);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        eprintln!(
            "{name}: tshark {rows} PDUs, kinspect {found}, {} problem(s)",
            problems.len()
        );
        for p in problems {
            report.push(format!("{name}: {p}"));
        }
    }
    assert!(
        report.is_empty(),
        "{} disagreement(s):\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn every_tshark_pdu_found_with_port_hints() {
    check_all(true);
}

#[test]
fn every_tshark_pdu_found_by_content_alone() {
    check_all(false);
}

/// A frame read from a capture: first frame, last frame, timestamp, bytes.
type FrameSeen = (Option<u64>, Option<u64>, Option<i64>, Vec<u8>);

/// Frames (origin and bytes) read from a capture file.
fn frames_of(bytes: &[u8]) -> Vec<FrameSeen> {
    let mut v = Vec::new();
    read_capture(bytes, &CaptureOptions::default(), &mut |ev| {
        if let Event::Frame { origin, data, .. } = ev {
            v.push((origin.frame, origin.last_frame, origin.ts_ns, data.to_vec()));
        }
    })
    .unwrap();
    v
}

#[test]
#[cfg_attr(not(kinspect_tshark), ignore = "needs tshark on the PATH")]
fn pcapng_and_nanosecond_pcap_written_by_tshark_read_the_same() {
    // editcap/tshark are an independent writer of both formats; skipped where absent.
    let dir = std::env::temp_dir().join(format!("kinspect-capture-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for path in common::bundled_captures() {
        let want = frames_of(&std::fs::read(&path).unwrap());
        for format in ["pcapng", "nsecpcap"] {
            let out = dir.join(format!("x.{format}"));
            let st = std::process::Command::new("tshark")
                .arg("-r")
                .arg(&path)
                .args(["-F", format, "-w"])
                .arg(&out)
                .output();
            match st {
                Ok(o) if o.status.success() => {}
                _ => {
                    eprintln!("SKIPPED: tshark cannot write {format} here");
                    return;
                }
            }
            let got = frames_of(&std::fs::read(&out).unwrap());
            assert!(
                got == want,
                "{} as {format}: {} frames vs {}",
                path.display(),
                got.len(),
                want.len()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
