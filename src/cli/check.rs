//! `kinspect check FILE...`: the conversation rules of `kinspect::check` over captures, through
//! the engine into the check printer (`kinspect::output::check`). Prints one line per finding
//! (or `--format jsonl`), then a count per rule; `--timeline` adds the quorum's timeline. Exit 1
//! when an error-level rule fired.

use super::decode::{exit_code, inputs};
use super::io::errln;
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::engine;
use kinspect::input::InputKind;
use kinspect::output::check::{CheckFormat, CheckPrinter};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// pcap or pcapng captures; `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Also treat this port as a Kafka broker port (repeatable).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// `text` (one line per finding) or `jsonl` (one JSON object per finding).
    #[arg(long, short = 'f', value_name = "FORMAT", default_value = "text", value_parser = super::choice::<CheckFormat>())]
    pub format: CheckFormat,
    /// Print the quorum timeline (epochs, votes, leaders) after the findings.
    #[arg(long)]
    pub timeline: bool,
    /// The rules see only the PDUs the filter selects (with --pairs: and their other halves).
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let proto = match kinspect::protocol::load(g.schemas.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            errln!("kinspect check: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut opts = engine::Options::new(proto);
    opts.kind = Some(InputKind::Pcap);
    opts.capture.ports = args.ports.clone();
    // The rules read no record contents: batch headers with their CRC checked are enough.
    opts.records.headers_only = true;
    let compiled = match args.filter.apply(proto, &mut opts.filters) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect check: {e}");
            return EXIT_FAILURE;
        }
    };
    if compiled.reaches_records() {
        opts.records.headers_only = false;
    }
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut printer = CheckPrinter::new(out, args.format, args.timeline);
    let outcome = match compiled.pairs_of(&mut printer) {
        Some(mut pairs) => engine::run(inputs(&args.files), &opts, &mut pairs),
        None => engine::run(inputs(&args.files), &opts, &mut printer),
    };
    // Decoding errors are `kinspect decode`'s to report; the exit code here is the rules'.
    match exit_code("kinspect check", &outcome) {
        EXIT_FAILURE => EXIT_FAILURE,
        _ if outcome.closed => EXIT_OK,
        _ if printer.errors => EXIT_DIAGNOSTICS,
        _ => EXIT_OK,
    }
}
