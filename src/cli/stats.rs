//! `kinspect stats FILE…`: what captures hold — PDUs per API and version, error codes by name,
//! latency percentiles per API, clients by client id, bytes per direction, diagnostics. The
//! counting and the tables are the library's (`kinspect::output::stats`).

use super::decode::{exit_code, inputs};
use super::io::{self, errln};
use super::terminal::Bar;
use super::Global;
use kinspect::engine::{self, parallel::Shared};
use kinspect::input::InputKind;
use kinspect::output::stats::{StatsFormat, StatsPrinter};
use kinspect::wire::decode::RecordsOptions;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = super::decode::EXIT_CODES)]
pub struct Args {
    /// Pcap or pcapng captures, counted together; `-` reads standard input.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub port: super::Ports,
    /// `text` tables or one `json` object.
    #[arg(long, short = 'f', value_name = "FORMAT", default_value = "text", value_parser = super::choice::<StatsFormat>())]
    pub format: StatsFormat,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = super::protocol_or_report(g, "kinspect stats") else {
        return super::EXIT_FAILURE;
    };
    let mut opts = engine::Options::new(proto);
    opts.kind = Some(InputKind::Pcap);
    opts.capture.ports = args.port.ports.clone();
    // Statistics show no record contents: batch headers with their CRC checked are enough.
    opts.records = RecordsOptions {
        raw: false,
        as_type: None,
        headers_only: true,
    };
    let compiled = match args.filter.apply(proto, &mut opts.filters) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect stats: {e}");
            return super::EXIT_FAILURE;
        }
    };
    if compiled.reaches_records() {
        opts.records.headers_only = false;
    }
    opts.threads = super::threads();
    let files = &args.files[..];
    let bar = Bar::for_inputs(files);
    opts.progress = bar.clone().map(|b| b as _);
    let file = match io::output_path(args.output.as_ref()) {
        Some(p) => match io::create(p) {
            Ok(f) => Some(f),
            Err(e) => {
                errln!("kinspect stats: {e}");
                return super::EXIT_FAILURE;
            }
        },
        None => super::stdout_file(),
    };
    let outcome = match file {
        Some(f) => compiled.run_split(
            inputs(files),
            &opts,
            &mut StatsPrinter::new(Shared::new(f), args.format),
        ),
        None => compiled.run_split(
            inputs(files),
            &opts,
            &mut StatsPrinter::new(std::io::stdout().lock(), args.format),
        ),
    };
    if let Some(b) = bar {
        b.clear();
    }
    exit_code("kinspect stats", &outcome)
}
