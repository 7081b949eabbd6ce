//! Packet captures to Kafka frames: pcap/pcapng files (and, behind the `live` feature, live
//! interfaces), link layers, IPv4/IPv6, TCP reassembly per connection and direction, Kafka framing
//! with resynchronisation, request↔response matching by correlation id, SASL token recognition,
//! and the session state that needs decoded bodies (`session`).
//!
//! The reader streams: it holds one capture block, the per-connection reassembly state and the
//! bytes of frames not yet complete, never the file.
//!
//! Diagnostic codes produced here, in `Event::Note`s. `path` is `capture`, or
//! `capture.request` / `capture.response` for notes about one direction of a stream, whose
//! `offset` is then a stream offset (also in `Origin::stream_offset`); file-level notes give
//! the file offset.
//! - `capture-truncated` (error): the file ends inside a record/block.
//! - `capture-damaged` (error): a record/block cannot be parsed (bad length, bad block); reading
//!   stops there.
//! - `caplen-exceeds-snaplen` (warning): a record holds more bytes than the file's snap length.
//! - `timestamp-resolution` (warning): a pcapng interface declares an unusable time resolution.
//! - `unsupported-linktype` (warning, once per link type): packets of that link type are skipped.
//! - `gap` (warning): bytes of a TCP stream were never captured (loss, or a snap length).
//! - `frame-incomplete` (warning): a Kafka frame is delivered with only its captured prefix, or
//!   the stream ended (FIN, RST, end of capture) inside a frame.
//! - `resync` (warning): bytes skipped before the next plausible frame boundary.
//! - `bad-frame-size` (error): a size prefix that is negative or above `MAX_FRAME_SIZE`.
//! - `tls` (info): a connection on a Kafka port carries TLS, which is not decoded.
//! - `reassembly-overflow` (warning): more than `MAX_REASSEMBLY_BUFFER` bytes waited behind a
//!   hole; the hole is declared a gap.
//! - `connections-evicted` (warning): the connection table was full; idle connections flushed.
//! - `outstanding-overflow` (warning): too many unanswered requests; the oldest were forgotten.
//! - `unanswered` (once per connection, when it ends): the requests still waiting for an answer,
//!   named, and how the connection ended; a warning when the server closed or reset it, else
//!   info. Not for Produce with Acks 0, nor once bytes of the responses were lost.
//! - `not-kafka` (info, once per connection, when it ends): a TCP connection carried data but
//!   was not recognised as Kafka (or carried TLS off a Kafka port); the message gives its bytes
//!   and the `--port` to try. After a hundred, one last note says the rest are only counted
//!   (`CaptureSummary::not_kafka_connections`).
//!
//! Which side of a connection is the client comes from its SYN, else a known broker port, else
//! the bytes (a request answered by its correlation id; see `detect`), never from which port is
//! higher.

mod conv;
mod detect;
mod framing;
mod link;
#[cfg(feature = "live")]
pub mod live;
mod pcap;
mod sasl;
pub mod session;
pub mod stats;
mod tcp;
#[doc(hidden)]
pub mod testgen;

pub use sasl::mask_sasl_plain;

use crate::diag::Diagnostic;
use crate::pdu::{FrameBuf, Hints, Origin};
use std::fmt;

/// Code of the note about a TCP connection that carried data but was not recognised as Kafka.
pub const NOT_KAFKA: &str = "not-kafka";

/// Code of the note naming the requests a connection left unanswered when it ended.
pub const UNANSWERED: &str = "unanswered";

/// Ports Kafka brokers usually listen on. Traffic on other ports is still found by its content.
pub const DEFAULT_KAFKA_PORTS: &[u16] = &[
    9092, 9093, 9094, 9095, 9096, 9097, 19092, 19093, 19094, 29092, 29093, 39092,
];

/// How to read a capture.
#[derive(Clone)]
pub struct CaptureOptions {
    /// Extra ports to treat as Kafka brokers.
    pub ports: Vec<u16>,
    /// Whether the well-known Kafka ports (`DEFAULT_KAFKA_PORTS`) mark a broker. When false only
    /// SYNs and content decide, which is how the tests prove content detection works.
    pub default_ports: bool,
    /// Print SASL PLAIN passwords instead of masking them (read by the printers).
    pub show_secrets: bool,
    /// The protocol whose requests (api key, version) tell whether bytes look like a request
    /// header (content detection, resync). Without it a coarse built-in range is used.
    pub protocol: Option<&'static crate::protocol::Protocol>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            ports: Vec::new(),
            default_ports: true,
            show_secrets: false,
            protocol: None,
        }
    }
}

impl fmt::Debug for CaptureOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureOptions")
            .field("ports", &self.ports)
            .field("default_ports", &self.default_ports)
            .field("show_secrets", &self.show_secrets)
            .field("protocol", &self.protocol.map(|_| "…"))
            .finish()
    }
}

impl CaptureOptions {
    pub(crate) fn is_kafka_port(&self, port: u16) -> bool {
        (self.default_ports && DEFAULT_KAFKA_PORTS.contains(&port)) || self.ports.contains(&port)
    }
    pub(crate) fn known_request(&self, key: i16, version: i16) -> bool {
        match self.protocol {
            Some(p) => p
                .message(key, version, crate::pdu::Direction::Request)
                .is_some(),
            // Kafka's API keys run 0..=92 in 4.3 and no API has reached version 32.
            None => (0..=92).contains(&key) && (0..32).contains(&version),
        }
    }
}

/// What the reader delivers, in capture order.
#[derive(Debug)]
pub enum Event<'a> {
    /// One Kafka frame, INCLUDING its 4-byte size prefix. Normally complete; when part of it was
    /// never captured, a `frame-incomplete` Note precedes it and `data` is the captured prefix.
    Frame {
        origin: Origin,
        hints: Hints,
        data: &'a [u8],
    },
    /// Something that is not a frame: a gap, skipped bytes on resync, TLS, a damaged file…
    Note { origin: Origin, diag: Diagnostic },
}

/// Where the reader delivers what it finds (ripgrep's `Sink` is the model: methods with defaults,
/// so a sink implements only what it needs and new callbacks break no sink). A closure taking an
/// [`Event`] is a sink.
pub trait CaptureSink {
    /// A frame or a note, in capture order.
    fn event(&mut self, ev: Event<'_>);
    /// A frame, as [`Event::Frame`] (what the default does), with its bytes as the reader has
    /// them: a sink that keeps frames may take an assembled frame's buffer without copying it
    /// ([`FrameBuf::take`]).
    fn frame(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        self.event(Event::Frame {
            origin,
            hints,
            data: data.bytes(),
        });
    }
    /// The capture's first packet was read, at `ts_ns` (nanoseconds since the Unix epoch).
    /// Called once, before any event that packet leads to, and not at all for a capture
    /// without packets. Times "relative to the start of the capture" (tshark's
    /// `frame.time_relative`, the summary printer's default) count from here, not from the
    /// first Kafka frame, which may come much later; a streaming printer needs it before it
    /// prints anything.
    fn first_packet(&mut self, _ts_ns: i64) {}
}

impl<F: FnMut(Event<'_>)> CaptureSink for F {
    fn event(&mut self, ev: Event<'_>) {
        self(ev)
    }
}

/// Totals of one read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// Capture records/packet blocks read.
    pub packets: u64,
    /// Bytes of the capture file read.
    pub file_bytes: u64,
    /// Kafka frames delivered.
    pub frames: u64,
    /// Notes delivered, and how many of them were errors.
    pub notes: u64,
    pub error_notes: u64,
    /// TCP connections seen (Kafka or not).
    pub connections: u64,
    /// Connections carrying Kafka.
    pub kafka_connections: u64,
    /// Connections that carried data but were not recognised as Kafka (the first hundred have a
    /// `not-kafka` note each), and the payload bytes they carried.
    pub not_kafka_connections: u64,
    pub not_kafka_bytes: u64,
    /// Timestamp of the first packet (ns since the Unix epoch), when there was one.
    pub first_ts_ns: Option<i64>,
}

impl CaptureSummary {
    /// When no Kafka frame was found, the sentence that says what was read instead, for a user
    /// who would otherwise see no output at all: `312 packets, 4 TCP connections, no Kafka
    /// traffic recognised; try --port PORT with the broker's port`. `None` when Kafka frames
    /// were found.
    pub fn no_kafka_message(&self) -> Option<String> {
        if self.frames > 0 {
            return None;
        }
        let count = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let mut s = count(self.packets, "packet");
        if self.packets > 0 {
            s.push_str(", ");
            s.push_str(&count(self.connections, "TCP connection"));
        }
        if self.kafka_connections > 0 {
            // Kafka by port or content, but not one frame: handshakes only, or a stream that
            // ended before its first frame did.
            s.push_str(&format!(
                ", {} of them Kafka, but no complete Kafka frame",
                self.kafka_connections
            ));
        } else {
            s.push_str(", no Kafka traffic recognised");
            if self.connections > 0 {
                s.push_str("; try --port PORT with the broker's port");
            }
        }
        Some(s)
    }
}

/// Why a capture could not be read at all.
#[derive(Debug)]
pub enum CaptureError {
    /// Reading the input failed.
    Io(std::io::Error),
    /// The input is not a pcap or pcapng file (the magic at offset 0 is given).
    NotACapture { magic: [u8; 4], len: usize },
    /// The file header itself is damaged.
    BadHeader { offset: u64, message: String },
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::Io(e) => write!(f, "cannot read the capture: {e}"),
            CaptureError::NotACapture { magic, len } if *len < 4 => {
                write!(f, "at byte 0: expected a pcap or pcapng magic number, but the input holds only {len} byte(s)")
            }
            CaptureError::NotACapture { magic, .. } => write!(
                f,
                "at byte 0: expected a pcap magic (a1b2c3d4/a1b23c4d, either byte order) or a pcapng section header (0a0d0d0a), found {:02x}{:02x}{:02x}{:02x}",
                magic[0], magic[1], magic[2], magic[3]
            ),
            CaptureError::BadHeader { offset, message } => write!(f, "at byte {offset}: {message}"),
        }
    }
}

impl std::error::Error for CaptureError {}

impl From<std::io::Error> for CaptureError {
    fn from(e: std::io::Error) -> Self {
        CaptureError::Io(e)
    }
}

/// Reads a pcap or pcapng stream and delivers every Kafka frame and note to `sink`, in capture
/// order. Everything readable before a damaged part is delivered; the damage itself is a Note
/// (`capture-damaged` / `capture-truncated`) and reading stops there. Only a file that cannot
/// be read at all is an `Err`.
pub fn read_capture<R: std::io::Read>(
    reader: R,
    opts: &CaptureOptions,
    mut sink: &mut dyn FnMut(Event<'_>),
) -> Result<CaptureSummary, CaptureError> {
    read_capture_to(reader, opts, &mut sink)
}

/// [`read_capture`] into a [`CaptureSink`], which also hears of the first packet's timestamp.
pub fn read_capture_to<R: std::io::Read>(
    reader: R,
    opts: &CaptureOptions,
    sink: &mut dyn CaptureSink,
) -> Result<CaptureSummary, CaptureError> {
    run_pipeline(opts, sink, |pipeline, out| {
        let file_bytes = pcap::read_packets(reader, &mut |item| match item {
            pcap::Item::Packet(p) => pipeline.packet(&p, out),
            pcap::Item::Note(frame, diag) => out.note(
                Origin {
                    frame,
                    ..Origin::default()
                },
                diag,
            ),
        })?;
        out.summary.file_bytes = file_bytes;
        Ok(())
    })
}

/// Sets up the pipeline and its counter, lets `feed` hand it packets (from a file or an
/// interface), then flushes every connection, also after a failure: what was read before it is
/// delivered.
pub(crate) fn run_pipeline(
    opts: &CaptureOptions,
    sink: &mut dyn CaptureSink,
    feed: impl FnOnce(&mut Pipeline<'_>, &mut Counter<'_>) -> Result<(), CaptureError>,
) -> Result<CaptureSummary, CaptureError> {
    let mut summary = CaptureSummary::default();
    let mut pipeline = Pipeline::new(opts);
    let mut out = Counter {
        sink,
        summary: &mut summary,
        index: 0,
    };
    let fed = feed(&mut pipeline, &mut out);
    pipeline.finish(&mut out);
    fed.map(|_| summary)
}

/// Packets in, events out: link layers, reassembly, framing. Shared by files and live capture.
pub(crate) struct Pipeline<'o> {
    tracker: tcp::Tracker<'o>,
    link: link::LinkState,
}

impl<'o> Pipeline<'o> {
    pub(crate) fn new(opts: &'o CaptureOptions) -> Self {
        Pipeline {
            tracker: tcp::Tracker::new(opts),
            link: link::LinkState::default(),
        }
    }

    pub(crate) fn packet(&mut self, p: &pcap::Packet<'_>, out: &mut Counter<'_>) {
        if out.summary.packets == 0 {
            out.summary.first_ts_ns = Some(p.ts_ns);
            out.sink.first_packet(p.ts_ns);
        }
        out.summary.packets += 1;
        match link::parse(p.linktype, p.data, &mut self.link) {
            link::Parsed::Tcp(seg) => self.tracker.on_segment(&seg, p, out),
            link::Parsed::Other => {}
            link::Parsed::Note(diag) => out.note(
                Origin {
                    frame: Some(p.frame),
                    ts_ns: Some(p.ts_ns),
                    ..Origin::default()
                },
                diag,
            ),
        }
    }

    /// Flushes every open connection and fills in the connection counts.
    pub(crate) fn finish(&mut self, out: &mut Counter<'_>) {
        self.tracker.finish(out);
        let t = self.tracker.totals();
        out.summary.connections = t.connections;
        out.summary.kafka_connections = t.kafka;
        out.summary.not_kafka_connections = t.not_kafka;
        out.summary.not_kafka_bytes = t.not_kafka_bytes;
    }
}

/// Numbers the events and keeps the summary's counts, between the reassembly and the sink.
pub(crate) struct Counter<'s> {
    sink: &'s mut dyn CaptureSink,
    summary: &'s mut CaptureSummary,
    index: u64,
}

impl Counter<'_> {
    pub(crate) fn frame(&mut self, mut origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        origin.index = self.index;
        self.index += 1;
        self.summary.frames += 1;
        self.sink.frame(origin, hints, data);
    }
    pub(crate) fn note(&mut self, mut origin: Origin, diag: Diagnostic) {
        origin.index = self.index;
        self.summary.notes += 1;
        if diag.is_error() {
            self.summary.error_notes += 1;
        }
        self.sink.event(Event::Note { origin, diag });
    }
}
