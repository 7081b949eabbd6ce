//! `kinspect probe`: a conformance sweep of a live broker, driven by the schema.
//!
//! [`run`] connects over TCP (loopback only: [`check_loopback`]), negotiates versions with
//! ApiVersions (highest version kinspect knows first; an UNSUPPORTED_VERSION answer gives the
//! broker's range, in a v0-shaped body as Kafka writes it, and when that answer cannot be read
//! the probe falls back to v0), learns the topics, brokers and groups the broker knows (Metadata,
//! ListGroups), then sends, for every API and version the broker advertises that the protocol
//! (built in, or with a `--schemas` overlay) defines, and for the first version past each
//! advertised range, well-formed requests generated from the schema ([`generate`]). Every answer
//! is read with Kafka's framing, decoded at the request's version by the library decoder, and
//! judged: one or more [`Finding`]s per request.
//!
//! Finding codes (stable; severity in brackets; [`findings::CODES`] is the source):
//! - `clean` [info]: answered; decodes at the request's version without error diagnostics.
//! - `response-warning` [warning]: answered; decodes, with warnings.
//! - `malformed-response` [error]: the answer does not decode at the request's version; every
//!   error diagnostic is listed with code, offset and path.
//! - `correlation-mismatch` [error]: the answer's correlation id is not its request's (the
//!   message says whether it repeats an earlier one). The connection is then dropped.
//! - `timeout` [error]: no answer within the timeout (the connection is dropped).
//! - `connection-closed` [error]: the broker closed the connection instead of answering a
//!   version it advertises (the probe reconnects and goes on).
//! - `bad-frame-size` [error]: a negative size prefix, or one above `limits::MAX_FRAME_SIZE`.
//! - `unsupported-version` [error]: an advertised version answered with UNSUPPORTED_VERSION.
//! - `past-range-answered` [error]: a version past the advertised range answered as if
//!   supported (no UNSUPPORTED_VERSION) instead of refused.
//! - `past-range-refused` [info]: such a version refused: UNSUPPORTED_VERSION, or the connection
//!   closed (what Kafka does for APIs other than ApiVersions).
//! - `broker-down` [error]: a fresh connection could not be made; the sweep stops.
//! - `unexpected-answer` [warning]: a Produce with Acks 0 was answered (Kafka never does).
//! - `no-response-expected` [info]: Produce with Acks 0 (Kafka does not answer it).
//! - `skipped-destructive` [info]: an API of [`DESTRUCTIVE`], not sent without
//!   [`ApiSelection::allow_destructive`].
//! - `unknown-api` / `unknown-version` [info]: advertised, but not in kinspect's protocol.
//! - `encode-failed` [warning]: kinspect could not encode its own request (a kinspect bug).
//! - `limit-reached` [warning]: the request limit or the deadline stopped the sweep.
//!
//! Deterministic for a given seed and broker state: the same requests in the same order with
//! the same correlation ids. Bounded: total requests, a per-request timeout, an overall deadline.

mod conn;
pub mod findings;
pub mod fuzz;
pub mod generate;
pub mod pcap;
mod prober;
use prober::Prober;
mod report;

pub use conn::{Chunk, ConnRecord, Transcript};
pub use findings::Finding;
pub use report::Row;

use crate::protocol::Protocol;
use generate::Entities;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// APIs that destroy data or change cluster state: not sent unless
/// [`ApiSelection::allow_destructive`]. Names as the newest release spells them
/// (`AlterPartition`, formerly `AlterIsr`).
pub const DESTRUCTIVE: &[&str] = &[
    "DeleteTopics",
    "DeleteRecords",
    "DeleteGroups",
    "DeleteAcls",
    "OffsetDelete",
    "AlterConfigs",
    "IncrementalAlterConfigs",
    "AlterPartitionReassignments",
    "ElectLeaders",
    "CreatePartitions",
    "AlterReplicaLogDirs",
    "AlterClientQuotas",
    "AlterUserScramCredentials",
    "UpdateFeatures",
    "UnregisterBroker",
    "AlterPartition",
    "ControlledShutdown",
    "StopReplica",
    "LeaderAndIsr",
    "UpdateMetadata",
    "WriteTxnMarkers",
    "AddRaftVoter",
    "RemoveRaftVoter",
    "WriteShareGroupState",
    "DeleteShareGroupState",
    "AlterShareGroupOffsets",
    "DeleteShareGroupOffsets",
    "StreamsGroupHeartbeat",
];

/// UNSUPPORTED_VERSION.
const UNSUPPORTED_VERSION: i16 = 35;

/// How to probe.
#[derive(Clone)]
pub struct Config {
    pub addr: SocketAddr,
    pub protocol: &'static Protocol,
    /// Varied requests per API version, besides `minimal`, `one` and `nulls`.
    pub variants: u32,
    pub seed: u64,
    /// Per request: how long to wait for its answer (and for a connection).
    pub timeout: Duration,
    /// The whole sweep.
    pub deadline: Duration,
    pub max_requests: usize,
    /// The APIs swept (with `only`, ApiVersions, Metadata and ListGroups are still sent to
    /// negotiate and to learn names).
    pub apis: ApiSelection,
    pub client_id: String,
}

/// Which advertised APIs a probe or a fuzz run sends: not those `skip` names, only those
/// `only` names when it names any, and those of [`DESTRUCTIVE`] only with `allow_destructive`.
/// Names are matched without regard to case.
#[derive(Clone, Debug, Default)]
pub struct ApiSelection {
    pub allow_destructive: bool,
    pub skip: Vec<String>,
    pub only: Vec<String>,
}

impl ApiSelection {
    /// Whether the API called `name` is asked for: not skipped, and named by `only` when that
    /// names any.
    pub fn asked(&self, name: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|s| s.eq_ignore_ascii_case(name));
        !named(&self.skip) && (self.only.is_empty() || named(&self.only))
    }

    /// Whether the API called `name` may be sent for what it does to the cluster: it is not
    /// [`DESTRUCTIVE`], or those are allowed.
    pub fn allows(&self, name: &str) -> bool {
        self.allow_destructive || !DESTRUCTIVE.contains(&name)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("addr", &self.addr)
            .field("releases", &self.protocol.releases())
            .field("variants", &self.variants)
            .field("seed", &self.seed)
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("max_requests", &self.max_requests)
            .field("apis", &self.apis)
            .finish()
    }
}

impl Config {
    pub fn new(addr: SocketAddr, protocol: &'static Protocol) -> Config {
        Config {
            addr,
            protocol,
            variants: 3,
            seed: 0,
            timeout: Duration::from_secs(2),
            deadline: Duration::from_secs(60),
            max_requests: 5000,
            apis: ApiSelection::default(),
            client_id: "kinspect-probe".into(),
        }
    }
}

/// What a probe found, and the session that shows it.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub transcript: Transcript,
    /// (api key, min, max) as the broker advertised them.
    pub advertised: Vec<(i16, i16, i16)>,
    pub requests: usize,
}

impl Report {
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(Finding::is_error)
    }
}

/// Why a probe could not run at all (exit code 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeError {
    NotLoopback(String),
    Connect(String),
    Negotiate(String),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::NotLoopback(a) => write!(
                f,
                "{a} is not a loopback address: kinspect probe only talks to 127.0.0.0/8 and ::1"
            ),
            ProbeError::Connect(m) | ProbeError::Negotiate(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ProbeError {}

/// Resolves `HOST:PORT` to the address to talk to, refusing it unless every address it names is
/// loopback (a name that also resolves elsewhere is refused). `Err` says why, as one message.
pub fn loopback_addr(target: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let addrs: Vec<SocketAddr> = target
        .to_socket_addrs()
        .map_err(|e| format!("{target}: {e}"))?
        .collect();
    let first = addrs
        .first()
        .copied()
        .ok_or_else(|| format!("{target}: no address"))?;
    for a in &addrs {
        check_loopback(a).map_err(|e| e.to_string())?;
    }
    Ok(first)
}

/// Refuses any address but loopback (127.0.0.0/8, ::1, and v4-mapped 127/8).
pub fn check_loopback(addr: &SocketAddr) -> Result<(), ProbeError> {
    let ok = match addr.ip() {
        std::net::IpAddr::V4(a) => a.is_loopback(),
        std::net::IpAddr::V6(a) => {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|m| m.is_loopback())
        }
    };
    if ok {
        Ok(())
    } else {
        Err(ProbeError::NotLoopback(addr.to_string()))
    }
}

/// Runs the sweep.
pub fn run(cfg: &Config) -> Result<Report, ProbeError> {
    let mut p = Prober::connect(cfg)?;
    let advertised = p.negotiate()?;
    let ents = p.learn(&advertised);
    p.sweep(&advertised, &ents);
    if let Some(c) = p.conn.take() {
        c.close(&mut p.transcript);
    }
    Ok(Report {
        findings: p.findings,
        transcript: p.transcript,
        advertised,
        requests: p.requests,
    })
}

/// The advertised (api key, min, max) ranges and the names the broker knows.
pub(crate) type Discovered = (Vec<(i16, i16, i16)>, Entities);

/// Negotiation and discovery only, as the sweep does them: the (api key, min, max) ranges the
/// broker advertises and the names it knows. The fuzzer starts from these.
pub(crate) fn discover(cfg: &Config) -> Result<Discovered, ProbeError> {
    let mut p = Prober::connect(cfg)?;
    let advertised = p.negotiate()?;
    let ents = p.learn(&advertised);
    p.drop_conn();
    Ok((advertised, ents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_is_probed() {
        for ok in [
            "127.0.0.1:9092",
            "127.1.2.3:1",
            "[::1]:9092",
            "[::ffff:127.0.0.1]:9",
        ] {
            assert!(check_loopback(&ok.parse().unwrap()).is_ok(), "{ok}");
        }
        for bad in [
            "10.0.0.1:9092",
            "0.0.0.0:9092",
            "[::]:9092",
            "192.168.1.1:9092",
            "8.8.8.8:53",
        ] {
            assert!(check_loopback(&bad.parse().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn destructive_names_are_apis_of_the_protocol() {
        let p = crate::protocol::builtin();
        for n in DESTRUCTIVE {
            assert!(p.api_key(n).is_some(), "{n}");
        }
    }
}
