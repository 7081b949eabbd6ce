//! Regressions for how a connection is recognised as Kafka and which side is the client, when
//! no SYN was captured and neither port is a known Kafka port.
//!
//! The cause (issue 11, item 1): without a SYN or a known port the reader took the side with
//! the higher (ephemeral-looking) port for the client. A client on 30120 talking to a broker
//! on 36333 was turned around and decoded to nothing, silently; moving the client to 50120
//! "fixed" it. Direction now comes from the bytes: a request answered, in the other direction,
//! by its correlation id. And a connection that carried data but was not recognised says so
//! (`not-kafka`), and `CaptureSummary` says what was read when nothing was Kafka.
//!
//! The frames are real: JoinGroup v7 and SyncGroup v5 of kafka-python 3.0.12 against tansu,
//! taken from the bundled `tansu-kafkapython3-admin-sweep.pcap` (frames 78-83), re-addressed.

use crate::common;

use kinspect::capture::stats::Stats;
use kinspect::capture::testgen::{self, Conversation, Link, TcpPacket};
use kinspect::capture::{read_capture, CaptureOptions, CaptureSummary, Event, NOT_KAFKA};
use kinspect::diag::Severity;
use kinspect::engine::decoded::{decode_capture, Decoded};
use kinspect::pdu::Direction;
use std::net::SocketAddr;

fn opts() -> CaptureOptions {
    CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    }
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Frames 78-83 of the admin sweep: JoinGroup v7 corr 2 (answered MEMBER_ID_REQUIRED), JoinGroup
/// v7 corr 3, SyncGroup v5 corr 4, each with its response, in capture order.
fn group_frames() -> Vec<(Direction, Vec<u8>)> {
    let path = common::captures_dir().join("tansu-kafkapython3-admin-sweep.pcap");
    let bytes = std::fs::read(path).unwrap();
    let mut v = Vec::new();
    read_capture(&bytes[..], &opts(), &mut |ev| {
        if let Event::Frame {
            origin,
            hints,
            data,
        } = ev
        {
            if (78..=83).contains(&origin.frame.unwrap()) {
                v.push((hints.direction.unwrap(), data.to_vec()));
            }
        }
    })
    .unwrap();
    assert_eq!(
        v.len(),
        6,
        "frames 78-83 are three requests and their responses"
    );
    v
}

/// A capture of `frames` between `client` and `server` that starts after the handshake: no SYN.
fn mid_stream(client: &str, server: &str, frames: &[(Direction, Vec<u8>)]) -> Vec<u8> {
    let mut c = Conversation::new(addr(client), addr(server));
    for (d, f) in frames {
        c.send(*d == Direction::Request, f);
    }
    c.close();
    pcap(&c.packets)
}

fn pcap(packets: &[TcpPacket]) -> Vec<u8> {
    testgen::pcap(
        Link::Ethernet.linktype(),
        &testgen::records(&Link::Ethernet, packets, usize::MAX),
        false,
        false,
        262_144,
    )
}

#[derive(Debug, PartialEq)]
struct Seen {
    direction: Option<Direction>,
    api: Option<&'static str>,
    version: Option<i16>,
    correlation_id: Option<i32>,
    client: SocketAddr,
    errors: usize,
}

fn decode(bytes: &[u8]) -> (Vec<Seen>, Vec<String>, CaptureSummary) {
    let mut pdus = Vec::new();
    let mut notes = Vec::new();
    let proto = kinspect::protocol::builtin();
    let summary = decode_capture(bytes, &opts(), proto, &mut |d| match d {
        Decoded::Pdu(p) => pdus.push(Seen {
            direction: p.direction,
            api: p.api_name,
            version: p.api_version,
            correlation_id: p.correlation_id,
            client: p.origin.conn.unwrap().client,
            errors: p
                .tree
                .diags
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count(),
        }),
        Decoded::Note(_, d) => notes.push(format!("{}: {}", d.code, d.message)),
    })
    .unwrap();
    (pdus, notes, summary)
}

fn expect(client: &str) -> Vec<Seen> {
    let c = addr(client);
    let s = |direction, api, version, corr| Seen {
        direction: Some(direction),
        api: Some(api),
        version: Some(version),
        correlation_id: Some(corr),
        client: c,
        errors: 0,
    };
    use Direction::{Request, Response};
    vec![
        s(Request, "JoinGroup", 7, 3),
        s(Response, "JoinGroup", 7, 3),
        s(Request, "SyncGroup", 5, 4),
        s(Response, "SyncGroup", 5, 4),
    ]
}

#[test]
fn kafka_is_found_when_the_clients_port_is_below_the_brokers() {
    let frames = group_frames();
    // JoinGroup v7 corr 3 and SyncGroup v5 corr 4 with their responses, as in the issue.
    let exchange = &frames[2..];
    for client in ["10.50.71.3:30120", "10.50.71.3:50120"] {
        let (pdus, notes, summary) = decode(&mid_stream(client, "10.50.71.3:36333", exchange));
        assert_eq!(pdus, expect(client), "client {client}; notes: {notes:?}");
        assert!(notes.is_empty(), "client {client}: {notes:?}");
        assert_eq!(summary.kafka_connections, 1);
        assert_eq!(summary.not_kafka_connections, 0);
        assert_eq!(summary.no_kafka_message(), None);
    }
}

#[test]
fn a_stray_response_at_the_start_does_not_turn_the_connection_around() {
    // The capture starts with the answer to JoinGroup corr 2, whose request was not captured;
    // it reads as a Produce v2 request header. The request that follows, answered by its
    // correlation id, decides.
    let frames = group_frames();
    let mut resp = frames[1].1.clone();
    assert_eq!(frames[1].0, Direction::Response);
    assert_eq!(&resp[4..8], &2i32.to_be_bytes());
    let mut with_stray = vec![(Direction::Response, std::mem::take(&mut resp))];
    with_stray.extend_from_slice(&frames[2..]);
    for client in ["10.50.71.3:30120", "10.50.71.3:50120"] {
        let (pdus, notes, _) = decode(&mid_stream(client, "10.50.71.3:36333", &with_stray));
        assert_eq!(pdus, expect(client), "client {client}; notes: {notes:?}");
        // The stray response's bytes were skipped on the way to the first frame boundary.
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("resync: skipped"), "{notes:?}");
    }
}

#[test]
fn an_unanswered_request_stream_is_decoded_once_detection_hits_its_bound() {
    // A client that only sends (acks=0 style): 300 KB of requests, no response ever. Detection
    // keeps at most MAX_DETECTION_BYTES, then decides from the request shape alone.
    let frames = group_frames();
    let req = &frames[2].1;
    let n = 300_000 / req.len() + 1;
    let mut c = Conversation::new(addr("10.50.71.3:30120"), addr("10.50.71.3:36333"));
    for _ in 0..n {
        c.send(true, req);
    }
    let (pdus, notes, _) = decode(&pcap(&c.packets));
    assert_eq!(pdus.len(), n);
    // Each of them is still waiting when the capture ends, and the reader says so once.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!(
            "unanswered: {n} requests were never answered before the capture ended: JoinGroup v7 corr=3 (frame 1), JoinGroup v7 corr=3 (frame 3),"
        )),
        "{notes:?}"
    );
    assert!(
        notes[0].ends_with(&format!(", and {} more", n - 5)),
        "{notes:?}"
    );
    assert!(pdus
        .iter()
        .all(|p| p.direction == Some(Direction::Request) && p.api == Some("JoinGroup")));
}

#[test]
fn a_connection_that_is_not_kafka_gets_a_note_with_the_port_to_try() {
    // With a SYN the client is known: the hint names the server's port.
    let mut c = Conversation::new(addr("10.50.71.3:30120"), addr("10.50.71.3:8080"));
    c.handshake()
        .send(true, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .send(false, b"HTTP/1.1 200 OK\r\n\r\n")
        .close();
    let (pdus, notes, summary) = decode(&pcap(&c.packets));
    assert!(pdus.is_empty());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        notes[0],
        "not-kafka: this TCP connection carried 46 byte(s) but no Kafka traffic was \
         recognised; if it is Kafka, try --port 8080"
    );
    assert_eq!(summary.not_kafka_connections, 1);
    assert_eq!(summary.not_kafka_bytes, 46);
    // Without a SYN either port may be the broker's.
    let (_, notes, _) = decode(&pcap(&c.packets[3..]));
    assert!(
        notes.len() == 1 && notes[0].ends_with("try --port 8080 or --port 30120"),
        "{notes:?}"
    );
}

#[test]
fn tls_off_a_kafka_port_is_not_kafka_and_says_tls() {
    let mut c = Conversation::new(addr("10.50.71.3:30120"), addr("10.50.71.3:8443"));
    let mut hello = vec![
        0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00, 0x00, 0x3c, 0x03, 0x03,
    ];
    hello.resize(69, 0xab);
    c.handshake().send(true, &hello).close();
    let (pdus, notes, summary) = decode(&pcap(&c.packets));
    assert!(pdus.is_empty());
    assert_eq!(
        notes,
        ["not-kafka: this TCP connection carried 69 byte(s) of TLS: encrypted, not decoded"]
    );
    assert_eq!(summary.not_kafka_connections, 1);
}

/// `tests/fixtures/http/http-only.pcap`: three curl requests to a Python HTTP server on
/// loopback (see the README beside it).
fn http_only() -> Vec<u8> {
    std::fs::read(common::repo().join("tests/fixtures/http/http-only.pcap")).unwrap()
}

#[test]
fn a_capture_of_http_only_says_what_was_read_and_that_no_kafka_was_found() {
    let (pdus, notes, summary) = decode(&http_only());
    assert!(pdus.is_empty());
    // tshark -q -z conv,tcp: three connections; 37 packets.
    assert_eq!(summary.packets, 37);
    assert_eq!(summary.connections, 3);
    assert_eq!(summary.kafka_connections, 0);
    assert_eq!(summary.not_kafka_connections, 3);
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes
        .iter()
        .all(|n| n.starts_with("not-kafka: ") && n.ends_with("try --port 18765")));
    assert_eq!(
        summary.no_kafka_message().as_deref(),
        Some(
            "37 packets, 3 TCP connections, no Kafka traffic recognised; \
             try --port PORT with the broker's port"
        )
    );
    // `kinspect stats` counts them, from the summary and among notes by code.
    let mut stats = Stats::new();
    let summary = read_capture(&http_only()[..], &opts(), &mut |ev| {
        if let Event::Note { origin, diag } = ev {
            stats.note(&origin, &diag);
        }
    })
    .unwrap();
    stats.capture(&summary);
    assert_eq!(
        (stats.packets, stats.connections, stats.kafka_connections),
        (37, 3, 0)
    );
    assert_eq!(stats.not_kafka_connections, 3);
    assert_eq!(stats.not_kafka_bytes, summary.not_kafka_bytes);
    assert!(summary.not_kafka_bytes > 0);
    assert_eq!(stats.diagnostics[&(NOT_KAFKA, Severity::Info)], 3);
}

#[test]
fn an_empty_capture_says_it_held_no_packets() {
    let empty = testgen::pcap(1, &[], false, false, 262_144);
    assert_eq!(empty.len(), 24, "a pcap header and nothing else");
    let (pdus, notes, summary) = decode(&empty);
    assert!(pdus.is_empty() && notes.is_empty());
    assert_eq!(
        summary.no_kafka_message().as_deref(),
        Some("0 packets, no Kafka traffic recognised")
    );
    assert_eq!(summary.first_ts_ns, None);
}

#[test]
fn not_kafka_notes_stop_after_a_hundred_but_the_count_does_not() {
    let mut packets = Vec::new();
    for i in 0..150u16 {
        let mut c = Conversation::new(
            addr(&format!("10.0.0.1:{}", 40000 + i)),
            addr("10.0.0.2:8080"),
        );
        c.handshake().send(true, b"GET / HTTP/1.1\r\n\r\n").close();
        packets.extend(c.packets);
    }
    let (_, notes, summary) = decode(&pcap(&packets));
    assert_eq!(summary.not_kafka_connections, 150);
    assert_eq!(notes.len(), 101, "{:?}", notes.last());
    assert!(
        notes[100].contains("the rest are only counted"),
        "{}",
        notes[100]
    );
}

#[test]
fn bundled_captures_are_kafka_and_say_nothing_of_not_kafka() {
    for path in common::bundled_captures() {
        let (pdus, notes, summary) = decode(&std::fs::read(&path).unwrap());
        assert!(!pdus.is_empty(), "{path:?}");
        assert_eq!(summary.no_kafka_message(), None, "{path:?}");
        assert_eq!(summary.not_kafka_connections, 0, "{path:?}");
        assert!(
            !notes.iter().any(|n| n.starts_with("not-kafka")),
            "{path:?}"
        );
    }
}
