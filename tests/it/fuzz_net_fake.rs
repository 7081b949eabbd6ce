//! The fuzzer against an in-process fake broker (a thread on 127.0.0.1:0) that dies on chosen
//! requests: it closes every connection and refuses new ones for a while, then listens again on
//! the same port (a broker that restarts itself). The minimiser must find the one case (or the
//! two, in order, of a state bug) hidden in a 200-case sequence; a fuzz run's saved finding
//! must replay.

use kinspect::probe::fuzz::cases::{Case, Generator, Target as Api};
use kinspect::probe::fuzz::{self, Config};
use kinspect::probe::generate::Entities;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const METADATA: i16 = 3;
pub const FIND_COORDINATOR: i16 = 10;
pub const API_VERSIONS: i16 = 18;

/// A request's bytes as the fake compares them: no size prefix, correlation id zeroed.
pub fn key_bytes(frame_without_prefix: &[u8]) -> Vec<u8> {
    let mut b = frame_without_prefix.to_vec();
    if b.len() >= 8 {
        b[4..8].copy_from_slice(&[0; 4]);
    }
    b
}

/// What a fake connection does with one request.
pub enum Verdict {
    Answer(Vec<u8>),
    Silent,
    Die,
}

/// Decides per request, with per-connection state.
pub type Judge = Arc<dyn Fn(&[u8], &mut Vec<u8>) -> Verdict + Send + Sync>;

fn frame(corr: &[u8], body: &[u8]) -> Vec<u8> {
    let mut f = ((4 + body.len()) as u32).to_be_bytes().to_vec();
    f.extend_from_slice(corr);
    f.extend_from_slice(body);
    f
}

/// The answers of a fake that advertises `apis` ((key, min, max)) and answers ApiVersions v0
/// and Metadata v0; everything else goes unanswered.
pub fn standard(apis: &[(i16, i16, i16)], req: &[u8]) -> Verdict {
    if req.len() < 8 {
        return Verdict::Silent;
    }
    let key = i16::from_be_bytes([req[0], req[1]]);
    let v = i16::from_be_bytes([req[2], req[3]]);
    let corr = &req[4..8];
    match (key, v) {
        (API_VERSIONS, 0) => {
            let mut b = vec![0, 0];
            b.extend_from_slice(&(apis.len() as i32).to_be_bytes());
            for (k, lo, hi) in apis {
                b.extend_from_slice(&k.to_be_bytes());
                b.extend_from_slice(&lo.to_be_bytes());
                b.extend_from_slice(&hi.to_be_bytes());
            }
            Verdict::Answer(frame(corr, &b))
        }
        (API_VERSIONS, _) => Verdict::Answer(frame(corr, &[0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 0])),
        (METADATA, 0) => Verdict::Answer(frame(corr, &[0, 0, 0, 0, 0, 0, 0, 0])),
        _ => Verdict::Silent,
    }
}

pub struct Fake {
    pub addr: SocketAddr,
    pub deaths: Arc<Mutex<u32>>,
    /// Every request received (without size prefix).
    pub seen: Arc<Mutex<Vec<Vec<u8>>>>,
}

/// Starts the fake; it is down for `down` after each death.
pub fn fake(judge: Judge, down: Duration) -> Fake {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let deaths = Arc::new(Mutex::new(0u32));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let conns: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
    let down_until: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let (d2, s2) = (deaths.clone(), seen.clone());
    std::thread::spawn(move || {
        let mut listener = Some(l);
        loop {
            let until = *down_until.lock().unwrap();
            match until {
                Some(t) if Instant::now() < t => {
                    if listener.take().is_some() {
                        for c in conns.lock().unwrap().drain(..) {
                            let _ = c.shutdown(Shutdown::Both);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Some(_) => {
                    *down_until.lock().unwrap() = None;
                    // Back up, on the same port (std sets SO_REUSEADDR).
                    let mut tries = 0;
                    listener = loop {
                        match TcpListener::bind(addr) {
                            Ok(l) => break Some(l),
                            Err(_) if tries < 200 => {
                                tries += 1;
                                std::thread::sleep(Duration::from_millis(5));
                            }
                            Err(e) => panic!("rebind {addr}: {e}"),
                        }
                    };
                }
                None => {}
            }
            let l = listener.as_ref().unwrap();
            l.set_nonblocking(true).unwrap();
            match l.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    conns.lock().unwrap().push(s.try_clone().unwrap());
                    let (judge, du, deaths, seen) =
                        (judge.clone(), down_until.clone(), d2.clone(), s2.clone());
                    std::thread::spawn(move || serve(s, judge, du, deaths, seen, down));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    });
    Fake { addr, deaths, seen }
}

fn serve(
    mut s: TcpStream,
    judge: Judge,
    down_until: Arc<Mutex<Option<Instant>>>,
    deaths: Arc<Mutex<u32>>,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    down: Duration,
) {
    let mut state = Vec::new();
    loop {
        let mut size = [0u8; 4];
        if s.read_exact(&mut size).is_err() {
            return;
        }
        let n = u32::from_be_bytes(size) as usize;
        if n > 1 << 24 {
            return;
        }
        let mut req = vec![0u8; n];
        if s.read_exact(&mut req).is_err() {
            return;
        }
        seen.lock().unwrap().push(req.clone());
        match judge(&req, &mut state) {
            Verdict::Answer(a) => {
                if s.write_all(&a).is_err() {
                    return;
                }
            }
            Verdict::Silent => {}
            Verdict::Die => {
                *deaths.lock().unwrap() += 1;
                *down_until.lock().unwrap() = Some(Instant::now() + down);
                let _ = s.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

const APIS: [(i16, i16, i16); 3] = [
    (METADATA, 0, 0),
    (FIND_COORDINATOR, 0, 0),
    (API_VERSIONS, 0, 0),
];

fn config(addr: SocketAddr) -> Config {
    let mut cfg = Config::new(addr, kinspect::protocol::builtin());
    cfg.timeout = Duration::from_millis(300);
    cfg.restart_wait = Duration::from_secs(3);
    cfg
}

/// 200 cases from the fuzzer's own generator.
fn two_hundred() -> Vec<Case> {
    let targets = vec![
        Api {
            api_key: METADATA,
            lo: 0,
            hi: 0,
        },
        Api {
            api_key: FIND_COORDINATOR,
            lo: 0,
            hi: 0,
        },
    ];
    let mut g = Generator::new(
        kinspect::protocol::builtin(),
        targets,
        Entities::default(),
        7,
        "t",
    );
    (0..200).map(|_| g.next_case().unwrap()).collect()
}

/// The first case at or after `from` whose bytes no other case has.
fn unique(seq: &[Case], from: usize) -> usize {
    (from..seq.len())
        .find(|&i| {
            let k = key_bytes(&seq[i].bytes[4..]);
            seq.iter().filter(|c| key_bytes(&c.bytes[4..]) == k).count() == 1
        })
        .unwrap()
}

#[test]
fn the_minimiser_finds_the_one_case_that_kills_the_broker_among_200() {
    let seq = two_hundred();
    let k = unique(&seq, 137);
    let deadly = key_bytes(&seq[k].bytes[4..]);
    let f = fake(
        Arc::new(move |req: &[u8], _: &mut Vec<u8>| {
            if key_bytes(req) == deadly {
                Verdict::Die
            } else {
                standard(&APIS, req)
            }
        }),
        Duration::from_millis(150),
    );
    let cfg = config(f.addr);
    let (min, reproduced, transcript) =
        fuzz::reduce(&cfg, "broker-down", seq[k].api_key, 0, &seq, None);
    assert!(reproduced);
    assert_eq!(
        min.len(),
        1,
        "{:?}",
        min.iter().map(|c| &c.mutator).collect::<Vec<_>>()
    );
    assert_eq!(min[0].bytes, seq[k].bytes, "case {k}: {}", seq[k].note);
    assert!(transcript.is_some_and(|t| !t.conns.is_empty()));
    assert!(*f.deaths.lock().unwrap() >= 2);
}

#[test]
fn a_state_bug_needing_two_cases_in_order_reduces_to_those_two() {
    let seq = two_hundred();
    let a = unique(&seq, 40);
    let b = unique(&seq, 150);
    let (ka, kb) = (key_bytes(&seq[a].bytes[4..]), key_bytes(&seq[b].bytes[4..]));
    let f = fake(
        Arc::new(move |req: &[u8], state: &mut Vec<u8>| {
            let k = key_bytes(req);
            if k == ka {
                *state = vec![1];
            } else if k == kb && state.as_slice() == [1] {
                return Verdict::Die;
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(150),
    );
    let mut cfg = config(f.addr);
    // Both on one connection: the whole sequence is one round.
    cfg.round = 256;
    let (min, reproduced, _) = fuzz::reduce(&cfg, "broker-down", seq[b].api_key, 0, &seq, None);
    assert!(reproduced);
    let got: Vec<&[u8]> = min.iter().map(|c| &c.bytes[..]).collect();
    assert_eq!(got, [&seq[a].bytes[..], &seq[b].bytes[..]]);
}

#[test]
fn a_saved_finding_replays_and_a_harmless_one_does_not() {
    // This fake dies on any version past its range (the `version-past-range` mutator's lie).
    let f = fake(
        Arc::new(|req: &[u8], _: &mut Vec<u8>| {
            if req.len() >= 4 {
                let key = i16::from_be_bytes([req[0], req[1]]);
                let v = i16::from_be_bytes([req[2], req[3]]);
                if APIS.iter().any(|&(k, _, hi)| k == key && v > hi) && key != API_VERSIONS {
                    return Verdict::Die;
                }
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(150),
    );
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-net-replay");
    let _ = std::fs::remove_dir_all(&out);
    let mut cfg = config(f.addr);
    cfg.cases = Some(400);
    cfg.seed = 3;
    cfg.out = Some(out.clone());
    cfg.max_findings = 1;
    let rep = fuzz::run(&cfg).unwrap();
    let s = rep
        .findings
        .iter()
        .find(|s| s.finding.code == "broker-down")
        .expect("a broker-down finding");
    assert!(s.reproducer.minimised, "{}", rep.summary(cfg.protocol));
    assert_eq!(s.reproducer.sequence.len(), 1);
    assert_eq!(s.reproducer.sequence[0].mutator, "version-past-range");
    let dir = s.dir.clone().unwrap();
    for file in [
        "reproducer.json",
        "case.hex",
        "sequence.hex",
        "session.pcap",
    ] {
        assert!(dir.join(file).exists(), "{file}");
    }
    let r = fuzz::replay(&cfg, &dir).unwrap();
    assert!(r.reproduced);
    // The same file with the deadly case swapped for a valid ping does not reproduce.
    let text = std::fs::read_to_string(dir.join("reproducer.json")).unwrap();
    let mut j: serde_json::Value = serde_json::from_str(&text).unwrap();
    j["sequence"][0]["hex"] = "0000000a00120000000000010000".into();
    let harmless = out.join("harmless.json");
    std::fs::write(&harmless, j.to_string()).unwrap();
    assert!(!fuzz::replay(&cfg, &harmless).unwrap().reproduced);
    // The CLI says so too.
    let o = super::common::kinspect(&[
        "fuzz",
        "--replay",
        dir.to_str().unwrap(),
        &f.addr.to_string(),
        "--timeout",
        "300",
    ]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": reproduces"),
        "{o:?}"
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_broker_found_down_again_is_waited_for_even_when_the_finding_is_a_repeat() {
    // Dies on every version past its range and stays down for a second each time. Only the first
    // death is a new finding; the later ones are repeats, and the run must still wait for the
    // broker before its next round instead of counting rounds that never connected as sent.
    let f = fake(
        Arc::new(|req: &[u8], _: &mut Vec<u8>| {
            if req.len() >= 4 {
                let key = i16::from_be_bytes([req[0], req[1]]);
                let v = i16::from_be_bytes([req[2], req[3]]);
                if APIS.iter().any(|&(k, _, hi)| k == key && v > hi) && key != API_VERSIONS {
                    return Verdict::Die;
                }
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(1000),
    );
    let mut cfg = config(f.addr);
    cfg.cases = Some(400);
    cfg.seed = 3;
    cfg.max_findings = 50;
    let rep = fuzz::run(&cfg).unwrap();
    let deaths = *f.deaths.lock().unwrap();
    assert!(
        deaths >= 3,
        "{deaths} deaths: {}",
        rep.summary(cfg.protocol)
    );
    assert!(rep.stats.restarts >= 2, "{}", rep.summary(cfg.protocol));
    assert!(rep.stopped.is_none(), "{:?}", rep.stopped);
    // Every case counted reached the broker (the fake also sees pings and re-runs: at least).
    let seen = f.seen.lock().unwrap().len() as u64;
    assert!(
        seen >= rep.stats.cases,
        "{} cases counted, {seen} requests reached the broker: {}",
        rep.stats.cases,
        rep.summary(cfg.protocol)
    );
}

#[test]
fn deaths_that_minimise_to_a_case_kind_already_reported_are_one_finding() {
    // Answers every Metadata request, then dies on the next request, whatever it is (the
    // mock's null-records assert behaves so: the reply goes out, then the process aborts).
    // Before minimising, each death is blamed on whichever case came next; minimised, the
    // deaths are Metadata cases of a few kinds, and each kind is one finding.
    use std::sync::atomic::{AtomicBool, Ordering};
    let poisoned = Arc::new(AtomicBool::new(false));
    let p = poisoned.clone();
    let f = fake(
        Arc::new(move |req: &[u8], _: &mut Vec<u8>| {
            if p.swap(false, Ordering::SeqCst) {
                return Verdict::Die;
            }
            if req.len() >= 8 && i16::from_be_bytes([req[0], req[1]]) == METADATA {
                p.store(true, Ordering::SeqCst);
                return Verdict::Answer(frame(&req[4..8], &[0, 0, 0, 0, 0, 0, 0, 0]));
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(50),
    );
    let mut cfg = config(f.addr);
    cfg.cases = Some(600);
    cfg.seed = 5;
    cfg.max_findings = 200;
    let rep = fuzz::run(&cfg).unwrap();
    let summary = rep.summary(cfg.protocol);
    let downs: Vec<_> = rep
        .findings
        .iter()
        .filter(|s| s.finding.code == "broker-down")
        .collect();
    assert!(!downs.is_empty(), "{summary}");
    let mut kinds = std::collections::HashSet::new();
    for s in &downs {
        assert!(s.reproducer.minimised, "{summary}");
        assert_eq!(s.finding.api_key, METADATA, "{summary}");
        assert!(
            kinds.insert(s.finding.variant.clone()),
            "two broker-down findings of Metadata [{}]: {summary}",
            s.finding.variant
        );
    }
    assert!(rep.stats.repeats > 0, "{summary}");
    assert!(summary.contains("repeat(s) left out"), "{summary}");
}

#[test]
fn a_death_that_does_not_happen_again_is_kept_apart_as_unconfirmed() {
    // Dies on the first FindCoordinator request of its first life only, as a broker that dies
    // of a race would: the fuzz run sees the death, no re-run shows it again.
    use std::sync::atomic::{AtomicBool, Ordering};
    let spent = Arc::new(AtomicBool::new(false));
    let s2 = spent.clone();
    let f = fake(
        Arc::new(move |req: &[u8], _: &mut Vec<u8>| {
            if req.len() >= 2
                && i16::from_be_bytes([req[0], req[1]]) == FIND_COORDINATOR
                && !s2.swap(true, Ordering::SeqCst)
            {
                return Verdict::Die;
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(100),
    );
    let out = std::env::temp_dir().join(format!("kinspect-unconfirmed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut cfg = config(f.addr);
    cfg.cases = Some(200);
    cfg.seed = 11;
    cfg.out = Some(out.clone());
    cfg.restart = Some(Arc::new(|| {}));
    let rep = fuzz::run(&cfg).unwrap();
    let summary = rep.summary(cfg.protocol);
    assert!(
        rep.findings.iter().all(|s| s.finding.code != "broker-down"),
        "{summary}"
    );
    let u = rep
        .unconfirmed
        .iter()
        .find(|s| s.finding.code == "broker-down")
        .unwrap_or_else(|| panic!("an unconfirmed death: {summary}"));
    assert!(!u.confirmed);
    let dir = u.dir.clone().expect("saved");
    assert!(
        dir.starts_with(out.join("unconfirmed")),
        "{}",
        dir.display()
    );
    assert!(dir.join("reproducer.json").exists());
    assert!(summary.contains("unconfirmed: 1"), "{summary}");
    assert!(rep.has_errors(), "a death seen once still fails the run");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_death_needing_state_an_earlier_trial_left_is_confirmed_on_a_fresh_broker() {
    // Broker-wide state, gone when it dies (a restart starts empty): a Metadata request arms
    // it, a FindCoordinator after that kills it. The minimiser's trials share the broker, so a
    // trial holding only the Metadata case can arm it for the next trial's FindCoordinator
    // alone. Every confirmed death must kill a fresh broker: a Metadata case before it.
    use std::sync::atomic::{AtomicBool, Ordering};
    let armed = Arc::new(AtomicBool::new(false));
    let a2 = armed.clone();
    let f = fake(
        Arc::new(move |req: &[u8], _: &mut Vec<u8>| {
            if req.len() >= 8 {
                match i16::from_be_bytes([req[0], req[1]]) {
                    METADATA => a2.store(true, Ordering::SeqCst),
                    FIND_COORDINATOR if a2.swap(false, Ordering::SeqCst) => return Verdict::Die,
                    _ => {}
                }
            }
            standard(&APIS, req)
        }),
        Duration::from_millis(50),
    );
    let mut cfg = config(f.addr);
    cfg.cases = Some(300);
    cfg.seed = 2;
    cfg.max_findings = 50;
    cfg.restart = Some(Arc::new(|| {}));
    let rep = fuzz::run(&cfg).unwrap();
    let summary = rep.summary(cfg.protocol);
    let downs: Vec<_> = rep
        .findings
        .iter()
        .filter(|s| s.finding.code == "broker-down")
        .collect();
    assert!(!downs.is_empty(), "{summary}");
    for s in downs {
        let seq = &s.reproducer.sequence;
        let fc = seq.iter().rposition(|c| c.api_key == FIND_COORDINATOR);
        let md = seq.iter().position(|c| c.api_key == METADATA);
        assert!(
            matches!((md, fc), (Some(m), Some(f)) if m < f),
            "a confirmed death whose sequence cannot kill a fresh broker: {:?}\n{summary}",
            seq.iter().map(|c| c.api_key).collect::<Vec<_>>()
        );
    }
}
