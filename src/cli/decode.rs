//! `kinspect decode [FILE...]`: read captures, hex dumps, raw frames (files or stdin), decode
//! every Kafka frame and print it as JSON, JSON Lines, a tree or a one-line summary.
//!
//! Exit codes: 0 when everything shown decoded cleanly; 1 when something shown carries an
//! error diagnostic (filters narrow what counts, like grep); 2 when an input could not be read
//! or the command line is wrong.

use super::parallel::{Parallel, Style};
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::decoded::DecodeLoop;
use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::diag::{Diagnostic, Severity};
use kinspect::input::hex::HexReader;
use kinspect::input::packets::{link_type, PcapFromHex};
use kinspect::input::raw::RawReader;
use kinspect::input::{detect, split_prefixed, InputKind, DETECT_BYTES};
use kinspect::output::{use_color, Format, Options, Printer};
use kinspect::pdu::{Direction, Hints, Origin, Pdu};
use kinspect::protocol::Protocol;
use kinspect::records::file::{decode_log_file, decode_quorum_state, FileKind};
use kinspect::records::{AsType, RecordsContext};
use kinspect::wire::decode::RecordsOptions;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Inputs: pcap/pcapng captures, hex dumps, raw frames, Kafka log segments/snapshots; `-`
    /// or nothing for stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Force the kind of input instead of detecting it.
    #[arg(long, value_name = "KIND", value_parser = super::choice::<InputKind>())]
    pub input: Option<InputKind>,
    /// Output format (default: tree on a terminal, jsonl otherwise). JSON Lines to a file or
    /// pipe decodes on two threads; `KINSPECT_THREADS=1` keeps one (same output).
    #[arg(long, short = 'f', value_name = "FORMAT", value_parser = super::choice::<Format>())]
    pub format: Option<Format>,
    /// JSON: give every field its byte offset and length.
    #[arg(long)]
    pub annotate: bool,
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
    /// Show SASL PLAIN passwords instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
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

fn parse_as(s: &str) -> Result<AsType, String> {
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
    let proto = match kinspect::protocol::load(g.schemas.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kinspect decode: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut hints = Hints::default();
    if let Some(a) = &args.api {
        match api_key(proto, a) {
            Ok(k) => hints.api_key = Some(k),
            Err(e) => {
                eprintln!("kinspect decode: --api: {e}");
                return EXIT_FAILURE;
            }
        }
    }
    hints.api_version = args.api_version;
    if hints.api_version.is_some() != hints.api_key.is_some() {
        eprintln!("kinspect decode: --api and --api-version go together (a response needs both to be decoded)");
        return EXIT_FAILURE;
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
    let mut filter = Vec::new();
    for f in &args.api_filter {
        match api_key(proto, f) {
            Ok(k) => filter.push(k),
            Err(e) => {
                eprintln!("kinspect decode: --api-filter: {e}");
                return EXIT_FAILURE;
            }
        }
    }
    let stdout = io::stdout();
    let tty = stdout.is_terminal();
    let format = args
        .format
        .unwrap_or(if tty { Format::Tree } else { Format::Jsonl });
    let opts = Options {
        format,
        annotate: args.annotate,
        color: use_color(g.color, tty),
        show_secrets: args.show_secrets,
    };
    let filters = Filters {
        api: filter,
        streams: args.stream.clone(),
        errors_only: args.errors_only,
    };
    let records = args.records.unwrap_or(if format == Format::Summary {
        RecordsMode::Checked
    } else {
        RecordsMode::Batches
    });
    let records = RecordsOptions {
        raw: records == RecordsMode::Raw,
        as_type: args.as_type,
        headers_only: records == RecordsMode::Checked,
    };
    // JSON Lines to a file or pipe decodes on two cores (see `parallel`); the other formats
    // are quick to print, or meant for a terminal, and stay on one.
    let mut par = None;
    if !tty && format == Format::Jsonl && threads() > 1 {
        if let Some(file) = stdout_file(&stdout) {
            let style = Style {
                json: kinspect::output::json::JsonOptions {
                    annotate: args.annotate,
                    show_secrets: args.show_secrets,
                },
                filters: filters.clone(),
            };
            par = Parallel::new(style, file, proto, records).ok();
        }
    }
    let out = match par {
        Some(p) => Out::Two(Box::new(p)),
        None => Out::One(Printer::new(
            io::BufWriter::with_capacity(1 << 18, output_sink(&stdout, tty)),
            opts,
        )),
    };
    let _ = PROTO.set(proto);
    let mut run = Run {
        dl: DecodeLoop::new(proto),
        log_pdu: Pdu::default(),
        hints,
        no_prefix: args.no_size_prefix,
        filters,
        out,
        input_name: None,
        errors: false,
        failed: false,
        out_closed: false,
        no_clock: false,
        as_type: args.as_type,
    };
    run.dl.set_records(records);
    let files: Vec<PathBuf> = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    let capture_opts = CaptureOptions {
        ports: args.port.clone(),
        show_secrets: args.show_secrets,
        ..CaptureOptions::default()
    };
    for f in &files {
        if run.out_closed {
            break;
        }
        let name = f.to_string_lossy().to_string();
        run.input_name = (files.len() > 1).then(|| Arc::from(name.as_str()));
        run.dl.new_input();
        let reader: Box<dyn Read> = if name == "-" {
            Box::new(io::stdin().lock())
        } else {
            match std::fs::File::open(f) {
                Ok(h) => {
                    let size = h.metadata().map(|m| m.len()).unwrap_or(0);
                    if io::stderr().is_terminal() && size >= PROGRESS_MIN_BYTES {
                        Box::new(Progress::new(h, size))
                    } else {
                        Box::new(h)
                    }
                }
                Err(e) => {
                    eprintln!("kinspect decode: {name}: {e}");
                    run.failed = true;
                    continue;
                }
            }
        };
        if let Err(msg) = run.input(reader, &name, args.input, &capture_opts) {
            eprintln!("kinspect decode: {name}: {msg}");
            run.failed = true;
        }
    }
    let Run {
        out,
        mut errors,
        failed,
        out_closed,
        ..
    } = run;
    let finished = match out {
        Out::Two(p) => p.finish().map(|e| errors |= e),
        Out::One(printer) => printer.finish().map(|_| ()),
    };
    if let Err(e) = finished {
        if e.kind() != io::ErrorKind::BrokenPipe && !out_closed {
            eprintln!("kinspect decode: writing the output: {e}");
            return EXIT_FAILURE;
        }
    }
    if failed {
        EXIT_FAILURE
    } else if errors {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

/// Where shown PDUs and notes go.
enum Out<W: Write> {
    /// Printed on this thread.
    One(Printer<W>),
    /// JSON Lines decoded and printed on two threads.
    Two(Box<Parallel>),
}

struct Run<W: Write> {
    /// Decoding and the session (negotiated versions, topic ids), shared with `stats`.
    dl: DecodeLoop,
    /// Reused for log-file batches, which are not Kafka messages.
    log_pdu: Pdu,
    hints: Hints,
    no_prefix: bool,
    filters: Filters,
    out: Out<W>,
    input_name: Option<Arc<str>>,
    /// Something shown carried an error diagnostic.
    errors: bool,
    /// An input could not be read.
    failed: bool,
    /// The output went away (a closed pipe): stop quietly.
    out_closed: bool,
    /// The packets came from a hex dump: their capture timestamps are made up (zero).
    no_clock: bool,
    as_type: Option<AsType>,
}

impl<W: Write> Run<W> {
    /// Reads one input to the end. `Err` says why it could not be read (with its place).
    fn input(
        &mut self,
        mut reader: Box<dyn Read>,
        name: &str,
        forced: Option<InputKind>,
        copts: &CaptureOptions,
    ) -> Result<(), String> {
        let mut head = Vec::with_capacity(DETECT_BYTES);
        (&mut reader)
            .take(DETECT_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| e.to_string())?;
        let kind = forced.unwrap_or_else(|| detect(Some(name), &head));
        let reader = io::Cursor::new(head).chain(reader);
        match kind {
            InputKind::Pcap => self.capture(reader, copts),
            InputKind::Hex => self.hex(BufReader::with_capacity(1 << 16, reader), copts),
            InputKind::Raw => self.raw(BufReader::with_capacity(1 << 16, reader)),
            InputKind::Log => self.log(reader, name),
        }
    }

    /// A log segment, snapshot or quorum-state file: one output object per batch (or corrupt
    /// region), `stream_offset` = the batch's file offset. The topic, which decides how
    /// internal-topic records are read, comes from `--as` or the `TOPIC-PARTITION` folder name.
    fn log<R: Read>(&mut self, reader: R, name: &str) -> Result<(), String> {
        let path = std::path::Path::new(name);
        let kind = FileKind::of_path(path).unwrap_or(FileKind::Segment);
        let topic = path
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|d| d.to_str())
            .and_then(|d| d.rsplit_once('-'))
            .filter(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|(t, _)| t.to_string());
        let ctx = RecordsContext {
            topic: topic.as_deref(),
            partial_tail_ok: true,
            as_type: self.as_type,
            ..Default::default()
        };
        let mut index = 0u64;
        if kind == FileKind::QuorumState {
            let t = decode_quorum_state(reader).map_err(|e| e.to_string())?;
            self.tree(
                Origin {
                    index,
                    ..Origin::default()
                },
                &t,
            );
            return Ok(());
        }
        decode_log_file(reader, kind, &ctx, &mut |at, t| {
            self.tree(
                Origin {
                    index,
                    stream_offset: Some(at),
                    ..Origin::default()
                },
                t,
            );
            index += 1;
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    /// Shows a tree that is not a Kafka message (a log batch): no API, so `--api-filter`
    /// hides it.
    fn tree(&mut self, origin: Origin, t: &kinspect::wire::tree::Tree) {
        if self.out_closed {
            return;
        }
        let Some(has_errors) = self.filters.tree_shown(t) else {
            return;
        };
        self.errors |= has_errors;
        self.log_pdu = Pdu {
            origin,
            tree: std::mem::take(&mut self.log_pdu.tree),
            ..Pdu::default()
        };
        self.log_pdu.tree.clone_from(t);
        let (pdu, input) = (&self.log_pdu, self.input_name.as_deref());
        let r = match &mut self.out {
            Out::Two(par) => par.local(|style, text| style.pdu(pdu, input, text)),
            Out::One(printer) => printer.pdu(pdu, input),
        };
        self.wrote(r);
    }

    fn capture<R: Read>(&mut self, reader: R, copts: &CaptureOptions) -> Result<(), String> {
        let mut copts = copts.clone();
        copts.is_known_request = Some(known_request);
        let res = read_capture(reader, &copts, &mut |ev| match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => {
                let user = self.hints;
                let h = Hints {
                    direction: hints.direction.or(user.direction),
                    api_key: hints.api_key.or(user.api_key),
                    api_version: hints.api_version.or(user.api_version),
                    ..hints
                };
                self.frame(origin, h, data);
            }
            Event::Note { origin, diag } => self.note(&origin, &diag),
        });
        res.map(|_| ()).map_err(|e| e.to_string())
    }

    fn hex<R: BufRead>(&mut self, reader: R, copts: &CaptureOptions) -> Result<(), String> {
        let mut hex = HexReader::new(reader);
        let mut index = 0u64;
        let mut first = true;
        while let Some(block) = hex.next_block().map_err(|e| e.to_string())? {
            if first {
                first = false;
                if let Some(link) = link_type(&block.data) {
                    // Whole packets (tshark -x): let the capture reader reassemble them.
                    let pcap = PcapFromHex::new(hex, &block.data, link);
                    self.no_clock = true;
                    let r = self.capture(pcap, copts);
                    self.no_clock = false;
                    return r;
                }
            }
            let pieces = if self.no_prefix {
                None
            } else {
                split_prefixed(&block.data).filter(|p| p.len() > 1)
            };
            match pieces {
                Some(ranges) => {
                    for r in ranges {
                        let h = Hints {
                            has_size_prefix: Some(true),
                            ..self.hints
                        };
                        let origin = Origin {
                            index,
                            ..Origin::default()
                        };
                        self.frame(origin, h, &block.data[r]);
                        index += 1;
                    }
                }
                None => {
                    let origin = Origin {
                        index,
                        ..Origin::default()
                    };
                    self.frame(origin, self.hints, &block.data);
                    index += 1;
                }
            }
            if self.out_closed {
                break;
            }
        }
        Ok(())
    }

    fn raw<R: Read>(&mut self, reader: R) -> Result<(), String> {
        let mut raw = RawReader::new(reader, self.no_prefix);
        let mut index = 0u64;
        while let Some(f) = raw.next_frame().map_err(|e| e.to_string())? {
            let origin = Origin {
                index,
                stream_offset: Some(f.offset),
                ..Origin::default()
            };
            let h = Hints {
                has_size_prefix: f.has_size_prefix.or(self.hints.has_size_prefix),
                ..self.hints
            };
            self.frame(origin, h, &f.data);
            index += 1;
            if self.out_closed {
                break;
            }
        }
        Ok(())
    }

    fn frame(&mut self, mut origin: Origin, mut hints: Hints, data: &[u8]) {
        if self.out_closed {
            return;
        }
        if hints.has_size_prefix.is_none() {
            hints.has_size_prefix = guess_size_prefix(PROTO.get().copied(), data, &hints);
        }
        if self.no_clock {
            origin.ts_ns = None;
            hints.latency_ns = None;
        }
        let printer = match &mut self.out {
            Out::Two(par) => {
                let r = par.frame(&mut self.dl, origin, hints, data, self.input_name.as_ref());
                return self.wrote(r);
            }
            Out::One(printer) => printer,
        };
        // Every frame goes through the session, shown or not: a hidden ApiVersions or
        // Metadata response still decides what later frames mean.
        let pdu = self.dl.frame(origin, &hints, data);
        printer.clock(pdu.origin.ts_ns);
        let Some(has_errors) = self.filters.pdu_shown(pdu) else {
            return;
        };
        self.errors |= has_errors;
        let r = printer.pdu(pdu, self.input_name.as_deref());
        self.wrote(r);
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic) {
        let mut origin = origin.clone();
        if self.no_clock {
            origin.ts_ns = None;
        }
        if let Out::One(printer) = &mut self.out {
            printer.clock(origin.ts_ns);
        }
        if self.out_closed {
            return;
        }
        let Some(is_error) = self.filters.note_shown(&origin, d) else {
            return;
        };
        self.errors |= is_error;
        let origin = &origin;
        let input = self.input_name.as_deref();
        let r = match &mut self.out {
            Out::Two(par) => {
                par.local(|style, text| style.note(origin, d, input, text).map(|_| false))
            }
            Out::One(printer) => printer.note(origin, d, input),
        };
        self.wrote(r);
    }

    fn wrote(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            if e.kind() != io::ErrorKind::BrokenPipe {
                eprintln!("kinspect decode: writing the output: {e}");
                self.failed = true;
            }
            self.out_closed = true;
        }
    }
}

/// What `--api-filter`, `--stream` and `--errors-only` let through.
#[derive(Clone, Debug, Default)]
pub(super) struct Filters {
    /// API keys shown (all when empty); things that are not Kafka messages are hidden by any.
    pub api: Vec<i16>,
    /// TCP connections shown (all when empty).
    pub streams: Vec<u32>,
    pub errors_only: bool,
}

impl Filters {
    /// `--stream`: something with no connection (a hex frame, a file-level note) is shown only
    /// when no stream is asked for.
    fn stream_shown(&self, o: &Origin) -> bool {
        self.streams.is_empty() || o.conn.is_some_and(|c| self.streams.contains(&c.stream))
    }

    /// `Some(has_errors)` when a decoded PDU is shown.
    pub fn pdu_shown(&self, pdu: &Pdu) -> Option<bool> {
        let api_shown = self.api.is_empty() || pdu.api_key.is_some_and(|k| self.api.contains(&k));
        let has_errors = pdu.tree.has_errors();
        (api_shown && self.stream_shown(&pdu.origin) && (has_errors || !self.errors_only))
            .then_some(has_errors)
    }

    /// `Some(is_error)` when a capture note is shown.
    fn note_shown(&self, origin: &Origin, d: &Diagnostic) -> Option<bool> {
        let is_error = d.severity == Severity::Error;
        (self.api.is_empty() && self.stream_shown(origin) && (is_error || !self.errors_only))
            .then_some(is_error)
    }

    /// `Some(has_errors)` when a tree that is not a Kafka message (a log batch) is shown: it has
    /// no API or connection, so `--api-filter` and `--stream` hide it.
    fn tree_shown(&self, t: &kinspect::wire::tree::Tree) -> Option<bool> {
        let has_errors = t.has_errors();
        (self.api.is_empty() && self.streams.is_empty() && (has_errors || !self.errors_only))
            .then_some(has_errors)
    }
}

/// Whether a frame on its own (hex, raw) starts with its size prefix, when its bytes say so
/// although the prefix disagrees with the length (a frame cut short, or a damaged prefix):
/// the first four bytes are a sane size and, read as a request header instead, would name no
/// known API version. `None` leaves it to the decoder (prefix iff it matches the length).
fn guess_size_prefix(proto: Option<&'static Protocol>, data: &[u8], hints: &Hints) -> Option<bool> {
    let head = data.get(..4)?;
    let size = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if size as i64 == data.len() as i64 - 4 {
        return Some(true);
    }
    if hints.direction == Some(Direction::Response)
        || !(0..=kinspect::limits::MAX_FRAME_SIZE as i32).contains(&size)
    {
        return None;
    }
    let proto = proto.unwrap_or_else(kinspect::protocol::builtin);
    let key = i16::from_be_bytes([head[0], head[1]]);
    let version = i16::from_be_bytes([head[2], head[3]]);
    proto
        .message(key, version, Direction::Request)
        .is_none()
        .then_some(true)
}

/// The protocol of this run, for [`known_request`] (a plain `fn` pointer cannot capture it).
static PROTO: std::sync::OnceLock<&'static Protocol> = std::sync::OnceLock::new();

/// Registry hook for the capture reader's content detection and resync.
fn known_request(key: i16, version: i16) -> bool {
    let proto = PROTO
        .get()
        .copied()
        .unwrap_or_else(kinspect::protocol::builtin);
    proto.message(key, version, Direction::Request).is_some()
}

/// Inputs at least this big show progress on stderr (when it is a terminal).
const PROGRESS_MIN_BYTES: u64 = 32 << 20;

/// A reader that reports how far it has read, on stderr, at most a few times a second, and
/// clears the line when dropped.
struct Progress<R> {
    r: R,
    size: u64,
    done: u64,
    last: std::time::Instant,
    shown: bool,
}

impl<R> Progress<R> {
    fn new(r: R, size: u64) -> Progress<R> {
        Progress {
            r,
            size,
            done: 0,
            last: std::time::Instant::now(),
            shown: false,
        }
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.r.read(buf)?;
        self.done += n as u64;
        if self.last.elapsed() >= std::time::Duration::from_millis(300) {
            self.last = std::time::Instant::now();
            self.shown = true;
            let pct = self.done.saturating_mul(100) / self.size.max(1);
            eprint!(
                "\r{:>6} MB of {} MB ({pct}%)",
                self.done >> 20,
                self.size >> 20
            );
        }
        Ok(n)
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Where printed output goes. On a terminal, stdout as Rust sets it up (line-buffered, so lines
/// show as they are decoded). Otherwise a plain file on a duplicate of fd 1: stdout's
/// `LineWriter` would search every buffer it is handed for newlines and copy it once more, which
/// costs a sixth of the time of a JSON Lines dump.
fn output_sink(stdout: &io::Stdout, tty: bool) -> Box<dyn Write> {
    match stdout_file(stdout).filter(|_| !tty) {
        Some(f) => Box::new(f),
        None => Box::new(stdout.lock()),
    }
}

/// Threads to decode JSON Lines with: `KINSPECT_THREADS` (1 or 2), else 2 when the machine has
/// two cores or more.
fn threads() -> usize {
    match std::env::var("KINSPECT_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
    }
}

/// Standard output as a plain file (a duplicate of fd 1), where the platform allows.
fn stdout_file(stdout: &io::Stdout) -> Option<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        return stdout
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::fs::File::from);
    }
    #[allow(unreachable_code)]
    {
        let _ = stdout;
        None
    }
}
