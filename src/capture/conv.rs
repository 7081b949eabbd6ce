//! The Kafka conversation on one connection, as far as it can be followed from headers alone:
//! which bytes look like a request or a response, outstanding requests by correlation id (so
//! responses get their request's API, version, frame and latency), and the raw SASL token phase
//! that follows a SaslHandshake v0.

use super::framing::{FlowCtx, Placement, Plausible};
use super::{CaptureOptions, Counter, UNANSWERED};
use crate::diag::Diagnostic;
use crate::limits::{MAX_FRAME_SIZE, MAX_OUTSTANDING_PER_CONN};
use crate::pdu::{Conn, Direction, FrameBuf, Hints, Origin};
use crate::wire::cursor::{be_i16_at as be16, be_i32_at as be32};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Arc;

const PRODUCE: i16 = 0;
const SASL_HANDSHAKE: i16 = 17;
/// Most unanswered requests an `unanswered` note names; it counts the rest.
const NAMED_UNANSWERED: usize = 5;

#[derive(Clone, Debug)]
struct Outstanding {
    correlation_id: i32,
    api_key: i16,
    api_version: i16,
    frame: u64,
    ts_ns: i64,
    client_id: Option<Arc<str>>,
    /// False for a Produce with Acks 0, which Kafka never answers.
    answer_due: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sasl {
    None,
    /// A SaslHandshake v0 request is outstanding.
    Handshake,
    /// Tokens flow without Kafka headers until the client sends a request again.
    Tokens,
}

/// Kafka state of one connection.
#[derive(Debug)]
pub(crate) struct Conversation {
    outstanding: VecDeque<Outstanding>,
    sasl: Sasl,
    overflow_reported: bool,
    /// The client id of the last request, shared by the PDUs that carry the same one.
    client_id: Option<Arc<str>>,
    /// Bytes of the responses were lost (a gap, a resync, a frame cut short): a request still
    /// outstanding may have been answered there.
    responses_lost: bool,
}

impl Default for Conversation {
    fn default() -> Self {
        Conversation {
            outstanding: VecDeque::new(),
            sasl: Sasl::None,
            overflow_reported: false,
            client_id: None,
            responses_lost: false,
        }
    }
}

impl Conversation {
    /// The client id of a request frame (header v1+: a nullable int16-length string at byte
    /// 12), shared with the previous request's when the bytes are the same: one allocation per
    /// connection, not per PDU.
    fn client_id_of(&mut self, data: &[u8]) -> Option<Arc<str>> {
        let len = usize::try_from(be16(data, 12)?).ok()?;
        let id = data.get(14..14 + len)?;
        if self.client_id.as_deref().map(str::as_bytes) != Some(id) {
            self.client_id = Some(Arc::from(String::from_utf8_lossy(id)));
        }
        self.client_id.clone()
    }
}

/// How a connection's conversation ended, for the requests it left unanswered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The side that closed first (FIN), or reset (RST), and in which capture frame (and when).
    Closed {
        by_client: bool,
        frame: u64,
        ts_ns: i64,
    },
    Reset {
        by_client: bool,
        frame: u64,
        ts_ns: i64,
    },
    /// A new SYN reused the connection's addresses.
    Reopened { frame: u64, ts_ns: i64 },
    /// The connection table was full and this connection was the least recently active.
    Evicted,
    /// The capture ended with the connection open.
    CaptureEnded,
}

impl Ending {
    /// The capture frame and time of the packet that ended the connection, when one did.
    pub(crate) fn at(self) -> Option<(u64, i64)> {
        match self {
            Ending::Closed { frame, ts_ns, .. }
            | Ending::Reset { frame, ts_ns, .. }
            | Ending::Reopened { frame, ts_ns } => Some((frame, ts_ns)),
            Ending::Evicted | Ending::CaptureEnded => None,
        }
    }
}

impl Conversation {
    /// Notes that bytes of the responses were lost.
    pub(crate) fn responses_lost(&mut self) {
        self.responses_lost = true;
    }

    /// The requests still waiting for an answer when the conversation ended as `how`, as one
    /// note: a warning when the server closed or reset the connection on them (what a Kafka
    /// broker does with a request it cannot handle), else info (a client closing with a fetch
    /// in flight, a capture stopped mid-conversation). Nothing when every request was answered,
    /// when the only ones left are Produce with Acks 0, or when bytes of the responses were lost
    /// and an answer may have been among them.
    pub(crate) fn unanswered(
        &self,
        how: Ending,
        proto: Option<&'static crate::protocol::Protocol>,
    ) -> Option<Diagnostic> {
        if self.responses_lost {
            return None;
        }
        let names = proto.unwrap_or_else(crate::protocol::builtin);
        let (mut n, mut named) = (0usize, String::new());
        for o in self.outstanding.iter().filter(|o| o.answer_due) {
            n += 1;
            if n > NAMED_UNANSWERED {
                continue;
            }
            if n > 1 {
                named.push_str(", ");
            }
            let _ = match names.api_name(o.api_key) {
                Some(name) => write!(named, "{name}"),
                None => write!(named, "API {}", o.api_key),
            };
            let _ = write!(
                named,
                " v{} corr={} (frame {})",
                o.api_version, o.correlation_id, o.frame
            );
        }
        if n == 0 {
            return None;
        }
        if n > NAMED_UNANSWERED {
            let _ = write!(named, ", and {} more", n - NAMED_UNANSWERED);
        }
        let side = |client: bool| if client { "client" } else { "server" };
        let (why, warn) = match how {
            Ending::Closed {
                by_client, frame, ..
            } => (
                format!(
                    "the {} closed the connection (FIN, frame {frame})",
                    side(by_client)
                ),
                !by_client,
            ),
            Ending::Reset {
                by_client, frame, ..
            } => (
                format!(
                    "the {} reset the connection (RST, frame {frame})",
                    side(by_client)
                ),
                !by_client,
            ),
            Ending::Reopened { frame, .. } => (
                format!("a new connection reused its addresses (SYN, frame {frame})"),
                false,
            ),
            Ending::Evicted => (
                "the connection was closed early (the connection table was full)".to_string(),
                false,
            ),
            Ending::CaptureEnded => ("the capture ended".to_string(), false),
        };
        let message = format!(
            "{n} request{} never answered before {why}: {named}",
            if n == 1 { " was" } else { "s were" }
        );
        Some(if warn {
            Diagnostic::warning(UNANSWERED, "capture", 0, message)
        } else {
            Diagnostic::info(UNANSWERED, "capture", 0, message)
        })
    }
}

/// The Acks of a Produce request frame (size prefix first); Kafka never answers Acks 0. Acks
/// follows the request header (v2, with tagged fields, when `flexible`) and, from v3, the
/// nullable TransactionalId (compact when flexible). `None` when the frame is too short to
/// tell.
fn produce_acks(data: &[u8], version: i16, flexible: bool) -> Option<i16> {
    use crate::wire::cursor::Cursor;
    let mut c = Cursor::new(data, 12, data.len());
    let id = c.i16().ok()?;
    if id > 0 {
        c.skip(id as usize).ok()?;
    }
    if flexible {
        let (tags, _) = c.uvarint().ok()?;
        for _ in 0..tags {
            c.uvarint().ok()?;
            let (size, _) = c.uvarint().ok()?;
            c.skip(size as usize).ok()?;
        }
    }
    if version >= 3 {
        if flexible {
            let (n, _) = c.uvarint().ok()?;
            if n > 0 {
                c.skip(n as usize - 1).ok()?;
            }
        } else {
            let n = c.i16().ok()?;
            if n > 0 {
                c.skip(n as usize).ok()?;
            }
        }
    }
    c.i16().ok()
}

/// Whether `b` (starting at a size prefix) looks like a request frame: a sane size, a known API
/// and version, and a client id that fits (and is printable as far as it was captured).
/// `strict` also wants a non-negative correlation id, for boundaries found by scanning.
pub(crate) fn looks_like_request(b: &[u8], opts: &CaptureOptions, strict: bool) -> Plausible {
    let (Some(size), Some(key), Some(version), Some(corr)) =
        (be32(b, 0), be16(b, 4), be16(b, 6), be32(b, 8))
    else {
        return Plausible::NeedMore;
    };
    if size < 8
        || size as u32 > MAX_FRAME_SIZE
        || !opts.known_request(key, version)
        || (strict && corr < 0)
    {
        return Plausible::No;
    }
    if size == 8 {
        // Request header v0 (ControlledShutdown v0): no client id.
        return Plausible::Yes;
    }
    let Some(len) = be16(b, 12) else {
        return Plausible::NeedMore;
    };
    if len < -1 || len as i32 > size - 10 {
        return Plausible::No;
    }
    let id = b.get(14..).unwrap_or(&[]);
    let id = &id[..id.len().min(len.max(0) as usize)];
    if id.iter().any(|c| !(0x20..0x7f).contains(c)) {
        return Plausible::No;
    }
    Plausible::Yes
}

/// TLS handshake record carrying a ClientHello (1) or ServerHello (2).
pub(crate) fn looks_like_tls(b: &[u8]) -> bool {
    matches!(b, [0x16, 0x03, 0x00..=0x04, _, _, 1 | 2, ..])
}

/// One direction of a connection, borrowed for one push into its framer.
pub(crate) struct FlowView<'a, 's> {
    pub conv: &'a mut Conversation,
    pub out: &'a mut Counter<'s>,
    pub opts: &'a CaptureOptions,
    pub conn: Conn,
    pub direction: Direction,
}

impl FlowView<'_, '_> {
    fn origin(&self, at: &Placement) -> Origin {
        Origin {
            index: 0,
            frame: Some(at.first_frame),
            last_frame: Some(at.last_frame),
            ts_ns: Some(at.ts_ns),
            conn: Some(self.conn),
            stream_offset: Some(at.stream_offset),
            ..Origin::default()
        }
    }

    fn remember(&mut self, o: Outstanding) {
        if self.conv.outstanding.len() >= MAX_OUTSTANDING_PER_CONN {
            self.conv.outstanding.pop_front();
            if !self.conv.overflow_reported {
                self.conv.overflow_reported = true;
                let origin = Origin {
                    frame: Some(o.frame),
                    conn: Some(self.conn),
                    ..Origin::default()
                };
                self.out.note(
                    origin,
                    Diagnostic::warning(
                        "outstanding-overflow",
                        "capture",
                        0,
                        format!("more than {MAX_OUTSTANDING_PER_CONN} requests without responses on this connection; the oldest are forgotten"),
                    ),
                );
            }
        }
        self.conv.outstanding.push_back(o);
    }
}

impl FlowCtx for FlowView<'_, '_> {
    fn plausible(&self, b: &[u8]) -> Plausible {
        match self.direction {
            Direction::Request => looks_like_request(b, self.opts, true),
            Direction::Response => {
                let (Some(size), Some(corr)) = (be32(b, 0), be32(b, 4)) else {
                    return Plausible::NeedMore;
                };
                if size < 4 || size as u32 > MAX_FRAME_SIZE {
                    return Plausible::No;
                }
                if self
                    .conv
                    .outstanding
                    .iter()
                    .any(|o| o.correlation_id == corr)
                {
                    Plausible::Yes
                } else {
                    Plausible::No
                }
            }
        }
    }

    fn frame(&mut self, frame: FrameBuf<'_>, at: Placement) {
        let data = frame.bytes();
        let mut origin = self.origin(&at);
        let mut hints = Hints {
            direction: Some(self.direction),
            has_size_prefix: Some(true),
            ..Hints::default()
        };
        match self.direction {
            Direction::Request => {
                if self.conv.sasl == Sasl::Tokens
                    && looks_like_request(data, self.opts, false) != Plausible::Yes
                {
                    hints.sasl_token = true;
                } else {
                    self.conv.sasl = Sasl::None;
                    if let (Some(key), Some(version), Some(corr)) =
                        (be16(data, 4), be16(data, 6), be32(data, 8))
                    {
                        if key == SASL_HANDSHAKE && version == 0 {
                            self.conv.sasl = Sasl::Handshake;
                        }
                        // Header v0 (ControlledShutdown v0) has no client id.
                        let no_client_id = key == 7 && version == 0;
                        origin.client_id = if no_client_id {
                            None
                        } else {
                            self.conv.client_id_of(data)
                        };
                        let answer_due = key != PRODUCE || {
                            let flexible = match self.opts.protocol {
                                Some(p) => {
                                    crate::protocol::headers::request_header_version(
                                        p, key, version,
                                    ) == Some(2)
                                }
                                // Produce is flexible from v9 in every release.
                                None => version >= 9,
                            };
                            // A frame cut before its Acks may be one never answered: no claim.
                            matches!(produce_acks(data, version, flexible), Some(a) if a != 0)
                        };
                        self.remember(Outstanding {
                            correlation_id: corr,
                            api_key: key,
                            api_version: version,
                            frame: at.last_frame,
                            ts_ns: at.ts_ns,
                            client_id: origin.client_id.clone(),
                            answer_due,
                        });
                    }
                }
            }
            Direction::Response => {
                let corr = be32(data, 4);
                let pos = corr.and_then(|c| {
                    self.conv
                        .outstanding
                        .iter()
                        .position(|o| o.correlation_id == c)
                });
                match pos {
                    Some(i) => {
                        // Kafka answers in order on a connection: requests before this one that
                        // got no answer (acks=0 produce) never will.
                        let req = self.conv.outstanding[i].clone();
                        self.conv.outstanding.drain(..=i);
                        origin.client_id = req.client_id;
                        hints.api_key = Some(req.api_key);
                        hints.api_version = Some(req.api_version);
                        hints.request_frame = Some(req.frame);
                        hints.latency_ns = Some(at.ts_ns.saturating_sub(req.ts_ns));
                        if req.api_key == SASL_HANDSHAKE
                            && req.api_version == 0
                            && self.conv.sasl == Sasl::Handshake
                        {
                            // Tokens follow only when the handshake succeeded (error code 0).
                            self.conv.sasl = if be16(data, 8) == Some(0) {
                                Sasl::Tokens
                            } else {
                                Sasl::None
                            };
                        }
                    }
                    None if self.conv.sasl == Sasl::Tokens => hints.sasl_token = true,
                    None => {}
                }
            }
        }
        self.out.frame(origin, hints, frame);
    }

    fn note(&mut self, code: &'static str, error: bool, offset: u64, frame: u64, message: String) {
        // Every framer note (resync, bad size, a frame cut short) means bytes were not read as
        // frames.
        if self.direction == Direction::Response {
            self.conv.responses_lost();
        }
        let origin = Origin {
            frame: Some(frame),
            conn: Some(self.conn),
            stream_offset: Some(offset),
            ..Origin::default()
        };
        let path = format!("capture.{}", self.direction.as_str());
        let diag = if error {
            Diagnostic::error(code, path, offset, message)
        } else {
            Diagnostic::warning(code, path, offset, message)
        };
        self.out.note(origin, diag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_shapes() {
        let o = CaptureOptions::default();
        // ApiVersions v3, correlation 1, client id "rdkafka".
        let mut r = vec![0, 0, 0, 0, 0, 18, 0, 3, 0, 0, 0, 1, 0, 7];
        r.extend_from_slice(b"rdkafka");
        let n = (r.len() - 4) as i32;
        r[..4].copy_from_slice(&n.to_be_bytes());
        assert_eq!(looks_like_request(&r, &o, true), Plausible::Yes);
        assert_eq!(looks_like_request(&r[..10], &o, true), Plausible::NeedMore);
        let mut bad = r.clone();
        bad[14] = 0x01; // control character in the client id
        assert_eq!(looks_like_request(&bad, &o, true), Plausible::No);
        let mut bad = r.clone();
        bad[12..14].copy_from_slice(&200i16.to_be_bytes()); // client id longer than the frame
        assert_eq!(looks_like_request(&bad, &o, true), Plausible::No);
        let mut bad = r;
        bad[4..6].copy_from_slice(&500i16.to_be_bytes());
        assert_eq!(looks_like_request(&bad, &o, true), Plausible::No);
    }

    #[test]
    fn produce_acks_reads_every_prefix_without_panicking_and_stops_on_huge_counts() {
        // Produce v9 (flexible): client id "c", one tagged field (tag 0, 1 byte), a compact
        // TransactionalId "tx", then Acks -1.
        let mut f = vec![
            0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 7, 0, 1, b'c', 1, 0, 1, 0xaa, 3,
        ];
        f.extend_from_slice(b"tx");
        f.extend_from_slice(&(-1i16).to_be_bytes());
        assert_eq!(produce_acks(&f, 9, true), Some(-1));
        for end in 0..f.len() {
            assert_eq!(
                produce_acks(&f[..end], 9, true),
                None,
                "prefix of {end} bytes"
            );
        }
        // A tagged-field count of 2^32 - 1 and a TransactionalId of 2^32 - 2 bytes, with nothing
        // behind them: each read is checked against what remains, so both end at once.
        let mut huge = f[..15].to_vec();
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(produce_acks(&huge, 9, true), None);
        let mut huge = f[..15].to_vec();
        huge.extend_from_slice(&[0, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(produce_acks(&huge, 9, true), None);
    }

    #[test]
    fn tls_hellos() {
        assert!(looks_like_tls(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]));
        assert!(looks_like_tls(&[0x16, 0x03, 0x03, 0x00, 0x7a, 0x02]));
        assert!(!looks_like_tls(&[0x00, 0x00, 0x00, 0x24, 0x00, 0x12]));
    }
}
