//! Re-running a finding's sequence against the broker: judging a re-run, minimising, saving
//! the reproducer, and replaying a saved one.

use super::cases::Case;
use super::exec::{self, End, Event, RoundOut, Target};
use super::repro::Reproducer;
use super::{minimise, Config, Saved};
use crate::probe::conn::Transcript;
use crate::probe::findings::Finding;
use crate::probe::{check_loopback, ProbeError};
use crate::wire::decode::Decoder;
use std::collections::HashMap;
use std::path::Path;

/// What a reproducer checks on a re-run: `outs` are the rounds with the index of their first
/// case in `seq`, `alive` the liveness check after them.
fn judge(
    code: &str,
    api_key: i16,
    version: i16,
    seq: &[Case],
    outs: &[(usize, RoundOut)],
    alive: bool,
) -> bool {
    let mut events = outs
        .iter()
        .flat_map(|(at, o)| o.events.iter().map(move |e| (*at, e)));
    match code {
        "broker-down" | "broker-exited" => !alive,
        "hung-connection" => alive && outs.iter().any(|(_, o)| o.end == End::Hung),
        "malformed-response" => events.any(|(at, e)| match e {
            Event::Malformed { case, .. } => seq
                .get(at + case)
                .is_some_and(|c| c.api_key == api_key && c.api_version == version),
            _ => false,
        }),
        "correlation-mismatch" => events.any(|(_, e)| matches!(e, Event::Mismatch { .. })),
        "bad-frame-size" => events.any(|(_, e)| matches!(e, Event::BadSize { .. })),
        "accepted-corrupt-batch" => events.any(|(at, e)| match e {
            Event::Accepted { case, .. } => seq
                .get(at + case)
                .is_some_and(|c| c.api_key == api_key && c.api_version == version),
            _ => false,
        }),
        _ => false,
    }
}

/// Runs `seq` as rounds of `round` cases, then the liveness check; says whether `code`
/// reproduces (`None`: the broker did not come back to run it). Waits for the broker
/// (restarting it) first.
#[allow(clippy::too_many_arguments)]
fn rerun(
    cfg: &Config,
    target: &Target,
    decoder: &mut Decoder,
    code: &str,
    api_key: i16,
    version: i16,
    round: usize,
    seq: &[Case],
    t: &mut Transcript,
) -> Option<bool> {
    if !ensure_alive(cfg, target) {
        return None;
    }
    let mut outs = Vec::new();
    for (i, chunk) in seq.chunks(round.max(1)).enumerate() {
        let o = exec::round(target, decoder, chunk, t);
        let refused = o.end == End::Refused;
        outs.push((i * round.max(1), o));
        if refused {
            break;
        }
    }
    let alive = exec::alive(target).is_ok();
    Some(judge(code, api_key, version, seq, &outs, alive))
}

/// Whether `seq`, which just reproduced a death, kills the broker again from a fresh start: a
/// first run that kills it makes the restart hand the second run a broker no earlier case has
/// touched. Needs a restart command; a run on a broker that was not restarted proves nothing.
/// Returns the bytes of the run on the fresh broker.
#[allow(clippy::too_many_arguments)]
fn kills_a_fresh_broker(
    cfg: &Config,
    target: &Target,
    decoder: &mut Decoder,
    code: &str,
    api_key: i16,
    version: i16,
    seq: &[Case],
) -> Option<Transcript> {
    let mut t = Transcript::default();
    for _ in 0..2 {
        t = Transcript::default();
        let r = rerun(
            cfg, target, decoder, code, api_key, version, cfg.round, seq, &mut t,
        );
        if r != Some(true) {
            return None;
        }
    }
    Some(t)
}

pub(super) fn ensure_alive(cfg: &Config, target: &Target) -> bool {
    if exec::alive(target).is_ok() {
        return true;
    }
    if let Some(r) = &cfg.restart {
        r();
    }
    exec::await_alive(target, cfg.restart_wait)
}

/// Minimises `seq`, which showed finding `code` (about `api_key` at `version`), re-running it
/// against the broker: fewer cases, then smaller ones. Returns the smallest sequence that still
/// showed it, whether any re-run showed it at all, and that re-run's bytes.
pub fn reduce(
    cfg: &Config,
    code: &str,
    api_key: i16,
    version: i16,
    seq: &[Case],
    hint: Option<usize>,
) -> (Vec<Case>, bool, Option<Transcript>) {
    let (m, shown, t, _) = reduce_and_say_if_run(cfg, code, api_key, version, seq, hint);
    (m, shown, t)
}

/// [`reduce`], and whether any re-run ran at all (the broker was there to run it).
fn reduce_and_say_if_run(
    cfg: &Config,
    code: &str,
    api_key: i16,
    version: i16,
    seq: &[Case],
    hint: Option<usize>,
) -> (Vec<Case>, bool, Option<Transcript>, bool) {
    let target = cfg.target(&[]);
    let mut decoder = crate::records::decoder(cfg.protocol);
    let last_t: std::cell::RefCell<Option<Transcript>> = std::cell::RefCell::new(None);
    let mut gone = false;
    let mut ran = false;
    let mut fails = |s: &[Case]| {
        if gone {
            return false;
        }
        let mut t = Transcript::default();
        let r = rerun(
            cfg,
            &target,
            &mut decoder,
            code,
            api_key,
            version,
            cfg.round,
            s,
            &mut t,
        );
        // A broker that does not come back ends the minimising.
        gone = r.is_none();
        ran |= r.is_some();
        let ok = r == Some(true);
        if ok {
            *last_t.borrow_mut() = Some(t);
        }
        ok
    };
    let m = minimise::minimise(seq, hint, cfg.minimise_budget, &mut fails);
    if last_t.borrow().is_none() {
        return (seq.to_vec(), false, None, ran);
    }
    let m = minimise::shrink_cases(cfg.protocol, m, 8, &mut fails);
    (m, true, last_t.into_inner(), ran)
}

/// Minimises one finding and saves it.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle(
    cfg: &Config,
    code: &'static str,
    blame: &Case,
    hint: Option<usize>,
    seq: Vec<Case>,
    message: String,
    response: Vec<u8>,
    diagnostics: Vec<crate::diag::Diagnostic>,
    found_in: &Transcript,
    n: usize,
) -> Saved {
    let original_len = seq.len();
    let reproducible = code != "rss-growth";
    let (minimal, minimised, last_t, rerun_at_all) = if reproducible {
        reduce_and_say_if_run(cfg, code, blame.api_key, blame.api_version, &seq, hint)
    } else {
        (seq.clone(), false, None, false)
    };
    // A death is confirmed on a broker restarted fresh. The minimiser's re-runs share one
    // broker, so a case can look deadly because of what an earlier trial left behind; then the
    // whole sequence is tried fresh, and kept whole when it alone kills.
    let kills = matches!(code, "broker-down" | "broker-exited");
    let mut last_t = last_t;
    let (minimal, minimised, confirmed, whole_kept) =
        if reproducible && minimised && kills && cfg.restart.is_some() {
            let target = cfg.target(&[]);
            let mut decoder = crate::records::decoder(cfg.protocol);
            let mut fresh = |s: &[Case]| {
                kills_a_fresh_broker(
                    cfg,
                    &target,
                    &mut decoder,
                    code,
                    blame.api_key,
                    blame.api_version,
                    s,
                )
            };
            if let Some(t) = fresh(&minimal) {
                last_t = Some(t);
                (minimal, true, true, None)
            } else if let Some(t) = (minimal.len() < seq.len()).then(|| fresh(&seq)).flatten() {
                last_t = Some(t);
                (seq.clone(), false, true, Some(minimal.len()))
            } else {
                (minimal, true, false, None)
            }
        } else {
            // Unconfirmed only when a re-run ran and did not show it: a broker that did not
            // come back (no --restart-cmd) could not be asked again.
            let confirmed = !reproducible || minimised || !rerun_at_all;
            (minimal, minimised, confirmed, None)
        };
    let last = minimal.last().cloned().unwrap_or_else(|| blame.clone());
    let blame_case = if code == "malformed-response" {
        blame
    } else {
        &last
    };
    let mut f = Finding::new(
        code,
        blame_case.api_key,
        cfg.protocol.api_name(blame_case.api_key),
        blame_case.api_version,
    );
    f.variant = blame_case.mutator.clone();
    f.request = blame_case.bytes.clone();
    f.response = response;
    f.diagnostics = diagnostics;
    f.message = if let Some(small) = whole_kept {
        format!(
            "{message}; kept whole ({original_len} cases): minimised to {small} case(s) it did not kill a freshly restarted broker, the whole sequence did"
        )
    } else if minimised && !confirmed {
        format!(
            "{message}; minimised from {original_len} to {} case(s), which did not kill a freshly restarted broker: it needs state left by earlier cases, or timing",
            minimal.len()
        )
    } else if minimised {
        format!(
            "{message}; minimised from {original_len} to {} case(s)",
            minimal.len()
        )
    } else if reproducible && !rerun_at_all {
        format!("{message}; not re-run (the broker did not come back): the sequence is kept whole ({original_len} cases)")
    } else if reproducible {
        format!("{message}; did not reproduce when re-run: the sequence is kept whole ({original_len} cases)")
    } else {
        message
    };
    let rp = Reproducer {
        code,
        api_key: blame_case.api_key,
        api_version: blame_case.api_version,
        round: cfg.round,
        sequence: minimal,
        original_len,
        minimised,
        seed: cfg.seed,
        finding: f.to_json(),
    };
    let pcap = crate::probe::pcap::pcap_bytes(last_t.as_ref().unwrap_or(found_in));
    let dir = cfg.out.as_deref().and_then(|out| {
        let out = if confirmed {
            out.to_path_buf()
        } else {
            out.join("unconfirmed")
        };
        rp.save(&out, n, &f, &pcap).ok()
    });
    Saved {
        finding: f,
        reproducer: rp,
        dir,
        confirmed,
    }
}

/// What a replay showed.
#[derive(Clone, Debug)]
pub struct Replay {
    pub reproducer: Reproducer,
    pub reproduced: bool,
    pub transcript: Transcript,
}

/// Replays a saved reproducer (a `reproducer.json`, or its folder) against `cfg.addr`.
pub fn replay(cfg: &Config, path: &Path) -> Result<Replay, ProbeError> {
    check_loopback(&cfg.addr)?;
    let rp = Reproducer::load(path).map_err(ProbeError::Connect)?;
    let max: HashMap<i16, i16> = HashMap::new();
    let mut target = cfg.target(&[]);
    target.max_versions = max;
    if !ensure_alive(cfg, &target) {
        return Err(ProbeError::Connect(format!(
            "{} does not answer an ApiVersions ping",
            cfg.addr
        )));
    }
    let mut decoder = crate::records::decoder(cfg.protocol);
    let mut t = Transcript::default();
    let reproduced = rerun(
        cfg,
        &target,
        &mut decoder,
        rp.code,
        rp.api_key,
        rp.api_version,
        rp.round,
        &rp.sequence,
        &mut t,
    )
    .unwrap_or(false);
    Ok(Replay {
        reproducer: rp,
        reproduced,
        transcript: t,
    })
}
