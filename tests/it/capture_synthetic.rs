//! Synthetic captures for what the real ones lack. Each wraps real Kafka frames (the produce
//! connection of the bundled `mock-kcat-none.pcap`: ApiVersions v3/v0, three Produce v7 of 2705
//! bytes and their responses) in TCP segments, a link layer and a file format, damages it in one
//! way, and checks what the reader delivers against the original frames.

use crate::common;

use kinspect::capture::testgen::{self, Conversation, Link, Record, TcpPacket, SYN};
use kinspect::capture::{read_capture, CaptureError, CaptureOptions, CaptureSummary, Event};
use kinspect::pdu::Direction;
use std::net::SocketAddr;

#[derive(Debug, Clone, PartialEq)]
struct Got {
    direction: Direction,
    data: Vec<u8>,
    api_key: Option<i16>,
    sasl: bool,
    stream: u32,
    frame: u64,
    last_frame: u64,
}

struct Out {
    frames: Vec<Got>,
    notes: Vec<(String, Option<u64>, String)>,
    summary: Result<CaptureSummary, CaptureError>,
}

impl Out {
    fn codes(&self) -> Vec<&str> {
        self.notes.iter().map(|n| n.0.as_str()).collect()
    }
}

fn read(bytes: &[u8], opts: &CaptureOptions) -> Out {
    let mut frames = Vec::new();
    let mut notes = Vec::new();
    let summary = read_capture(bytes, opts, &mut |ev| match ev {
        Event::Frame {
            origin,
            hints,
            data,
        } => frames.push(Got {
            direction: hints.direction.unwrap(),
            data: data.to_vec(),
            api_key: hints.api_key,
            sasl: hints.sasl_token,
            stream: origin.conn.unwrap().stream,
            frame: origin.frame.unwrap(),
            last_frame: origin.last_frame.unwrap(),
        }),
        Event::Note { origin, diag } => {
            notes.push((diag.code.to_string(), origin.frame, diag.to_string()))
        }
    });
    Out {
        frames,
        notes,
        summary,
    }
}

fn no_ports() -> CaptureOptions {
    CaptureOptions {
        default_ports: false,
        ..CaptureOptions::default()
    }
}

/// The frames of TCP stream 1 of mock-kcat-none.pcap, in capture order.
fn real_frames() -> Vec<(Direction, Vec<u8>)> {
    let bytes = std::fs::read(common::captures_dir().join("mock-kcat-none.pcap")).unwrap();
    let out = read(&bytes, &CaptureOptions::default());
    let v: Vec<(Direction, Vec<u8>)> = out
        .frames
        .into_iter()
        .filter(|g| g.stream == 1)
        .map(|g| (g.direction, g.data))
        .collect();
    assert_eq!(
        v.len(),
        10,
        "stream 1 of mock-kcat-none holds 5 requests and 5 responses (tshark agrees)"
    );
    assert_eq!(v[4].1.len(), 2705);
    v
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn conversation(
    client: &str,
    server: &str,
    frames: &[(Direction, Vec<u8>)],
    mss: usize,
) -> Conversation {
    let mut c = Conversation::new(addr(client), addr(server));
    c.mss = mss;
    c.handshake();
    for (d, f) in frames {
        c.send(*d == Direction::Request, f);
    }
    c.close();
    c
}

fn file(link: &Link, packets: &[TcpPacket]) -> Vec<u8> {
    testgen::pcap(
        link.linktype(),
        &testgen::records(link, packets, usize::MAX),
        false,
        false,
        262_144,
    )
}

fn assert_same_frames(out: &Out, want: &[(Direction, Vec<u8>)]) {
    let got: Vec<(Direction, Vec<u8>)> = out
        .frames
        .iter()
        .map(|g| (g.direction, g.data.clone()))
        .collect();
    assert_eq!(got.len(), want.len(), "frame count; notes: {:?}", out.notes);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "frame {i} differs");
    }
    // Every response was matched to its request: the request's API key rides on the response.
    for g in out
        .frames
        .iter()
        .filter(|g| g.direction == Direction::Response)
    {
        assert!(g.api_key.is_some(), "unmatched response {g:?}");
    }
}

#[test]
fn every_link_layer_and_ip_version_round_trips() {
    let frames = real_frames();
    let links = [
        Link::Ethernet,
        Link::Vlan(vec![5]),
        Link::Vlan(vec![5, 7]),
        Link::Sll,
        Link::Sll2,
        Link::Null,
        Link::Loop,
        Link::Raw,
    ];
    for (client, server) in [
        ("10.1.2.3:40000", "10.1.2.4:12345"),
        ("[fd00::1]:40000", "[fd00::2]:12345"),
    ] {
        for link in &links {
            let conv = conversation(client, server, &frames, 1460);
            let out = read(&file(link, &conv.packets), &no_ports());
            assert!(out.notes.is_empty(), "{link:?} {client}: {:?}", out.notes);
            assert_same_frames(&out, &frames);
        }
    }
}

#[test]
fn pcap_byte_orders_and_resolutions_agree_on_timestamps() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1460);
    let recs = testgen::records(&Link::Ethernet, &conv.packets, usize::MAX);
    let mut stamps = Vec::new();
    for (be, nanos) in [(false, false), (true, false), (false, true), (true, true)] {
        let bytes = testgen::pcap(1, &recs, be, nanos, 65535);
        let mut ts = Vec::new();
        read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| {
            if let Event::Frame { origin, .. } = ev {
                ts.push(origin.ts_ns.unwrap());
            }
        })
        .unwrap();
        assert_eq!(ts.len(), frames.len());
        stamps.push(ts);
    }
    // Microsecond files lose nothing here: the generator steps by whole microseconds.
    assert!(stamps.windows(2).all(|w| w[0] == w[1]), "{stamps:?}");
    assert_eq!(
        stamps[0][0], conv.packets[3].ts_ns,
        "first request ends in the first data segment"
    );
}

#[test]
fn pcapng_with_two_interfaces_keeps_frame_numbers_and_clocks() {
    let frames = real_frames();
    let a = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1460);
    let b = conversation("[::1]:40001", "[::1]:9092", &frames, 700);
    let mut recs: Vec<Record> = testgen::records(&Link::Ethernet, &a.packets, usize::MAX);
    let mut rb = testgen::records(&Link::Raw, &b.packets, usize::MAX);
    for r in rb.iter_mut() {
        r.interface = 1;
        r.ts_ns += 500; // interleave strictly after the other interface's packets
    }
    recs.append(&mut rb);
    recs.sort_by_key(|r| r.ts_ns);
    // Interface 0 in microseconds, interface 1 in nanoseconds.
    let bytes = testgen::pcapng(&[(1, 6), (101, 9)], &recs);
    let out = read(&bytes, &no_ports());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    for s in [0, 1] {
        let got: Vec<(Direction, Vec<u8>)> = out
            .frames
            .iter()
            .filter(|g| g.stream == s)
            .map(|g| (g.direction, g.data.clone()))
            .collect();
        assert_eq!(got, frames, "stream {s}");
    }
    // Frame numbers count every packet of both interfaces: the last frame is the packet count
    // minus the closing packets that carry no Kafka bytes.
    let summary = out.summary.unwrap();
    assert_eq!(summary.packets, recs.len() as u64);
    let max_frame = out.frames.iter().map(|g| g.last_frame).max().unwrap();
    assert!(
        max_frame > a.packets.len() as u64,
        "frames of both interfaces are numbered together"
    );
}

#[test]
fn out_of_order_segments_are_reordered() {
    let frames = real_frames();
    let mut conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 500);
    // Swap every pair of consecutive client data segments.
    let p = &mut conv.packets;
    let mut i = 0;
    while i + 1 < p.len() {
        if !p[i].payload.is_empty() && !p[i + 1].payload.is_empty() && p[i].src == p[i + 1].src {
            p.swap(i, i + 1);
            i += 2;
        } else {
            i += 1;
        }
    }
    let out = read(&file(&Link::Ethernet, &conv.packets), &no_ports());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert_same_frames(&out, &frames);
}

#[test]
fn retransmissions_and_overlaps_are_trimmed() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 600);
    let mut pk = Vec::new();
    for p in &conv.packets {
        pk.push(p.clone());
        if p.payload.len() >= 600 {
            // An exact duplicate, then a segment overlapping the second half of this one.
            pk.push(p.clone());
            let mut o = p.clone();
            o.seq = p.seq.wrapping_add(300);
            o.payload = p.payload[300..].to_vec();
            pk.push(o);
        }
    }
    let out = read(&file(&Link::Sll2, &pk), &no_ports());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert_same_frames(&out, &frames);
}

fn data_packet_indices(packets: &[TcpPacket], from_client: bool, client: SocketAddr) -> Vec<usize> {
    packets
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.payload.is_empty() && (p.src == client) == from_client)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn a_gap_inside_a_frame_delivers_it_cut_short_and_keeps_sync() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1000);
    // Client data segments: 0 ApiVersions v3, 1 ApiVersions v0, 2-4 first Produce (2705 bytes:
    // 1000 + 1000 + 705). Dropping segment 3 leaves a hole wholly inside that Produce.
    let client = data_packet_indices(&conv.packets, true, conv.client);
    let mut pk = conv.packets.clone();
    pk.remove(client[3]);
    let out = read(&file(&Link::Ethernet, &pk), &no_ports());
    assert_eq!(out.codes(), ["gap", "frame-incomplete"], "{:?}", out.notes);
    assert!(
        out.notes[0].2.contains("1000 byte(s)"),
        "{}",
        out.notes[0].2
    );
    assert_eq!(out.frames.len(), frames.len());
    let cut = &out.frames[4];
    assert_eq!(
        cut.data[..],
        frames[4].1[..1000],
        "the captured prefix, exactly"
    );
    for (i, (g, w)) in out
        .frames
        .iter()
        .zip(&frames)
        .enumerate()
        .filter(|(i, _)| *i != 4)
    {
        assert_eq!(g.data, w.1, "frame {i}");
    }
}

#[test]
fn a_gap_across_a_boundary_resyncs_at_the_next_request() {
    let frames = real_frames();
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.mss = 1000;
    c.handshake();
    c.send(true, &frames[0].1)
        .send(false, &frames[1].1)
        .send(true, &frames[2].1)
        .send(false, &frames[3].1);
    // Pipeline the three produce requests back to back, then their responses.
    let produces: Vec<u8> = [4, 6, 8]
        .iter()
        .flat_map(|&i| frames[i].1.clone())
        .collect();
    c.send(true, &produces);
    let responses: Vec<u8> = [5, 7, 9]
        .iter()
        .flat_map(|&i| frames[i].1.clone())
        .collect();
    c.send(false, &responses);
    c.close();
    // Client segments 2.. carry 8115 produce bytes; segment 4 (bytes 2000..3000) holds the end
    // of the first Produce (2705) and the start of the second.
    let client = data_packet_indices(&c.packets, true, c.client);
    let mut pk = c.packets.clone();
    pk.remove(client[4]);
    let out = read(&file(&Link::Ethernet, &pk), &no_ports());
    assert_eq!(
        out.codes(),
        ["gap", "frame-incomplete", "resync"],
        "{:?}",
        out.notes
    );
    // First produce cut short; second lost; third found again after skipping to its start.
    let reqs: Vec<&Got> = out
        .frames
        .iter()
        .filter(|g| g.direction == Direction::Request)
        .collect();
    assert_eq!(
        reqs.len(),
        4,
        "two ApiVersions, the cut Produce, the third Produce; {:?}",
        out.notes
    );
    assert!(
        reqs[2].data[..] == frames[4].1[..2000],
        "the first Produce's captured 2000 bytes"
    );
    assert!(reqs[3].data == frames[8].1, "the third Produce, whole");
    // Five responses; the one answering the lost request (correlation 4) cannot be matched.
    let resps: Vec<&Got> = out
        .frames
        .iter()
        .filter(|g| g.direction == Direction::Response)
        .collect();
    let keys: Vec<Option<i16>> = resps.iter().map(|g| g.api_key).collect();
    assert_eq!(keys, [Some(18), Some(18), Some(0), None, Some(0)]);
    let skipped = &out.notes[2].2;
    // 3000 - 2705 = 295 bytes of the second Produce were lost in the hole; 2705 - 295 remain.
    assert!(skipped.contains("skipped 2410 byte(s)"), "{skipped}");
}

#[test]
fn a_capture_starting_mid_message_skips_to_the_next_frame() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:12345", &frames, 1000);
    // Start right after the first 1000 bytes of the first Produce: no SYN, an unknown port.
    let client = data_packet_indices(&conv.packets, true, conv.client);
    let pk = conv.packets[client[2] + 1..].to_vec();
    let out = read(&file(&Link::Ethernet, &pk), &no_ports());
    // The rest of produce 1 is not a request and the first server bytes answer a request never
    // seen; detection waits for the next request start, then frames flow.
    let reqs: Vec<&Got> = out
        .frames
        .iter()
        .filter(|g| g.direction == Direction::Request)
        .collect();
    assert_eq!(
        reqs.iter().map(|g| g.data.clone()).collect::<Vec<_>>(),
        vec![frames[6].1.clone(), frames[8].1.clone()],
        "{:?}",
        out.notes
    );
    let resps: Vec<&Got> = out
        .frames
        .iter()
        .filter(|g| g.direction == Direction::Response)
        .collect();
    assert_eq!(
        resps.iter().map(|g| g.data.clone()).collect::<Vec<_>>(),
        vec![frames[7].1.clone(), frames[9].1.clone()]
    );
    // Same start on a Kafka port: the connection is Kafka at once, and the framer must say
    // how many bytes it skipped to reach a boundary.
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1000);
    let pk = conv.packets[client[2] + 1..].to_vec();
    let out = read(&file(&Link::Ethernet, &pk), &CaptureOptions::default());
    let resync: Vec<&(String, Option<u64>, String)> =
        out.notes.iter().filter(|n| n.0 == "resync").collect();
    assert!(
        resync.iter().any(|n| n.2.contains("skipped 1705 byte(s)")),
        "{:?}",
        out.notes
    );
    assert_eq!(
        out.frames
            .iter()
            .filter(|g| g.direction == Direction::Request)
            .count(),
        2
    );
}

#[test]
fn snapped_packets_give_cut_frames_and_no_lost_sync() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1460);
    let recs = testgen::records(&Link::Ethernet, &conv.packets, 200);
    let out = read(&testgen::pcap(1, &recs, false, true, 200), &no_ports());
    assert_eq!(out.frames.len(), frames.len(), "{:?}", out.notes);
    for (g, w) in out.frames.iter().zip(&frames) {
        assert_eq!(g.direction, w.0);
        assert_eq!(
            g.data[..],
            w.1[..g.data.len()],
            "a prefix of the real frame"
        );
        assert_eq!(&g.data[..4], &w.1[..4]);
    }
    assert!(out.codes().contains(&"frame-incomplete"));
}

#[test]
fn a_file_cut_short_delivers_everything_before_the_cut() {
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1460);
    let bytes = file(&Link::Ethernet, &conv.packets);
    let whole = read(&bytes, &no_ports());
    let cut_at = bytes.len() - 30; // inside the last-but-one record
    let out = read(&bytes[..cut_at], &no_ports());
    assert_eq!(
        out.frames, whole.frames,
        "the cut only loses closing packets with no Kafka bytes"
    );
    let (code, _, msg) = out.notes.last().unwrap();
    assert_eq!(code, "capture-truncated");
    assert!(msg.contains("at byte "), "{msg}");
    // Cut in the middle of the first Produce's records: the frames before it are all delivered.
    let out = read(&bytes[..3000], &no_ports());
    assert_eq!(
        out.codes().first(),
        Some(&"capture-truncated"),
        "{:?}",
        out.notes
    );
    assert_eq!(out.frames.len(), 4);
}

#[test]
fn damaged_headers_and_records_name_the_offset() {
    match read(b"\x0a\x0b\x0c\x0dgarbage", &no_ports()).summary {
        Err(e @ CaptureError::NotACapture { .. }) => assert!(e.to_string().contains("0a0b0c0d")),
        other => panic!("{other:?}"),
    }
    let frames = real_frames();
    let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, 1460);
    let mut bytes = file(&Link::Ethernet, &conv.packets);
    // Record 2's caplen (after the 24-byte header and record 1) says 3 GB.
    let rec1 = 16 + testgen::link_frame(&Link::Ethernet, &conv.packets[0]).len();
    let at = 24 + rec1 + 8;
    bytes[at..at + 4].copy_from_slice(&0xc000_0000u32.to_le_bytes());
    let out = read(&bytes, &no_ports());
    assert!(out.summary.is_ok());
    let (code, frame, msg) = &out.notes[0];
    assert_eq!((code.as_str(), *frame), ("capture-damaged", Some(2)));
    assert!(msg.contains(&format!("at byte {}", 24 + rec1)), "{msg}");
    // A pcap header cut inside itself.
    assert!(matches!(
        read(&bytes[..10], &no_ports()).summary,
        Err(CaptureError::BadHeader { .. })
    ));
}

#[test]
fn tls_on_a_kafka_port_is_reported_not_decoded() {
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9093"));
    c.handshake();
    // TLS 1.2 record header + ClientHello type; the rest is opaque here.
    let mut hello = vec![
        0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00, 0x00, 0x3c, 0x03, 0x03,
    ];
    hello.resize(69, 0xab);
    c.send(true, &hello)
        .send(false, &[0x16, 0x03, 0x03, 0x00, 0x20, 0x02, 0, 0, 0x1c])
        .close();
    let out = read(
        &file(&Link::Ethernet, &c.packets),
        &CaptureOptions::default(),
    );
    assert!(out.frames.is_empty(), "{:?}", out.frames);
    assert_eq!(out.codes(), ["tls"]);
}

#[test]
fn non_kafka_traffic_decodes_nothing_and_is_reported_once() {
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:8080"));
    c.handshake();
    c.send(true, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .send(false, b"HTTP/1.1 200 OK\r\n\r\n")
        .close();
    let out = read(
        &file(&Link::Ethernet, &c.packets),
        &CaptureOptions::default(),
    );
    assert!(out.frames.is_empty());
    assert_eq!(out.codes(), ["not-kafka"], "one note for the connection");
    let summary = out.summary.unwrap();
    assert_eq!(summary.kafka_connections, 0);
    assert_eq!(summary.not_kafka_connections, 1);
}

fn request(key: i16, version: i16, corr: i32, client: &str, body: &[u8]) -> Vec<u8> {
    let mut f = vec![0; 4];
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&(client.len() as i16).to_be_bytes());
    f.extend_from_slice(client.as_bytes());
    f.extend_from_slice(body);
    let n = (f.len() - 4) as i32;
    f[..4].copy_from_slice(&n.to_be_bytes());
    f
}

fn sized(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

#[test]
fn sasl_tokens_after_a_v0_handshake_are_marked() {
    // SaslHandshake v0 (key 17): body Mechanism string; response ErrorCode, Mechanisms array.
    let hs = request(17, 0, 7, "kcat", b"\x00\x05PLAIN");
    let hs_resp = sized(b"\x00\x00\x00\x07\x00\x00\x00\x00\x00\x01\x00\x05PLAIN");
    let token = sized(b"\0alice\0s3cret");
    let token_resp = sized(b"");
    let frames = real_frames();
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.handshake();
    c.send(true, &hs)
        .send(false, &hs_resp)
        .send(true, &token)
        .send(false, &token_resp);
    c.send(true, &frames[0].1).send(false, &frames[1].1).close();
    let out = read(&file(&Link::Ethernet, &c.packets), &no_ports());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    let marks: Vec<(Direction, bool)> = out.frames.iter().map(|g| (g.direction, g.sasl)).collect();
    use Direction::*;
    assert_eq!(
        marks,
        [
            (Request, false),
            (Response, false),
            (Request, true),
            (Response, true),
            (Request, false),
            (Response, false)
        ]
    );
    assert_eq!(out.frames[1].api_key, Some(17));
    assert_eq!(out.frames[5].api_key, Some(18));
    assert_eq!(
        kinspect::capture::mask_sasl_plain(&out.frames[2].data[4..]).unwrap(),
        b"\0alice\0******"
    );
    // A failed handshake (error 33, UNSUPPORTED_SASL_MECHANISM) is followed by no tokens.
    let bad_resp = sized(b"\x00\x00\x00\x07\x00\x21\x00\x00\x00\x00");
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.handshake();
    c.send(true, &hs)
        .send(false, &bad_resp)
        .send(true, &frames[0].1)
        .send(false, &frames[1].1)
        .close();
    let out = read(&file(&Link::Ethernet, &c.packets), &no_ports());
    assert!(out.frames.iter().all(|g| !g.sasl));
}

#[test]
fn a_reused_four_tuple_is_a_new_stream() {
    let frames = real_frames();
    let a = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames[..4], 1460);
    let mut b = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    b.handshake();
    b.send(true, &frames[0].1).send(false, &frames[1].1).close();
    let mut pk = a.packets.clone();
    pk.extend(b.packets.iter().cloned().map(|mut p| {
        p.ts_ns += 1_000_000;
        p
    }));
    let out = read(&file(&Link::Ethernet, &pk), &no_ports());
    let streams: Vec<u32> = out.frames.iter().map(|g| g.stream).collect();
    assert_eq!(streams, [0, 0, 0, 0, 1, 1], "{:?}", out.notes);
}

#[test]
fn a_reset_inside_a_frame_reports_the_frame_unfinished() {
    let frames = real_frames();
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.mss = 1000;
    c.handshake();
    c.send(true, &frames[0].1).send(false, &frames[1].1);
    // The first 1000 bytes of a Produce, then the client resets the connection.
    c.send(true, &frames[4].1[..1000]);
    let mut rst = c.packets.last().unwrap().clone();
    rst.src = c.client;
    rst.dst = c.server;
    rst.flags = testgen::RST;
    rst.payload.clear();
    rst.seq = c
        .packets
        .iter()
        .rev()
        .find(|p| p.src == c.client && !p.payload.is_empty())
        .map(|p| p.seq.wrapping_add(1000))
        .unwrap();
    c.packets.push(rst);
    let out = read(&file(&Link::Ethernet, &c.packets), &no_ports());
    assert_eq!(out.frames.len(), 2);
    assert_eq!(out.codes(), ["frame-incomplete"], "{:?}", out.notes);
    assert!(
        out.notes[0]
            .2
            .contains("1000 byte(s) into a frame: expected 2705 bytes"),
        "{}",
        out.notes[0].2
    );
}

#[test]
fn the_connection_table_is_bounded() {
    // 65 537 connections that each send a SYN: one more than MAX_CONNECTIONS.
    let n = kinspect::limits::MAX_CONNECTIONS + 1;
    let mut pk = Vec::with_capacity(n);
    for i in 0..n {
        let client = SocketAddr::new(
            [10, 1 + (i >> 16) as u8, (i >> 8) as u8, i as u8].into(),
            40000,
        );
        pk.push(TcpPacket {
            src: client,
            dst: addr("10.0.0.1:9092"),
            seq: 1,
            ack: 0,
            flags: SYN,
            payload: Vec::new(),
            ts_ns: i as i64,
        });
    }
    let out = read(&file(&Link::Raw, &pk), &no_ports());
    assert_eq!(out.codes(), ["connections-evicted"]);
    assert_eq!(
        out.summary.unwrap().connections,
        n as u64,
        "evicted connections keep their stream numbers"
    );
}

#[test]
fn pcapng_simple_packet_blocks_are_read() {
    let frames = real_frames();
    let conv = conversation("[fd00::1]:40000", "[fd00::2]:9092", &frames, 1460);
    let bytes = testgen::pcapng_simple(
        Link::Sll.linktype(),
        0,
        &testgen::records(&Link::Sll, &conv.packets, usize::MAX),
    );
    let out = read(&bytes, &no_ports());
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    assert_same_frames(&out, &frames);
}

#[test]
fn sasl_tokens_decode_as_tokens_without_errors() {
    use kinspect::engine::decoded::{decode_capture, Decoded};
    let hs = request(17, 0, 7, "kcat", b"\x00\x05PLAIN");
    let hs_resp = sized(b"\x00\x00\x00\x07\x00\x00\x00\x00\x00\x01\x00\x05PLAIN");
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.handshake();
    c.send(true, &hs)
        .send(false, &hs_resp)
        .send(true, &sized(b"\0alice\0s3cret"))
        .send(false, &sized(b""))
        .close();
    let bytes = file(&Link::Ethernet, &c.packets);
    let mut seen = Vec::new();
    decode_capture(
        &bytes[..],
        &CaptureOptions::default(),
        kinspect::protocol::builtin(),
        &mut |d| {
            if let Decoded::Pdu(p) = d {
                let token = p.tree.child(0, "token").is_some();
                let errors: Vec<String> = p.tree.errors().map(|d| d.to_string()).collect();
                seen.push((p.api_key, token, errors));
            }
        },
    )
    .unwrap();
    let none = Vec::<String>::new;
    assert_eq!(
        seen,
        [
            (Some(17), false, none()),
            (Some(17), false, none()),
            (None, true, none()),
            (None, true, none())
        ]
    );
}

#[test]
fn unanswered_requests_are_bounded() {
    // acks=0 producers never get answers: 4097 requests without a response on one connection.
    let frames = real_frames();
    let n = kinspect::limits::MAX_OUTSTANDING_PER_CONN + 1;
    let mut c = Conversation::new(addr("127.0.0.1:40000"), addr("127.0.0.1:9092"));
    c.handshake();
    let mut all = Vec::new();
    for i in 0..n {
        let mut f = frames[0].1.clone();
        f[8..12].copy_from_slice(&(i as i32).to_be_bytes());
        all.extend_from_slice(&f);
    }
    c.mss = 60_000;
    c.send(true, &all).close();
    let out = read(&file(&Link::Raw, &c.packets), &no_ports());
    assert_eq!(out.frames.len(), n);
    assert_eq!(out.codes(), ["outstanding-overflow", "unanswered"]);
    // The oldest was forgotten; the ones still remembered are said unanswered when the client
    // closes.
    let left = out.notes[1].2.split_once("(capture): ").unwrap().1;
    assert!(
        left.starts_with(&format!(
            "{} requests were never answered before the client closed the connection (FIN, frame",
            n - 1
        )),
        "{left}"
    );
}

/// Loopback captures with segmentation offload hold super-packets far larger than a link's MTU
/// (IPv4 total length 0, the capture's length trusted): the reader reads the file 256 KiB at a
/// time and gathers a record of up to 1 MiB over several reads rather than call the file
/// damaged, in pcap and pcapng alike; a record past 1 MiB is still damage.
#[test]
fn super_packets_up_to_a_mebibyte_are_read_whole() {
    for (size, seg) in [(700_000u32, 600_000), (1_200_000, 1_200_000)] {
        let mut frames = real_frames();
        // A Produce v9 request header and `size` bytes in all: the framer hands it over whole.
        let mut big = Vec::with_capacity(size as usize);
        big.extend_from_slice(&(size - 4).to_be_bytes());
        big.extend_from_slice(&[0, 0, 0, 9, 0, 0, 0x10, 0]);
        big.resize(size as usize, 0x5a);
        frames.insert(4, (Direction::Request, big));
        let conv = conversation("127.0.0.1:40000", "127.0.0.1:9092", &frames, seg);
        let mut records = testgen::records(&Link::Ethernet, &conv.packets, usize::MAX);
        for r in &mut records {
            if r.data.len() > 0xffff {
                r.data[16..18].copy_from_slice(&[0, 0]); // IPv4 total length 0, as TSO leaves it
            }
        }
        let biggest = records.iter().map(|r| r.data.len()).max().unwrap();
        assert!(biggest > 256 << 10, "a record larger than the first buffer");
        for (kind, bytes) in [
            ("pcap", testgen::pcap(1, &records, false, false, 0)),
            ("pcapng", testgen::pcapng(&[(1, 6)], &records)),
        ] {
            let out = read(&bytes, &no_ports());
            if biggest < 1 << 20 {
                assert!(out.notes.is_empty(), "{kind}: {:?}", out.notes);
                assert_same_frames(&out, &frames);
            } else {
                let (code, frame, msg) = &out.notes[0];
                assert_eq!(code, "capture-damaged", "{kind}: {msg}");
                assert!(msg.contains("above 1048576 bytes"), "{kind}: {msg}");
                // The frames before the super-packet were all delivered.
                assert_eq!(out.frames.len(), 4, "{kind}");
                assert!(frame.is_some_and(|f| f > 4), "{kind}: {frame:?}");
            }
        }
    }
}
