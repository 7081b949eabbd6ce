//! Targets `stream` (bytes as TCP payload, wrapped into a capture by `capture::testgen`) and
//! `pcap` (bytes as a capture file): both run the whole capture pipeline — pcap/pcapng reader,
//! link layers, TCP reassembly, Kafka framing and resync, sessions, the decoder — and check every
//! PDU and note it delivers, then run `kinspect check`'s rules, display filters and fields over
//! them in order ([`check::Conversation`]).

use super::check;
use crate::capture::testgen::{self, Conversation, Link};
use crate::capture::CaptureOptions;
use crate::engine::decoded::{decode_capture, Decoded};
use crate::output::json::write_note;
use std::net::SocketAddr;

/// Control byte of a `stream` input.
/// Bit 0: a TCP handshake precedes the data (else the capture starts mid-stream, so framing must
/// resync). Bit 1: a big-endian u16 follows; the payload is split there, the first part sent by
/// the client and the rest answered by the server. Bits 2-4: segment size (index into
/// [`MSS`]). Bit 5: both sides close with FIN. Bit 6: IPv6. Bit 7: the broker listens on an
/// unusual port, so only content marks the connection as Kafka.
pub const STREAM_HANDSHAKE: u8 = 0x01;
pub const STREAM_BOTH_WAYS: u8 = 0x02;
pub const STREAM_FIN: u8 = 0x20;
pub const STREAM_IPV6: u8 = 0x40;
pub const STREAM_ODD_PORT: u8 = 0x80;

/// Segment sizes a `stream` input chooses from: one byte at a time up to jumbo frames.
pub const MSS: [usize; 8] = [1, 3, 17, 100, 536, 1460, 4096, 9000];

/// Wraps a `stream` input into a pcap file (what [`stream`] reads).
pub fn stream_capture(data: &[u8]) -> Vec<u8> {
    let Some((&ctl, mut rest)) = data.split_first() else {
        return Vec::new();
    };
    let (client, server): (SocketAddr, SocketAddr) =
        match (ctl & STREAM_IPV6 != 0, ctl & STREAM_ODD_PORT != 0) {
            (false, false) => (([10, 0, 0, 1], 41548).into(), ([10, 0, 0, 2], 9092).into()),
            (false, true) => (([10, 0, 0, 1], 41548).into(), ([10, 0, 0, 2], 7777).into()),
            (true, odd) => (
                ([0xfd00, 0, 0, 0, 0, 0, 0, 1], 41548).into(),
                ([0xfd00, 0, 0, 0, 0, 0, 0, 2], if odd { 7777 } else { 9092 }).into(),
            ),
        };
    let mut conv = Conversation::new(client, server);
    conv.mss = MSS[((ctl >> 2) & 7) as usize];
    if ctl & STREAM_HANDSHAKE != 0 {
        conv.handshake();
    }
    let mut answer: &[u8] = &[];
    if ctl & STREAM_BOTH_WAYS != 0 {
        if let Some((at, r)) = rest.split_first_chunk::<2>() {
            let at = (u16::from_be_bytes(*at) as usize).min(r.len());
            (rest, answer) = r.split_at(at);
        }
    }
    conv.send(true, rest);
    if !answer.is_empty() {
        conv.send(false, answer);
    }
    if ctl & STREAM_FIN != 0 {
        conv.close();
    }
    let link = Link::Ethernet;
    let recs = testgen::records(&link, &conv.packets, usize::MAX);
    testgen::pcap(link.linktype(), &recs, false, true, 262_144)
}

/// The `stream` input that sends `client` bytes and answers with `server` bytes, with a
/// handshake, 1460-byte segments and FINs.
pub fn stream_seed(client: &[u8], server: &[u8]) -> Vec<u8> {
    let mut out = vec![STREAM_HANDSHAKE | STREAM_FIN | (5 << 2)];
    if !server.is_empty() {
        out[0] |= STREAM_BOTH_WAYS;
        let n = u16::try_from(client.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(&client[..client.len().min(u16::MAX as usize)]);
    out.extend_from_slice(server);
    out
}

/// Target `stream`: one conversation's bytes through the capture pipeline.
pub fn stream(data: &[u8]) {
    let cap = stream_capture(data);
    if !cap.is_empty() {
        pcap(&cap);
    }
}

/// Target `pcap`: bytes as a capture file. A file that cannot be read at all is an error, not a
/// crash; every PDU and note delivered before must check out.
pub fn pcap(data: &[u8]) {
    let opts = CaptureOptions {
        protocol: Some(crate::protocol::builtin()),
        ..CaptureOptions::default()
    };
    let proto = crate::protocol::builtin();
    let mut pdus = 0u64;
    let mut notes = 0u64;
    let mut conv = check::Conversation::new();
    let result = decode_capture(data, &opts, proto, &mut |d| match d {
        Decoded::Pdu(p) => {
            pdus += 1;
            check::tree(&p.tree, "pcap");
            check::printers(p);
            conv.pdu(p);
        }
        Decoded::Note(origin, diag) => {
            notes += 1;
            conv.note(origin, diag);
            let mut out = Vec::new();
            write_note(&mut out, origin, diag, None).expect("writing to a Vec");
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out) {
                panic!(
                    "note printed as invalid JSON: {e}: {}",
                    String::from_utf8_lossy(&out)
                );
            }
        }
    });
    conv.end(result.as_ref().ok());
    if let Ok(sum) = result {
        assert_eq!(
            (sum.frames, sum.notes),
            (pdus, notes),
            "the summary miscounts what was delivered"
        );
        assert!(
            sum.file_bytes <= data.len() as u64,
            "read {} bytes of a {}-byte file",
            sum.file_bytes,
            data.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sample::Rng;

    /// The `n` smallest captures whole, then cut and damaged: the `pcap` smoke set.
    #[test]
    fn smoke_pcap() {
        let mut rng = Rng::new(0x7063_6170);
        for cap in check::captures(4) {
            pcap(&cap);
            for _ in 0..8 {
                let mut bad = cap.clone();
                check::mutate(&mut bad, &mut rng);
                pcap(&bad);
            }
        }
        pcap(&[]);
        pcap(&[0xd4, 0xc3, 0xb2, 0xa1]);
    }

    /// Real conversations' frames as one stream each way, at every segment size, with and
    /// without a handshake (resync), then damaged: the `stream` smoke set.
    #[test]
    fn smoke_stream() {
        let frames = check::capture_frames(2);
        let (mut client, mut server) = (Vec::new(), Vec::new());
        for (h, f) in &frames {
            match h.direction {
                Some(crate::pdu::Direction::Response) => server.extend_from_slice(f),
                _ => client.extend_from_slice(f),
            }
        }
        client.truncate(6000);
        server.truncate(6000);
        let seed = stream_seed(&client, &server);
        let mut rng = Rng::new(0x7374_7265);
        for ctl in 0..=255u8 {
            let mut input = seed.clone();
            input[0] = ctl;
            if (ctl >> 2) & 7 < 2 {
                // Tiny segments make thousands of packets; a few of these suffice.
                input.truncate(600);
            }
            if ctl % 4 == 1 {
                check::mutate(&mut input, &mut rng);
            }
            stream(&input);
        }
    }
}
