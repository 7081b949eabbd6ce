//! Running cases against the broker, and the oracles. A round is a few cases written at once on
//! a fresh connection (pipelined, no waiting for answers that may never come), followed by a
//! valid ApiVersions v0 request, the sentinel; the answers are read until the sentinel's, the
//! connection's close, or the timeout. Every answer is decoded at its request's version
//! (malformed response) and matched by correlation id (mismatch: unknown, repeated or out of
//! order). The liveness check is a fresh connection and an ApiVersions ping alone. The fuzz
//! loop, the minimiser and `--replay` all run cases through [`round`], so a reproducer replays
//! exactly as it was found.

use super::cases::Case;
use crate::diag::Diagnostic;
use crate::pdu::{Direction, Hints, Pdu};
use crate::probe::conn::{Conn, ReadFail, Transcript};
use crate::protocol::Protocol;
use crate::wire::decode::Decoder;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// ApiVersions v0, correlation id patched in: the sentinel and the liveness ping.
pub fn ping_frame(corr: i32) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 10, 0, 18, 0, 0];
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0, 0]); // ClientId "" (int16 length 0)
    f
}

/// The broker being fuzzed.
#[derive(Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub protocol: &'static Protocol,
    pub timeout: Duration,
    /// (api key → advertised max): answers past it are not judged as malformed.
    pub max_versions: HashMap<i16, i16>,
}

/// How a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The sentinel was answered: every case before it was read.
    Answered,
    /// The broker closed the connection (what Kafka does on a request it cannot parse).
    Closed,
    /// Open, but the sentinel got no answer within the timeout.
    Hung,
    /// No connection could be made.
    Refused,
}

/// An answer an oracle objects to.
#[derive(Clone, Debug)]
pub enum Event {
    Malformed {
        case: usize,
        response: Vec<u8>,
        diagnostics: Vec<Diagnostic>,
    },
    Mismatch {
        case: Option<usize>,
        response: Vec<u8>,
        message: String,
    },
    BadSize {
        prefix: [u8; 4],
    },
    /// A Produce whose record batch kinspect corrupted on purpose ([`MUST_REFUSE`]) was answered without an error for any partition: the broker
    /// stored, or said it stored, a batch Kafka refuses (CORRUPT_MESSAGE).
    Accepted {
        case: usize,
        response: Vec<u8>,
    },
}

/// Mutators whose Produce a broker must refuse: the batch's CRC does not match, its codec does
/// not exist, or its length field lies (Kafka's log validation refuses each, CORRUPT_MESSAGE).
pub const MUST_REFUSE: &[&str] = &["batch-bad-crc", "batch-unknown-codec", "batch-length-lies"];

#[derive(Clone, Debug)]
pub struct RoundOut {
    pub end: End,
    pub events: Vec<Event>,
    /// Answers read (sentinel excluded) and how many of them decoded without error.
    pub answers: usize,
    pub decoded: usize,
    /// The index of the first case after the last one answered.
    pub first_unanswered: usize,
}

/// Correlation ids of a round: cases get `BASE + i`, the sentinel [`SENTINEL`].
const BASE: i32 = 1;
const SENTINEL: i32 = 0x4b49_4e53; // "KINS"

/// Runs one round; `t` gets every byte that crossed.
pub fn round(
    target: &Target,
    decoder: &mut Decoder,
    cases: &[Case],
    t: &mut Transcript,
) -> RoundOut {
    let mut out = RoundOut {
        end: End::Answered,
        events: Vec::new(),
        answers: 0,
        decoded: 0,
        first_unanswered: 0,
    };
    let Ok(mut conn) = Conn::connect(target.addr, target.timeout, t) else {
        out.end = End::Refused;
        return out;
    };
    let mut buf = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        buf.extend(c.with_corr(BASE + i as i32));
    }
    buf.extend(ping_frame(SENTINEL));
    // A write that fails means the broker closed early: its answers may still be readable.
    let _ = conn.send(&buf, t);
    let deadline = Instant::now() + target.timeout;
    // Answers come in request order: each must be for a later request than the one before.
    let mut next = 0usize;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match conn.read_frame(left.max(Duration::from_millis(1)), t) {
            Ok(fr) => {
                let corr = fr
                    .get(4..8)
                    .map_or(-1, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                if corr == SENTINEL {
                    break;
                }
                out.answers += 1;
                let idx = corr.wrapping_sub(BASE);
                if idx < 0 || idx as usize >= cases.len() || (idx as usize) < next {
                    let message = if idx >= 0 && (idx as usize) < next {
                        format!("correlation id {corr} answered again, or out of order (the answers so far reached request {})", next + BASE as usize - 1)
                    } else {
                        format!("correlation id {corr} was never sent on this connection")
                    };
                    out.events.push(Event::Mismatch {
                        case: None,
                        response: fr,
                        message,
                    });
                    continue;
                }
                let i = idx as usize;
                next = i + 1;
                out.first_unanswered = next;
                let c = &cases[i];
                let hints = Hints {
                    direction: Some(Direction::Response),
                    api_key: Some(c.api_key),
                    api_version: Some(c.api_version),
                    has_size_prefix: Some(true),
                    ..Hints::default()
                };
                let mut pdu = Pdu::default();
                decoder.decode_frame(&fr, &hints, &mut pdu);
                if pdu.tree.has_errors() {
                    if c.well_formed() {
                        out.events.push(Event::Malformed {
                            case: i,
                            response: fr,
                            diagnostics: pdu.tree.diags.to_vec(),
                        });
                    }
                } else {
                    out.decoded += 1;
                    if MUST_REFUSE.contains(&c.mutator.as_str()) && accepted(target, &pdu) {
                        out.events.push(Event::Accepted {
                            case: i,
                            response: fr,
                        });
                    }
                }
            }
            Err(ReadFail::Timeout { .. }) => {
                out.end = End::Hung;
                break;
            }
            Err(ReadFail::Closed { .. }) => {
                out.end = End::Closed;
                break;
            }
            Err(ReadFail::BadSize { prefix }) => {
                out.events.push(Event::BadSize { prefix });
                out.end = End::Closed;
                break;
            }
        }
    }
    conn.close(t);
    out
}

/// Whether `pdu`, a Produce response, answers some partition and none with an error.
fn accepted(target: &Target, pdu: &Pdu) -> bool {
    use crate::query::Field;
    if target.protocol.api_name(pdu.api_key.unwrap_or(-1)) != Some("Produce") {
        return false;
    }
    let (Ok(partition), Ok(error)) = (Field::parse("partition"), Field::parse("error")) else {
        return false;
    };
    partition.first(pdu).is_some() && error.first(pdu).is_none()
}

/// The liveness check: a fresh connection, an ApiVersions ping, its answer within the timeout.
pub fn alive(target: &Target) -> Result<(), String> {
    let mut t = Transcript::default();
    let mut c = Conn::connect(target.addr, target.timeout, &mut t)
        .map_err(|e| format!("a fresh connection to {} failed: {e}", target.addr))?;
    c.send(&ping_frame(7), &mut t)
        .map_err(|e| format!("the ApiVersions ping could not be written: {e}"))?;
    let r = c.read_frame(target.timeout, &mut t);
    c.close(&mut t);
    match r {
        Ok(f) if f.get(4..8) == Some(&7i32.to_be_bytes()[..]) => Ok(()),
        Ok(_) => Err("the ApiVersions ping was answered with another correlation id".into()),
        Err(ReadFail::Timeout { .. }) => Err(format!(
            "the ApiVersions ping got no answer within {} ms",
            target.timeout.as_millis()
        )),
        Err(ReadFail::Closed { why, .. }) => Err(format!(
            "the connection closed before the ApiVersions ping was answered ({why})"
        )),
        Err(ReadFail::BadSize { prefix }) => Err(format!(
            "the ApiVersions ping was answered with size prefix {prefix:02x?}"
        )),
    }
}

/// Waits up to `within` for the broker to pass the liveness check.
pub fn await_alive(target: &Target, within: Duration) -> bool {
    let end = Instant::now() + within;
    loop {
        if alive(target).is_ok() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// `--broker-pid`: the process's state from /proc.
#[derive(Clone, Debug)]
pub struct PidWatch {
    pub pid: u32,
    pub rss0_kb: u64,
    pub reported_rss: bool,
}

/// What the process watch saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PidState {
    Running { rss_kb: u64 },
    Exited,
}

pub fn pid_state(pid: u32) -> PidState {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return PidState::Exited;
    };
    let field = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
    };
    if field("State:").is_some_and(|st| st.starts_with('Z') || st.starts_with('X')) {
        return PidState::Exited;
    }
    let rss_kb = field("VmRSS:")
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0);
    PidState::Running { rss_kb }
}

impl PidWatch {
    pub fn new(pid: u32) -> PidWatch {
        let rss0_kb = match pid_state(pid) {
            PidState::Running { rss_kb } => rss_kb,
            PidState::Exited => 0,
        };
        PidWatch {
            pid,
            rss0_kb,
            reported_rss: false,
        }
    }

    /// RSS growth worth reporting: four times the start, and at least 256 MiB more.
    pub fn grown(&self, rss_kb: u64) -> bool {
        rss_kb > self.rss0_kb.saturating_mul(4) && rss_kb > self.rss0_kb + 256 * 1024
    }
}
