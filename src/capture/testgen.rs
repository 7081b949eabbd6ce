//! Builds capture files for tests and fuzz targets: TCP conversations carrying given Kafka
//! frames (handshake, segmentation, sequence and acknowledgement numbers, FIN), wrapped in a
//! chosen link layer and written as pcap (either byte order, micro or nanoseconds) or pcapng
//! (several interfaces). Tests then reorder, duplicate, drop or cut packets to make what real
//! captures lack.

use std::net::{IpAddr, SocketAddr};

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// Link layers the writer can produce (the link type numbers are tcpdump's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Ethernet,
    /// Ethernet with these VLAN ids, outermost first (two = QinQ, outer tag 0x88a8).
    Vlan(Vec<u16>),
    Sll,
    Sll2,
    /// BSD loopback, family in little-endian host order.
    Null,
    /// OpenBSD loopback, family in network order.
    Loop,
    Raw,
}

impl Link {
    pub fn linktype(&self) -> u32 {
        match self {
            Link::Ethernet | Link::Vlan(_) => 1,
            Link::Sll => 113,
            Link::Sll2 => 276,
            Link::Null => 0,
            Link::Loop => 108,
            Link::Raw => 101,
        }
    }
}

/// One TCP segment to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpPacket {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: Vec<u8>,
    pub ts_ns: i64,
}

/// The bytes of one packet at the link layer.
pub fn link_frame(link: &Link, p: &TcpPacket) -> Vec<u8> {
    let ip = ip_packet(p);
    let v6 = matches!(p.src.ip(), IpAddr::V6(_));
    let ethertype: u16 = if v6 { 0x86dd } else { 0x0800 };
    let mut f = Vec::with_capacity(ip.len() + 24);
    match link {
        Link::Ethernet => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        Link::Vlan(ids) => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
            for (i, id) in ids.iter().enumerate() {
                let tpid: u16 = if i == 0 && ids.len() > 1 {
                    0x88a8
                } else {
                    0x8100
                };
                f.extend_from_slice(&tpid.to_be_bytes());
                f.extend_from_slice(&(id & 0x0fff).to_be_bytes());
            }
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        Link::Sll => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        Link::Sll2 => {
            f.extend_from_slice(&ethertype.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        Link::Null => f.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes()),
        Link::Loop => f.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        Link::Raw => {}
    }
    f.extend_from_slice(&ip);
    f
}

fn ip_packet(p: &TcpPacket) -> Vec<u8> {
    let mut tcp = Vec::with_capacity(20 + p.payload.len());
    tcp.extend_from_slice(&p.src.port().to_be_bytes());
    tcp.extend_from_slice(&p.dst.port().to_be_bytes());
    tcp.extend_from_slice(&p.seq.to_be_bytes());
    tcp.extend_from_slice(&p.ack.to_be_bytes());
    tcp.extend_from_slice(&[0x50, p.flags, 0xff, 0xff, 0, 0, 0, 0]);
    tcp.extend_from_slice(&p.payload);
    let mut ip = Vec::with_capacity(40 + tcp.len());
    match (p.src.ip(), p.dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (20 + tcp.len()) as u16;
            ip.extend_from_slice(&[0x45, 0]);
            ip.extend_from_slice(&total.to_be_bytes());
            ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
            ip.extend_from_slice(&s.octets());
            ip.extend_from_slice(&d.octets());
        }
        (s, d) => {
            let to16 = |a: IpAddr| match a {
                IpAddr::V6(a) => a.octets(),
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            };
            ip.extend_from_slice(&[0x60, 0, 0, 0]);
            ip.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
            ip.extend_from_slice(&[6, 64]);
            ip.extend_from_slice(&to16(s));
            ip.extend_from_slice(&to16(d));
        }
    }
    ip.extend_from_slice(&tcp);
    ip
}

/// A TCP conversation between a client and a server, built segment by segment.
pub struct Conversation {
    pub client: SocketAddr,
    pub server: SocketAddr,
    client_seq: u32,
    server_seq: u32,
    pub ts_ns: i64,
    /// Largest payload per segment.
    pub mss: usize,
    pub packets: Vec<TcpPacket>,
}

impl Conversation {
    /// Starts a conversation; the sequence numbers start near the top of the space so that
    /// wrap-around is exercised.
    pub fn new(client: SocketAddr, server: SocketAddr) -> Self {
        Conversation {
            client,
            server,
            client_seq: 0xffff_f000,
            server_seq: 0x7fff_fff0,
            ts_ns: 1_714_557_600_000_000_000,
            mss: 1460,
            packets: Vec::new(),
        }
    }

    fn push(&mut self, from_client: bool, flags: u8, payload: &[u8]) {
        self.ts_ns += 1_000;
        let (src, dst, seq, ack) = if from_client {
            (self.client, self.server, self.client_seq, self.server_seq)
        } else {
            (self.server, self.client, self.server_seq, self.client_seq)
        };
        self.packets.push(TcpPacket {
            src,
            dst,
            seq,
            ack,
            flags,
            payload: payload.to_vec(),
            ts_ns: self.ts_ns,
        });
        let advance = payload.len() as u32 + u32::from(flags & (SYN | FIN) != 0);
        if from_client {
            self.client_seq = self.client_seq.wrapping_add(advance);
        } else {
            self.server_seq = self.server_seq.wrapping_add(advance);
        }
    }

    /// SYN, SYN+ACK, ACK.
    pub fn handshake(&mut self) -> &mut Self {
        self.push(true, SYN, &[]);
        self.push(false, SYN | ACK, &[]);
        self.push(true, ACK, &[]);
        self
    }

    /// Sends bytes from one side, cut into segments of at most `mss` bytes, and the peer's ACK.
    pub fn send(&mut self, from_client: bool, bytes: &[u8]) -> &mut Self {
        for chunk in bytes.chunks(self.mss.max(1)) {
            self.push(from_client, ACK | PSH, chunk);
        }
        self.push(!from_client, ACK, &[]);
        self
    }

    /// One segment without payload from one side: how that side ends the connection (FIN,
    /// RST), with ACK or not.
    pub fn flags(&mut self, from_client: bool, flags: u8) -> &mut Self {
        self.push(from_client, flags, &[]);
        self
    }

    /// FIN from both sides.
    pub fn close(&mut self) -> &mut Self {
        self.push(true, FIN | ACK, &[]);
        self.push(false, FIN | ACK, &[]);
        self.push(true, ACK, &[]);
        self
    }
}

/// A packet as written to a file: the link-layer bytes (possibly cut) and the original length.
#[derive(Clone, Debug)]
pub struct Record {
    pub ts_ns: i64,
    pub data: Vec<u8>,
    pub orig_len: u32,
    /// pcapng only: the interface it was captured on.
    pub interface: u32,
}

/// Wraps packets in a link layer, cutting each to `snaplen` bytes.
pub fn records(link: &Link, packets: &[TcpPacket], snaplen: usize) -> Vec<Record> {
    packets
        .iter()
        .map(|p| {
            let mut data = link_frame(link, p);
            let orig_len = data.len() as u32;
            data.truncate(snaplen);
            Record {
                ts_ns: p.ts_ns,
                data,
                orig_len,
                interface: 0,
            }
        })
        .collect()
}

/// A classic pcap file.
pub fn pcap(
    linktype: u32,
    records: &[Record],
    big_endian: bool,
    nanos: bool,
    snaplen: u32,
) -> Vec<u8> {
    let u32b = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut out = Vec::new();
    out.extend_from_slice(&u32b(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
    out.extend_from_slice(&u16b(2));
    out.extend_from_slice(&u16b(4));
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&u32b(snaplen));
    out.extend_from_slice(&u32b(linktype));
    for r in records {
        let secs = r.ts_ns.div_euclid(1_000_000_000) as u32;
        let frac = r.ts_ns.rem_euclid(1_000_000_000) as u32;
        out.extend_from_slice(&u32b(secs));
        out.extend_from_slice(&u32b(if nanos { frac } else { frac / 1000 }));
        out.extend_from_slice(&u32b(r.data.len() as u32));
        out.extend_from_slice(&u32b(r.orig_len));
        out.extend_from_slice(&r.data);
    }
    out
}

fn pad4(v: &mut Vec<u8>) {
    while v.len() % 4 != 0 {
        v.push(0);
    }
}

fn ng_block(out: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let len = (12 + body.len()) as u32;
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&len.to_le_bytes());
}

/// A little-endian pcapng file with one section; `interfaces` gives each interface's link type
/// and `if_tsresol` (6 = microseconds, 9 = nanoseconds). Timestamps are written at each
/// interface's resolution.
pub fn pcapng(interfaces: &[(u32, u8)], records: &[Record]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    ng_block(&mut out, 0x0a0d_0d0a, &shb);
    for (linktype, tsresol) in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&(*linktype as u16).to_le_bytes());
        idb.extend_from_slice(&[0, 0]);
        idb.extend_from_slice(&0u32.to_le_bytes());
        // if_tsresol option (code 9, length 1), then opt_endofopt.
        idb.extend_from_slice(&[9, 0, 1, 0, *tsresol, 0, 0, 0, 0, 0, 0, 0]);
        ng_block(&mut out, 1, &idb);
    }
    for r in records {
        let resol = interfaces
            .get(r.interface as usize)
            .map(|i| i.1)
            .unwrap_or(6);
        let per_sec = 10u64.pow(u32::from(resol.min(9)));
        let ticks = (r.ts_ns.max(0) as u64 / 1_000_000_000) * per_sec
            + (r.ts_ns.max(0) as u64 % 1_000_000_000) * per_sec / 1_000_000_000;
        let mut epb = Vec::new();
        epb.extend_from_slice(&r.interface.to_le_bytes());
        epb.extend_from_slice(&((ticks >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ticks as u32).to_le_bytes());
        epb.extend_from_slice(&(r.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&r.orig_len.to_le_bytes());
        epb.extend_from_slice(&r.data);
        pad4(&mut epb);
        ng_block(&mut out, 6, &epb);
    }
    out
}

/// A little-endian pcapng file whose packets are simple packet blocks (no timestamps, one
/// interface with the given link type and snap length).
pub fn pcapng_simple(linktype: u32, snaplen: u32, records: &[Record]) -> Vec<u8> {
    let mut out = pcapng(&[], &[]);
    let mut idb = Vec::new();
    idb.extend_from_slice(&(linktype as u16).to_le_bytes());
    idb.extend_from_slice(&[0, 0]);
    idb.extend_from_slice(&snaplen.to_le_bytes());
    ng_block(&mut out, 1, &idb);
    for r in records {
        let mut spb = Vec::new();
        spb.extend_from_slice(&r.orig_len.to_le_bytes());
        spb.extend_from_slice(&r.data);
        pad4(&mut spb);
        ng_block(&mut out, 3, &spb);
    }
    out
}
