//! `kinspect probe HOST:PORT`: a conformance sweep of a live broker (loopback only); the driver
//! is `kinspect::probe`. Prints a table (or `--format jsonl`, one finding per line), optionally
//! writes the session as a pcap. Exit 0 when every answer was clean, 1 when any finding is an
//! error, 2 for usage or connection failure.

use super::io::{self, errln};
use super::{broker_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::probe::{self, Config};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One row per API and version.
    Table,
    /// One finding per line (the stable contract in docs/probe.md).
    Jsonl,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The broker, HOST:PORT; only loopback addresses (127.0.0.0/8, ::1) are accepted.
    #[arg(value_name = "HOST:PORT")]
    pub addr: String,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "table")]
    pub format: Format,
    /// Varied requests per API version, besides the minimal, one-of-each and all-null ones.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub variants: u32,
    /// Seed of the varied requests' values: the same seed sends the same requests.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub seed: u64,
    /// Per request: milliseconds to wait for the answer.
    #[arg(long, default_value_t = 2000, value_name = "MS")]
    pub timeout: u64,
    /// The whole sweep: seconds.
    #[arg(long, default_value_t = 60, value_name = "S")]
    pub deadline: u64,
    /// The whole sweep: requests at most (a `limit-reached` finding says where it stopped).
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub max_requests: usize,
    #[command(flatten)]
    pub apis: super::ApiArgs,
    /// Write the whole session as a pcap (Ethernet/IPv4/TCP synthesised around the real bytes).
    #[arg(long, value_name = "FILE")]
    pub write_pcap: Option<PathBuf>,
    /// Write the findings to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some((proto, addr)) = broker_or_report(g, "kinspect probe", &args.addr) else {
        return EXIT_FAILURE;
    };
    let mut cfg = Config::new(addr, proto);
    cfg.variants = args.variants;
    cfg.seed = args.seed;
    cfg.timeout = Duration::from_millis(args.timeout);
    cfg.deadline = Duration::from_secs(args.deadline);
    cfg.max_requests = args.max_requests;
    cfg.apis = match args.apis.selection(proto) {
        Ok(s) => s,
        Err(e) => {
            errln!("kinspect probe: {e}");
            return EXIT_FAILURE;
        }
    };
    let report = match probe::run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            errln!("kinspect probe: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut out = match io::writer(args.output.as_ref()) {
        Ok(w) => w,
        Err(e) => {
            errln!("kinspect probe: {e}");
            return EXIT_FAILURE;
        }
    };
    let written = match args.format {
        Format::Table => out.write_all(report.table().as_bytes()),
        Format::Jsonl => report
            .findings
            .iter()
            .try_for_each(|f| writeln!(out, "{}", f.to_json())),
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            errln!("kinspect probe: writing the output: {e}");
            return EXIT_FAILURE;
        }
    }
    if let Some(path) = &args.write_pcap {
        if let Err(e) = std::fs::write(path, probe::pcap::pcap_bytes(&report.transcript)) {
            errln!("kinspect probe: {}: {e}", path.display());
            return EXIT_FAILURE;
        }
    }
    if report.has_errors() {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}
