//! Link layers, IPv4/IPv6 and the TCP header: from a captured packet to a TCP segment.
//! Ethernet (with 802.1Q / QinQ tags), Linux cooked SLL and SLL2, BSD loopback NULL/LOOP,
//! raw IP. IP fragments and non-TCP packets are skipped: Kafka runs over TCP and real stacks
//! do not fragment TCP.

use crate::diag::Diagnostic;
use crate::wire::cursor::{be_u16_at as be16, be_u32_at as be32};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub(crate) const LINKTYPE_NULL: i32 = 0;
pub(crate) const LINKTYPE_ETHERNET: i32 = 1;
pub(crate) const LINKTYPE_RAW: i32 = 101;
/// DLT_RAW as some BSDs number it in files.
const LINKTYPE_RAW_BSD: i32 = 12;
const LINKTYPE_RAW_BSD2: i32 = 14;
pub(crate) const LINKTYPE_LOOP: i32 = 108;
pub(crate) const LINKTYPE_LINUX_SLL: i32 = 113;
const LINKTYPE_IPV4: i32 = 228;
const LINKTYPE_IPV6: i32 = 229;
pub(crate) const LINKTYPE_LINUX_SLL2: i32 = 276;

pub(crate) const TCP_FIN: u8 = 0x01;
pub(crate) const TCP_SYN: u8 = 0x02;
pub(crate) const TCP_RST: u8 = 0x04;
pub(crate) const TCP_ACK: u8 = 0x10;

/// A TCP segment as captured.
#[derive(Debug)]
pub(crate) struct Segment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// The captured part of the payload.
    pub payload: &'a [u8],
    /// The payload's length on the wire (more than `payload.len()` when the snap length cut it).
    pub wire_len: u32,
}

pub(crate) enum Parsed<'a> {
    Tcp(Segment<'a>),
    /// Not TCP over IP, or too short to tell: skipped silently.
    Other,
    Note(Diagnostic),
}

/// Remembers which link types were already reported as unsupported, to report each once.
#[derive(Default)]
pub(crate) struct LinkState {
    reported: Vec<i32>,
}

pub(crate) fn parse<'a>(linktype: i32, data: &'a [u8], state: &mut LinkState) -> Parsed<'a> {
    let ip = match linktype {
        LINKTYPE_ETHERNET => be16(data, 12).and_then(|t| ethertype(t, data.get(14..)?)),
        LINKTYPE_NULL => {
            // The family is a host-order u32 from the capturing machine: try both orders.
            data.get(4..).and_then(|rest| {
                let le = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
                let be = u32::from_be_bytes(data.get(..4)?.try_into().ok()?);
                bsd_family(le).or_else(|| bsd_family(be)).map(|_| rest)
            })
        }
        LINKTYPE_LOOP => be32(data, 0)
            .and_then(bsd_family)
            .and_then(|_| data.get(4..)),
        LINKTYPE_RAW | LINKTYPE_RAW_BSD | LINKTYPE_RAW_BSD2 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => {
            Some(data)
        }
        LINKTYPE_LINUX_SLL => be16(data, 14).and_then(|t| ethertype(t, data.get(16..)?)),
        LINKTYPE_LINUX_SLL2 => be16(data, 0).and_then(|t| ethertype(t, data.get(20..)?)),
        other => {
            if !state.reported.contains(&other) && state.reported.len() < 64 {
                state.reported.push(other);
                return Parsed::Note(Diagnostic::warning(
                    "unsupported-linktype",
                    "capture",
                    0,
                    format!("link type {other} is not supported (Ethernet, Linux SLL/SLL2, BSD loopback and raw IP are); its packets are skipped"),
                ));
            }
            return Parsed::Other;
        }
    };
    match ip.and_then(ip_tcp) {
        Some(seg) => Parsed::Tcp(seg),
        None => Parsed::Other,
    }
}

fn bsd_family(f: u32) -> Option<()> {
    // AF_INET is 2 everywhere; AF_INET6 is 10 (Linux), 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (macOS).
    matches!(f, 2 | 10 | 24 | 28 | 30).then_some(())
}

/// Follows VLAN tags (802.1Q, 802.1ad QinQ, the old 0x9100) to the IP packet.
fn ethertype(mut t: u16, mut rest: &[u8]) -> Option<&[u8]> {
    for _ in 0..8 {
        match t {
            0x0800 | 0x86dd => return Some(rest),
            0x8100 | 0x88a8 | 0x9100 => {
                t = be16(rest, 2)?;
                rest = rest.get(4..)?;
            }
            _ => return None,
        }
    }
    None
}

fn ip_tcp(d: &[u8]) -> Option<Segment<'_>> {
    match d.first()? >> 4 {
        4 => ipv4(d),
        6 => ipv6(d),
        _ => None,
    }
}

fn ipv4(d: &[u8]) -> Option<Segment<'_>> {
    let ihl = (*d.first()? as usize & 0x0f) * 4;
    if ihl < 20 || *d.get(9)? != 6 {
        return None;
    }
    let total = be16(d, 2)? as usize;
    let frag = be16(d, 6)?;
    if frag & 0x3fff != 0 {
        // A fragment (more-fragments flag or a non-zero offset).
        return None;
    }
    let src = IpAddr::V4(Ipv4Addr::new(
        *d.get(12)?,
        *d.get(13)?,
        *d.get(14)?,
        *d.get(15)?,
    ));
    let dst = IpAddr::V4(Ipv4Addr::new(
        *d.get(16)?,
        *d.get(17)?,
        *d.get(18)?,
        *d.get(19)?,
    ));
    // Total length 0 is what segmentation offload leaves in captured super-packets: trust the capture.
    let wire = if total == 0 { d.len() } else { total };
    let wire_payload = wire.checked_sub(ihl)?;
    let captured = d.get(ihl..d.len().min(wire).max(ihl))?;
    tcp(src, dst, captured, wire_payload)
}

fn ipv6(d: &[u8]) -> Option<Segment<'_>> {
    let plen = be16(d, 4)? as usize;
    let mut next = *d.get(6)?;
    let src: [u8; 16] = d.get(8..24)?.try_into().ok()?;
    let dst: [u8; 16] = d.get(24..40)?.try_into().ok()?;
    let end = d.len().min(40 + plen);
    let mut at = 40usize;
    let mut wire_payload = plen;
    // Extension headers, bounded: a loop of them is malformed, not a reason to spin.
    for _ in 0..16 {
        match next {
            6 => {
                let captured = d.get(at..end.max(at))?;
                return tcp(
                    IpAddr::V6(Ipv6Addr::from(src)),
                    IpAddr::V6(Ipv6Addr::from(dst)),
                    captured,
                    wire_payload,
                );
            }
            0 | 43 | 60 => {
                let len = (*d.get(at + 1)? as usize + 1) * 8;
                next = *d.get(at)?;
                at += len;
                wire_payload = wire_payload.checked_sub(len)?;
            }
            51 => {
                let len = (*d.get(at + 1)? as usize + 2) * 4;
                next = *d.get(at)?;
                at += len;
                wire_payload = wire_payload.checked_sub(len)?;
            }
            44 => {
                let off = be16(d, at + 2)?;
                if off & 0xfff9 != 0 {
                    return None;
                }
                next = *d.get(at)?;
                at += 8;
                wire_payload = wire_payload.checked_sub(8)?;
            }
            _ => return None,
        }
    }
    None
}

fn tcp(src: IpAddr, dst: IpAddr, d: &[u8], wire_len: usize) -> Option<Segment<'_>> {
    let sport = be16(d, 0)?;
    let dport = be16(d, 2)?;
    let seq = be32(d, 4)?;
    let ack = be32(d, 8)?;
    let off = (*d.get(12)? as usize >> 4) * 4;
    let flags = *d.get(13)?;
    if off < 20 || wire_len < off {
        return None;
    }
    let payload = d.get(off..).unwrap_or(&[]);
    let wire_len = u32::try_from(wire_len - off).ok()?;
    let payload = payload
        .get(..payload.len().min(wire_len as usize))
        .unwrap_or(&[]);
    Some(Segment {
        src: SocketAddr::new(src, sport),
        dst: SocketAddr::new(dst, dport),
        seq,
        ack,
        flags,
        payload,
        wire_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_tcp(payload: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let total = (20 + 20 + payload.len()) as u16;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p.extend_from_slice(&[
            0x30, 0x39, 0x23, 0x84, 0, 0, 0, 100, 0, 0, 0, 7, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ]);
        p.extend_from_slice(payload);
        p
    }

    #[test]
    fn ethernet_with_qinq_and_padding() {
        let ip = ipv4_tcp(b"abc");
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x88, 0xa8, 0, 5, 0x81, 0x00, 0, 7, 0x08, 0x00]);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&[0; 9]); // Ethernet padding must not become payload
        let Parsed::Tcp(s) = parse(LINKTYPE_ETHERNET, &f, &mut LinkState::default()) else {
            panic!("not parsed")
        };
        assert_eq!(s.payload, b"abc");
        assert_eq!(
            (s.src.port(), s.dst.port(), s.seq, s.ack),
            (12345, 9092, 100, 7)
        );
    }

    #[test]
    fn snapped_payload_keeps_wire_length() {
        let ip = ipv4_tcp(&[1u8; 100]);
        let Parsed::Tcp(s) = parse(LINKTYPE_RAW, &ip[..60], &mut LinkState::default()) else {
            panic!("not parsed")
        };
        assert_eq!((s.payload.len(), s.wire_len), (20, 100));
        // Cut inside the TCP header: nothing to parse, and no panic.
        assert!(matches!(
            parse(LINKTYPE_RAW, &ip[..30], &mut LinkState::default()),
            Parsed::Other
        ));
    }

    #[test]
    fn every_prefix_of_every_link_type_is_safe() {
        let ip = ipv4_tcp(b"hello");
        let mut sll2 = vec![0x08, 0x00];
        sll2.extend_from_slice(&[0; 18]);
        sll2.extend_from_slice(&ip);
        for lt in [0, 1, 101, 108, 113, 276, 228, 229, 12, 14, 999] {
            for n in 0..sll2.len() {
                let _ = parse(lt, &sll2[..n], &mut LinkState::default());
            }
        }
        let Parsed::Tcp(s) = parse(LINKTYPE_LINUX_SLL2, &sll2, &mut LinkState::default()) else {
            panic!("sll2")
        };
        assert_eq!(s.payload, b"hello");
    }
}
