//! `kinspect decode [FILE...]`: read captures, hex dumps, raw frames (files or stdin), decode
//! every Kafka frame and print it as JSON, JSON Lines, a tree or a one-line summary. The work is
//! the library's (`kinspect::engine`): this file turns flags into its options and a printer.
//!
//! Exit codes: 0 when everything shown decoded cleanly, and when the output was closed (a pipe
//! to `head`) whatever came before; 1 when something shown carries an error diagnostic (filters
//! narrow what counts, like grep); 2 when an input could not be read or the command line is
//! wrong.

use super::filter_args::Compiled;
use super::io::errln;
use super::terminal::Bar;
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::engine::parallel::Shared;
use kinspect::engine::{self, Filters, Input, Outcome};
use kinspect::input::InputKind;
use kinspect::output::fields::{FieldsOptions, FieldsPrinter};
use kinspect::output::time::TimeFormat;
use kinspect::output::{use_color, Format, Options, Printer};
use kinspect::pdu::{Direction, Hints};
use kinspect::wire::decode::RecordsOptions;
use std::io;
use std::path::PathBuf;

/// The exit codes of `decode` and `stats`, in their help.
pub const EXIT_CODES: &str =
    "Exit codes: 0 everything shown decoded cleanly (also when the output is closed, \
as by `| head`, in every format); 1 something shown carries an error diagnostic; 2 an input \
could not be read, or usage.";

/// How PDUs are printed: shared by `decode` and `capture`.
#[derive(clap::Args, Debug, Clone)]
pub struct PrintArgs {
    /// Output format (default: tree on a terminal, jsonl otherwise). To a file or pipe, JSON
    /// Lines, tree and summary decode on two threads; `KINSPECT_THREADS=1` keeps one (same
    /// output).
    #[arg(long, short = 'f', value_name = "FORMAT", value_parser = super::choice::<Format>())]
    pub format: Option<Format>,
    /// JSON: give every field its byte offset and length.
    #[arg(long)]
    pub annotate: bool,
    /// Show SASL PLAIN passwords instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
    /// Summary times, as tshark's `-t`: r seconds since the capture's first packet, a UTC time
    /// of day, ad UTC date and time, d seconds since the previous PDU shown, e epoch seconds.
    #[arg(short = 't', long = "time-format", value_name = "FORMAT", default_value = "r",
          value_parser = |s: &str| s.parse::<TimeFormat>())]
    pub time_format: TimeFormat,
}

impl PrintArgs {
    /// The printer for an output that is (or is not) a terminal.
    pub fn printer<W: io::Write>(&self, w: W, g: &Global, tty: bool) -> Printer<W> {
        let mut p = Printer::new(w, self.options(g, tty));
        p.set_time_format(self.time_format);
        p
    }

    /// The printer's options for an output that is (or is not) a terminal.
    pub fn options(&self, g: &Global, tty: bool) -> Options {
        let format = self
            .format
            .unwrap_or(if tty { Format::Tree } else { Format::Jsonl });
        Options {
            format,
            annotate: self.annotate,
            color: use_color(g.color, tty),
            show_secrets: self.show_secrets,
        }
    }
}

#[derive(clap::Args, Debug)]
#[command(after_help = super::decode::EXIT_CODES)]
pub struct Args {
    /// Inputs: pcap/pcapng captures, hex dumps, raw frames, Kafka log segments/snapshots; `-`
    /// or nothing for stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Force the kind of input instead of detecting it.
    #[arg(long, value_name = "KIND", value_parser = super::choice::<InputKind>())]
    pub input: Option<InputKind>,
    #[command(flatten)]
    pub print: PrintArgs,
    /// Write to this file instead of standard output (any format; `-`: standard output); for
    /// `-f parquet`, the folder of the two tables: see `kinspect::output::parquet`.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// For a frame on its own: the API (name or key); for a response, its request's API.
    #[arg(long, value_name = "NAME|KEY")]
    pub api: Option<String>,
    /// For a frame on its own: the API version (for a response, its request's version).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub api_version: Option<i16>,
    /// The frame is a response (with --api and --api-version its body is decoded too).
    #[arg(long, conflicts_with = "request")]
    pub response: bool,
    /// The frame is a request.
    #[arg(long)]
    pub request: bool,
    /// Hex and raw inputs hold one frame without its 4-byte size prefix.
    #[arg(long)]
    pub no_size_prefix: bool,
    /// Show only these APIs (names or keys; repeat or separate with commas).
    #[arg(long, value_name = "NAME|KEY", value_delimiter = ',')]
    pub api_filter: Vec<String>,
    #[command(flatten)]
    pub stream: super::Streams,
    /// Show only PDUs (and capture notes) with error diagnostics.
    #[arg(long)]
    pub errors_only: bool,
    #[command(flatten)]
    pub port: super::Ports,
    #[command(flatten)]
    pub as_type: super::RecordsAs,
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
    #[command(flatten)]
    pub fields: FieldArgs,
    /// `records` fields of Produce, Fetch, …: decoded into batches, batch headers with verified
    /// CRCs only (checked), or kept as base64 (raw). Default: batches, except `checked` for
    /// `--format summary`, which shows no record contents.
    #[arg(long, value_enum, value_name = "MODE")]
    pub records: Option<RecordsMode>,
    /// Also run the conversation rules of `kinspect check`: each finding joins the diagnostics
    /// of the PDU that earned it (code = the rule's, path `check`).
    #[arg(long)]
    pub check: bool,
}

/// `-f fields`: which fields, how cells are separated.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FieldArgs {
    /// `-f fields` (implied): a column for this field (repeat: -e frame -e api -e topic). Any
    /// field --filter knows, or a path (body.Topics[].Name). One row per PDU, or per innermost
    /// array element holding a value of some column when values repeat (-e topic -e partition
    /// -e error: one row per partition, with its topic and error); a column shows the values
    /// of that element and of the elements around it, several joined with `,`.
    #[arg(short = 'e', long = "field", value_name = "FIELD")]
    pub fields: Vec<String>,
    /// `-f fields`: the cell separator (default a tab; tabs and newlines in values are
    /// escaped). Any other separator quotes cells as RFC 4180 CSV does.
    #[arg(long, value_name = "SEP")]
    pub separator: Option<String>,
    /// `-f fields`: a first row naming the columns.
    #[arg(long)]
    pub header: bool,
}

/// How `--records` shows the `records` fields of messages.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordsMode {
    /// Record batches, records, keys and values (internal topics decoded).
    Batches,
    /// Batch headers with their CRC verified; records left compressed/undecoded.
    Checked,
    /// The field's bytes as base64, undecoded.
    Raw,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let (opts, compiled) = match engine_options(args, g) {
        Ok(o) => o,
        Err(e) => {
            errln!("kinspect decode: {e}");
            return EXIT_FAILURE;
        }
    };
    let inputs = inputs(&args.files);
    let stdout = io::stdout();
    let tty = super::io::output_is_terminal(args.output.as_ref());
    let mut format = args.print.options(g, tty).format;
    if !args.fields.fields.is_empty() && args.print.format.is_none() {
        format = Format::Fields;
    }
    let fields = match fields_options(args, format) {
        Ok(f) => f,
        Err(e) => {
            errln!("kinspect decode: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut opts = opts;
    opts.records = records(args, format);
    if compiled.reaches_records() || fields.as_ref().is_some_and(|f| f.reaches_records()) {
        opts.records.raw = false;
        opts.records.headers_only = false;
    }
    let bar = Bar::for_inputs(&args.files);
    opts.progress = bar.clone().map(|b| b as _);
    // `-o PATH`: that file instead (any format); `-f parquet`: the tables there.
    // `-o -` is a path for Parquet (which refuses it: two tables), standard output otherwise.
    if let Some(p) = args.output.as_deref().filter(|_| format == Format::Parquet) {
        let mut sink = match super::records::parquet_sink(p, inputs.len(), true) {
            Ok(s) => s,
            Err(e) => {
                errln!("kinspect decode: {e}");
                return EXIT_FAILURE;
            }
        };
        opts.threads = super::threads();
        let outcome = compiled.run_split(inputs, &opts, &mut sink);
        if let Some(b) = &bar {
            b.clear();
        }
        super::records::say_notes("kinspect decode", sink.notes());
        return finish(bar, outcome);
    }
    // To a file or pipe: a plain file on a duplicate of fd 1, which two threads can share
    // (stdout's `LineWriter` would also search every buffer for newlines and copy it once more).
    // On a terminal: stdout as Rust sets it up, on one thread.
    let out = match super::io::output_path(args.output.as_ref()) {
        Some(p) => match super::io::create(p) {
            Ok(f) => Some(f),
            Err(e) => {
                errln!("kinspect decode: {e}");
                return EXIT_FAILURE;
            }
        },
        None if format == Format::Parquet => {
            errln!("kinspect decode: -f parquet writes two tables (pdus, records): give their folder with -o DIR");
            return EXIT_FAILURE;
        }
        None => super::stdout_file().filter(|_| !tty),
    };
    // Rows of fields have no place for diagnostics unless asked for: say where to look when
    // the run exits 1 for them.
    let silent_errors = fields.as_ref().is_some_and(|f| {
        !f.fields
            .iter()
            .any(|(_, f)| *f == kinspect::query::Field::Diagnostic)
    });
    let outcome = match (out, fields) {
        (Some(file), Some(f)) => match FieldsPrinter::new(Shared::new(file), f) {
            Ok(mut p) => {
                opts.threads = super::threads();
                compiled.run_split(inputs, &opts, &mut p)
            }
            Err(e) => return write_failed(e),
        },
        (None, Some(f)) => {
            let w = io::BufWriter::with_capacity(1 << 18, stdout.lock());
            match FieldsPrinter::new(w, f) {
                Ok(p) => compiled.run(inputs, &opts, p),
                Err(e) => return write_failed(e),
            }
        }
        (Some(file), None) => {
            opts.threads = super::threads();
            let mut printer = args.print.printer(Shared::new(file), g, tty);
            compiled.run_split(inputs, &opts, &mut printer)
        }
        (None, None) => {
            let w = io::BufWriter::with_capacity(1 << 18, stdout.lock());
            compiled.run(inputs, &opts, args.print.printer(w, g, tty))
        }
    };
    if silent_errors && outcome.errors && !outcome.closed && outcome.output_error.is_none() {
        if let Some(b) = &bar {
            b.clear();
        }
        errln!(
            "kinspect decode: PDUs shown carry error diagnostics (hence exit 1): -e diagnostic \
             names them in each row, -Y diagnostic shows only them"
        );
    }
    finish(bar, outcome)
}

fn finish(bar: Option<std::sync::Arc<Bar>>, outcome: Outcome) -> u8 {
    if let Some(b) = bar {
        b.clear();
    }
    exit_code("kinspect decode", &outcome)
}

fn write_failed(e: io::Error) -> u8 {
    errln!("kinspect decode: writing the output: {e}");
    EXIT_FAILURE
}

/// `-f fields` and its flags: the columns, or why not.
fn fields_options(args: &Args, format: Format) -> Result<Option<FieldsOptions>, String> {
    let a = &args.fields;
    if format != Format::Fields {
        if !a.fields.is_empty() || a.separator.is_some() || a.header {
            return Err("-e, --separator and --header go with --format fields".into());
        }
        return Ok(None);
    }
    if a.fields.is_empty() {
        return Err(
            "--format fields wants at least one -e FIELD (as -e frame -e api -e topic)".into(),
        );
    }
    let mut o = FieldsOptions::parse(&a.fields).map_err(|e| format!("-e: {e}"))?;
    if let Some(sep) = &a.separator {
        if sep.is_empty() {
            return Err("--separator: empty".into());
        }
        o.separator = match sep.as_str() {
            "\\t" | "tab" => "\t".into(),
            _ => sep.clone(),
        };
    }
    o.header = a.header;
    Ok(Some(o))
}

/// The exit code for a run, after saying on stderr what failed. A closed output ends the run
/// quietly with 0, in every format: the reader has what it wanted.
pub fn exit_code(who: &str, o: &Outcome) -> u8 {
    for f in &o.failed {
        errln!("{who}: {}: {}", f.input, f.message);
    }
    if let Some(e) = &o.output_error {
        errln!("{who}: writing the output: {e}");
        return EXIT_FAILURE;
    }
    if !o.closed {
        nothing_found(who, o);
    }
    if !o.failed.is_empty() {
        EXIT_FAILURE
    } else if o.closed {
        EXIT_OK
    } else if o.errors {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

/// Says on stderr which inputs held no Kafka at all (an empty file, a capture of HTTP only):
/// silence would look like success. The exit code stays 0 for them (nothing malformed was read).
fn nothing_found(who: &str, o: &Outcome) {
    for i in &o.inputs {
        if i.kind.is_none() || o.failed.iter().any(|f| f.input == i.name) {
            continue;
        }
        match &i.capture {
            Some(c) => {
                if let Some(m) = c.no_kafka_message() {
                    errln!("{who}: {}: {m}", i.name);
                }
            }
            None if i.items == 0 => errln!("{who}: {}: empty: no Kafka frame in it", i.name),
            None => {}
        }
    }
}

/// The files given, or standard input.
pub fn inputs(files: &[PathBuf]) -> Vec<Input<'static>> {
    if files.is_empty() {
        return vec![Input::Stdin];
    }
    files.iter().map(Input::path).collect()
}

/// `--records` and `--as`: `checked` by default for the summary, which shows no record contents.
fn records(args: &Args, format: Format) -> RecordsOptions {
    let records = args
        .records
        .unwrap_or(if matches!(format, Format::Summary | Format::Fields) {
            RecordsMode::Checked
        } else {
            RecordsMode::Batches
        });
    RecordsOptions {
        raw: records == RecordsMode::Raw,
        as_type: args.as_type.as_type,
        headers_only: records == RecordsMode::Checked,
    }
}

/// The engine's options from the flags: protocol, hints for a lone frame, filters, ports.
fn engine_options(args: &Args, g: &Global) -> Result<(engine::Options, Compiled), String> {
    let proto = kinspect::protocol::load(g.schemas.as_deref()).map_err(|e| e.to_string())?;
    let mut hints = Hints::default();
    if let Some(a) = &args.api {
        hints.api_key = Some(super::api_key(proto, a).map_err(|e| format!("--api: {e}"))?);
    }
    hints.api_version = args.api_version;
    if hints.api_version.is_some() != hints.api_key.is_some() {
        return Err(
            "--api and --api-version go together (a response needs both to be decoded)".into(),
        );
    }
    if args.response {
        // Without --api/--api-version the decoder still shows the correlation id, and says
        // what is missing (`missing-hints`).
        hints.direction = Some(Direction::Response);
    } else if args.request {
        hints.direction = Some(Direction::Request);
    }
    if args.no_size_prefix {
        hints.has_size_prefix = Some(false);
    }
    let mut api = Vec::new();
    for f in &args.api_filter {
        api.push(super::api_key(proto, f).map_err(|e| format!("--api-filter: {e}"))?);
    }
    let mut opts = engine::Options::new(proto);
    opts.kind = args.input;
    opts.hints = hints;
    opts.no_size_prefix = args.no_size_prefix;
    opts.capture.ports = args.port.ports.clone();
    opts.capture.show_secrets = args.print.show_secrets;
    opts.filters = Filters {
        api,
        streams: args.stream.stream.clone(),
        errors_only: args.errors_only,
        more: Vec::new(),
    };
    opts.check = args.check;
    let compiled = args.filter.apply(proto, &mut opts.filters)?;
    Ok((opts, compiled))
}
