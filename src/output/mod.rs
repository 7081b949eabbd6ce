//! Printers: they read a decoded [`Pdu`] (and capture notes) and format it; they never decode.
//! `json` (one array), `jsonl` (one object per line), `tree` (a colored
//! `offset | bytes | field = value` view) and `summary` (one line per PDU).

pub mod check;
pub mod fields;
pub mod json;
pub mod notes;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod records;
pub mod report;
pub mod stats;
pub mod summary;
pub mod time;
pub mod tree;
pub mod value;

#[cfg(test)]
mod split_tests;

use crate::diag::Diagnostic;
use crate::engine::parallel::{Shared, Turn};
use crate::engine::{Half, Sink, Split};
use crate::pdu::{Origin, Pdu};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON array of PDU objects.
    Json,
    /// One PDU object per line (JSON Lines).
    Jsonl,
    /// Colored `offset | bytes | field = value` tree.
    Tree,
    /// One line per PDU, like tshark's default view.
    Summary,
    /// Parquet tables (`pdus`, `records`) to `-o PATH`: written by [`parquet::ParquetSink`]
    /// (feature `parquet`), not by the [`Printer`], which prints it as JSON Lines.
    Parquet,
    /// Chosen fields, one row per PDU or element (`fields::FieldsPrinter`; [`Printer`] prints
    /// nothing in it).
    Fields,
}

impl crate::choice::Choice for Format {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("json", "One JSON array of PDU objects", Format::Json),
        (
            "jsonl",
            "One PDU object per line (JSON Lines)",
            Format::Jsonl,
        ),
        (
            "tree",
            "Colored `offset | bytes | field = value` tree",
            Format::Tree,
        ),
        (
            "summary",
            "One line per PDU, like tshark's default view",
            Format::Summary,
        ),
        (
            "fields",
            "Chosen fields (-e FIELD...), tab-separated, as tshark's -T fields",
            Format::Fields,
        ),
        (
            "parquet",
            "Parquet tables `pdus` and `records` to -o PATH (for DuckDB, pandas, Spark)",
            Format::Parquet,
        ),
    ];
}

/// When to color: `Auto` colors a terminal unless `NO_COLOR` is set (no-color.org).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl crate::choice::Choice for ColorChoice {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("auto", "", ColorChoice::Auto),
        ("always", "", ColorChoice::Always),
        ("never", "", ColorChoice::Never),
    ];
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub format: Format,
    /// JSON: every member value becomes `{"offset","length","value"}`.
    pub annotate: bool,
    /// Emit ANSI colors (tree and summary only).
    pub color: bool,
    /// Print SASL PLAIN passwords instead of masking them.
    pub show_secrets: bool,
}

/// ANSI styles, or nothing when color is off. Kept local (not a global override) so that
/// several printers with different settings can coexist, e.g. in tests.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    on: bool,
}

impl Palette {
    pub fn new(on: bool) -> Palette {
        Palette { on }
    }
    fn pick(self, code: &'static str) -> &'static str {
        if self.on {
            code
        } else {
            ""
        }
    }
    pub fn reset(self) -> &'static str {
        self.pick("\x1b[0m")
    }
    pub fn dim(self) -> &'static str {
        self.pick("\x1b[2m")
    }
    pub fn bold(self) -> &'static str {
        self.pick("\x1b[1m")
    }
    pub fn name(self) -> &'static str {
        self.pick("\x1b[36m")
    }
    pub fn string(self) -> &'static str {
        self.pick("\x1b[32m")
    }
    pub fn number(self) -> &'static str {
        self.pick("\x1b[33m")
    }
    pub fn null(self) -> &'static str {
        self.pick("\x1b[35m")
    }
    pub fn error(self) -> &'static str {
        self.pick("\x1b[1;31m")
    }
    pub fn warning(self) -> &'static str {
        self.pick("\x1b[33m")
    }
    pub fn info(self) -> &'static str {
        self.pick("\x1b[34m")
    }
    pub fn severity(self, s: crate::diag::Severity) -> &'static str {
        use crate::diag::Severity::*;
        match s {
            Error => self.error(),
            Warning => self.warning(),
            Info => self.info(),
        }
    }
}

/// Decides whether to color: `--color always|never` wins; `auto` colors only a terminal, and
/// not when `NO_COLOR` is set to a non-empty value (no-color.org).
pub fn use_color(choice: ColorChoice, is_terminal: bool) -> bool {
    color_decision(choice, is_terminal, std::env::var_os("NO_COLOR").as_deref())
}

fn color_decision(
    choice: ColorChoice,
    is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
) -> bool {
    use ColorChoice::*;
    match choice {
        Always => true,
        Never => false,
        Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

#[cfg(test)]
#[test]
fn color_follows_flag_then_terminal_then_no_color() {
    use std::ffi::OsStr;
    use ColorChoice::*;
    assert!(color_decision(Always, false, Some(OsStr::new("1"))));
    assert!(!color_decision(Never, true, None));
    assert!(color_decision(Auto, true, None));
    assert!(!color_decision(Auto, false, None));
    assert!(!color_decision(Auto, true, Some(OsStr::new("1"))));
    assert!(color_decision(Auto, true, Some(OsStr::new(""))));
}

/// A stream of PDUs and notes going to one output in one format.
pub struct Printer<W: Write> {
    w: W,
    o: Options,
    json: json::JsonOptions,
    count: u64,
    summary: summary::State,
    /// The first timestamp read, for a worker's half ([`crate::engine::Split`]).
    first_ts: Option<i64>,
    /// A JSON array printed on two threads: the elements both halves printed, and whether the
    /// array's `[` has reached the output (see `engine::parallel::Shared`).
    split_array: Option<(Arc<AtomicU64>, Arc<AtomicBool>)>,
}

impl<W: Write> Printer<W> {
    pub fn new(w: W, o: Options) -> Printer<W> {
        Printer {
            w,
            o,
            json: json::JsonOptions {
                annotate: o.annotate,
                show_secrets: o.show_secrets,
            },
            count: 0,
            summary: summary::State::default(),
            first_ts: None,
            split_array: None,
        }
    }

    fn sep(&mut self) -> io::Result<()> {
        match self.o.format {
            Format::Json => match &self.split_array {
                // On two threads every element follows `,\n`; the output's first becomes `[\n`.
                Some((n, _)) => {
                    n.fetch_add(1, Ordering::Relaxed);
                    self.w.write_all(b",\n")
                }
                None => self
                    .w
                    .write_all(if self.count == 0 { b"[\n" } else { b",\n" }),
            },
            _ => Ok(()),
        }
    }

    /// Notes the timestamp of something read, shown or not, so that summary times stay
    /// relative to the start of the input whatever the filters hide. The first call sets time
    /// zero: give it the capture's first packet (`capture::CaptureSink::first_packet`) to follow
    /// tshark's convention.
    pub fn clock(&mut self, ts_ns: Option<i64>) {
        if let Some(ts) = ts_ns {
            self.first_ts.get_or_insert(ts);
        }
        self.summary.clock(ts_ns);
    }

    /// How the summary view shows times (relative to the first packet unless set).
    pub fn set_time_format(&mut self, time: time::TimeFormat) {
        self.summary.set_time_format(time);
    }

    /// The output it writes to.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Prints one decoded PDU; `input` names the file when several were given.
    pub fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.sep()?;
        match self.o.format {
            Format::Json => json::write_pdu(&mut self.w, pdu, input, &self.json)?,
            Format::Jsonl | Format::Parquet => {
                json::write_pdu(&mut self.w, pdu, input, &self.json)?;
                self.w.write_all(b"\n")?;
            }
            Format::Tree => tree::write_pdu(&mut self.w, pdu, input, &self.o)?,
            Format::Summary => self.summary.write_pdu(&mut self.w, pdu, &self.o)?,
            Format::Fields => {}
        }
        self.count += 1;
        Ok(())
    }

    /// Prints something from the input that is not a PDU (a gap, TLS, skipped bytes).
    pub fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.sep()?;
        match self.o.format {
            Format::Json => json::write_note(&mut self.w, origin, d, input)?,
            Format::Jsonl | Format::Parquet => {
                json::write_note(&mut self.w, origin, d, input)?;
                self.w.write_all(b"\n")?;
            }
            Format::Tree => tree::write_note(&mut self.w, origin, d, input, &self.o)?,
            Format::Summary => self.summary.write_note(&mut self.w, origin, d, &self.o)?,
            Format::Fields => {}
        }
        self.count += 1;
        Ok(())
    }

    /// Ends the output (closes the JSON array) and flushes.
    pub fn finish(mut self) -> io::Result<W> {
        self.end()?;
        Ok(self.w)
    }

    fn end(&mut self) -> io::Result<()> {
        if self.o.format == Format::Json {
            let any = match &self.split_array {
                Some((n, _)) => n.load(Ordering::Relaxed) > 0,
                None => self.count > 0,
            };
            self.w.write_all(if any { b"\n]\n" } else { b"[]\n" })?;
        }
        self.w.flush()
    }
}

impl<W: Write> Sink for Printer<W> {
    fn clock(&mut self, ts_ns: Option<i64>) {
        Printer::clock(self, ts_ns);
    }

    #[inline]
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        Printer::pdu(self, pdu, input)
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        Printer::note(self, origin, d, input)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end()
    }
}

/// Printed on two threads: the worker's half prints its batches into its own buffer and writes
/// them to the same file in its turn. In a JSON array every element follows `,\n` and the
/// output's first bytes become `[\n` when they are written, in order, whichever side printed
/// them. A summary with delta times stays on one thread.
impl Split for Printer<Shared> {
    type Half = Printer<Shared>;

    fn fork(&mut self, turn: &Arc<Turn>) -> Option<Printer<Shared>> {
        let time = self.summary.time_format();
        // A summary's delta times count from the PDU shown before, which the other thread may
        // be printing: those stay on one thread.
        if self.o.format == Format::Summary && time == time::TimeFormat::Delta {
            return None;
        }
        let mut w = self.w.worker_side().ok()?;
        self.w.set_turn(Arc::clone(turn));
        if self.o.format == Format::Json {
            let count = self.count;
            let (n, opened) = self
                .split_array
                .get_or_insert_with(|| {
                    (
                        Arc::new(AtomicU64::new(count)),
                        Arc::new(AtomicBool::new(count > 0)),
                    )
                })
                .clone();
            self.w.open_array_on_first_write(Arc::clone(&opened));
            w.open_array_on_first_write(Arc::clone(&opened));
            let mut half = Printer::new(w, self.o);
            half.split_array = Some((n, opened));
            half.set_time_format(time);
            return Some(half);
        }
        let mut half = Printer::new(w, self.o);
        half.set_time_format(time);
        Some(half)
    }

    fn hand_over(&mut self, half: &mut Printer<Shared>) -> io::Result<()> {
        if let Some(ts) = self.first_ts {
            half.clock(Some(ts));
        }
        self.w.pass_to(&mut half.w)
    }

    fn queues(&self) -> bool {
        true
    }

    fn batch_bytes(&self) -> usize {
        match self.o.format {
            Format::Summary => crate::engine::parallel::LIGHT_BATCH_BYTES,
            _ => crate::engine::parallel::BATCH_BYTES,
        }
    }

    fn take_back(&mut self, _half: &mut Printer<Shared>) -> io::Result<()> {
        Ok(())
    }
}

impl Half for Printer<Shared> {
    fn end_batch(&mut self) -> io::Result<()> {
        self.w.write_held()
    }
}
