//! `kinspect report FILE... -o report.html`: one self-contained HTML page about the inputs —
//! overview, PDUs and bytes per API over time, latency percentiles, error codes over time,
//! clients and connections, the slowest requests with their trees, check findings. One engine
//! run feeds the page and the conversation rules; the page is the library's
//! (`kinspect::output::report`).

use super::decode::{exit_code, inputs};
use super::io::{self, errln};
use super::terminal::Bar;
use super::{Global, EXIT_FAILURE};
use kinspect::engine;
use kinspect::limits::MAX_REPORT_SLOWEST;
use kinspect::output::report::{Report, ReportOptions};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = super::decode::EXIT_CODES)]
pub struct Args {
    /// Inputs: pcap/pcapng captures (or any input `decode` reads); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Where to write the page (`-` for standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// The page's title (default: the input's name).
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Slowest requests shown with their decoded trees.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(0..=MAX_REPORT_SLOWEST as i64))]
    pub slowest: u32,
    #[command(flatten)]
    pub port: super::Ports,
    /// The page (and the rules) see only the PDUs the filter selects.
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = super::protocol_or_report(g, "kinspect report") else {
        return EXIT_FAILURE;
    };
    let mut opts = engine::Options::new(proto);
    opts.capture.ports = args.port.ports.clone();
    // The page shows trees of the slowest responses and the rules read batch headers only:
    // record contents are not decoded (their CRCs are checked).
    opts.records.headers_only = true;
    let compiled = match args.filter.apply(proto, &mut opts.filters) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect report: {e}");
            return EXIT_FAILURE;
        }
    };
    if compiled.reaches_records() {
        opts.records.headers_only = false;
    }
    let bar = Bar::for_inputs(&args.files);
    opts.progress = bar.clone().map(|b| b as _);
    let title = args.title.clone().unwrap_or_else(|| {
        let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
        format!("kinspect report: {}", names.join(", "))
    });
    let ropts = ReportOptions {
        title,
        slowest: args.slowest as usize,
    };
    let out = match io::writer(Some(&args.output)) {
        Ok(w) => w,
        Err(e) => {
            errln!("kinspect report: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut report = Report::new(out, ropts);
    let outcome = compiled.run(inputs(&args.files), &opts, &mut report);
    if let Some(b) = bar {
        b.clear();
    }
    exit_code("kinspect report", &outcome)
}
