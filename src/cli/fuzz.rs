//! `kinspect fuzz HOST:PORT`: a stateful, schema-aware network fuzzer of a live broker
//! (loopback only); the driver is `kinspect::probe::fuzz`. Fuzzing can crash the broker and
//! lose its data: point it only at a test broker. Prints a summary on stderr (a progress line
//! on a terminal only), findings on stdout (`--format jsonl`: the probe's contract, plus the
//! reproducer's folder). `--replay FILE` re-runs a saved finding. Exit 0 when nothing was found
//! (replay: when it does not reproduce), 1 on findings (replay: when it reproduces), 2 for usage
//! or connection failure.

use super::io::errln;
use super::{broker_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::probe::fuzz::{self, Config};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The summary and one line per finding.
    Text,
    /// One finding per line (docs/probe.md's contract, plus `reproducer`).
    Jsonl,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The broker, HOST:PORT; only loopback addresses (127.0.0.0/8, ::1) are accepted.
    #[arg(value_name = "HOST:PORT")]
    pub addr: String,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "text")]
    pub format: Format,
    /// Seed of the cases and their mutations: the same seed against the same broker state sends
    /// the same requests.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub seed: u64,
    /// Stop after N cases (default 1000 when --seconds is not given either).
    #[arg(long, value_name = "N")]
    pub cases: Option<u64>,
    /// Stop after N seconds of fuzzing (minimising not counted).
    #[arg(long, value_name = "N")]
    pub seconds: Option<f64>,
    /// Milliseconds to wait for a round's answers and for a liveness ping.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub timeout: u64,
    /// Cases pipelined per connection.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub pipeline: usize,
    /// Where findings and their reproducers are saved (one folder each).
    #[arg(
        short = 'o',
        long = "output",
        alias = "out",
        value_name = "DIR",
        default_value = "kinspect-fuzz"
    )]
    pub out: PathBuf,
    #[command(flatten)]
    pub apis: super::ApiArgs,
    /// Watch this process: its exit and RSS growth (/proc/PID/status).
    #[arg(long, value_name = "PID")]
    pub broker_pid: Option<u32>,
    /// A shell command that restarts the broker after it died (run with `sh -c`, not waited for).
    #[arg(long, value_name = "CMD")]
    pub restart_cmd: Option<String>,
    /// Seconds to wait for the broker to come back.
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub restart_wait: u64,
    /// Broker re-runs per finding while minimising.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub minimise_budget: usize,
    /// Stop after this many findings.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_findings: usize,
    /// Replay a saved finding (its reproducer.json or folder) and say whether it reproduces.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some((proto, addr)) = broker_or_report(g, "kinspect fuzz", &args.addr) else {
        return EXIT_FAILURE;
    };
    let mut cfg = Config::new(addr, proto);
    cfg.seed = args.seed;
    cfg.cases = args.cases;
    cfg.seconds = args.seconds;
    cfg.timeout = Duration::from_millis(args.timeout);
    cfg.round = args.pipeline.max(1);
    cfg.out = Some(args.out.clone());
    cfg.apis = match args.apis.selection(proto) {
        Ok(s) => s,
        Err(e) => {
            errln!("kinspect fuzz: {e}");
            return EXIT_FAILURE;
        }
    };
    cfg.broker_pid = args.broker_pid;
    cfg.restart_wait = Duration::from_secs(args.restart_wait);
    cfg.minimise_budget = args.minimise_budget;
    cfg.max_findings = args.max_findings;
    if let Some(cmd) = args.restart_cmd.clone() {
        cfg.restart = Some(Arc::new(move || {
            let _ = std::process::Command::new("sh").arg("-c").arg(&cmd).spawn();
        }));
    }
    if let Some(file) = &args.replay {
        return replay(&cfg, file);
    }
    if std::io::stderr().is_terminal() {
        cfg.progress = Some(Arc::new(|s: &fuzz::Stats| {
            // (A progress line that stderr cannot take is dropped, like every message.)
            let _ = write!(
                std::io::stderr(),
                "\r{} cases, {:.0} cases/s, {} finding(s)   ",
                s.cases,
                s.rate(),
                s.findings
            );
        }));
    }
    let report = match fuzz::run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            errln!("kinspect fuzz: {e}");
            return EXIT_FAILURE;
        }
    };
    if cfg.progress.is_some() {
        errln!("");
    }
    let summary = report.summary(proto);
    let mut out = std::io::stdout().lock();
    let written = match args.format {
        Format::Text => out.write_all(summary.as_bytes()),
        Format::Jsonl => {
            errln!("{}", summary.trim_end());
            report
                .findings
                .iter()
                .chain(&report.unconfirmed)
                .try_for_each(|s| {
                    let mut j = s.finding.to_json();
                    j["confirmed"] = s.confirmed.into();
                    j["reproducer"] = s
                        .dir
                        .as_ref()
                        .map_or(serde_json::Value::Null, |d| d.display().to_string().into());
                    j["sequence_len"] = s.reproducer.sequence.len().into();
                    writeln!(out, "{j}")
                })
        }
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            errln!("kinspect fuzz: writing the output: {e}");
            return EXIT_FAILURE;
        }
    }
    if report.has_errors() {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

fn replay(cfg: &Config, file: &std::path::Path) -> u8 {
    match fuzz::replay(cfg, file) {
        Ok(r) => {
            let rp = &r.reproducer;
            println!(
                "{}: {} ({} case(s), {} v{}): {}",
                file.display(),
                rp.code,
                rp.sequence.len(),
                cfg.protocol.api_name(rp.api_key).unwrap_or("?"),
                rp.api_version,
                if r.reproduced {
                    "reproduces"
                } else {
                    "does not reproduce"
                }
            );
            if r.reproduced {
                EXIT_DIAGNOSTICS
            } else {
                EXIT_OK
            }
        }
        Err(e) => {
            errln!("kinspect fuzz: {e}");
            EXIT_FAILURE
        }
    }
}
