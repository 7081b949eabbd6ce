//! `kinspect records FILE…`: one line per record (a kcat-style `--template`), one JSON object
//! per record (`-f jsonl`), or the `records` Parquet table (`-f parquet -o PATH`), from the
//! Produce requests and Fetch responses of captures and from log segments, snapshots and
//! partition folders (`orders-0/`: segments in offset order, `.index` and `.timeindex`
//! checked). The extraction and the printers are the library's (`kinspect::output::records`,
//! `kinspect::output::parquet`).

use super::decode::{exit_code, inputs};
use super::io::errln;
use super::terminal::Bar;
use super::{Global, EXIT_FAILURE};
use kinspect::engine::parallel::Shared;
use kinspect::engine::{self, Filters, Input, Outcome};
use kinspect::input::InputKind;
use kinspect::output::notes::Notes;
use kinspect::output::parquet::{Layout, ParquetSink, Tables};
use kinspect::output::records::{
    HoldsRecords, RecordOptions, RecordPrinter, RecordsFormat, Template,
};
use kinspect::wire::decode::RecordsOptions;
use std::path::{Path, PathBuf};

/// The template codes, in `--help`.
const TEMPLATE_HELP: &str = "Template codes (kcat's letters where kcat has one): %t topic, \
%p partition, %o offset (? in a Produce request: not assigned yet), %O offset delta in the \
batch, %k key, %s value, %K / %S key / value length (-1 null), %T timestamp (ms), %y timestamp \
type, %h headers (k=v,…), %f frame (FILE:OFFSET of the batch in a log file), %d direction, \
%c client id, %a client address, %i producer id, %e producer epoch, %q sequence, %x flags \
(txn, control), %z codec, %C batch CRC (ok, BAD), %m magic, %% a percent sign; escapes \\n \\t \
\\r \\\\. Keys and values: text with control characters escaped, 0x-hex when not UTF-8, NULL \
when null.";

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// One line per record (see --template).
    Line,
    /// One JSON object per record.
    Jsonl,
    /// The `records` Parquet table, to -o PATH.
    Parquet,
}

#[derive(clap::Args, Debug)]
#[command(after_help = TEMPLATE_HELP)]
pub struct Args {
    /// Captures, hex dumps, raw frames, log segments and snapshots, partition folders
    /// (`orders-0/`); `-` or nothing for stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "line")]
    pub format: Out,
    /// The line for each record, kcat style (codes below); default
    /// `%f %d %t/%p@%o %T key=%k value=%s` and ` headers=%h` when there are headers.
    #[arg(long, value_name = "FORMAT", value_parser = |s: &str| Template::parse(s))]
    pub template: Option<Template>,
    /// Write to this file (`-`: standard output); for parquet, the table's file (`-` too), or a
    /// folder (one file per input when there are several).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Force the kind of input instead of detecting it.
    #[arg(long, value_name = "KIND", value_parser = super::choice::<InputKind>())]
    pub input: Option<InputKind>,
    #[command(flatten)]
    pub port: super::Ports,
    #[command(flatten)]
    pub as_type: super::RecordsAs,
    #[command(flatten)]
    pub stream: super::Streams,
    /// Only the records of PDUs (and log batches) with error diagnostics.
    #[arg(long)]
    pub errors_only: bool,
    /// `--filter/-Y EXPR` (and `--pairs`): the same display filters as `decode`, on the PDUs
    /// the records come from.
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

/// The PDU filters records are chosen by (the same `engine::Filters` as `decode`; a display
/// filter goes into `more`).
fn filters(args: &Args, proto: &'static kinspect::protocol::Protocol) -> Filters {
    Filters {
        api: Vec::new(),
        streams: args.stream.stream.clone(),
        errors_only: args.errors_only,
        more: vec![std::sync::Arc::new(HoldsRecords::new(proto))],
    }
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = super::protocol_or_report(g, "kinspect records") else {
        return EXIT_FAILURE;
    };
    let mut opts = engine::Options::new(proto);
    opts.kind = args.input;
    opts.capture.ports = args.port.ports.clone();
    opts.records = RecordsOptions {
        raw: false,
        as_type: args.as_type.as_type,
        headers_only: false,
    };
    opts.filters = filters(args, proto);
    let compiled = match args.filter.apply(proto, &mut opts.filters) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect records: {e}");
            return super::EXIT_FAILURE;
        }
    };
    opts.threads = super::threads();
    let bar = Bar::for_inputs(&args.files);
    opts.progress = bar.clone().map(|b| b as _);
    let r = run_with(args, inputs(&args.files), &opts, &compiled);
    if let Some(b) = bar {
        b.clear();
    }
    match r {
        Ok(outcome) => exit_code("kinspect records", &outcome),
        Err(e) => {
            errln!("kinspect records: {e}");
            EXIT_FAILURE
        }
    }
}

fn run_with(
    args: &Args,
    inputs: Vec<Input<'static>>,
    opts: &engine::Options,
    compiled: &super::filter_args::Compiled,
) -> Result<Outcome, String> {
    let format = match args.format {
        Out::Parquet => {
            // `-o -` (standard output) is a path here: Parquet goes there only when asked.
            let Some(path) = args.output.as_deref() else {
                return Err(
                    "-f parquet writes a table: give the folder (or .parquet file, or - for \
                     standard output) with -o PATH"
                        .into(),
                );
            };
            if super::io::output_is_terminal(args.output.as_ref()) {
                return Err(
                    "-f parquet -o -: a Parquet table is binary and standard output is a \
                     terminal: redirect it, or give a file"
                        .into(),
                );
            }
            let mut sink = parquet_sink(path, inputs.len(), false)?;
            let outcome = compiled.run_split(inputs, opts, &mut sink);
            say_notes("kinspect records", sink.notes());
            return Ok(outcome);
        }
        Out::Line => RecordsFormat::Line,
        Out::Jsonl => RecordsFormat::Jsonl,
    };
    let o = RecordOptions {
        format,
        template: args.template.clone(),
    };
    let file = match super::io::output_path(args.output.as_ref()) {
        Some(p) => super::io::create(p)?,
        None => super::stdout_file().ok_or("standard output cannot be written")?,
    };
    let mut printer = RecordPrinter::new(Shared::new(file), o);
    let outcome = compiled.run_split(inputs, opts, &mut printer);
    // Capture notes, log-index findings and PDUs that did not decode are not records: they go
    // to stderr.
    say_notes("kinspect records", &mut printer.notes);
    Ok(outcome)
}

/// Says on stderr what the output had no place for: capture notes, log findings, and the PDUs
/// with error diagnostics (a line each, or their number when a table holds them).
pub(super) fn say_notes(who: &str, notes: &mut Notes) {
    let (lines, dropped) = notes.take();
    for n in &lines {
        errln!("{who}: {n}");
    }
    if dropped > 0 {
        errln!("{who}: … and {dropped} more notes");
    }
    let n = notes.pdus_with_errors;
    if n > 0 && !notes.lines_for_pdus() {
        let s = if n == 1 { "" } else { "s" };
        errln!(
            "{who}: {n} PDU{s} with error diagnostics: see the pdus table's `diagnostics` column"
        );
    }
}

/// The Parquet sink writing to `path` for `inputs` inputs (`pdus` too when `pdus`).
pub(super) fn parquet_sink(path: &Path, inputs: usize, pdus: bool) -> Result<ParquetSink, String> {
    let tables = Tables {
        pdus,
        records: true,
    };
    let layout = Layout::for_output(path, inputs, tables)?;
    let sink = ParquetSink::new(layout, tables);
    // `KINSPECT_THREADS=1`: one thread, encoding too.
    Ok(if super::threads() < 2 {
        sink.on_one_thread()
    } else {
        sink
    })
}
