//! What the engine shows: filters on PDUs, capture notes and log-file batches. Every frame is
//! decoded (and goes through the session) whether it is shown or not; the filters decide what
//! reaches the sink and what counts for the outcome's `errors` (like grep: what is hidden does
//! not make the run fail).
//!
//! The built-in filters are `--api-filter`, `--stream` and `--errors-only`; richer ones (display
//! expressions) implement [`Filter`] and are added to [`Filters::more`].

use crate::diag::{Diagnostic, Severity};
use crate::pdu::{Origin, Pdu};
use crate::wire::tree::Tree;
use std::sync::Arc;

/// A filter of its own: every one must let a thing through for it to be shown. Called on either
/// thread of a two-thread run, hence `Send + Sync`.
pub trait Filter: Send + Sync + std::fmt::Debug {
    /// Whether a decoded Kafka PDU is shown.
    fn pdu(&self, pdu: &Pdu) -> bool;
    /// Whether a capture note is shown.
    fn note(&self, _origin: &Origin, _diag: &Diagnostic) -> bool {
        true
    }
    /// Whether a tree that is not a Kafka message (a log-file batch) is shown.
    fn tree(&self, _tree: &Tree) -> bool {
        true
    }
}

/// What is shown: all of it by default.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// API keys shown (all when empty); things that are not Kafka messages are hidden by any.
    pub api: Vec<i16>,
    /// TCP connections shown (all when empty), numbered as tshark's `tcp.stream`.
    pub streams: Vec<u32>,
    /// Only what carries an error diagnostic.
    pub errors_only: bool,
    /// Further filters, all of which must agree.
    pub more: Vec<Arc<dyn Filter>>,
}

impl Filters {
    /// Something with no connection (a hex frame, a file-level note) is shown only when no
    /// stream is asked for.
    fn stream_shown(&self, o: &Origin) -> bool {
        self.streams.is_empty() || o.conn.is_some_and(|c| self.streams.contains(&c.stream))
    }

    /// `Some(has_errors)` when a decoded PDU is shown.
    #[inline]
    pub fn pdu_shown(&self, pdu: &Pdu) -> Option<bool> {
        let api_shown = self.api.is_empty() || pdu.api_key.is_some_and(|k| self.api.contains(&k));
        let has_errors = pdu.tree.has_errors();
        (api_shown
            && self.stream_shown(&pdu.origin)
            && (has_errors || !self.errors_only)
            && self.more.iter().all(|f| f.pdu(pdu)))
        .then_some(has_errors)
    }

    /// `Some(is_error)` when a capture note is shown.
    pub fn note_shown(&self, origin: &Origin, d: &Diagnostic) -> Option<bool> {
        let is_error = d.severity == Severity::Error;
        (self.api.is_empty()
            && self.stream_shown(origin)
            && (is_error || !self.errors_only)
            && self.more.iter().all(|f| f.note(origin, d)))
        .then_some(is_error)
    }

    /// `Some(has_errors)` when a tree that is not a Kafka message (a log batch) is shown: it has
    /// no API or connection, so `--api-filter` and `--stream` hide it.
    pub fn tree_shown(&self, t: &Tree) -> Option<bool> {
        let has_errors = t.has_errors();
        (self.api.is_empty()
            && self.streams.is_empty()
            && (has_errors || !self.errors_only)
            && self.more.iter().all(|f| f.tree(t)))
        .then_some(has_errors)
    }
}
