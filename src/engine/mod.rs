//! The engine: one entry point that runs the whole pipeline for any input and hands each decoded
//! PDU and capture note, in input order, to a [`Sink`].
//!
//! ```text
//! inputs (paths, readers, bytes) ─► kind (detected or forced) ─► capture | hex | raw | log
//!     ─► framing ─► session ─► message decoder ─► records ─► filters ─► Sink
//! ```
//!
//! [`run`] uses one thread; [`run_split`] shares the decoding with a second thread when the sink
//! can be split ([`Split`]) and `Options::threads` allows (see [`parallel`]). Neither prints
//! anything or exits: what went wrong is in the [`Outcome`] (the command line turns it into
//! messages and an exit code). A sink that fails with `BrokenPipe` ends the run quietly
//! (`Outcome::closed`).
//!
//! [`decode_frame`] decodes one frame on its own.

pub mod decoded;
pub mod filter;
mod frame;
mod inputs;
mod logdir;
pub mod parallel;
pub mod sink;

pub use filter::{Filter, Filters};
pub use frame::{decode_frame, decode_frame_in, FieldRef, FieldValue};
pub use sink::{Half, InputEnd, InputInfo, Sink, Split};

use crate::capture::{CaptureOptions, CaptureSummary};
use crate::diag::Diagnostic;
use crate::input::InputKind;
use crate::pdu::{FrameBuf, Hints, Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::decode::RecordsOptions;
use decoded::DecodeLoop;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

/// One input: a file (`-` is standard input), a reader or bytes in memory.
pub enum Input<'a> {
    Path(PathBuf),
    Stdin,
    Reader {
        name: String,
        reader: Box<dyn Read + 'a>,
        /// Its length when known (for progress).
        size: Option<u64>,
    },
    Bytes {
        name: String,
        bytes: &'a [u8],
    },
}

impl Input<'_> {
    /// A path, `-` meaning standard input.
    pub fn path(p: impl Into<PathBuf>) -> Input<'static> {
        let p = p.into();
        if p.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(p)
        }
    }

    /// The name the input is shown by (a path as given, `-` for standard input).
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.to_string_lossy().into_owned(),
            Input::Stdin => "-".to_string(),
            Input::Reader { name, .. } | Input::Bytes { name, .. } => name.clone(),
        }
    }
}

/// Told how far each input has been read (the command line draws a progress bar from it).
pub trait Progress: Send + Sync {
    /// An input starts; `size` when known.
    fn start(&self, name: &str, size: Option<u64>);
    /// `bytes` of it have been read so far.
    fn read(&self, bytes: u64);
    /// It has been read.
    fn end(&self);
}

/// How to run: the protocol, what the inputs are, how records decode, what is shown.
#[derive(Clone)]
pub struct Options {
    /// The protocol to decode with (`protocol::builtin()`, or `protocol::load(Some(dir))` for a
    /// user's schema folder laid over it).
    pub protocol: &'static Protocol,
    /// The kind of every input, instead of detecting it.
    pub kind: Option<InputKind>,
    /// For a frame on its own (hex, raw): what its bytes do not say (direction, the request's
    /// API and version for a response). Capture hints win where they know.
    pub hints: Hints,
    /// Hex and raw inputs hold frames without their 4-byte size prefix.
    pub no_size_prefix: bool,
    /// Extra broker ports, well-known ports on or off.
    pub capture: CaptureOptions,
    /// How `records` fields decode (batches, headers only, raw) and `--as`.
    pub records: RecordsOptions,
    pub filters: Filters,
    /// Threads for [`run_split`]: 1, or 2 (more are not used).
    pub threads: usize,
    /// Told how far each input has been read.
    pub progress: Option<Arc<dyn Progress>>,
    /// Run the conversation rules (`check::Checker`) over each input and add their findings
    /// to the diagnostics of the PDU that earned them, before the filters (`decode --check`).
    /// Runs on one thread ([`run_split`] falls back to [`run`]).
    pub check: bool,
}

impl Options {
    pub fn new(protocol: &'static Protocol) -> Options {
        Options {
            protocol,
            kind: None,
            hints: Hints::default(),
            no_size_prefix: false,
            capture: CaptureOptions::default(),
            records: RecordsOptions::default(),
            filters: Filters::default(),
            threads: 1,
            progress: None,
            check: false,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new(crate::protocol::builtin())
    }
}

/// How a run went.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Something shown carried an error diagnostic.
    pub errors: bool,
    /// Inputs that could not be read (or not to their end), with why.
    pub failed: Vec<Failure>,
    /// Every input read, in order.
    pub inputs: Vec<InputSummary>,
    /// The sink's output went away (`BrokenPipe`): the run stopped there, quietly.
    pub closed: bool,
    /// The sink failed otherwise: the run stopped there.
    pub output_error: Option<io::Error>,
}

/// An input that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub input: String,
    pub message: String,
}

/// What one input was.
#[derive(Clone, Debug, Default)]
pub struct InputSummary {
    pub name: String,
    /// `None` when it could not be opened.
    pub kind: Option<InputKind>,
    /// Totals of a capture.
    pub capture: Option<CaptureSummary>,
    /// What it held: Kafka frames (of any input kind), log-file batches and notes, shown or not.
    pub items: u64,
}

/// Runs every input through the pipeline on this thread, into `sink`.
pub fn run<'a, S: Sink + ?Sized>(
    inputs: impl IntoIterator<Item = Input<'a>>,
    opts: &Options,
    sink: &mut S,
) -> Outcome {
    direct(opts, sink).all(inputs)
}

/// A driver that hands everything to `sink` on this thread.
fn direct<'o, S: Sink + ?Sized>(opts: &'o Options, sink: &'o mut S) -> Driver<'o, Direct<'o, S>> {
    let filters = Arc::new(opts.filters.clone());
    let route = Direct {
        sink,
        filters: Arc::clone(&filters),
        errors: false,
    };
    Driver::new(opts, route, filters)
}

/// [`run`], sharing the decoding with a second thread when `opts.threads` > 1 and the sink
/// splits. The output is the same as [`run`]'s, byte for byte.
pub fn run_split<'a, S: Split>(
    inputs: impl IntoIterator<Item = Input<'a>>,
    opts: &Options,
    sink: &mut S,
) -> Outcome {
    // The rules follow the conversation in order: one thread.
    if opts.threads < 2 || opts.check {
        return run(inputs, opts, sink);
    }
    let filters = Arc::new(opts.filters.clone());
    match parallel::Parallel::new(sink, Arc::clone(&filters), opts.protocol, opts.records) {
        Ok(par) => Driver::new(opts, par, filters).all(inputs),
        Err(sink) => run(inputs, opts, sink),
    }
}

/// Live capture from an interface (feature `live`), decoded as it arrives into `sink`, on one
/// thread (each PDU reaches the sink as soon as its frame is complete).
#[cfg(feature = "live")]
pub fn run_live<S: Sink + ?Sized>(
    live: &crate::capture::live::LiveOptions,
    opts: &Options,
    sink: &mut S,
) -> Outcome {
    let mut d = direct(opts, sink);
    let name = live.interface.clone();
    let info = InputInfo {
        name: &name,
        kind: InputKind::Pcap,
    };
    let begun = d.route.sink().begin_input(&info);
    d.wrote(begun);
    let mut copts = opts.capture.clone();
    copts.protocol = Some(opts.protocol);
    let r = crate::capture::live::capture_live(live, &copts, None, &mut inputs::Feed(&mut d));
    let (summary, failed) = match r {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    d.end(name, InputKind::Pcap, summary, failed)
}

/// Where decoded things go: straight to the sink, or through two threads.
pub(crate) trait Route {
    type Sink: Sink + ?Sized;
    fn sink(&mut self) -> &mut Self::Sink;
    /// The sink hears of a new input, after everything of the inputs before was handed over
    /// (so that a split sink's halves hold rows of one input each, the one it was told last).
    fn begin_input(&mut self, info: &InputInfo<'_>) -> io::Result<()> {
        self.sink().begin_input(info)
    }
    /// Decodes a frame through the session and hands it to the sink if the filters show it.
    fn frame(
        &mut self,
        dl: &mut DecodeLoop,
        origin: Origin,
        hints: Hints,
        data: FrameBuf<'_>,
        input: Option<&Arc<str>>,
    ) -> io::Result<()>;
    /// A shown tree that is not a Kafka message, after everything before it.
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()>;
    /// A shown note, after everything before it.
    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()>;
    /// Everything handed over has reached the sink; `Ok(errors)` of what went elsewhere.
    fn drain(&mut self) -> io::Result<bool>;
}

/// One thread: decoded here, handed straight to the sink.
struct Direct<'s, S: Sink + ?Sized> {
    sink: &'s mut S,
    filters: Arc<Filters>,
    errors: bool,
}

impl<S: Sink + ?Sized> Route for Direct<'_, S> {
    type Sink = S;

    fn sink(&mut self) -> &mut S {
        self.sink
    }

    #[inline]
    fn frame(
        &mut self,
        dl: &mut DecodeLoop,
        origin: Origin,
        hints: Hints,
        data: FrameBuf<'_>,
        input: Option<&Arc<str>>,
    ) -> io::Result<()> {
        // Every frame goes through the session, shown or not: a hidden ApiVersions or
        // Metadata response still decides what later frames mean.
        let pdu = dl.frame(origin, &hints, data.bytes());
        if let Some(errors) = self.filters.pdu_shown(pdu) {
            self.errors |= errors;
            self.sink.pdu(pdu, input.map(|i| &**i))?;
        }
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.sink.pdu(pdu, input)
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.sink.note(origin, d, input)
    }

    fn drain(&mut self) -> io::Result<bool> {
        Ok(self.errors)
    }
}

/// The state of one run: the decode loop (decoder and session), the route to the sink, what
/// happened so far.
pub(crate) struct Driver<'o, R: Route> {
    opts: &'o Options,
    filters: Arc<Filters>,
    dl: DecodeLoop,
    /// Reused for log-file batches, which are not Kafka messages.
    log_pdu: Pdu,
    route: R,
    /// The input's name, given to the sink when there are several inputs.
    input_name: Option<Arc<str>>,
    outcome: Outcome,
    /// The output failed or closed: read no further.
    stopped: bool,
    /// The packets came from a hex dump: their capture timestamps are made up (zero).
    no_clock: bool,
    /// Frames, trees and notes of the current input (see [`InputSummary::items`]).
    items: u64,
    /// The first timestamp the sink's clock was given: `Origin::first_ts_ns` of every frame.
    first_ts: Option<i64>,
}

impl<'o, R: Route> Driver<'o, R> {
    pub(crate) fn new(opts: &'o Options, route: R, filters: Arc<Filters>) -> Self {
        let mut dl = DecodeLoop::new(opts.protocol);
        dl.set_records(opts.records);
        dl.set_check(opts.check);
        Driver {
            opts,
            filters,
            dl,
            log_pdu: Pdu::default(),
            route,
            input_name: None,
            outcome: Outcome::default(),
            stopped: false,
            no_clock: false,
            items: 0,
            first_ts: None,
        }
    }

    pub(crate) fn all<'a>(mut self, inputs: impl IntoIterator<Item = Input<'a>>) -> Outcome {
        let inputs: Vec<Input<'a>> = inputs.into_iter().collect();
        let several = inputs.len() > 1;
        for input in inputs {
            if self.stopped {
                break;
            }
            let name = input.name();
            self.input_name = several.then(|| Arc::from(name.as_str()));
            self.dl.new_input();
            self.input(input, name);
        }
        self.finish()
    }

    /// Records what the sink said: an error stops the run (`BrokenPipe` quietly).
    fn wrote(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.stop(e);
        }
    }

    fn stop(&mut self, e: io::Error) {
        if !self.stopped {
            self.stopped = true;
            if e.kind() == io::ErrorKind::BrokenPipe {
                self.outcome.closed = true;
            } else {
                self.outcome.output_error = Some(e);
            }
        }
    }

    /// The end of the one input of a live capture.
    #[cfg(feature = "live")]
    fn end(
        &mut self,
        name: String,
        kind: InputKind,
        capture: Option<CaptureSummary>,
        failed: Option<String>,
    ) -> Outcome {
        self.end_input(name, Some(kind), capture, failed);
        self.shown_errors();
        std::mem::take(&mut self.outcome)
    }

    /// A sink that shows PDUs of its own choosing says whether they carried errors.
    fn shown_errors(&mut self) {
        if let Some(e) = self.route.sink().shown_errors() {
            self.outcome.errors = e;
        }
    }

    fn end_input(
        &mut self,
        name: String,
        kind: Option<InputKind>,
        capture: Option<CaptureSummary>,
        failed: Option<String>,
    ) {
        if !self.stopped {
            let end = InputEnd {
                name: &name,
                summary: capture.as_ref(),
                failed: failed.as_deref(),
            };
            let r = self.route.sink().end_input(&end);
            self.wrote(r);
        }
        if let Some(message) = failed {
            self.outcome.failed.push(Failure {
                input: name.clone(),
                message,
            });
        }
        self.outcome.inputs.push(InputSummary {
            name,
            kind,
            capture,
            items: std::mem::take(&mut self.items),
        });
    }

    fn finish(mut self) -> Outcome {
        match self.route.drain() {
            Ok(errors) => self.outcome.errors |= errors,
            Err(e) => self.stop(e),
        }
        if !self.stopped {
            let r = self.route.sink().finish();
            self.wrote(r);
        }
        self.shown_errors();
        std::mem::take(&mut self.outcome)
    }

    /// A frame read from an input: through the session and the filters to the sink.
    fn frame<'d>(&mut self, mut origin: Origin, mut hints: Hints, data: impl Into<FrameBuf<'d>>) {
        self.items += 1;
        if self.stopped {
            return;
        }
        let data = data.into();
        if hints.has_size_prefix.is_none() {
            hints.has_size_prefix =
                inputs::guess_size_prefix(self.opts.protocol, data.bytes(), &hints);
        }
        if self.no_clock {
            origin.ts_ns = None;
            hints.latency_ns = None;
        }
        self.clock(origin.ts_ns);
        origin.first_ts_ns = self.first_ts;
        let r = self
            .route
            .frame(&mut self.dl, origin, hints, data, self.input_name.as_ref());
        self.wrote(r);
    }

    /// The sink's clock, and time zero of relative times (the first timestamp of the run).
    fn clock(&mut self, ts_ns: Option<i64>) {
        if let Some(t) = ts_ns {
            self.first_ts.get_or_insert(t);
        }
        self.route.sink().clock(ts_ns);
    }

    /// A capture note.
    fn note(&mut self, origin: &Origin, d: &Diagnostic) {
        self.items += 1;
        let mut origin = origin.clone();
        if self.no_clock {
            origin.ts_ns = None;
        }
        if self.stopped {
            return;
        }
        self.clock(origin.ts_ns);
        self.dl.check_note(&origin, d);
        let Some(is_error) = self.filters.note_shown(&origin, d) else {
            return;
        };
        self.outcome.errors |= is_error;
        let r = self.route.note(&origin, d, self.input_name.as_deref());
        self.wrote(r);
    }

    /// A tree that is not a Kafka message (a log-file batch): no API, so `--api-filter` hides
    /// it.
    ///
    /// The tree is taken, not copied: the PDU's last tree is swapped in for the file reader to
    /// decode its next batch into. One too large to keep (a batch that filled its tree to the
    /// limits) is let go once shown, as a frame's is ([`decoded::let_go_over`]).
    fn tree(&mut self, origin: Origin, t: &mut crate::wire::tree::Tree) {
        self.items += 1;
        if self.stopped {
            return;
        }
        // Without the rules, a hidden tree is not even taken.
        if !self.opts.check && self.filters.tree_shown(t).is_none() {
            return;
        }
        self.log_pdu = Pdu {
            origin,
            tree: std::mem::replace(t, std::mem::take(&mut self.log_pdu.tree)),
            ..Pdu::default()
        };
        self.dl.check(&mut self.log_pdu);
        if let Some(has_errors) = self.filters.tree_shown(&self.log_pdu.tree) {
            self.outcome.errors |= has_errors;
            let r = self.route.pdu(&self.log_pdu, self.input_name.as_deref());
            self.wrote(r);
        }
        decoded::let_go_over(&mut self.log_pdu, parallel::TOGETHER);
    }

    /// A capture event.
    fn event(&mut self, ev: crate::capture::Event<'_>) {
        use crate::capture::Event;
        match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => self.captured_frame(origin, hints, data.into()),
            Event::Note { origin, diag } => self.note(&origin, &diag),
        }
    }

    /// A frame of a capture: the user's hints fill in what the capture does not say.
    fn captured_frame(&mut self, origin: Origin, hints: Hints, data: FrameBuf<'_>) {
        let user = self.opts.hints;
        let h = Hints {
            direction: hints.direction.or(user.direction),
            api_key: hints.api_key.or(user.api_key),
            api_version: hints.api_version.or(user.api_version),
            ..hints
        };
        self.frame(origin, h, data);
    }
}
