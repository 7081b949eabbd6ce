//! Hostile and damaged input: the reader must neither panic nor hang on any byte string, and
//! whatever it delivers must be well formed (frames start with their size prefix and never
//! exceed it). Inputs are the bundled captures with bytes flipped, cut and spliced by a
//! seeded generator, and hand-made worst cases.

use crate::common;

use kinspect::capture::testgen::{self, Conversation, Link};
use kinspect::capture::{read_capture, CaptureOptions, Event};

/// xorshift64*: deterministic, so a failure names its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn check(bytes: &[u8], what: &str) {
    let opts = CaptureOptions {
        default_ports: false,
        ..CaptureOptions::default()
    };
    let _ = read_capture(bytes, &opts, &mut |ev| {
        if let Event::Frame { data, .. } = ev {
            assert!(data.len() >= 4, "{what}: a frame without its size prefix");
            let size = i32::from_be_bytes([data[0], data[1], data[2], data[3]]);
            assert!(
                size >= 0 && data.len() as u64 <= 4 + size as u64,
                "{what}: frame longer than its size prefix"
            );
        }
    });
}

#[test]
fn mutated_captures_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let files: Vec<Vec<u8>> = common::bundled_captures()
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    for round in 0..300 {
        let f = &files[round % files.len()];
        let mut b = f.clone();
        match round % 4 {
            // Flip bytes anywhere (headers, lengths, TCP fields, Kafka sizes).
            0 | 1 => {
                for _ in 0..1 + rng.below(40) {
                    let i = rng.below(b.len());
                    b[i] ^= 1 << rng.below(8);
                }
            }
            // Cut at a random point.
            2 => b.truncate(rng.below(b.len())),
            // Splice a chunk of another capture in.
            _ => {
                let g = &files[rng.below(files.len())];
                let (at, from) = (rng.below(b.len()), rng.below(g.len()));
                let n = rng.below(2000).min(g.len() - from);
                b.splice(at..at, g[from..from + n].iter().copied());
            }
        }
        check(&b, &format!("round {round}"));
    }
}

#[test]
fn worst_case_frames_fail_cleanly() {
    // A Kafka size prefix of 2^31-1, then of -1, then a 5-byte stream: every one must end in a
    // note or an incomplete-frame report, never an allocation of the claimed size.
    for payload in [
        &[0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 3][..],
        &[0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4],
        &[0, 0, 0, 9, 0],
    ] {
        let mut c = Conversation::new(
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:9092".parse().unwrap(),
        );
        c.handshake();
        c.send(true, payload).close();
        let bytes = testgen::pcap(
            1,
            &testgen::records(&Link::Ethernet, &c.packets, usize::MAX),
            false,
            false,
            65535,
        );
        let mut notes = Vec::new();
        let mut frames = 0;
        read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| match ev {
            Event::Frame { .. } => frames += 1,
            Event::Note { diag, .. } => notes.push(diag.code),
        })
        .unwrap();
        assert_eq!(frames, 0, "{payload:?}");
        assert!(
            !notes.is_empty(),
            "{payload:?}: the stream's end inside a frame must be reported"
        );
    }
    // A pcap record header claiming 4 GiB, and a pcapng block claiming 4 GiB.
    let mut p = testgen::pcap(1, &[], false, false, 65535);
    p.extend_from_slice(&[0; 8]);
    p.extend_from_slice(&u32::MAX.to_le_bytes());
    p.extend_from_slice(&u32::MAX.to_le_bytes());
    check(&p, "pcap 4 GiB record");
    let mut ng = testgen::pcapng(&[(1, 6)], &[]);
    ng.extend_from_slice(&6u32.to_le_bytes());
    ng.extend_from_slice(&u32::MAX.to_le_bytes());
    check(&ng, "pcapng 4 GiB block");
}

#[test]
fn out_of_order_data_is_bounded() {
    // A client that sends only segments beyond a hole that never fills: 9 MiB of them. The
    // reader must declare the hole lost (reassembly-overflow) rather than buffer it all.
    let mut c = Conversation::new(
        "127.0.0.1:40000".parse().unwrap(),
        "127.0.0.1:9092".parse().unwrap(),
    );
    c.mss = 60_000;
    c.handshake();
    let blob = vec![0x41u8; 9 << 20];
    c.send(true, &blob);
    let mut pk = c.packets.clone();
    pk.remove(3); // the first data segment: everything after it waits behind the hole
    pk.retain(|p| p.payload.is_empty() || p.src == c.client);
    pk.retain(|p| !(p.payload.is_empty() && p.src == c.server && p.flags & testgen::SYN == 0));
    let bytes = testgen::pcap(
        Link::Raw.linktype(),
        &testgen::records(&Link::Raw, &pk, usize::MAX),
        false,
        false,
        65535,
    );
    let mut codes = Vec::new();
    let s = read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| {
        if let Event::Note { diag, .. } = ev {
            codes.push(diag.code);
        }
    })
    .unwrap();
    assert!(codes.contains(&"reassembly-overflow"), "{codes:?} {s:?}");
}

#[test]
fn a_flood_of_tiny_holes_is_bounded() {
    // 150 000 one-byte segments, each after its own one-byte hole: every one is held, and each
    // costs more than its byte, so the bound is reached long before the bytes add up to it.
    let mut c = Conversation::new(
        "127.0.0.1:40000".parse().unwrap(),
        "127.0.0.1:9092".parse().unwrap(),
    );
    c.handshake();
    let base = c.packets[2].seq;
    let template = c.packets[2].clone();
    let mut pk = c.packets.clone();
    for i in 0..150_000u32 {
        let mut p = template.clone();
        p.seq = base.wrapping_add(1 + 2 * i);
        p.payload = vec![0x41];
        p.flags = testgen::ACK | testgen::PSH;
        pk.push(p);
    }
    let bytes = testgen::pcap(
        Link::Raw.linktype(),
        &testgen::records(&Link::Raw, &pk, usize::MAX),
        false,
        false,
        65535,
    );
    let mut overflow = 0;
    let mut gaps = 0;
    read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| {
        if let Event::Note { diag, .. } = ev {
            overflow += usize::from(diag.code == "reassembly-overflow");
            gaps += usize::from(diag.code == "gap");
        }
    })
    .unwrap();
    assert!(overflow >= 1, "the bound was reached");
    assert!(
        gaps > 1000,
        "holes past the bound are declared lost one by one: {gaps}"
    );
}
