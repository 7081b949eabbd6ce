//! Frames that span many TCP segments (16 KiB and more), which the reassembly hands on in the
//! buffer it gathered them in, to be taken without a copy (`kinspect::pdu::FrameBuf`). None of
//! the bundled captures has one, so this builds a capture: Produce v7 requests whose batches
//! (encoded by kafka-protocol, independently of kinspect) hold from a few bytes to over a
//! megabyte of records, with their responses, on two connections, in 1460-byte segments.
//!
//! The frames delivered, taken or not, are the frames sent; one thread and two print and count
//! exactly the same; and every record's value reads back as it was encoded.

use crate::check_support::{request, response, Net};
use crate::common;
use bytes::Bytes;
use kafka_protocol::messages::{
    produce_request, produce_response, ProduceRequest, ProduceResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kinspect::capture::{read_capture, read_capture_to, CaptureOptions, CaptureSink, Event};
use kinspect::pdu::{FrameBuf, Hints, Origin};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

/// Record counts of each Produce request, in order, alternating between the two connections:
/// from one small record to a batch of about 1.2 MB.
const BATCHES: &[usize] = &[1, 40, 3, 150, 600, 2, 2400, 9, 70, 5000, 1];

/// Record `i` of batch `b`: 500 bytes, different in every record.
fn value(b: usize, i: usize) -> Vec<u8> {
    let mut v = format!("batch {b} record {i} ").into_bytes();
    let mut x = (b * 1_000_003 + i) as u64;
    while v.len() < 500 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(b'a' + (x >> 59) as u8 % 26);
    }
    v
}

struct Built {
    pcap: Vec<u8>,
    /// Every frame sent, per connection and direction, in order.
    frames: Vec<(Flow, Vec<u8>)>,
}

fn build() -> Built {
    let server: SocketAddr = "10.0.0.9:9092".parse().unwrap();
    let clients: [SocketAddr; 2] = [
        "10.0.0.1:40001".parse().unwrap(),
        "10.0.0.2:40002".parse().unwrap(),
    ];
    let topic = TopicName(StrBytes::from_static_str("orders"));
    let mut net = Net::new();
    let mut frames = Vec::new();
    for (b, &n) in BATCHES.iter().enumerate() {
        let records: Vec<_> = (0..n)
            .map(|i| {
                common::kp_record(
                    i as i64,
                    1_714_557_600_000 + i as i64,
                    Some(Bytes::from(format!("k{i}"))),
                    Some(Bytes::from(value(b, i))),
                )
            })
            .collect();
        let batch = Bytes::from(common::kp_batch(&records));
        let corr = net.corr();
        let q = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(30000)
            .with_topic_data(vec![produce_request::TopicProduceData::default()
                .with_name(topic.clone())
                .with_partition_data(vec![
                    produce_request::PartitionProduceData::default()
                        .with_index(b as i32 % 3)
                        .with_records(Some(batch)),
                ])]);
        let a = ProduceResponse::default().with_responses(vec![
            produce_response::TopicProduceResponse::default()
                .with_name(topic.clone())
                .with_partition_responses(vec![
                    produce_response::PartitionProduceResponse::default()
                        .with_index(b as i32 % 3)
                        .with_base_offset(b as i64 * 10_000),
                ]),
        ]);
        let c = clients[b % 2];
        let (req, resp) = (request(0, 7, corr, &q), response(7, corr, &a));
        frames.push(((c, true), req));
        frames.push(((c, false), resp));
    }
    // Each connection's requests go out pipelined, two or three in one write, and their
    // responses likewise: a large frame's last segment also holds the start of the next.
    for c in clients {
        let mine: Vec<&[u8]> = frames
            .iter()
            .filter(|(k, _)| k.0 == c)
            .map(|(_, f)| &f[..])
            .collect();
        let (reqs, resps): (Vec<_>, Vec<_>) = mine.chunks(2).map(|p| (p[0], p[1])).unzip();
        let mut at = 0;
        for n in [2, 3].iter().cycle() {
            if at >= reqs.len() {
                break;
            }
            let end = (at + n).min(reqs.len());
            net.send(c, server, true, &reqs[at..end].concat());
            net.send(c, server, false, &resps[at..end].concat());
            at = end;
        }
    }
    Built {
        pcap: net.pcap(),
        frames,
    }
}

fn opts() -> CaptureOptions {
    CaptureOptions::default()
}

/// A connection (by its client) and a direction (requests: true).
type Flow = (SocketAddr, bool);

/// The frames of each connection and direction, in order.
fn per_flow(frames: &[(Flow, Vec<u8>)]) -> Vec<(Flow, Vec<Vec<u8>>)> {
    let mut out: Vec<(Flow, Vec<Vec<u8>>)> = Vec::new();
    for (k, f) in frames {
        match out.iter_mut().find(|(o, _)| o == k) {
            Some((_, v)) => v.push(f.clone()),
            None => out.push((*k, vec![f.clone()])),
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// A sink that keeps every frame, taking assembled ones (as the engine does) or not.
struct Keep {
    take: bool,
    got: Vec<(Flow, Vec<u8>)>,
    assembled: usize,
}

impl Keep {
    fn key(origin: &Origin, hints: &Hints) -> Flow {
        let conn = origin.conn.expect("a TCP frame has a connection");
        let request = hints.direction == Some(kinspect::pdu::Direction::Request);
        (conn.client, request)
    }
}

impl CaptureSink for Keep {
    fn event(&mut self, ev: Event<'_>) {
        if let Event::Frame {
            origin,
            hints,
            data,
        } = ev
        {
            self.got.push((Keep::key(&origin, &hints), data.to_vec()));
        }
    }

    fn frame(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        if !self.take {
            let bytes = data.bytes().to_vec();
            self.assembled += matches!(data, FrameBuf::Assembled(_)) as usize;
            self.got.push((Keep::key(&origin, &hints), bytes));
            return;
        }
        self.assembled += matches!(data, FrameBuf::Assembled(_)) as usize;
        // A buffer of another size than the frame, as a reused one would be.
        let mut mine = vec![0xAA; 7];
        data.take(&mut mine);
        self.got.push((Keep::key(&origin, &hints), mine));
    }
}

#[test]
fn frames_gathered_from_many_segments_are_delivered_whole_taken_or_not() {
    let built = build();
    let want = per_flow(&built.frames);
    assert!(
        built.frames.iter().any(|(_, f)| f.len() > 1_000_000),
        "a frame of over a megabyte is among those sent"
    );
    // Through `event` (the default `frame`), the way every sink but the engine reads.
    let mut got = Vec::new();
    read_capture(&built.pcap[..], &opts(), &mut |ev| {
        if let Event::Frame {
            origin,
            hints,
            data,
        } = ev
        {
            got.push((Keep::key(&origin, &hints), data.to_vec()));
        }
    })
    .unwrap();
    assert!(per_flow(&got) == want, "frames read through events differ");
    for take in [false, true] {
        let mut keep = Keep {
            take,
            got: Vec::new(),
            assembled: 0,
        };
        read_capture_to(&built.pcap[..], &opts(), &mut keep).unwrap();
        assert!(
            per_flow(&keep.got) == want,
            "frames differ when the sink {} them",
            if take { "takes" } else { "borrows" }
        );
        // Requests of 150 records and more (75 kB and up) span many segments.
        assert!(
            keep.assembled >= 4,
            "{} frames came assembled",
            keep.assembled
        );
    }
}

fn write_pcap() -> PathBuf {
    let dir = common::repo().join("target/tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("large-frames-{}.pcap", std::process::id()));
    std::fs::write(&path, build().pcap).unwrap();
    path
}

fn run(threads: &str, args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .env("KINSPECT_THREADS", threads)
        .output()
        .unwrap();
    assert!(
        o.status.code() == Some(0),
        "{args:?} on {threads} thread(s): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

#[test]
fn large_frames_print_the_same_on_one_thread_and_two_and_their_records_read_back() {
    let path = write_pcap();
    let p = path.to_str().unwrap();
    for args in [
        &["decode", "-f", "jsonl", p][..],
        &["decode", "-f", "summary", p],
        &["decode", "-f", "tree", "--color", "never", p],
        &["stats", p],
        &["records", "-f", "jsonl", p],
    ] {
        let one = run("1", args);
        assert!(!one.is_empty());
        assert!(
            run("2", args) == one,
            "{args:?}: two threads differ from one"
        );
    }
    // Every record of every request, with the value kafka-protocol encoded.
    let text = run("2", &["records", "-f", "jsonl", p]);
    let mut seen = vec![0usize; BATCHES.len()];
    for line in String::from_utf8(text).unwrap().lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let v = r["value"]["text"].as_str().expect("a text value");
        let (b, i) = v
            .strip_prefix("batch ")
            .and_then(|s| s.split_once(" record "))
            .map(|(b, rest)| {
                let i = rest.split(' ').next().unwrap();
                (b.parse::<usize>().unwrap(), i.parse::<usize>().unwrap())
            })
            .expect("a value as encoded");
        assert_eq!(v.as_bytes(), &value(b, i)[..], "record {i} of batch {b}");
        assert_eq!(r["key"]["text"].as_str(), Some(format!("k{i}").as_str()));
        assert_eq!(i, seen[b], "records of batch {b} in order");
        seen[b] += 1;
    }
    assert_eq!(seen, BATCHES, "every record of every batch, once");
    let _ = std::fs::remove_file(&path);
}

/// Cut short anywhere (inside a large frame, between segments, inside a record header), the
/// capture gives the same frames and notes to a sink that takes assembled frames as to one that
/// borrows them, and neither panics.
#[test]
fn a_cut_capture_gives_the_same_frames_taken_or_not() {
    let pcap = build().pcap;
    let notes = |keep: &mut Keep, cut: &[u8]| {
        let mut n = Vec::new();
        let r = read_capture_to(
            cut,
            &opts(),
            &mut NoteToo {
                keep,
                notes: &mut n,
            },
        );
        (r.map(|s| s.frames).ok(), n)
    };
    for k in 1..=40 {
        let cut = &pcap[..pcap.len() * k / 41];
        let (mut a, mut b) = (Keep::new(false), Keep::new(true));
        let (ra, na) = notes(&mut a, cut);
        let (rb, nb) = notes(&mut b, cut);
        assert_eq!(ra, rb, "cut {k}/41: frame counts");
        assert_eq!(na, nb, "cut {k}/41: notes");
        assert!(
            per_flow(&a.got) == per_flow(&b.got),
            "cut {k}/41: frames differ"
        );
    }
}

impl Keep {
    fn new(take: bool) -> Keep {
        Keep {
            take,
            got: Vec::new(),
            assembled: 0,
        }
    }
}

/// A [`Keep`] that also keeps the notes (codes and offsets).
struct NoteToo<'a> {
    keep: &'a mut Keep,
    notes: &'a mut Vec<(String, Option<u64>)>,
}

impl CaptureSink for NoteToo<'_> {
    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Note { origin, diag } => self
                .notes
                .push((diag.code.to_string(), origin.stream_offset)),
            ev => self.keep.event(ev),
        }
    }

    fn frame(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        self.keep.frame(origin, hints, data)
    }
}
