//! The hostile-input campaign: generates cases deterministically from a seed, runs the release
//! `kinspect` on each under `timeout` and an address-space limit, and fails on any exit code
//! outside 0/1/2, a panic, a slow run, a peak RSS over the limit, or stdout that is not JSON
//! where JSON was asked for. `scripts/hostile-campaign.sh` builds and drives it.
//!
//! ```text
//! cargo run --release --example hostile -- [--cases N] [--seconds S] [--seed X] [--jobs J]
//!     [--only CAT,…] [--keep DIR] [--case CAT:INDEX] [--bin PATH] [--rss-mib M] [--as-mib M]
//!     [--time-limit S] [--cpu-limit S]
//! ```
//!
//! `--cases N` is per category (the heavy categories run a fraction of it, see [`CATEGORIES`]);
//! `--seconds S` stops starting cases after S seconds. Cases are interleaved across categories,
//! so a time-bounded run covers all of them evenly. Each case's bytes depend only on the seed,
//! its category and its index: `--case CAT:INDEX` regenerates and reruns exactly one.

mod captures;
mod frames;
mod json;
mod mutate;
mod records;
mod run;

use kinspect::wire::sample::Rng;
use run::{Case, Limits, Outcome};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What the generators read: the bundled captures, their decoded JSON Lines, the built-in specs.
pub struct Ctx {
    pub caps: Vec<(String, Vec<u8>)>,
    pub decoded: Vec<String>,
    pub specs: Vec<(String, serde_json::Value)>,
}

type Gen = fn(u64, &mut Rng, &Ctx) -> Case;

/// Each category: name, generator, and the share of `--cases` it runs (per mille; heavy ones
/// run fewer).
const CATEGORIES: &[(&str, Gen, u64)] = &[
    (
        "captures",
        |i, r, c| captures::captures_case(i, r, &c.caps),
        1000,
    ),
    ("synthetic", |i, r, _| captures::synthetic_case(i, r), 1000),
    ("frames", |i, r, _| frames::frames_case(i, r), 1000),
    ("hex", |i, r, _| frames::hex_case(i, r), 1000),
    ("bombs", |i, r, _| records::bombs_case(i, r), 25),
    ("logs", |i, r, _| records::logs_case(i, r), 1000),
    ("specs", |i, r, c| json::specs_case(i, r, c), 1000),
    ("encode", |i, r, c| json::encode_case(i, r, c), 1000),
    ("pipes", |i, r, c| json::pipes_case(i, r, c), 200),
];

fn case_rng(seed: u64, cat: usize, i: u64) -> Rng {
    let mut r = Rng::new(
        seed ^ (cat as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ i.wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
    );
    r.next_u64();
    r
}

struct Opts {
    cases: u64,
    seconds: Option<f64>,
    seed: u64,
    jobs: usize,
    only: Option<Vec<String>>,
    keep: Option<PathBuf>,
    one: Option<(String, u64)>,
    bin: PathBuf,
    root: PathBuf,
    lim: Limits,
}

fn parse() -> Opts {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut o = Opts {
        cases: 100,
        seconds: None,
        seed: 0x6b69_6e73,
        jobs: 2,
        only: None,
        keep: None,
        one: None,
        bin: root.join("target/release/kinspect"),
        root,
        lim: Limits {
            as_bytes: 1 << 30,
            // Two trees can be decoded at once (one per thread), each bounded by the limits in
            // src/limits.rs (2 Mi nodes, 64 MiB decompressed): about 420 MiB at worst.
            rss_kib: 512 << 10,
            // A guard against hangs: on a loaded shared machine wall time says little, so the
            // time criterion proper is CPU time, which does not move with the load.
            secs: 20,
            cpu: 8,
        },
    };
    let mut args = std::env::args().skip(1);
    let mut bin_given = false;
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .unwrap_or_else(|| die(&format!("{a} needs a value")))
        };
        // `0x` and hex digits (as the seed is printed), or decimal digits.
        let num = |s: String| -> u64 {
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            }
            .unwrap_or_else(|_| die(&format!("not a number (decimal, or hex after 0x): {s}")))
        };
        match a.as_str() {
            "--cases" => o.cases = num(val()),
            "--seconds" => o.seconds = Some(val().parse().unwrap_or_else(|_| die("--seconds S"))),
            "--seed" => o.seed = num(val()),
            "--jobs" => o.jobs = num(val()).max(1) as usize,
            "--only" => o.only = Some(val().split(',').map(str::to_string).collect()),
            "--keep" => o.keep = Some(PathBuf::from(val())),
            "--case" => {
                let v = val();
                let (c, i) = v.split_once(':').unwrap_or_else(|| die("--case CAT:INDEX"));
                o.one = Some((c.to_string(), num(i.to_string())));
            }
            "--bin" => {
                o.bin = PathBuf::from(val());
                bin_given = true;
            }
            "--root" => o.root = PathBuf::from(val()),
            "--rss-mib" => o.lim.rss_kib = num(val()) << 10,
            "--as-mib" => o.lim.as_bytes = num(val()) << 20,
            "--time-limit" => o.lim.secs = num(val()),
            "--cpu-limit" => o.lim.cpu = num(val()),
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("main.rs")
                        .lines()
                        .take_while(|l| l.starts_with("//!"))
                        .map(|l| l.trim_start_matches("//!").trim_start())
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                std::process::exit(0);
            }
            _ => die(&format!("unknown option {a}")),
        }
    }
    if !bin_given {
        o.bin = o.root.join("target/release/kinspect");
    }
    o.bin = std::fs::canonicalize(&o.bin).unwrap_or_else(|_| {
        die(&format!(
            "no kinspect binary at {}: build it (cargo build --release) or pass --bin",
            o.bin.display()
        ))
    });
    o
}

fn die(msg: &str) -> ! {
    eprintln!("hostile: {msg}");
    std::process::exit(2)
}

fn context(o: &Opts) -> Ctx {
    let mut caps: Vec<(String, Vec<u8>)> = std::fs::read_dir(o.root.join("captures"))
        .unwrap_or_else(|e| die(&format!("captures/: {e}")))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .map(|p| {
            (
                p.file_name().expect("name").to_string_lossy().into_owned(),
                std::fs::read(&p).expect("capture"),
            )
        })
        .collect();
    caps.sort();
    let mut decoded = Vec::new();
    for (name, _) in &caps {
        let out = std::process::Command::new(&o.bin)
            .args(["decode", "-f", "jsonl"])
            .arg(o.root.join("captures").join(name))
            .output()
            .unwrap_or_else(|e| die(&format!("running kinspect: {e}")));
        decoded.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| l.contains("\"api_key\""))
                .map(str::to_string),
        );
    }
    Ctx {
        caps,
        decoded,
        specs: json::builtin_specs(),
    }
}

#[derive(Default, Clone)]
struct Stats {
    cases: u64,
    failures: u64,
    max_secs: f64,
    max_cpu: f64,
    gen_errors: u64,
    slowest: u64,
    max_rss: u64,
    biggest: u64,
    total_secs: f64,
    shown: Vec<String>,
}

fn write_case(dir: &Path, case: &Case) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("case folder");
    for (name, data) in &case.files {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("folder");
        }
        std::fs::write(p, data).expect("case file");
    }
    for (name, target) in &case.links {
        std::os::unix::fs::symlink(target, dir.join(name)).expect("case link");
    }
}

fn keep(o: &Opts, cat: &str, i: u64, case: &Case, out: Option<&Outcome>) -> Option<PathBuf> {
    let k = o.keep.as_ref()?.join(format!("{cat}-{i}"));
    write_case(&k, case);
    let cmd = run::command_line(&o.bin, case, &o.lim);
    let script = format!(
        "#!/usr/bin/env bash\n# {cat}:{i} (seed {:#x}): {}\n# regenerate: cargo run --release --example hostile -- --seed {:#x} --case {cat}:{i} --keep DIR\n# pipefail: with `| true` the status shown is kinspect's, not true's.\nset -o pipefail\ncd \"$(dirname \"$0\")\" || exit 2\n{cmd}\necho \"exit $?\"\n",
        o.seed, case.what, o.seed
    );
    std::fs::write(k.join("cmd.sh"), script).expect("cmd.sh");
    if let Some(out) = out {
        let why = format!(
            "{}\nexit {} in {:.3} s ({:.2} CPU-s), peak RSS {} KiB\n",
            out.failure.as_deref().unwrap_or("passed"),
            out.code,
            out.secs,
            out.cpu,
            out.rss_kib
        );
        std::fs::write(k.join("why.txt"), why).expect("why.txt");
        std::fs::write(k.join("stderr.txt"), &out.stderr_head).expect("stderr.txt");
    }
    Some(k)
}

fn main() {
    let o = parse();
    let cats: Vec<usize> = (0..CATEGORIES.len())
        .filter(|&c| {
            o.only
                .as_ref()
                .is_none_or(|only| only.iter().any(|n| n == CATEGORIES[c].0))
        })
        .collect();
    if let Some(only) = &o.only {
        if let Some(bad) = only
            .iter()
            .find(|n| !CATEGORIES.iter().any(|c| c.0 == n.as_str()))
        {
            die(&format!(
                "unknown category {bad}; categories: {}",
                CATEGORIES
                    .iter()
                    .map(|c| c.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let ctx = context(&o);
    let tmp = std::env::temp_dir().join(format!("kinspect-hostile-{}", std::process::id()));
    // The schedule: case indices interleaved across categories.
    let mut schedule: Vec<(usize, u64)> = Vec::new();
    if let Some((cat, i)) = &o.one {
        let c = CATEGORIES
            .iter()
            .position(|c| c.0 == cat)
            .unwrap_or_else(|| die("unknown category"));
        schedule.push((c, *i));
    } else {
        let per = |c: usize| (o.cases * CATEGORIES[c].2).div_ceil(1000);
        let rounds = cats.iter().map(|&c| per(c)).max().unwrap_or(0);
        for r in 0..rounds {
            for &c in &cats {
                // Spread the lighter categories' cases evenly over the rounds.
                let n = per(c);
                if n > 0 && (r * n) / rounds != ((r + 1) * n) / rounds {
                    schedule.push((c, (r * n) / rounds));
                }
            }
        }
    }
    eprintln!(
        "hostile: {} cases over {} categories, seed {:#x}, {} jobs, limits: {} MiB address space, {} MiB RSS, {} s wall and {} CPU-s per started 2 MiB of input; binary {}",
        schedule.len(),
        cats.len(),
        o.seed,
        o.jobs,
        o.lim.as_bytes >> 20,
        o.lim.rss_kib >> 10,
        o.lim.secs,
        o.lim.cpu,
        o.bin.display()
    );
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let stats: Mutex<Vec<Stats>> = Mutex::new(vec![Stats::default(); CATEGORIES.len()]);
    let start = Instant::now();
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..o.jobs {
            let (o, ctx, next, stop, stats, schedule, tmp, done) =
                (&o, &ctx, &next, &stop, &stats, &schedule, &tmp, &done);
            // Deeply nested JSON (specs, encode cases) recurses in serde_json: a roomy stack.
            let b = std::thread::Builder::new().stack_size(512 << 20);
            b.spawn_scoped(s, move || {
                let dir = tmp.join(format!("w{w}"));
                loop {
                    if o.seconds
                        .is_some_and(|lim| start.elapsed().as_secs_f64() > lim)
                    {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(c, i)) = schedule.get(k) else {
                        break;
                    };
                    let (name, gen, _) = CATEGORIES[c];
                    let mut rng = case_rng(o.seed, c, i);
                    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        gen(i, &mut rng, ctx)
                    }));
                    let Ok(case) = made else {
                        // A bug of the harness, not of kinspect: counted and shown apart.
                        eprintln!(
                            "hostile: the generator panicked on {name}:{i} (harness bug); skipped"
                        );
                        stats.lock().expect("stats")[c].gen_errors += 1;
                        continue;
                    };
                    if case.input_bytes() > 64 << 20 {
                        eprintln!(
                            "hostile: {name}:{i} made {} bytes of input (harness bug); skipped",
                            case.input_bytes()
                        );
                        stats.lock().expect("stats")[c].gen_errors += 1;
                        continue;
                    }
                    write_case(&dir, &case);
                    let out = run::run(
                        &o.bin,
                        &dir,
                        &tmp.join(format!("w{w}.rusage")),
                        &case,
                        &o.lim,
                    );
                    let kept = if out.failure.is_some() || o.one.is_some() {
                        keep(o, name, i, &case, Some(&out))
                    } else {
                        None
                    };
                    let mut st = stats.lock().expect("stats");
                    let st = &mut st[c];
                    st.cases += 1;
                    st.total_secs += out.secs;
                    if out.secs > st.max_secs {
                        st.max_secs = out.secs;
                        st.slowest = i;
                    }
                    st.max_cpu = st.max_cpu.max(out.cpu);
                    if out.rss_kib > st.max_rss {
                        st.max_rss = out.rss_kib;
                        st.biggest = i;
                    }
                    if let Some(f) = &out.failure {
                        st.failures += 1;
                        let line = format!(
                            "  FAIL {name}:{i} [{}; {} bytes in] {f}\n       repro: {}",
                            case.what,
                            case.input_bytes(),
                            match &kept {
                                Some(k) => format!("bash {}/cmd.sh", k.display()),
                                None => format!(
                                    "(cd CASE && {})  # --keep DIR writes CASE",
                                    run::command_line(&o.bin, &case, &o.lim)
                                ),
                            }
                        );
                        if st.shown.len() < 6 {
                            st.shown.push(line.clone());
                        }
                        eprintln!("{line}");
                    } else if o.one.is_some() {
                        eprintln!(
                            "  pass {name}:{i} [{}] exit {} in {:.3} s ({:.2} CPU-s), {} KiB",
                            case.what, out.code, out.secs, out.cpu, out.rss_kib
                        );
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % 2000 == 0 {
                        eprintln!(
                            "hostile: {n} cases in {:.0} s",
                            start.elapsed().as_secs_f64()
                        );
                    }
                }
                let _ = std::fs::remove_dir_all(&dir);
            })
            .expect("worker thread");
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let st = stats.into_inner().expect("stats");
    let wall = start.elapsed().as_secs_f64();
    println!(
        "\nhostile-input campaign: seed {:#x}, {:.0} s wall, {} jobs",
        o.seed, wall, o.jobs
    );
    let row = |name: &str, s: &Stats, at: String| {
        println!(
            "{:<10} {:>7} {:>8} {:>8.3} {:>8.2} {:>8.2} {:>11} {:>11}",
            name,
            s.cases,
            s.failures,
            s.total_secs / s.cases.max(1) as f64,
            s.max_secs,
            s.max_cpu,
            s.max_rss,
            at
        )
    };
    println!(
        "{:<10} {:>7} {:>8} {:>8} {:>8} {:>8} {:>11} {:>11}",
        "category", "cases", "failures", "mean s", "max s", "max CPU", "max RSS KiB", "slowest/rss"
    );
    let mut total = Stats::default();
    for &c in &cats {
        let s = &st[c];
        row(CATEGORIES[c].0, s, format!("{}/{}", s.slowest, s.biggest));
        total.cases += s.cases;
        total.failures += s.failures;
        total.total_secs += s.total_secs;
        total.max_secs = total.max_secs.max(s.max_secs);
        total.max_cpu = total.max_cpu.max(s.max_cpu);
        total.max_rss = total.max_rss.max(s.max_rss);
    }
    row("total", &total, String::new());
    let gen_errors: u64 = st.iter().map(|s| s.gen_errors).sum();
    if gen_errors > 0 {
        println!("harness: {gen_errors} cases skipped because the generator panicked (see stderr)");
    }
    println!(
        "(slowest/rss: the indices of the slowest and the largest-RSS case, for --case CAT:INDEX)"
    );
    if total.failures > 0 {
        println!("\nfailures (first few per category):");
        for &c in &cats {
            for l in &st[c].shown {
                println!("{l}");
            }
        }
        std::process::exit(1);
    }
}
