//! `kinspect check FILE...`: the conversation rules of `kinspect::check` over captures, through
//! the engine into the check printer (`kinspect::output::check`). Prints one line per finding
//! (or `--format jsonl`), then a count per rule and what the rules followed; `--timeline` adds
//! the quorum's timeline. Exit 1 when an error-level rule fired (`--strict`: or when the rules
//! could not see part of an input). `--rules` lists the rules
//! (`kinspect::output::check::write_rules`).

use super::decode::{exit_code, inputs};
use super::io::{self, errln};
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::engine;
use kinspect::output::check::{CheckFormat, CheckPrinter};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// pcap or pcapng captures, KRaft log segments and snapshots; `-` reads standard input.
    #[arg(required_unless_present = "rules")]
    pub files: Vec<PathBuf>,
    /// List the rules instead (code, severity, family, what must hold, KIP and Kafka source;
    /// with `-f jsonl` one object each) and read nothing.
    #[arg(long, conflicts_with_all = ["files", "timeline"])]
    pub rules: bool,
    #[command(flatten)]
    pub port: super::Ports,
    /// `text` (one line per finding) or `jsonl` (one JSON object per finding).
    #[arg(long, short = 'f', value_name = "FORMAT", default_value = "text", value_parser = super::choice::<CheckFormat>())]
    pub format: CheckFormat,
    /// Print the quorum timeline (epochs, votes, leaders) after the findings.
    #[arg(long)]
    pub timeline: bool,
    /// Also exit 1 when the rules could not see part of an input: a PDU with decoding errors,
    /// or a capture warning or error (bytes never captured, a file cut short, frames cut by the
    /// snap length); each such input is named on stderr. For CI: a damaged capture does not
    /// pass.
    #[arg(long, conflicts_with = "rules")]
    pub strict: bool,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Only the findings of PDUs the filter selects are shown (with --pairs: also those of the
    /// responses to selected requests); the rules still follow every PDU of the conversation.
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    if args.rules {
        let mut w = match io::writer(args.output.as_ref()) {
            Ok(w) => w,
            Err(e) => {
                errln!("kinspect check: {e}");
                return EXIT_FAILURE;
            }
        };
        return match kinspect::output::check::write_rules(&mut w, args.format) {
            Ok(()) => EXIT_OK,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
            Err(e) => {
                errln!("kinspect check: {e}");
                EXIT_FAILURE
            }
        };
    }
    let Some(proto) = super::protocol_or_report(g, "kinspect check") else {
        return EXIT_FAILURE;
    };
    let mut opts = engine::Options::new(proto);
    // Captures, and log segments / snapshots of `__cluster_metadata` (leader recovery).
    opts.kind = None;
    opts.capture.ports = args.port.ports.clone();
    // Batch headers (producer ids, sequences) with their CRC checked are enough, except for
    // KRaft metadata records, which the records decoder reads in full all the same.
    opts.records.headers_only = true;
    // The filter decides which findings are shown, not what the rules see: it goes to the
    // printer, and the engine hands it every PDU.
    let mut shown = engine::Filters::default();
    let compiled = match args.filter.apply(proto, &mut shown) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect check: {e}");
            return EXIT_FAILURE;
        }
    };
    if compiled.reaches_records() {
        opts.records.headers_only = false;
    }
    let out = match io::writer(args.output.as_ref()) {
        Ok(w) => w,
        Err(e) => {
            errln!("kinspect check: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut printer = CheckPrinter::new(out, args.format, args.timeline);
    if let Some(q) = &compiled.query {
        printer = printer.with_filter(q.clone(), compiled.pairs);
    }
    let outcome = engine::run(inputs(&args.files), &opts, &mut printer);
    // Decoding errors are `kinspect decode`'s to report; the exit code here is the rules', and
    // with --strict also whether they saw every input whole.
    let unseen = args.strict && !outcome.closed && strict_failures(&printer.missed_by_input);
    match exit_code("kinspect check", &outcome) {
        EXIT_FAILURE => EXIT_FAILURE,
        _ if outcome.closed => EXIT_OK,
        _ if printer.errors || unseen => EXIT_DIAGNOSTICS,
        _ => EXIT_OK,
    }
}

/// `--strict`: names on stderr each input where the rules missed something of warning or error
/// severity (info notes, such as TLS or a connection that is not Kafka, do not fail it);
/// whether there was any.
fn strict_failures(missed: &[(String, Vec<kinspect::check::Missed>)]) -> bool {
    use kinspect::diag::Severity;
    let mut any = false;
    for (name, list) in missed {
        let what: Vec<String> = list
            .iter()
            .filter(|m| m.severity <= Severity::Warning)
            .map(|m| format!("{} {}", m.what, m.count))
            .collect();
        if !what.is_empty() {
            errln!(
                "kinspect check: {name}: the rules could not see all of it (--strict): {}",
                what.join(", ")
            );
            any = true;
        }
    }
    any
}
