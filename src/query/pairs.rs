//! `--pairs`: a sink in front of another that shows each PDU the filter matches together with
//! its other half — a matched request's response, whatever it holds, and a matched response's
//! request, which is held (decoded, up to [`MAX_PAIRS_IN_FLIGHT`] requests and
//! [`MAX_PAIRS_BYTES`]) until its response says whether it is wanted. A request shown for its
//! response's sake comes right before that response; everything else keeps input order.
//! Requests and responses are paired by connection and correlation id, as the capture matched
//! them. Past the caps the oldest held request is let go, and one `pairs-overflow` warning note
//! says so (and at the end, how many).

use super::Query;
use crate::diag::Diagnostic;
use crate::engine::decoded::held_bytes;
use crate::engine::{InputEnd, InputInfo, Sink};
use crate::limits::{MAX_PAIRS_BYTES, MAX_PAIRS_IN_FLIGHT};
use crate::pdu::{Direction, Origin, Pdu};
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;

/// A request waiting for its response.
enum Waiting {
    /// It matched and was shown: show its response.
    Shown,
    /// It did not match: shown only if its response does.
    Held(Box<Pdu>, usize),
}

/// The pairing sink. Run it on one thread (`engine::run`), with no display filter in
/// `engine::Filters` (it applies `query` itself).
pub struct Pairs<S: Sink> {
    inner: S,
    query: Arc<Query>,
    waiting: VecDeque<((u32, i32), Waiting)>,
    held: usize,
    spare: Vec<Pdu>,
    dropped: u64,
    last_origin: Origin,
    /// Something shown carried an error diagnostic (what the exit code follows:
    /// [`Sink::shown_errors`]).
    errors: bool,
}

impl<S: Sink> Pairs<S> {
    pub fn new(inner: S, query: Arc<Query>) -> Self {
        Pairs {
            inner,
            query,
            waiting: VecDeque::new(),
            held: 0,
            spare: Vec::new(),
            dropped: 0,
            last_origin: Origin::default(),
            errors: false,
        }
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }

    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Requests let go because of the caps.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    fn show(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.errors |= pdu.has_errors();
        self.inner.pdu(pdu, input)
    }

    fn release(&mut self, w: Waiting) {
        if let Waiting::Held(p, bytes) = w {
            self.held -= bytes;
            if self.spare.len() < 4 {
                self.spare.push(*p);
            }
        }
    }

    fn take(&mut self, key: (u32, i32)) -> Option<Waiting> {
        let i = self.waiting.iter().position(|(k, _)| *k == key)?;
        self.waiting.remove(i).map(|(_, w)| w)
    }

    fn wait(&mut self, key: (u32, i32), w: Waiting, origin: &Origin) -> io::Result<()> {
        if let Some(old) = self.take(key) {
            self.release(old);
        }
        let bytes = match &w {
            Waiting::Held(_, b) => *b,
            Waiting::Shown => 0,
        };
        self.held += bytes;
        self.waiting.push_back((key, w));
        while self.waiting.len() > MAX_PAIRS_IN_FLIGHT || self.held > MAX_PAIRS_BYTES {
            let Some((_, old)) = self.waiting.pop_front() else {
                break;
            };
            self.release(old);
            self.dropped += 1;
            if self.dropped == 1 {
                let d = Diagnostic::warning(
                    "pairs-overflow",
                    "filter",
                    0,
                    format!("--pairs: more than {MAX_PAIRS_IN_FLIGHT} requests (or {} MiB) wait for their responses; the oldest are let go and their responses, if shown, come alone (limits::MAX_PAIRS_IN_FLIGHT)", MAX_PAIRS_BYTES >> 20),
                );
                self.inner.note(origin, &d, None)?;
            }
        }
        Ok(())
    }
}

fn key(pdu: &Pdu) -> Option<(u32, i32)> {
    let stream = pdu.origin.conn.map_or(u32::MAX, |c| c.stream);
    Some((stream, pdu.correlation_id?))
}

impl<S: Sink> Sink for Pairs<S> {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        while let Some((_, w)) = self.waiting.pop_front() {
            self.release(w);
        }
        self.inner.begin_input(input)
    }

    fn clock(&mut self, ts_ns: Option<i64>) {
        self.inner.clock(ts_ns)
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        let matched = self.query.matches(pdu);
        match (pdu.direction, key(pdu)) {
            (Some(Direction::Request), Some(k)) => {
                if matched {
                    self.show(pdu, input)?;
                    self.wait(k, Waiting::Shown, &pdu.origin)
                } else {
                    let mut copy = self.spare.pop().unwrap_or_default();
                    copy.clone_from(pdu);
                    let bytes = held_bytes(&copy);
                    self.last_origin.clone_from(&pdu.origin);
                    let origin = self.last_origin.clone();
                    self.wait(k, Waiting::Held(Box::new(copy), bytes), &origin)
                }
            }
            (Some(Direction::Response), Some(k)) => {
                let w = self.take(k);
                match w {
                    Some(Waiting::Shown) => self.show(pdu, input),
                    Some(Waiting::Held(req, bytes)) => {
                        let r = if matched {
                            self.show(&req, input).and_then(|_| self.show(pdu, input))
                        } else {
                            Ok(())
                        };
                        self.release(Waiting::Held(req, bytes));
                        r
                    }
                    None if matched => self.show(pdu, input),
                    None => Ok(()),
                }
            }
            _ if matched => self.show(pdu, input),
            _ => Ok(()),
        }
    }

    fn note(&mut self, origin: &Origin, diag: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        // Capture notes do not pass a display filter (see `Query`).
        let _ = (origin, diag, input);
        Ok(())
    }

    fn end_input(&mut self, end: &InputEnd<'_>) -> io::Result<()> {
        self.inner.end_input(end)
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.dropped > 0 {
            let d = Diagnostic::warning(
                "pairs-overflow",
                "filter",
                0,
                format!(
                    "--pairs let go of {} requests waiting for their responses (limits::MAX_PAIRS_IN_FLIGHT)",
                    self.dropped
                ),
            );
            self.inner.note(&Origin::default(), &d, None)?;
        }
        self.inner.finish()
    }

    fn shown_errors(&self) -> Option<bool> {
        Some(self.errors)
    }
}
