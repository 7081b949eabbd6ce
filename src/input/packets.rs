//! Hex dumps of whole packets (tshark `-x`, Wireshark "Copy as Hex Dump" of a frame) rather than
//! of Kafka frames: recognised by their link/IP/TCP headers and turned back into a pcap byte
//! stream, so the capture reader does the TCP reassembly, Kafka framing and request/response
//! matching exactly as for a real capture. Timestamps are unknown (zero).

use super::hex::HexReader;
use std::io::{self, BufRead, Read};

/// pcap link types this module recognises.
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LINUX_SLL: u32 = 113;

/// The link type of a packet whose bytes start with a link header (or IP header) carrying TCP,
/// checked against the IP lengths so that a Kafka frame is not mistaken for a packet.
pub fn link_type(p: &[u8]) -> Option<u32> {
    let ip_tcp = |ip: &[u8]| -> bool {
        match ip.first().map(|b| b >> 4) {
            Some(4) => {
                let ihl = (ip[0] & 0x0f) as usize * 4;
                let total = ip
                    .get(2..4)
                    .map(|t| u16::from_be_bytes([t[0], t[1]]) as usize);
                ihl >= 20
                    && ip.get(9) == Some(&6)
                    && total.is_some_and(|t| t >= ihl + 20 && t <= ip.len())
            }
            Some(6) => {
                let plen = ip
                    .get(4..6)
                    .map(|t| u16::from_be_bytes([t[0], t[1]]) as usize);
                ip.get(6) == Some(&6) && plen.is_some_and(|l| l >= 20 && 40 + l <= ip.len())
            }
            _ => false,
        }
    };
    let ethertype = |b: &[u8]| b.len() == 2 && (b == [0x08, 0x00] || b == [0x86, 0xdd]);
    if p.get(12..14).is_some_and(ethertype) && ip_tcp(&p[14..]) {
        return Some(LINKTYPE_ETHERNET);
    }
    if p.get(12..14) == Some(&[0x81, 0x00])
        && p.get(16..18).is_some_and(ethertype)
        && ip_tcp(&p[18..])
    {
        return Some(LINKTYPE_ETHERNET);
    }
    if p.get(14..16).is_some_and(ethertype)
        && p.first().is_some_and(|&t| t == 0)
        && p.get(1).is_some_and(|&t| t <= 4)
        && ip_tcp(&p[16..])
    {
        return Some(LINKTYPE_LINUX_SLL);
    }
    if ip_tcp(p) {
        return Some(LINKTYPE_RAW);
    }
    None
}

/// A pcap file, made on the fly from the blocks of a hex dump of packets.
pub struct PcapFromHex<R: BufRead> {
    hex: HexReader<R>,
    out: Vec<u8>,
    pos: usize,
    done: bool,
}

impl<R: BufRead> PcapFromHex<R> {
    /// `first`: the first block (already read, to detect that the dump holds packets).
    pub fn new(hex: HexReader<R>, first: &[u8], link: u32) -> PcapFromHex<R> {
        let mut out = Vec::with_capacity(24 + 16 + first.len());
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&[0; 8]); // thiszone, sigfigs
        out.extend_from_slice(&(crate::limits::MAX_FRAME_SIZE).to_le_bytes()); // snaplen
        out.extend_from_slice(&link.to_le_bytes());
        let mut me = PcapFromHex {
            hex,
            out,
            pos: 0,
            done: false,
        };
        me.record(first);
        me
    }

    fn record(&mut self, p: &[u8]) {
        let len = p.len() as u32;
        self.out.extend_from_slice(&[0; 8]);
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(p);
    }
}

impl<R: BufRead> Read for PcapFromHex<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.out.len() && !self.done {
            self.out.clear();
            self.pos = 0;
            match self.hex.next_block() {
                Ok(Some(b)) => self.record(&b.data),
                Ok(None) => self.done = true,
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mock-kcat-none.pcap frame 4 as tshark -x printed it (Ethernet, IPv4, TCP, then the
    /// 40-byte ApiVersions request).
    const FRAME4: &str = "0000  00 00 00 00 00 00 00 00 00 00 00 00 08 00 45 00   ..............E.
0010  00 5c ce fd 40 00 40 06 6d 9c 7f 00 00 01 7f 00   .\\..@.@.m.......
0020  00 01 a2 4c 4a 96 35 57 1a 81 31 a4 5a 4a 80 18   ...LJ.5W..1.ZJ..
0030  00 40 fe 50 00 00 01 01 08 0a 9d 2c f5 b0 f5 65   .@.P.......,...e
0040  19 3d 00 00 00 24 00 12 00 03 00 00 00 01 00 07   .=...$..........
0050  72 64 6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61   rdkafka..librdka
0060  66 6b 61 06 32 2e 30 2e 32 00                     fka.2.0.2.
";

    #[test]
    fn recognises_a_packet_but_not_a_kafka_frame() {
        let mut h = HexReader::new(FRAME4.as_bytes());
        let b = h.next_block().unwrap().unwrap();
        assert_eq!(b.data.len(), 0x6a);
        assert_eq!(link_type(&b.data), Some(LINKTYPE_ETHERNET));
        assert_eq!(link_type(&b.data[14..]), Some(LINKTYPE_RAW));
        assert_eq!(link_type(&b.data[0x42..]), None);
    }

    #[test]
    fn pcap_stream_has_header_and_one_record_per_block() {
        let text = format!("{FRAME4}\n{FRAME4}");
        let mut h = HexReader::new(text.as_bytes());
        let first = h.next_block().unwrap().unwrap();
        let mut p = PcapFromHex::new(h, &first.data, LINKTYPE_ETHERNET);
        let mut all = Vec::new();
        p.read_to_end(&mut all).unwrap();
        assert_eq!(all.len(), 24 + 2 * (16 + 0x6a));
        assert_eq!(&all[..4], &[0xd4, 0xc3, 0xb2, 0xa1]);
        assert_eq!(&all[20..24], &[1, 0, 0, 0]);
        assert_eq!(&all[24 + 8..24 + 12], &[0x6a, 0, 0, 0]);
    }
}
