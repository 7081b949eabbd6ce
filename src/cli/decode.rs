//! `kinspect decode [FILE...]`: read captures, hex dumps, raw frames (files or stdin), decode
//! every Kafka frame and print it as JSON, JSON Lines, a tree or a one-line summary. The work is
//! the library's (`kinspect::engine`): this file turns flags into its options and a printer.
//!
//! Exit codes: 0 when everything shown decoded cleanly, and when the output was closed (a pipe
//! to `head`) whatever came before; 1 when something shown carries an error diagnostic (filters
//! narrow what counts, like grep); 2 when an input could not be read or the command line is
//! wrong.

use super::io::errln;
use super::terminal::Bar;
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::engine::parallel::Shared;
use kinspect::engine::{self, Filters, Input, Outcome};
use kinspect::input::InputKind;
use kinspect::output::time::TimeFormat;
use kinspect::output::{use_color, Format, Options, Printer};
use kinspect::pdu::{Direction, Hints};
use kinspect::protocol::Protocol;
use kinspect::records::AsType;
use kinspect::wire::decode::RecordsOptions;
use std::io::{self, IsTerminal};
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
    /// Write to this file instead of standard output (any format); for `-f parquet`, the folder
    /// (or `.parquet` file) of the tables: see `kinspect::output::parquet`.
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
    /// Captures: show only these TCP connections (numbered from 0 in order of appearance, as
    /// tshark's `tcp.stream`; repeat or separate with commas).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub stream: Vec<u32>,
    /// Show only PDUs (and capture notes) with error diagnostics.
    #[arg(long)]
    pub errors_only: bool,
    /// Extra TCP ports to treat as Kafka brokers in captures.
    #[arg(long, value_name = "P", value_delimiter = ',')]
    pub port: Vec<u16>,
    /// Read record keys and values as this internal topic's (consumer-offsets,
    /// transaction-state, share-group-state, cluster-metadata) or as plain data (raw), whatever
    /// the topic name (in a frame) or the folder (of a log file) says.
    #[arg(long = "as", value_name = "TYPE", value_parser = parse_as)]
    pub as_type: Option<AsType>,
    /// `records` fields of Produce, Fetch, …: decoded into batches, batch headers with verified
    /// CRCs only (checked), or kept as base64 (raw). Default: batches, except `checked` for
    /// `--format summary`, which shows no record contents.
    #[arg(long, value_enum, value_name = "MODE")]
    pub records: Option<RecordsMode>,
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

pub(super) fn parse_as(s: &str) -> Result<AsType, String> {
    AsType::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = AsType::NAMES.iter().map(|(n, _)| *n).collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// Resolves an API given by name (any case) or key.
fn api_key(proto: &Protocol, s: &str) -> Result<i16, String> {
    if let Ok(k) = s.trim().parse::<i16>() {
        return Ok(k);
    }
    let keys = proto.api_keys();
    if let Some(k) = keys.iter().copied().find(|&k| {
        proto
            .api_name(k)
            .is_some_and(|n| n.eq_ignore_ascii_case(s.trim()))
    }) {
        return Ok(k);
    }
    let names: Vec<&str> = keys.iter().filter_map(|&k| proto.api_name(k)).collect();
    let close = names.iter().find(|n| {
        n.to_ascii_lowercase()
            .contains(&s.trim().to_ascii_lowercase())
    });
    Err(match close {
        Some(c) => format!("unknown API {s:?} (did you mean {c}?)"),
        None => format!("unknown API {s:?}: give a name such as Produce or Metadata, or a key (see `kinspect apis`)"),
    })
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let opts = match engine_options(args, g) {
        Ok(o) => o,
        Err(e) => {
            errln!("kinspect decode: {e}");
            return EXIT_FAILURE;
        }
    };
    let inputs = inputs(&args.files);
    let stdout = io::stdout();
    let tty = stdout.is_terminal() && args.output.is_none();
    let format = args.print.options(g, tty).format;
    let mut opts = opts;
    opts.records = records(args, format);
    let bar = Bar::for_inputs(&args.files);
    opts.progress = bar.clone().map(|b| b as _);
    if format == Format::Parquet || args.output.is_some() {
        let outcome = match to_file(args, g, format, inputs, &mut opts) {
            Ok(o) => o,
            Err(e) => {
                errln!("kinspect decode: {e}");
                return EXIT_FAILURE;
            }
        };
        if let Some(b) = bar {
            b.clear();
        }
        return exit_code("kinspect decode", &outcome);
    }
    // To a file or pipe: a plain file on a duplicate of fd 1, which two threads can share
    // (stdout's `LineWriter` would also search every buffer for newlines and copy it once more).
    // On a terminal: stdout as Rust sets it up, on one thread.
    let outcome = match super::stdout_file().filter(|_| !tty) {
        Some(file) => {
            opts.threads = super::threads();
            let mut printer = args.print.printer(Shared::new(file), g, tty);
            engine::run_split(inputs, &opts, &mut printer)
        }
        None => {
            let w = io::BufWriter::with_capacity(1 << 18, stdout.lock());
            engine::run(inputs, &opts, &mut args.print.printer(w, g, tty))
        }
    };
    if let Some(b) = bar {
        b.clear();
    }
    exit_code("kinspect decode", &outcome)
}

/// `-o PATH` (any format) and `-f parquet` (which needs it).
fn to_file(
    args: &Args,
    g: &Global,
    format: Format,
    inputs: Vec<Input<'static>>,
    opts: &mut engine::Options,
) -> Result<Outcome, String> {
    opts.threads = super::threads();
    let Some(path) = &args.output else {
        return Err(
            "-f parquet writes tables: give the folder (or .parquet file) with -o PATH".into(),
        );
    };
    if format == Format::Parquet {
        return super::records::parquet(path, inputs, opts, true);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut printer = args.print.printer(Shared::new(file), g, false);
    Ok(engine::run_split(inputs, opts, &mut printer))
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
    let records = args.records.unwrap_or(if format == Format::Summary {
        RecordsMode::Checked
    } else {
        RecordsMode::Batches
    });
    RecordsOptions {
        raw: records == RecordsMode::Raw,
        as_type: args.as_type,
        headers_only: records == RecordsMode::Checked,
    }
}

/// The engine's options from the flags: protocol, hints for a lone frame, filters, ports.
fn engine_options(args: &Args, g: &Global) -> Result<engine::Options, String> {
    let proto = kinspect::protocol::load(g.schemas.as_deref()).map_err(|e| e.to_string())?;
    let mut hints = Hints::default();
    if let Some(a) = &args.api {
        hints.api_key = Some(api_key(proto, a).map_err(|e| format!("--api: {e}"))?);
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
        api.push(api_key(proto, f).map_err(|e| format!("--api-filter: {e}"))?);
    }
    let mut opts = engine::Options::new(proto);
    opts.kind = args.input;
    opts.hints = hints;
    opts.no_size_prefix = args.no_size_prefix;
    opts.capture.ports = args.port.clone();
    opts.capture.show_secrets = args.print.show_secrets;
    opts.filters = Filters {
        api,
        streams: args.stream.clone(),
        errors_only: args.errors_only,
        more: Vec::new(),
    };
    Ok(opts)
}
