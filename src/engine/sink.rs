//! Where the engine hands what it decoded: a [`Sink`] (a printer, the statistics), and, for a
//! sink that can share its work with a second thread, [`Split`] and its worker-side [`Half`].
//!
//! ripgrep's `grep-searcher` `Sink` is the model: the engine calls the sink for each shown PDU
//! and note, in input order; the sink formats or counts and knows no command-line flag.

use crate::capture::CaptureSummary;
use crate::diag::Diagnostic;
use crate::input::InputKind;
use crate::pdu::{Origin, Pdu};
use std::io;

/// An input as the sink hears of it.
#[derive(Clone, Copy, Debug)]
pub struct InputInfo<'a> {
    /// The input's name as given (a path, `-`, or the caller's name for a reader).
    pub name: &'a str,
    /// Its kind, detected or forced.
    pub kind: InputKind,
}

/// What the engine hands a sink. Every method but [`Sink::pdu`] and [`Sink::note`] has a default
/// that does nothing. An `Err` stops the run; `BrokenPipe` stops it quietly (the reader of the
/// output went away).
pub trait Sink {
    /// An input is about to be read (after its kind is known).
    fn begin_input(&mut self, _input: &InputInfo<'_>) -> io::Result<()> {
        Ok(())
    }

    /// The timestamp of everything read, shown or not, in input order, before the filters: for
    /// times relative to the start of the input whatever the filters hide.
    fn clock(&mut self, _ts_ns: Option<i64>) {}

    /// A decoded PDU the filters show (or a log-file batch: a tree with no API). `input` names
    /// the input when several were given.
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()>;

    /// A capture note the filters show (a gap, TLS, skipped bytes, a damaged file).
    fn note(&mut self, origin: &Origin, diag: &Diagnostic, input: Option<&str>) -> io::Result<()>;

    /// An input has been read (`summary` for captures), or could not be (`failed`).
    fn end_input(&mut self, _end: &InputEnd<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Every input has been read: close and flush the output.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// For a sink that shows PDUs other than those the filters passed it (`query::Pairs` shows
    /// each match's other half): whether any PDU it showed carried an error, which the run's
    /// [`Outcome::errors`](super::Outcome::errors) (the exit status) then follows, as it follows
    /// the PDUs a filter shows. `None` (the default): the PDUs the engine handed it decide.
    fn shown_errors(&self) -> Option<bool> {
        None
    }
}

/// The end of one input.
#[derive(Clone, Copy, Debug)]
pub struct InputEnd<'a> {
    pub name: &'a str,
    /// Totals of a capture (pcap, pcapng, packets from a hex dump).
    pub summary: Option<&'a CaptureSummary>,
    /// Why the input could not be read (or read to its end), if so.
    pub failed: Option<&'a str>,
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        (**self).begin_input(input)
    }
    fn clock(&mut self, ts_ns: Option<i64>) {
        (**self).clock(ts_ns)
    }
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        (**self).pdu(pdu, input)
    }
    fn note(&mut self, origin: &Origin, diag: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        (**self).note(origin, diag, input)
    }
    fn end_input(&mut self, end: &InputEnd<'_>) -> io::Result<()> {
        (**self).end_input(end)
    }
    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
    fn shown_errors(&self) -> Option<bool> {
        (**self).shown_errors()
    }
}

/// A sink whose work can be shared with a second thread (see [`super::parallel`]): the worker
/// decodes batches of frames and hands the decoded PDUs to a [`Half`] of the sink; this side
/// takes each batch's result back in input order.
///
/// Text printers: the half prints into a buffer of its own and writes it to the same output in
/// its turn ([`super::parallel::Shared`]); what this side prints meanwhile waits behind it.
/// Aggregates: the half counts, and this side merges its counts.
pub trait Split: Sink {
    type Half: Half;

    /// A half for the worker, or `None` when this sink is better served by one thread (a
    /// summary with delta times, which depend on the PDU shown before). Called once more for
    /// each further batch the worker may hold when the sink [`queues`](Split::queues). `turn` is when the worker has the output:
    /// a text printer's writer holds what this side prints while the worker has it.
    fn fork(&mut self, turn: &std::sync::Arc<super::parallel::Turn>) -> Option<Self::Half>;

    /// Before a batch goes to the worker, on this side: bring `half` up to date (the summary's
    /// clock) and put out what this side holds, so that the batch's output comes after it. When
    /// the sink [`queues`](Split::queues), this is also called while the worker still has a
    /// batch with another half: what this side holds then goes with `half`, to come out first
    /// (text printers: `Shared::pass_to`).
    fn hand_over(&mut self, half: &mut Self::Half) -> io::Result<()>;

    /// Whether the worker may be sent a batch while it has one (up to
    /// `parallel::IN_FLIGHT`, each with a half of its own from [`Split::fork`]): `hand_over`
    /// keeps the order while the worker has the output. Without it, one batch at a time.
    fn queues(&self) -> bool {
        false
    }

    /// How many bytes of frames make a batch for the worker (`parallel::BATCH_BYTES` unless the
    /// sink says otherwise; see `parallel::LIGHT_BATCH_BYTES`).
    fn batch_bytes(&self) -> usize {
        super::parallel::BATCH_BYTES
    }

    /// After the worker's batch, on this side, in input order: take in what `half` made (counts
    /// to merge; a printer's half has written its text itself).
    fn take_back(&mut self, half: &mut Self::Half) -> io::Result<()>;
}

/// The worker's half of a [`Split`] sink.
pub trait Half: Sink + Send + 'static {
    /// On the worker, after each batch: make the batch's output final (write the rest of its
    /// text), before the output's turn goes back.
    fn end_batch(&mut self) -> io::Result<()>;
}
