//! Categories `captures` (every bundled capture, damaged: bit flips, byte runs, truncation,
//! splices of two captures, record headers and Kafka size prefixes that lie, TCP and IP headers
//! that lie, records dropped, repeated and reordered) and `synthetic` (captures written from
//! scratch: 100k connections, out-of-order floods, 1-byte segments, size prefix 0x7fffffff,
//! every link layer, pcapng, request floods).

use crate::frames::{decode_output, exchange, other_command};
use crate::mutate::{self, pick, LIES32};
use crate::run::{Case, Out};
use kinspect::capture::testgen::{self, Conversation, Link, TcpPacket, ACK, PSH, SYN};
use kinspect::wire::sample::Rng;
use std::net::SocketAddr;

/// Where each record of a classic pcap lies: header offset, data offset, captured length, and
/// the TCP payload's offset and length when the record is Ethernet/SLL/… + IPv4/IPv6 + TCP.
pub struct Rec {
    pub hdr: usize,
    pub data: usize,
    pub caplen: usize,
    pub payload: Option<(usize, usize)>,
}

pub fn index(p: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    if p.len() < 24 {
        return out;
    }
    let be = match &p[..4] {
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => true,
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => false,
        _ => return out,
    };
    let u32at = |i: usize| {
        let w = [p[i], p[i + 1], p[i + 2], p[i + 3]];
        if be {
            u32::from_be_bytes(w)
        } else {
            u32::from_le_bytes(w)
        }
    };
    let linktype = u32at(20);
    let mut at = 24;
    while at + 16 <= p.len() {
        let caplen = u32at(at + 8) as usize;
        let data = at + 16;
        if data + caplen > p.len() {
            break;
        }
        let payload = tcp_payload(&p[data..data + caplen], linktype).map(|(o, l)| (data + o, l));
        out.push(Rec {
            hdr: at,
            data,
            caplen,
            payload,
        });
        at = data + caplen;
    }
    out
}

fn tcp_payload(f: &[u8], linktype: u32) -> Option<(usize, usize)> {
    let (mut ip, mut et) = match linktype {
        1 => (14, u16::from_be_bytes([*f.get(12)?, *f.get(13)?])),
        113 => (16, u16::from_be_bytes([*f.get(14)?, *f.get(15)?])),
        276 => (20, u16::from_be_bytes([*f.first()?, *f.get(1)?])),
        0 | 108 => (4, 0x0800),
        101 => (0, 0x0800),
        _ => return None,
    };
    while et == 0x8100 || et == 0x88a8 {
        et = u16::from_be_bytes([*f.get(ip + 2)?, *f.get(ip + 3)?]);
        ip += 4;
    }
    let v = f.get(ip)? >> 4;
    let tcp = match v {
        4 if *f.get(ip + 9)? == 6 => ip + usize::from(f[ip] & 15) * 4,
        6 if *f.get(ip + 6)? == 6 => ip + 40,
        _ => return None,
    };
    let off = tcp + usize::from(f.get(tcp + 12)? >> 4) * 4;
    (off <= f.len()).then(|| (off, f.len() - off))
}

pub fn captures_case(i: u64, rng: &mut Rng, caps: &[(String, Vec<u8>)]) -> Case {
    let (name, orig) = &caps[i as usize % caps.len()];
    let mut p = orig.clone();
    let mut what = vec![name.clone()];
    let n = 1 + rng.below(4);
    for _ in 0..n {
        let recs = index(&p);
        let be = p.first() == Some(&0xa1);
        let put32 = |p: &mut Vec<u8>, at: usize, v: u32| {
            let w = if be { v.to_be_bytes() } else { v.to_le_bytes() };
            if at + 4 <= p.len() {
                p[at..at + 4].copy_from_slice(&w);
            }
        };
        let rec = (!recs.is_empty()).then(|| &recs[rng.below(recs.len() as u64) as usize]);
        let with_payload: Vec<&Rec> = recs
            .iter()
            .filter(|r| r.payload.is_some_and(|p| p.1 >= 4))
            .collect();
        match rng.below(12) {
            0 => {
                if let Some(r) = rec {
                    let v = *pick(
                        rng,
                        &[
                            0,
                            1,
                            0xffff,
                            0x7fff_ffff,
                            0xffff_ffff,
                            r.caplen as u32 + 1,
                            262_145,
                        ],
                    );
                    put32(&mut p, r.hdr + 8 + 4 * rng.below(2) as usize, v);
                    what.push(format!("record len {v:#x}"));
                }
            }
            1 | 2 => {
                if !with_payload.is_empty() {
                    let r = with_payload[rng.below(with_payload.len() as u64) as usize];
                    let (off, len) = r.payload.expect("filtered");
                    let v = if rng.chance(3) {
                        // Off by a little from a plausible size.
                        (len as u32).wrapping_add(*pick(rng, &[1u32, 0xffff_ffff, 4, 0xffff_fffc]))
                    } else {
                        *pick(rng, &LIES32)
                    };
                    p[off..off + 4].copy_from_slice(&v.to_be_bytes());
                    what.push(format!("size prefix {v:#x}"));
                }
            }
            3 => {
                if let Some(r) = rec.filter(|r| r.payload.is_some()) {
                    // TCP sequence number or data offset lies.
                    let (off, _) = r.payload.expect("filtered");
                    let tcp_guess = off.saturating_sub(20);
                    if rng.chance(2) {
                        let v = rng.next_u64() as u32;
                        p[tcp_guess + 4..tcp_guess + 8].copy_from_slice(&v.to_be_bytes());
                        what.push("tcp seq".into());
                    } else {
                        p[tcp_guess + 12] =
                            (*pick(rng, &[0u8, 1, 4, 15]) << 4) | (p[tcp_guess + 12] & 15);
                        what.push("tcp data offset".into());
                    }
                }
            }
            4 => {
                // Global header: snaplen, link type, magic.
                match rng.below(3) {
                    0 => put32(&mut p, 16, *pick(rng, &[0, 1, 0xffff_ffff])),
                    1 => put32(
                        &mut p,
                        20,
                        *pick(rng, &[0, 1, 101, 108, 113, 276, 228, 12345, 0xffff_ffff]),
                    ),
                    _ => p[..4].copy_from_slice(
                        &pick(
                            rng,
                            &[
                                [0xa1, 0xb2, 0x3c, 0x4d],
                                [0x4d, 0x3c, 0xb2, 0xa1],
                                [0x0a, 0x0d, 0x0d, 0x0a],
                            ],
                        )[..],
                    ),
                }
                what.push("global header".into());
            }
            5 => {
                // Reorder: swap two records (same length keeps the file parseable).
                if recs.len() > 2 {
                    let a = &recs[rng.below(recs.len() as u64) as usize];
                    let b = &recs[rng.below(recs.len() as u64) as usize];
                    if a.hdr == b.hdr {
                        continue;
                    }
                    let (ra, rb) = (
                        p[a.hdr..a.data + a.caplen].to_vec(),
                        p[b.hdr..b.data + b.caplen].to_vec(),
                    );
                    let (first, second, fa, fb) = if a.hdr < b.hdr {
                        (a, b, ra, rb)
                    } else {
                        (b, a, rb, ra)
                    };
                    let mut q = p[..first.hdr].to_vec();
                    q.extend_from_slice(&fb);
                    q.extend_from_slice(&p[first.data + first.caplen..second.hdr]);
                    q.extend_from_slice(&fa);
                    q.extend_from_slice(&p[second.data + second.caplen..]);
                    p = q;
                    what.push("records swapped".into());
                }
            }
            6 => {
                // Repeat a record many times (retransmission flood) or drop one (a gap).
                if let Some(r) = rec {
                    let bytes = p[r.hdr..r.data + r.caplen].to_vec();
                    if rng.chance(2) {
                        let times = 1 + rng.below(200) as usize;
                        let at = r.data + r.caplen;
                        p.splice(
                            at..at,
                            bytes.iter().copied().cycle().take(bytes.len() * times),
                        );
                        what.push(format!("record repeated {times}x"));
                    } else {
                        p.drain(r.hdr..r.data + r.caplen);
                        what.push("record dropped".into());
                    }
                }
            }
            7 => {
                let other = &caps[rng.below(caps.len() as u64) as usize].1;
                mutate::one(&mut p, rng, Some(other));
                what.push("splice".into());
            }
            8 => {
                // IP header lies: total length, IHL.
                if let Some(r) = rec.filter(|r| r.payload.is_some()) {
                    let ipo = r.data + 14;
                    if ipo + 4 <= p.len() && p[ipo] >> 4 == 4 {
                        if rng.chance(2) {
                            let v: u16 = *pick(rng, &[0, 20, 0xffff, 39]);
                            p[ipo + 2..ipo + 4].copy_from_slice(&v.to_be_bytes());
                        } else {
                            p[ipo] = 0x40 | *pick(rng, &[0u8, 4, 15]);
                        }
                        what.push("ip header".into());
                    }
                }
            }
            9 => {
                let at = rng.below(p.len() as u64 + 1) as usize;
                p.truncate(at);
                what.push(format!("cut at {at}"));
            }
            _ => {
                mutate::bytes(&mut p, rng, 8);
                what.push("bytes".into());
            }
        }
    }
    let mut c = Case::new(what.join(", "));
    let mut args: Vec<String> = Vec::new();
    if rng.chance(6) {
        args.push("stats".into());
        if rng.chance(2) {
            args.extend(["--format".to_string(), "json".to_string()]);
            c.out = Out::JsonDoc;
        } else {
            c.out = Out::Any;
        }
    } else if rng.chance(3) {
        other_command(&mut c, &mut args, rng, true);
    } else {
        args.push("decode".into());
        decode_output(&mut c, &mut args, rng);
        if rng.chance(8) {
            args.extend(["--stream".to_string(), rng.below(4).to_string()]);
        }
    }
    if rng.chance(8) {
        args.extend([
            "--port".to_string(),
            pick(rng, &["9092", "19092", "1", "65535"]).to_string(),
        ]);
    }
    if rng.chance(8) {
        args.push("-".into());
        c.stdin = Some("in.pcap".into());
    } else {
        args.push("in.pcap".into());
    }
    c.file("in.pcap", p).args(args);
    c
}

fn addr(a: u32, port: u16) -> SocketAddr {
    (a.to_be_bytes(), port).into()
}

/// A pcap of `packets` on Ethernet (or another link layer).
fn write(link: &Link, packets: &[TcpPacket], rng: &mut Rng) -> Vec<u8> {
    let recs = testgen::records(link, packets, usize::MAX);
    if rng.chance(6) {
        testgen::pcapng(&[(link.linktype(), 9)], &recs)
    } else {
        testgen::pcap(
            link.linktype(),
            &recs,
            rng.chance(4),
            rng.chance(2),
            262_144,
        )
    }
}

pub fn synthetic_case(i: u64, rng: &mut Rng) -> Case {
    let client = addr(0x0a00_0001, 40000 + (rng.below(20000) as u16));
    let server = addr(0x0a00_0002, 9092);
    let link = pick(
        rng,
        &[
            Link::Ethernet,
            Link::Ethernet,
            Link::Vlan(vec![5, 7]),
            Link::Sll,
            Link::Sll2,
            Link::Null,
            Link::Loop,
            Link::Raw,
        ],
    )
    .clone();
    // The heavy shapes come up on a fixed schedule, so that short runs meet them too.
    let kind = match i % 400 {
        7 => 0,
        107 | 307 => 1,
        _ => 2 + rng.below(7),
    };
    let (what, pcap): (String, Vec<u8>) = match kind {
        0 => {
            // 100k connections, each a SYN and one request segment, none closed.
            let n = *pick(rng, &[100_000u32, 70_000]);
            let mut pk = Vec::with_capacity(2 * n as usize);
            let (req, _) = exchange(rng, 1);
            for k in 0..n {
                let c = addr(0x0a01_0000 + (k >> 14), 1024 + (k & 0x3fff) as u16);
                pk.push(TcpPacket {
                    src: c,
                    dst: server,
                    seq: k,
                    ack: 0,
                    flags: SYN,
                    payload: vec![],
                    ts_ns: i64::from(k) * 1000,
                });
                pk.push(TcpPacket {
                    src: c,
                    dst: server,
                    seq: k + 1,
                    ack: 1,
                    flags: ACK | PSH,
                    payload: req[..req.len().min(64)].to_vec(),
                    ts_ns: i64::from(k) * 1000 + 500,
                });
            }
            (format!("{n} connections"), write(&Link::Raw, &pk, rng))
        }
        1 => {
            // One-byte segments of a long conversation.
            let mut conv = Conversation::new(client, server);
            conv.mss = 1;
            conv.handshake();
            let mut bytes = 0;
            let mut corr = 0;
            while bytes < 12_000 {
                let (q, r) = exchange(rng, corr);
                bytes += q.len() + r.len();
                conv.send(true, &q);
                conv.send(false, &r);
                corr += 1;
            }
            conv.close();
            ("1-byte segments".into(), write(&link, &conv.packets, rng))
        }
        2 => {
            // Out-of-order flood: every segment shuffled, some repeated, some overlapping.
            let mut conv = Conversation::new(client, server);
            conv.mss = *pick(rng, &[3, 17, 100, 536]);
            conv.handshake();
            for corr in 0..(1 + rng.below(40) as i32) {
                let (q, r) = exchange(rng, corr);
                conv.send(true, &q);
                conv.send(false, &r);
            }
            let mut pk = conv.packets.clone();
            for k in (1..pk.len()).rev() {
                let j = rng.below(k as u64 + 1) as usize;
                pk.swap(k, j);
            }
            let dups = rng.below(pk.len() as u64 * 3);
            for _ in 0..dups {
                let mut d = pk[rng.below(pk.len() as u64) as usize].clone();
                if rng.chance(3) && !d.payload.is_empty() {
                    // A retransmission that disagrees with the original, overlapping it.
                    d.seq = d.seq.wrapping_sub(rng.below(8) as u32);
                    d.payload.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
                }
                let at = rng.below(pk.len() as u64 + 1) as usize;
                pk.insert(at, d);
            }
            (
                format!("out-of-order flood, {} packets", pk.len()),
                write(&link, &pk, rng),
            )
        }
        3 => {
            // Size prefix 0x7fffffff (or another lie) opening the stream, then real frames.
            let mut conv = Conversation::new(client, server);
            conv.mss = *pick(rng, &[536, 1460, 9000]);
            if rng.chance(2) {
                conv.handshake();
            }
            let lie = *pick(rng, &LIES32);
            let mut first = lie.to_be_bytes().to_vec();
            first.extend((0..rng.below(5000)).map(|_| {
                if rng.chance(2) {
                    0
                } else {
                    rng.next_u64() as u8
                }
            }));
            conv.send(true, &first);
            for corr in 0..(1 + rng.below(10) as i32) {
                let (q, r) = exchange(rng, corr);
                conv.send(true, &q);
                conv.send(false, &r);
                if rng.chance(3) {
                    conv.send(false, &lie.to_be_bytes());
                }
            }
            (
                format!("size prefix {lie:#x}"),
                write(&link, &conv.packets, rng),
            )
        }
        4 => {
            // Sequence-number jumps: gaps near 2^31, segments far beyond the window.
            let mut conv = Conversation::new(client, server);
            conv.handshake();
            for corr in 0..(1 + rng.below(10) as i32) {
                let (q, r) = exchange(rng, corr);
                conv.send(true, &q);
                conv.send(false, &r);
            }
            let mut pk = conv.packets.clone();
            for _ in 0..(1 + rng.below(5)) {
                let k = rng.below(pk.len() as u64) as usize;
                pk[k].seq = pk[k]
                    .seq
                    .wrapping_add(*pick(rng, &[0x8000_0000u32, 0x7fff_ffff, 9 << 20, 1]));
            }
            let big: Vec<u8> = vec![0x41; 60_000];
            for k in 0..(rng.below(300)) {
                pk.push(TcpPacket {
                    src: client,
                    dst: server,
                    seq: (k as u32) * 65_536 + 0x1000_0000,
                    ack: 0,
                    flags: ACK,
                    payload: big[..1 + rng.below(60_000) as usize].to_vec(),
                    ts_ns: 1,
                });
            }
            ("sequence jumps".into(), write(&link, &pk, rng))
        }
        5 => {
            // A request flood with no answers on one connection, then answers with repeated ids.
            let mut conv = Conversation::new(client, server);
            conv.mss = 9000;
            conv.handshake();
            let n = 1 + rng.below(6000) as i32;
            let (q, r) = exchange(rng, 7);
            let mut all = Vec::new();
            for _ in 0..n {
                all.extend_from_slice(&q);
            }
            conv.send(true, &all);
            let mut ans = Vec::new();
            for _ in 0..(rng.below(3000)) {
                ans.extend_from_slice(&r);
            }
            conv.send(false, &ans);
            (
                format!("{n} requests, one correlation id"),
                write(&link, &conv.packets, rng),
            )
        }
        6 => {
            // Many short interleaved connections, some IPv6, some on odd ports.
            let mut pk = Vec::new();
            for k in 0..(1 + rng.below(300) as u32) {
                let v6 = rng.chance(3);
                let port = if rng.chance(3) { 7777 } else { 9092 };
                let (cl, sv): (SocketAddr, SocketAddr) = if v6 {
                    (
                        ([0xfd00, 0, 0, 0, 0, 0, 0, 1 + (k as u16)], 30000).into(),
                        ([0xfd00, 0, 0, 0, 0, 0, 0, 0xffff], port).into(),
                    )
                } else {
                    (addr(0x0a00_1000 + k, 30000), addr(0x0a00_0002, port))
                };
                let mut conv = Conversation::new(cl, sv);
                conv.mss = 1 + rng.below(2000) as usize;
                if rng.chance(2) {
                    conv.handshake();
                }
                let (q, r) = exchange(rng, k as i32);
                conv.send(true, &q).send(false, &r);
                if rng.chance(2) {
                    conv.close();
                }
                pk.extend(conv.packets);
            }
            for k in (1..pk.len()).rev() {
                if rng.chance(4) {
                    pk.swap(k, k - 1);
                }
            }
            ("interleaved connections".into(), write(&link, &pk, rng))
        }
        _ => {
            // A normal conversation, then damaged packets (snaplen cuts, bytes).
            let mut conv = Conversation::new(client, server);
            conv.mss = *pick(rng, &[1, 3, 100, 1460, 9000]);
            conv.handshake();
            for corr in 0..(1 + rng.below(20) as i32) {
                let (q, r) = exchange(rng, corr);
                conv.send(true, &q).send(false, &r);
            }
            conv.close();
            let snap = *pick(rng, &[usize::MAX, 128, 60, 54, 14]);
            let recs = testgen::records(&link, &conv.packets, snap);
            let mut p = testgen::pcap(link.linktype(), &recs, false, false, 262_144);
            if rng.chance(2) {
                mutate::bytes(&mut p, rng, 6);
            }
            (format!("snaplen {snap}"), p)
        }
    };
    let mut c = Case::new(what);
    let mut args: Vec<String> = Vec::new();
    if rng.chance(6) {
        args.extend(["stats", "--format", "json"].map(String::from));
        c.out = Out::JsonDoc;
    } else {
        args.push("decode".into());
        decode_output(&mut c, &mut args, rng);
        if rng.chance(4) {
            args.extend(["--port".to_string(), "7777".to_string()]);
        }
    }
    args.push("syn.pcap".into());
    c.file("syn.pcap", pcap).args(args);
    c
}
