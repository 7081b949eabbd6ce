//! The probe session as a pcap: Ethernet/IPv4 (or IPv6)/TCP headers synthesised around the bytes
//! that really crossed each connection, with their real timestamps and consistent sequence and
//! acknowledgement numbers (handshake, data segments, the peer's ACKs, FIN), so that
//! `kinspect decode` and tshark (`-d tcp.port==PORT,kafka`) reassemble it like a capture.

use super::conn::Transcript;
use crate::capture::testgen::{link_frame, pcap, Link, Record, TcpPacket, ACK, FIN, PSH, SYN};

/// Largest TCP payload per synthesised segment (an IPv4 packet holds at most 65535 bytes).
const SEGMENT: usize = 32 * 1024;

/// The pcap file (microsecond timestamps, Ethernet link type) of `t`.
pub fn pcap_bytes(t: &Transcript) -> Vec<u8> {
    let mut packets = Vec::new();
    for c in &t.conns {
        let (mut cseq, mut sseq) = (0x1000_0000u32, 0x2000_0000u32);
        let mut push = |ts: i64,
                        from_client: bool,
                        flags: u8,
                        payload: &[u8],
                        cseq: &mut u32,
                        sseq: &mut u32| {
            let (src, dst, seq, ack) = if from_client {
                (c.client, c.server, *cseq, *sseq)
            } else {
                (c.server, c.client, *sseq, *cseq)
            };
            // The initial SYN acknowledges nothing.
            let ack = if flags == SYN { 0 } else { ack };
            packets.push(TcpPacket {
                src,
                dst,
                seq,
                ack,
                flags,
                payload: payload.to_vec(),
                ts_ns: ts,
            });
            let adv = payload.len() as u32 + u32::from(flags & (SYN | FIN) != 0);
            if from_client {
                *cseq = cseq.wrapping_add(adv);
            } else {
                *sseq = sseq.wrapping_add(adv);
            }
        };
        let t0 = c.opened_ns;
        push(t0, true, SYN, &[], &mut cseq, &mut sseq);
        push(t0 + 1_000, false, SYN | ACK, &[], &mut cseq, &mut sseq);
        push(t0 + 2_000, true, ACK, &[], &mut cseq, &mut sseq);
        let mut last = t0 + 2_000;
        for ch in &c.chunks {
            let ts = ch.ts_ns.max(last);
            for seg in ch.bytes.chunks(SEGMENT) {
                push(ts, ch.from_client, ACK | PSH, seg, &mut cseq, &mut sseq);
            }
            push(ts + 1_000, !ch.from_client, ACK, &[], &mut cseq, &mut sseq);
            last = ts + 1_000;
        }
        let tc = c.closed_ns.unwrap_or(last).max(last);
        push(tc, true, FIN | ACK, &[], &mut cseq, &mut sseq);
        push(tc + 1_000, false, FIN | ACK, &[], &mut cseq, &mut sseq);
        push(tc + 2_000, true, ACK, &[], &mut cseq, &mut sseq);
    }
    let link = Link::Ethernet;
    let records: Vec<Record> = packets
        .iter()
        .map(|p| {
            let data = link_frame(&link, p);
            Record {
                ts_ns: p.ts_ns,
                orig_len: data.len() as u32,
                data,
                interface: 0,
            }
        })
        .collect();
    pcap(link.linktype(), &records, false, false, 262_144)
}

#[cfg(test)]
mod tests {
    use super::super::conn::{Chunk, ConnRecord};
    use super::*;

    #[test]
    fn a_session_reads_back_as_a_capture_with_both_frames() {
        let t = Transcript {
            conns: vec![ConnRecord {
                client: "127.0.0.1:40000".parse().unwrap(),
                server: "127.0.0.1:9092".parse().unwrap(),
                opened_ns: 1_700_000_000_000_000_000,
                closed_ns: None,
                chunks: vec![
                    Chunk {
                        ts_ns: 1_700_000_000_000_100_000,
                        from_client: true,
                        // ApiVersions v0 request, correlation id 7.
                        bytes: vec![0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0, 0],
                    },
                    Chunk {
                        ts_ns: 1_700_000_000_000_200_000,
                        from_client: false,
                        bytes: vec![0, 0, 0, 10, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0],
                    },
                ],
            }],
        };
        let bytes = pcap_bytes(&t);
        // 3 handshake + 2 × (data + ack) + 3 close packets.
        let n = bytes.len();
        assert!(n > 24 + 10 * 16, "{n}");
        assert_eq!(&bytes[..4], &0xa1b2_c3d4u32.to_le_bytes());
    }
}
