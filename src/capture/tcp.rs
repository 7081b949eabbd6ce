//! TCP connections: the connection table (bounded), which side is the client, whether a
//! connection carries Kafka, and in-order reassembly per direction (out-of-order segments held
//! up to a bound, retransmissions and overlaps trimmed, gaps declared when the peer acknowledges
//! bytes never captured, when the hold bound is hit, or when the stream ends).
//!
//! The client is the side that sent the SYN, else the side talking to a known broker port, else
//! the side whose bytes are Kafka requests answered by the other (`detect`): never the side
//! with the higher port.

use super::conv::{looks_like_request, looks_like_tls, Conversation, Ending, FlowView};
use super::detect::{pending_cost, Detector, Pending, Verdict};
use super::framing::{Framer, Plausible};
use super::link::{Segment, TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN};
use super::pcap::Packet;
use super::{CaptureOptions, Counter, NOT_KAFKA};
use crate::diag::Diagnostic;
use crate::limits::{
    MAX_CONNECTIONS, MAX_DETECTION_BYTES, MAX_DETECTION_BYTES_TOTAL, MAX_REASSEMBLY_BUFFER,
};
use crate::pdu::{Conn, Direction, Origin};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// Segments a connection whose client is known but whose purpose is not may carry before it is
/// judged not to be Kafka.
const DETECTION_SEGMENTS: u8 = 8;

/// `not-kafka` notes given one by one; past this (a busy host's capture can hold thousands of
/// other connections) one more note says the rest are only counted in the summary.
const MAX_NOT_KAFKA_NOTES: u64 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unknown { tries: u8 },
    Kafka,
    Tls,
    NotKafka,
}

struct Held {
    data: Vec<u8>,
    wire_len: u32,
    frame: u64,
    ts: i64,
}

/// One direction of a connection.
struct Flow {
    /// Sequence number of stream offset 0, once known.
    base: Option<u32>,
    /// Whether the stream's first byte was seen (SYN observed).
    from_start: bool,
    /// Stream offset of the next byte expected.
    next: u64,
    held: BTreeMap<u64, Held>,
    held_bytes: usize,
    /// Highest stream offset the peer acknowledged.
    acked: u64,
    /// The capture frame (and time) of this flow's first FIN.
    fin: Option<(u64, i64)>,
    /// Bytes dropped before this flow was known to be Kafka.
    dropped: u64,
    framer: Option<Framer>,
}

impl Flow {
    fn new() -> Self {
        Flow {
            base: None,
            from_start: false,
            next: 0,
            held: BTreeMap::new(),
            held_bytes: 0,
            acked: 0,
            fin: None,
            dropped: 0,
            framer: None,
        }
    }

    /// Stream offset of sequence number `seq`, near `next`.
    fn offset_of(&self, seq: u32) -> Option<u64> {
        let base = self.base?;
        let next_seq = base.wrapping_add(self.next as u32);
        let delta = seq.wrapping_sub(next_seq) as i32 as i64;
        u64::try_from(self.next as i64 + delta).ok()
    }
}

struct Connection {
    stream: u32,
    /// The two endpoints; `flows[0]` carries a→b.
    a: SocketAddr,
    b: SocketAddr,
    client_is_a: Option<bool>,
    kind: Kind,
    flows: [Flow; 2],
    conv: Conversation,
    /// Evidence and kept segments while neither a SYN nor a port says which side is the client.
    detect: Option<Box<Detector>>,
    /// Payload bytes seen in both directions (on the wire).
    bytes: u64,
    last_frame: u64,
    last_ts: i64,
    closed: bool,
}

impl Connection {
    fn conn(&self) -> Conn {
        let (client, server) = if self.client_is_a == Some(false) {
            (self.b, self.a)
        } else {
            (self.a, self.b)
        };
        Conn {
            client,
            server,
            stream: self.stream,
        }
    }
}

/// Counts over every connection, and the detection bytes kept by all of them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Totals {
    pub connections: u64,
    pub kafka: u64,
    /// Connections that carried data but were not recognised as Kafka, and their bytes.
    pub not_kafka: u64,
    pub not_kafka_bytes: u64,
    pending_bytes: usize,
}

pub(crate) struct Tracker<'o> {
    opts: &'o CaptureOptions,
    conns: HashMap<(SocketAddr, SocketAddr), Connection>,
    next_stream: u32,
    totals: Totals,
}

impl<'o> Tracker<'o> {
    pub(crate) fn new(opts: &'o CaptureOptions) -> Self {
        Tracker {
            opts,
            conns: HashMap::new(),
            next_stream: 0,
            totals: Totals::default(),
        }
    }

    pub(crate) fn totals(&self) -> Totals {
        Totals {
            connections: self.next_stream as u64,
            ..self.totals
        }
    }

    pub(crate) fn on_segment(&mut self, seg: &Segment<'_>, p: &Packet<'_>, out: &mut Counter<'_>) {
        let key = if seg.src <= seg.dst {
            (seg.src, seg.dst)
        } else {
            (seg.dst, seg.src)
        };
        let syn_only = seg.flags & (TCP_SYN | TCP_ACK) == TCP_SYN;
        let reopen = syn_only
            && self.conns.get(&key).is_some_and(|c| {
                let f = &c.flows[if seg.src == c.a { 0 } else { 1 }];
                c.closed || f.base.is_some_and(|b| b != seg.seq.wrapping_add(1))
            });
        if reopen {
            if let Some(mut old) = self.conns.remove(&key) {
                let how = Ending::Reopened {
                    frame: p.frame,
                    ts_ns: p.ts_ns,
                };
                finish_conn(&mut old, how, self.opts, &mut self.totals, out);
            }
        }
        if !self.conns.contains_key(&key) {
            if self.conns.len() >= MAX_CONNECTIONS {
                self.evict(p.frame, out);
            }
            let c = Connection {
                stream: self.next_stream,
                a: key.0,
                b: key.1,
                client_is_a: None,
                kind: Kind::Unknown { tries: 0 },
                flows: [Flow::new(), Flow::new()],
                conv: Conversation::default(),
                detect: None,
                bytes: 0,
                last_frame: p.frame,
                last_ts: p.ts_ns,
                closed: false,
            };
            self.next_stream = self.next_stream.saturating_add(1);
            self.conns.insert(key, c);
        }
        let Some(c) = self.conns.get_mut(&key) else {
            return;
        };
        c.last_frame = p.frame;
        c.last_ts = p.ts_ns;
        if c.closed {
            return;
        }
        c.bytes += seg.wire_len as u64;
        let fi = if seg.src == c.a { 0 } else { 1 };
        if seg.flags & TCP_SYN != 0 {
            let f = &mut c.flows[fi];
            // A retransmitted SYN must not rewind a stream already under way.
            if f.base.is_none() {
                f.base = Some(seg.seq.wrapping_add(1));
                f.from_start = true;
            }
            if c.client_is_a.is_none() {
                // SYN alone comes from the client, SYN+ACK from the server.
                let sender_is_client = seg.flags & TCP_ACK == 0;
                c.client_is_a = Some((fi == 0) == sender_is_client);
            }
        }
        if c.client_is_a.is_none() {
            let (pa, pb) = (c.a.port(), c.b.port());
            // Only a known broker port counts: which port is higher says nothing (clients
            // connect from any port behind NAT, in containers, in test harnesses). Without a
            // port, `detect` decides from the bytes.
            match (self.opts.is_kafka_port(pa), self.opts.is_kafka_port(pb)) {
                (false, true) => c.client_is_a = Some(true),
                (true, false) => c.client_is_a = Some(false),
                _ => {}
            }
        }
        let mut kept = false;
        if seg.wire_len > 0 || seg.flags & TCP_FIN != 0 {
            if c.flows[fi].base.is_none() {
                c.flows[fi].base = Some(seg.seq);
            }
            if seg.wire_len > 0 && matches!(c.kind, Kind::Unknown { .. }) {
                if c.client_is_a.is_none() && !looks_like_tls(seg.payload) {
                    kept = detect(c, fi, seg, p, self.opts, &mut self.totals, out);
                } else if classify(c, fi, seg, self.opts, &mut self.totals, p, out) {
                    self.totals.kafka += 1;
                }
            }
        }
        if c.kind == Kind::Kafka && !kept {
            if seg.wire_len > 0 {
                accept(c, fi, seg, p, self.opts, out);
            }
            if seg.flags & TCP_ACK != 0 {
                acknowledge(c, 1 - fi, seg.ack, p, self.opts, out);
            }
        } else if !kept && seg.wire_len > 0 && matches!(c.kind, Kind::Unknown { .. }) {
            // Not yet known to be Kafka (and not kept for replay): the bytes are dropped but the
            // stream position moves on.
            let f = &mut c.flows[fi];
            f.dropped += seg.wire_len as u64;
            if let Some(o) = f.offset_of(seg.seq) {
                f.next = f.next.max(o + seg.wire_len as u64);
            }
        }
        if seg.flags & TCP_FIN != 0 {
            c.flows[fi].fin.get_or_insert((p.frame, p.ts_ns));
        }
        if seg.flags & TCP_RST != 0 {
            let how = Ending::Reset {
                by_client: direction_of(c, fi) == Some(Direction::Request),
                frame: p.frame,
                ts_ns: p.ts_ns,
            };
            finish_conn(c, how, self.opts, &mut self.totals, out);
        } else if let Some(how) =
            closed_by_fin(c).filter(|_| c.flows.iter().all(|f| f.fin.is_some()))
        {
            finish_conn(c, how, self.opts, &mut self.totals, out);
        }
    }

    /// Flushes and forgets the least recently active eighth of the table.
    fn evict(&mut self, frame: u64, out: &mut Counter<'_>) {
        let mut ages: Vec<(u64, (SocketAddr, SocketAddr))> =
            self.conns.iter().map(|(k, c)| (c.last_frame, *k)).collect();
        ages.sort_unstable();
        let n = (ages.len() / 8).max(1);
        for (_, k) in ages.into_iter().take(n) {
            if let Some(mut c) = self.conns.remove(&k) {
                finish_conn(&mut c, Ending::Evicted, self.opts, &mut self.totals, out);
            }
        }
        out.note(
            Origin { frame: Some(frame), ..Origin::default() },
            Diagnostic::warning(
                "connections-evicted",
                "capture",
                0,
                format!("more than {MAX_CONNECTIONS} TCP connections at once; the {n} least recently active were closed early"),
            ),
        );
    }

    /// The capture ended: every open stream is flushed.
    pub(crate) fn finish(&mut self, out: &mut Counter<'_>) {
        let mut all: Vec<Connection> = self.conns.drain().map(|(_, c)| c).collect();
        all.sort_by_key(|c| c.stream);
        for c in all.iter_mut() {
            finish_conn(c, Ending::CaptureEnded, self.opts, &mut self.totals, out);
        }
    }
}

/// Decides whether a connection carries Kafka from its first payload; returns true when it
/// has just been recognised.
fn classify(
    c: &mut Connection,
    fi: usize,
    seg: &Segment<'_>,
    opts: &CaptureOptions,
    totals: &mut Totals,
    p: &Packet<'_>,
    out: &mut Counter<'_>,
) -> bool {
    let Kind::Unknown { tries } = c.kind else {
        return false;
    };
    let on_port = opts.is_kafka_port(c.a.port()) || opts.is_kafka_port(c.b.port());
    if looks_like_tls(seg.payload) {
        c.kind = Kind::Tls;
        forget_detection(c, totals);
        if on_port {
            let conn = c.conn();
            out.note(
                Origin { frame: Some(p.frame), ts_ns: Some(p.ts_ns), conn: Some(conn), ..Origin::default() },
                Diagnostic::info("tls", "capture", 0, "this connection to a Kafka port carries TLS: its Kafka traffic is encrypted and is not decoded"),
            );
        }
        return false;
    }
    // A connection whose client is not known is `detect`'s.
    let Some(client_is_a) = c.client_is_a else {
        return false;
    };
    let sender_is_client = client_is_a == (fi == 0);
    if on_port
        || (sender_is_client && looks_like_request(seg.payload, opts, true) == Plausible::Yes)
    {
        c.kind = Kind::Kafka;
    } else if c.flows[fi].from_start && sender_is_client {
        // The client's first bytes are not a Kafka request: some other protocol.
        c.kind = Kind::NotKafka;
    } else if tries + 1 >= DETECTION_SEGMENTS {
        c.kind = Kind::NotKafka;
    } else {
        c.kind = Kind::Unknown { tries: tries + 1 };
    }
    c.kind == Kind::Kafka
}

/// Offers a segment of a connection whose client is not known to its detector, keeping it for
/// replay; settles the connection when the evidence (or a bound) says so. Returns whether the
/// segment was kept (and so has already been replayed if the connection became Kafka).
fn detect(
    c: &mut Connection,
    fi: usize,
    seg: &Segment<'_>,
    p: &Packet<'_>,
    opts: &CaptureOptions,
    totals: &mut Totals,
    out: &mut Counter<'_>,
) -> bool {
    let det = c.detect.get_or_insert_with(Box::default);
    let mut verdict = det.offer(fi, seg.payload, opts);
    let cost = pending_cost(seg.payload.len());
    let fits = det.bytes + cost <= MAX_DETECTION_BYTES
        && totals.pending_bytes + cost <= MAX_DETECTION_BYTES_TOTAL;
    let kept = fits && verdict != Verdict::NotKafka;
    if kept {
        det.pending.push(Pending {
            fi,
            seq: seg.seq,
            ack: seg.ack,
            flags: seg.flags,
            wire_len: seg.wire_len,
            data: seg.payload.to_vec(),
            frame: p.frame,
            ts_ns: p.ts_ns,
        });
        det.bytes += cost;
        totals.pending_bytes += cost;
    } else if verdict == Verdict::Wait {
        verdict = det.fallback();
    }
    settle(c, verdict, opts, totals, out);
    kept
}

/// Applies a detector's verdict: a Kafka connection gets its client and its kept segments
/// replayed through reassembly in arrival order, as if it had been recognised at once.
fn settle(
    c: &mut Connection,
    verdict: Verdict,
    opts: &CaptureOptions,
    totals: &mut Totals,
    out: &mut Counter<'_>,
) {
    match verdict {
        Verdict::Wait => {}
        Verdict::NotKafka => {
            c.kind = Kind::NotKafka;
            forget_detection(c, totals);
        }
        Verdict::ClientIs(client) => {
            c.kind = Kind::Kafka;
            c.client_is_a = Some(client == 0);
            totals.kafka += 1;
            let Some(det) = c.detect.take() else { return };
            totals.pending_bytes -= det.bytes;
            let (a, b) = (c.a, c.b);
            for k in det.pending {
                let (src, dst) = if k.fi == 0 { (a, b) } else { (b, a) };
                let seg = Segment {
                    src,
                    dst,
                    seq: k.seq,
                    ack: k.ack,
                    flags: k.flags,
                    payload: &k.data,
                    wire_len: k.wire_len,
                };
                let p = Packet {
                    frame: k.frame,
                    ts_ns: k.ts_ns,
                    linktype: 0,
                    data: &[],
                };
                accept(c, k.fi, &seg, &p, opts, out);
                if k.flags & TCP_ACK != 0 {
                    acknowledge(c, 1 - k.fi, k.ack, &p, opts, out);
                }
            }
        }
    }
}

fn forget_detection(c: &mut Connection, totals: &mut Totals) {
    if let Some(det) = c.detect.take() {
        totals.pending_bytes -= det.bytes;
    }
}

fn direction_of(c: &Connection, fi: usize) -> Option<Direction> {
    c.client_is_a.map(|a| {
        if a == (fi == 0) {
            Direction::Request
        } else {
            Direction::Response
        }
    })
}

/// Runs `f` with the flow's framer and a view of the connection for it.
fn with_framer(
    c: &mut Connection,
    fi: usize,
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
    f: impl FnOnce(&mut Framer, &mut FlowView<'_, '_>),
) {
    let Some(direction) = direction_of(c, fi) else {
        return;
    };
    let conn = c.conn();
    let flow = &mut c.flows[fi];
    let framer = flow.framer.get_or_insert_with(|| {
        Framer::new(
            flow.next,
            flow.from_start && flow.dropped == 0 && flow.next == 0,
        )
    });
    let mut view = FlowView {
        conv: &mut c.conv,
        out,
        opts,
        conn,
        direction,
    };
    f(framer, &mut view);
}

/// Delivers the captured bytes of a segment that starts at the flow's next offset.
fn deliver(
    c: &mut Connection,
    fi: usize,
    data: &[u8],
    wire_len: u64,
    (frame, ts): (u64, i64),
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
) {
    let captured = (data.len() as u64).min(wire_len);
    with_framer(c, fi, opts, out, |fr, v| {
        fr.push(&data[..captured as usize], frame, ts, v);
        if wire_len > captured {
            fr.gap(wire_len - captured, frame, ts, v);
        }
    });
    c.flows[fi].next += wire_len;
}

/// Takes an in-order or out-of-order segment of a Kafka connection.
fn accept(
    c: &mut Connection,
    fi: usize,
    seg: &Segment<'_>,
    p: &Packet<'_>,
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
) {
    let Some(off) = c.flows[fi].offset_of(seg.seq) else {
        return;
    };
    let wire = seg.wire_len as u64;
    let cost = held_cost(seg.payload.len());
    let mut reported = false;
    // Iterative, not recursive: hostile captures can hold a great many separate holes.
    loop {
        let next = c.flows[fi].next;
        if off + wire <= next {
            return; // a retransmission of bytes already delivered
        }
        if off <= next {
            // In order, or overlapping what was delivered: keep only what is new.
            let skip = (next - off) as usize;
            let data = seg.payload.get(skip..).unwrap_or(&[]);
            deliver(
                c,
                fi,
                data,
                wire - skip as u64,
                (p.frame, p.ts_ns),
                opts,
                out,
            );
            drain_held(c, fi, opts, out);
            return;
        }
        let f = &c.flows[fi];
        let Some(&first) = f.held.keys().next() else {
            break;
        };
        if f.held_bytes + cost <= MAX_REASSEMBLY_BUFFER {
            break;
        }
        // Too much waits behind the oldest hole: declare it lost and try again.
        if !reported {
            reported = true;
            let conn = c.conn();
            out.note(
                Origin { frame: Some(p.frame), ts_ns: Some(p.ts_ns), conn: Some(conn), stream_offset: Some(next), ..Origin::default() },
                Diagnostic::warning(
                    "reassembly-overflow",
                    "capture",
                    next,
                    format!("more than {MAX_REASSEMBLY_BUFFER} bytes wait for a missing segment at stream offset {next}; it is declared lost"),
                ),
            );
        }
        declare_gap(c, fi, first.min(off), p, opts, out);
        drain_held(c, fi, opts, out);
    }
    let next = c.flows[fi].next;
    let f = &mut c.flows[fi];
    // A segment held twice (retransmitted before the hole filled) keeps its longest copy.
    if f.held.get(&off).is_none_or(|h| h.wire_len < seg.wire_len) {
        if let Some(old) = f.held.insert(
            off,
            Held {
                data: seg.payload.to_vec(),
                wire_len: seg.wire_len,
                frame: p.frame,
                ts: p.ts_ns,
            },
        ) {
            f.held_bytes -= held_cost(old.data.len());
        }
        f.held_bytes += cost;
    }
    // The peer already acknowledged past the hole: those bytes exist but were not captured.
    if f.acked > next {
        let upto = f.acked.min(off);
        declare_gap(c, fi, upto, p, opts, out);
        drain_held(c, fi, opts, out);
    }
}

/// What a held segment counts against `MAX_REASSEMBLY_BUFFER`: its bytes plus the map entry
/// and allocation that hold them, so a flood of 1-byte segments is bounded too.
fn held_cost(payload: usize) -> usize {
    payload + 64
}

/// Delivers held segments that have become in order.
fn drain_held(c: &mut Connection, fi: usize, opts: &CaptureOptions, out: &mut Counter<'_>) {
    loop {
        let f = &mut c.flows[fi];
        let Some((&off, _)) = f.held.iter().next() else {
            return;
        };
        if off > f.next {
            return;
        }
        let Some(h) = f.held.remove(&off) else { return };
        f.held_bytes -= held_cost(h.data.len());
        let next = f.next;
        let wire = h.wire_len as u64;
        if off + wire <= next {
            continue;
        }
        let skip = (next - off) as usize;
        let data = h.data.get(skip..).unwrap_or(&[]);
        deliver(c, fi, data, wire - skip as u64, (h.frame, h.ts), opts, out);
    }
}

/// Bytes from the flow's next offset up to `upto` will never be seen.
fn declare_gap(
    c: &mut Connection,
    fi: usize,
    upto: u64,
    p: &Packet<'_>,
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
) {
    let next = c.flows[fi].next;
    if upto <= next {
        return;
    }
    let len = upto - next;
    let conn = c.conn();
    if direction_of(c, fi) == Some(Direction::Response) {
        c.conv.responses_lost();
    }
    let dir = direction_of(c, fi).map(|d| d.as_str()).unwrap_or("unknown");
    out.note(
        Origin {
            frame: Some(p.frame),
            ts_ns: Some(p.ts_ns),
            conn: Some(conn),
            stream_offset: Some(next),
            ..Origin::default()
        },
        Diagnostic::warning(
            "gap",
            format!("capture.{dir}"),
            next,
            format!("{len} byte(s) of the {dir} stream from offset {next} were never captured"),
        ),
    );
    with_framer(c, fi, opts, out, |fr, v| fr.gap(len, p.frame, p.ts_ns, v));
    c.flows[fi].next = upto;
}

/// The peer acknowledged `ack` on flow `fi`: a hole below it is capture loss.
fn acknowledge(
    c: &mut Connection,
    fi: usize,
    ack: u32,
    p: &Packet<'_>,
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
) {
    let Some(acked) = c.flows[fi].offset_of(ack) else {
        return;
    };
    let f = &mut c.flows[fi];
    if acked > f.acked {
        f.acked = acked;
    }
    if let Some(&first) = f.held.keys().next() {
        if acked > f.next {
            declare_gap(c, fi, first.min(acked), p, opts, out);
            drain_held(c, fi, opts, out);
        }
    }
}

/// The flow has ended: holes before held segments are gaps.
fn flush_held(
    c: &mut Connection,
    fi: usize,
    p: &Packet<'_>,
    opts: &CaptureOptions,
    out: &mut Counter<'_>,
) {
    while let Some(&first) = c.flows[fi].held.keys().next() {
        declare_gap(c, fi, first, p, opts, out);
        drain_held(c, fi, opts, out);
    }
}

/// The connection as closed by the side whose FIN came first, when either sent one.
fn closed_by_fin(c: &Connection) -> Option<Ending> {
    let (fi, (frame, ts_ns)) = match (c.flows[0].fin, c.flows[1].fin) {
        (Some(a), Some(b)) if b.0 < a.0 => (1, b),
        (Some(a), _) => (0, a),
        (None, Some(b)) => (1, b),
        (None, None) => return None,
    };
    Some(Ending::Closed {
        by_client: direction_of(c, fi) == Some(Direction::Request),
        frame,
        ts_ns,
    })
}

fn finish_conn(
    c: &mut Connection,
    how: Ending,
    opts: &CaptureOptions,
    totals: &mut Totals,
    out: &mut Counter<'_>,
) {
    if c.closed {
        return;
    }
    c.closed = true;
    if let Some(det) = &c.detect {
        // No more evidence will come.
        let verdict = det.fallback();
        settle(c, verdict, opts, totals, out);
    }
    if c.kind != Kind::Kafka {
        not_kafka(c, opts, totals, out);
        return;
    }
    for fi in 0..2 {
        let last = c.flows[fi].held.values().last().map(|h| (h.frame, h.ts));
        if let Some((frame, ts)) = last {
            let p = Packet {
                frame,
                ts_ns: ts,
                linktype: 0,
                data: &[],
            };
            flush_held(c, fi, &p, opts, out);
        }
        with_framer(c, fi, opts, out, |fr, v| fr.finish(v));
        let f = &mut c.flows[fi];
        f.framer = None;
        f.held.clear();
        f.held_bytes = 0;
    }
    // A side that sent its FIN ended the conversation, whatever ended the connection later
    // (the other side's FIN, eviction, the end of the capture).
    let how = match how {
        Ending::Reset { .. } => how,
        _ => closed_by_fin(c).unwrap_or(how),
    };
    if let Some(diag) = c.conv.unanswered(how, opts.protocol) {
        let (frame, ts_ns) = how.at().unwrap_or((c.last_frame, c.last_ts));
        let origin = Origin {
            frame: Some(frame),
            ts_ns: Some(ts_ns),
            conn: Some(c.conn()),
            ..Origin::default()
        };
        out.note(origin, diag);
    }
    // A closed connection stays in the table (so late packets do not start a new stream) but
    // keeps nothing that grows.
    c.conv = Conversation::default();
}

/// A connection that carried data but was not recognised as Kafka is said so, with a hint: a
/// broker on a port kinspect does not know, whose first bytes were not captured, is found with
/// `--port`.
fn not_kafka(c: &Connection, opts: &CaptureOptions, totals: &mut Totals, out: &mut Counter<'_>) {
    let on_port = opts.is_kafka_port(c.a.port()) || opts.is_kafka_port(c.b.port());
    if c.bytes == 0 || (c.kind == Kind::Tls && on_port) {
        // Nothing to say, or already said (`tls`).
        return;
    }
    totals.not_kafka += 1;
    totals.not_kafka_bytes += c.bytes;
    if totals.not_kafka > MAX_NOT_KAFKA_NOTES + 1 {
        return;
    }
    let conn = c.conn();
    let origin = Origin {
        frame: Some(c.last_frame),
        ts_ns: Some(c.last_ts),
        conn: Some(conn),
        ..Origin::default()
    };
    if totals.not_kafka == MAX_NOT_KAFKA_NOTES + 1 {
        out.note(
            origin,
            Diagnostic::info(
                NOT_KAFKA,
                "capture",
                0,
                format!("more than {MAX_NOT_KAFKA_NOTES} TCP connections carried data not recognised as Kafka; the rest are only counted in the capture summary"),
            ),
        );
        return;
    }
    let what = if c.kind == Kind::Tls {
        "of TLS: encrypted, not decoded".to_string()
    } else {
        let ports = match c.client_is_a {
            Some(_) => format!("--port {}", conn.server.port()),
            None => format!("--port {} or --port {}", c.a.port(), c.b.port()),
        };
        format!("but no Kafka traffic was recognised; if it is Kafka, try {ports}")
    };
    out.note(
        origin,
        Diagnostic::info(
            NOT_KAFKA,
            "capture",
            0,
            format!("this TCP connection carried {} byte(s) {what}", c.bytes),
        ),
    );
}
