//! `kinspect fuzz`: a stateful, schema-aware network fuzzer for a live broker (loopback only,
//! like the probe, whose negotiation, discovery, generator, connection and pcap writer it
//! reuses).
//!
//! Cases ([`cases`]) are well-formed requests with hostile values and requests mutated where
//! only a schema-aware fuzzer can aim ([`mutate`], over the [`layout`] of each frame: the
//! decoder's annotated spans walked alongside the compiled plan). They run in rounds
//! ([`exec`]): several cases pipelined on one connection, one valid request in every
//! [`cases::VALID_EVERY`], then a sentinel. Oracles: `broker-down` (a fresh connection refused,
//! or its ApiVersions ping unanswered), `hung-connection` (an open connection that stops
//! answering valid requests), `malformed-response` (kinspect's decoder reports an error on the
//! answer to a well-formed request), `correlation-mismatch`, `bad-frame-size`, and with a pid
//! `broker-exited` and `rss-growth`. Each finding is minimised ([`minimise`]: fewer cases, then
//! smaller cases, re-running against the broker and restarting it through
//! [`Config::restart`] when it died) and saved with a reproducer ([`repro`]) that [`replay`]
//! re-runs.
//!
//! Deterministic: the same seed, broker ranges and names give the same cases in the same order.

pub mod cases;
pub mod exec;
pub mod layout;
pub mod minimise;
pub mod mutate;
mod report;
pub mod repro;
mod settle;

pub use report::{FuzzReport, Saved, Stats, KEEP_FIRST};
use settle::{ensure_alive, settle};
pub use settle::{reduce, replay, Replay};

use self::cases::{Case, Generator, Target as Api};
use self::exec::{End, Event, PidState, PidWatch, RoundOut, Target};
use crate::probe::conn::Transcript;
use crate::probe::{check_loopback, discover, ApiSelection, ProbeError};
use crate::protocol::Protocol;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Restarts the broker after it died (the minimiser needs it back to re-run a sequence).
pub type Restart = Arc<dyn Fn() + Send + Sync>;

/// Called about four times a second with the run so far (the CLI prints it on a terminal).
pub type Progress = Arc<dyn Fn(&Stats) + Send + Sync>;

#[derive(Clone)]
pub struct Config {
    pub addr: SocketAddr,
    pub protocol: &'static Protocol,
    pub seed: u64,
    /// Stop after this many cases (and/or `seconds`; with neither, 1000 cases).
    pub cases: Option<u64>,
    pub seconds: Option<f64>,
    /// Per round: how long to wait for the sentinel; per liveness ping too.
    pub timeout: Duration,
    /// Cases pipelined per connection.
    pub round: usize,
    /// Liveness check at least every this many rounds (and after any round that did not end
    /// with the sentinel's answer).
    pub check_every: usize,
    pub out: Option<PathBuf>,
    /// The APIs fuzzed (those of [`WAITING`] only when named in `only`).
    pub apis: ApiSelection,
    pub client_id: String,
    pub broker_pid: Option<u32>,
    pub restart: Option<Restart>,
    /// How long to wait for the broker to come back (after `restart`, or on its own).
    pub restart_wait: Duration,
    /// Broker re-runs per finding while minimising.
    pub minimise_budget: usize,
    pub max_findings: usize,
    pub progress: Option<Progress>,
}

impl Config {
    pub fn new(addr: SocketAddr, protocol: &'static Protocol) -> Config {
        Config {
            addr,
            protocol,
            seed: 0,
            cases: None,
            seconds: None,
            timeout: Duration::from_millis(1000),
            round: 16,
            check_every: 8,
            out: None,
            apis: ApiSelection::default(),
            client_id: "kinspect-fuzz".into(),
            broker_pid: None,
            restart: None,
            restart_wait: Duration::from_secs(10),
            minimise_budget: 200,
            max_findings: 20,
            progress: None,
        }
    }

    fn target(&self, adv: &[(i16, i16, i16)]) -> Target {
        Target {
            addr: self.addr,
            protocol: self.protocol,
            timeout: self.timeout,
            max_versions: adv.iter().map(|&(k, _, hi)| (k, hi)).collect(),
        }
    }
}

/// APIs whose answers wait on other clients (a group's rebalance): a round behind one looks
/// hung. Left out unless named with `only`.
pub const WAITING: &[&str] = &["JoinGroup"];

/// The APIs to fuzz: advertised, known to the protocol, not destructive (unless allowed), not
/// skipped.
fn targets(cfg: &Config, adv: &[(i16, i16, i16)]) -> Vec<Api> {
    let mut out = Vec::new();
    let mut adv = adv.to_vec();
    adv.sort();
    for &(key, lo, hi) in &adv {
        let Some(name) = cfg.protocol.api_name(key) else {
            continue;
        };
        if !cfg.apis.asked(name)
            || !cfg.apis.allows(name)
            || (cfg.apis.only.is_empty() && WAITING.contains(&name))
        {
            continue;
        }
        // Only the versions kinspect can encode.
        let known: Vec<i16> = (lo.max(0)..=hi)
            .filter(|&v| crate::probe::generate::request_spec(cfg.protocol, key, v).is_some())
            .collect();
        if let (Some(&l), Some(&h)) = (known.first(), known.last()) {
            out.push(Api {
                api_key: key,
                lo: l,
                hi: h,
            });
        }
    }
    out
}

/// A finding before minimising: code, the case to blame (index), message, response,
/// diagnostics, the sequence that showed it.
type Raw = (
    &'static str,
    Option<usize>,
    String,
    Vec<u8>,
    Vec<crate::diag::Diagnostic>,
    Vec<Case>,
);

/// Runs the fuzzer.
pub fn run(cfg: &Config) -> Result<FuzzReport, ProbeError> {
    check_loopback(&cfg.addr)?;
    let mut pcfg = crate::probe::Config::new(cfg.addr, cfg.protocol);
    pcfg.timeout = cfg.timeout.max(Duration::from_millis(500));
    pcfg.client_id = cfg.client_id.clone();
    let (adv, ents) = discover(&pcfg)?;
    let target = cfg.target(&adv);
    let apis = targets(cfg, &adv);
    let mut gen = Generator::new(cfg.protocol, apis.clone(), ents, cfg.seed, &cfg.client_id);
    let mut decoder = crate::records::decoder(cfg.protocol);
    let mut rep = FuzzReport {
        advertised: adv.clone(),
        targets: apis,
        ..FuzzReport::default()
    };
    let max_cases = match (cfg.cases, cfg.seconds) {
        (None, None) => Some(1000),
        (c, _) => c,
    };
    let deadline = cfg.seconds.map(Duration::from_secs_f64);
    let started = Instant::now();
    let mut minimising = Duration::ZERO;
    let mut last_progress = Instant::now();
    let mut pending: Vec<Case> = Vec::new();
    let mut since_check = 0usize;
    let mut seen: HashSet<String> = HashSet::new();
    let mut pid = cfg.broker_pid.map(PidWatch::new);
    let round = cfg.round.max(1);
    loop {
        let fuzzing = started.elapsed().saturating_sub(minimising);
        if max_cases.is_some_and(|m| rep.stats.cases >= m)
            || deadline.is_some_and(|d| fuzzing >= d)
            || rep.findings.len() >= cfg.max_findings
        {
            break;
        }
        let n = max_cases.map_or(round as u64, |m| (m - rep.stats.cases).min(round as u64));
        let batch: Vec<Case> = (0..n).filter_map(|_| gen.next_case()).collect();
        if batch.is_empty() {
            rep.stopped = Some("no request could be generated for the advertised APIs".into());
            break;
        }
        let mut t = Transcript::default();
        let out = exec::round(&target, &mut decoder, &batch, &mut t);
        // A round that could not connect sent nothing: its cases are not counted, and the
        // broker is brought back (or the run stops) before the next one.
        let sent = out.end != End::Refused;
        if sent {
            for c in &batch {
                *rep.coverage.entry((c.api_key, c.api_version)).or_insert(0) += 1;
                if rep.first_cases.len() < KEEP_FIRST {
                    rep.first_cases.push(c.clone());
                }
            }
            rep.stats.cases += batch.len() as u64;
            rep.stats.rounds += 1;
        }
        rep.stats.answers += out.answers as u64;
        rep.stats.decoded += out.decoded as u64;
        let base = pending.len();
        if sent {
            pending.extend(batch.iter().cloned());
        }
        let mut found: Vec<Raw> = Vec::new();
        // The liveness check failed: whether or not the finding is new, the next round needs
        // the broker back.
        let mut down = false;
        for ev in &out.events {
            match ev {
                Event::Malformed {
                    case,
                    response,
                    diagnostics,
                } => {
                    let mut msg = first_error(diagnostics).map_or_else(String::new, |d| {
                        format!(
                            "the answer to a well-formed request does not decode: {} at byte {}{}: {}",
                            d.code,
                            d.offset,
                            if d.path.is_empty() { String::new() } else { format!(" ({})", d.path) },
                            d.message
                        )
                    });
                    if in_records(diagnostics) {
                        msg.push_str(" (inside the records the broker returned: data stored by an earlier request, so a fresh broker may not reproduce it from this sequence alone; look for accepted-corrupt-batch)");
                    }
                    found.push((
                        "malformed-response",
                        Some(*case),
                        msg,
                        response.clone(),
                        diagnostics.clone(),
                        batch.clone(),
                    ));
                }
                Event::Mismatch {
                    response, message, ..
                } => found.push((
                    "correlation-mismatch",
                    None,
                    message.clone(),
                    response.clone(),
                    Vec::new(),
                    batch.clone(),
                )),
                Event::Accepted { case, response } => found.push((
                    "accepted-corrupt-batch",
                    Some(*case),
                    format!(
                        "a Produce whose batch is corrupt on purpose ({}) was answered with no error for any partition: Kafka refuses such a batch with CORRUPT_MESSAGE, and a Fetch may now return it",
                        batch[*case].mutator
                    ),
                    response.clone(),
                    Vec::new(),
                    batch.clone(),
                )),
                Event::BadSize { prefix } => found.push((
                    "bad-frame-size",
                    None,
                    format!("an answer's size prefix is {prefix:02x?}"),
                    prefix.to_vec(),
                    Vec::new(),
                    batch.clone(),
                )),
            }
        }
        since_check += 1;
        let abnormal = out.end != End::Answered;
        if abnormal || since_check >= cfg.check_every {
            let live = exec::alive(&target);
            let exited = pid
                .as_ref()
                .is_some_and(|p| pid_state(p.pid) == PidState::Exited);
            // Blame first: the case after the last one answered in the round that ended badly.
            let answered_upto = out_first_unanswered(&out, &batch);
            let hint = answered_upto.map(|i| base + i);
            match live {
                Err(why) => {
                    down = true;
                    let code = if exited { "broker-exited" } else { "broker-down" };
                    found.push((
                        code,
                        hint,
                        format!("after this sequence {why}"),
                        Vec::new(),
                        Vec::new(),
                        pending.clone(),
                    ));
                }
                Ok(()) if out.end == End::Hung => found.push((
                    "hung-connection",
                    hint,
                    format!(
                        "the connection stayed open but a valid ApiVersions request after these cases got no answer within {} ms (a fresh connection is answered)",
                        cfg.timeout.as_millis()
                    ),
                    Vec::new(),
                    Vec::new(),
                    pending.clone(),
                )),
                Ok(()) => {}
            }
            if let Some(p) = pid.as_mut() {
                if let PidState::Running { rss_kb } = pid_state(p.pid) {
                    if !p.reported_rss && p.grown(rss_kb) {
                        p.reported_rss = true;
                        found.push((
                            "rss-growth",
                            None,
                            format!(
                                "the broker's RSS grew from {} KiB to {rss_kb} KiB",
                                p.rss0_kb
                            ),
                            Vec::new(),
                            Vec::new(),
                            pending.clone(),
                        ));
                    }
                }
            }
            since_check = 0;
            pending.clear();
        }
        for (code, hint, message, response, diagnostics, seq) in found {
            if rep.findings.len() >= cfg.max_findings {
                break;
            }
            // For batch-local events `hint` indexes the round; for the others, `pending`.
            let blame = hint
                .and_then(|h| seq.get(h).or_else(|| seq.get(h.saturating_sub(base))))
                .or_else(|| seq.last())
                .cloned();
            let Some(blame) = blame else { continue };
            if code == "malformed-response"
                && in_records(&diagnostics)
                && rep
                    .findings
                    .iter()
                    .any(|s| s.finding.code == "accepted-corrupt-batch")
            {
                // The broker stores corrupt batches (found and reproduced on its own): a Fetch
                // returning one is that finding again, and no sequence reproduces it from a
                // fresh broker unless it holds the Produce that stored it.
                rep.stats.stored_corrupt += 1;
                continue;
            }
            let sig = match code {
                // A damaged record batch in an answer is data the broker stored (a corrupt batch
                // it accepted earlier): one finding per API and diagnostic, whatever the version.
                "malformed-response" if in_records(&diagnostics) => format!(
                    "{code}/{}/records/{}",
                    blame.api_key,
                    first_error(&diagnostics).map_or("", |d| d.code)
                ),
                "malformed-response" => format!(
                    "{code}/{}/{}/{}",
                    blame.api_key,
                    blame.api_version,
                    first_error(&diagnostics).map_or("", |d| d.code)
                ),
                "correlation-mismatch" | "bad-frame-size" | "rss-growth" => code.to_string(),
                _ => format!("{code}/{}/{}", blame.api_key, blame.mutator),
            };
            if !seen.insert(sig) {
                continue;
            }
            let m0 = Instant::now();
            let hint_in_seq = seq.iter().position(|c| *c == blame);
            let saved = settle(
                cfg,
                code,
                &blame,
                hint_in_seq,
                seq,
                message,
                response,
                diagnostics,
                &t,
                rep.findings.len() + rep.unconfirmed.len(),
            );
            minimising += m0.elapsed();
            // A broker that dies or hangs is blamed, before minimising, on whatever case came
            // last; minimised, many of those are one case kind killing it again (the mock's
            // null-records assert was 86 findings in ten minutes). One finding per minimised
            // kind: the repeat's folder goes and it is counted.
            let repeat = saved.reproducer.minimised
                && matches!(code, "broker-down" | "broker-exited" | "hung-connection")
                && !seen.insert(format!(
                    "{code}/minimised/{}/{}",
                    saved.finding.api_key, saved.finding.variant
                ));
            if repeat {
                if let Some(dir) = &saved.dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                rep.stats.repeats += 1;
            } else if saved.confirmed {
                rep.findings.push(saved);
            } else {
                rep.unconfirmed.push(saved);
            }
            if matches!(code, "broker-down" | "broker-exited") && !ensure_alive(cfg, &target) {
                rep.stopped = Some(not_back(cfg));
                break;
            }
            if let (Some(p), Some(b)) = (pid.as_mut(), cfg.broker_pid) {
                if pid_state(b) == PidState::Exited {
                    // The watched process is gone; a restarted broker has another pid.
                    let _ = p;
                    pid = None;
                }
            }
        }
        if rep.stopped.is_none() && down {
            rep.stats.restarts += 1;
            if !ensure_alive(cfg, &target) {
                rep.stopped = Some(not_back(cfg));
            }
        }
        if rep.stopped.is_some() {
            break;
        }
        rep.stats.elapsed = started.elapsed().saturating_sub(minimising);
        rep.stats.findings = rep.findings.len();
        if let Some(p) = &cfg.progress {
            if last_progress.elapsed() >= Duration::from_millis(250) {
                last_progress = Instant::now();
                p(&rep.stats);
            }
        }
    }
    rep.stats.elapsed = started.elapsed().saturating_sub(minimising);
    rep.stats.findings = rep.findings.len();
    rep.minimising = minimising;
    Ok(rep)
}

/// The first error diagnostic.
fn first_error(diags: &[crate::diag::Diagnostic]) -> Option<&crate::diag::Diagnostic> {
    diags
        .iter()
        .find(|d| d.severity == crate::diag::Severity::Error)
}

/// Whether the first error lies inside a `records` field (a record batch the broker returned).
fn in_records(diags: &[crate::diag::Diagnostic]) -> bool {
    first_error(diags).is_some_and(|d| d.path.contains("Records"))
}

/// Why the run stopped when the broker stayed down.
fn not_back(cfg: &Config) -> String {
    format!(
        "the broker did not come back within {:.0} s{}",
        cfg.restart_wait.as_secs_f64(),
        if cfg.restart.is_none() {
            " (no --restart-cmd)"
        } else {
            ""
        }
    )
}

fn pid_state(pid: u32) -> PidState {
    exec::pid_state(pid)
}

/// The first case of `batch` that got no answer in `out` (the one to blame when the round did
/// not end with the sentinel's answer).
fn out_first_unanswered(out: &RoundOut, batch: &[Case]) -> Option<usize> {
    if out.end == End::Answered {
        return None;
    }
    Some(out.first_unanswered.min(batch.len().saturating_sub(1)))
}

/// The finding codes the fuzzer adds to the probe's (see `findings::CODES`).
pub const FUZZ_CODES: &[&str] = &[
    "hung-connection",
    "broker-exited",
    "rss-growth",
    "accepted-corrupt-batch",
];

#[cfg(test)]
mod tests {
    #[test]
    fn fuzz_codes_are_documented_codes() {
        for c in super::FUZZ_CODES {
            assert!(
                crate::probe::findings::CODES.iter().any(|(d, _, _)| d == c),
                "{c}"
            );
        }
    }
}
