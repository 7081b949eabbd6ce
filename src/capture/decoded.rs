//! The decode loop shared by `kinspect decode` (every input kind) and `kinspect stats`: every
//! frame is decoded with the schema decoder (topics known only by id named from the session, so
//! their records decode), stamped with where it came from, checked against the session
//! (negotiated versions, topic ids learnt) and handed on as a `Pdu` carrying the session's
//! diagnostics and resolved topic names; capture notes pass through. One `Pdu` and one
//! `Decoder` are reused for the whole input, so memory stays flat however long it is.

use super::session::{name_topic_ids, Session};
use super::{read_capture, CaptureError, CaptureOptions, CaptureSummary, Event};
use crate::pdu::{Direction, Hints, Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::decode::{Decoder, RecordsOptions};
use crate::wire::diag::Diagnostic;

/// What the decode loop hands on.
pub enum Decoded<'a> {
    Pdu(&'a Pdu),
    Note(&'a Origin, &'a Diagnostic),
}

/// Whether the built-in protocol knows this request (for `CaptureOptions::is_known_request`).
pub fn builtin_known_request(api_key: i16, version: i16) -> bool {
    crate::protocol::builtin()
        .message(api_key, version, Direction::Request)
        .is_some()
}

/// Decoding state for one input; feed it the reader's events.
pub struct DecodeLoop {
    decoder: Decoder,
    session: Session,
    pdu: Pdu,
}

impl DecodeLoop {
    pub fn new(proto: &'static Protocol) -> Self {
        DecodeLoop {
            decoder: Decoder::new(proto),
            session: Session::new(),
            pdu: Pdu::default(),
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// How `records` fields decode from now on.
    pub fn set_records(&mut self, opts: RecordsOptions) {
        self.decoder.set_records(opts);
    }

    /// Forgets the conversation: the next frames belong to another input.
    pub fn new_input(&mut self) {
        self.session = Session::new();
    }

    /// Decodes one frame, checks it against the session and learns from it.
    pub fn frame(&mut self, origin: Origin, hints: &Hints, data: &[u8]) -> &Pdu {
        self.decoder
            .decode_frame_with(data, hints, &mut self.pdu, &self.session);
        self.pdu.origin = origin;
        // Also when the decoder stopped early (a frame too large to decode).
        self.pdu.request_frame = hints.request_frame;
        self.pdu.latency_ns = hints.latency_ns;
        let found = self.session.observe(&self.pdu);
        self.pdu.tree.diags.extend(found);
        name_topic_ids(&self.pdu.tree, &self.session, &mut self.pdu.topic_names);
        &self.pdu
    }

    /// Decodes one event and passes the result to `f`.
    pub fn event(&mut self, ev: Event<'_>, f: &mut dyn FnMut(Decoded<'_>)) {
        match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => f(Decoded::Pdu(self.frame(origin, &hints, data))),
            Event::Note { origin, diag } => f(Decoded::Note(&origin, &diag)),
        }
    }
}

/// Reads and decodes a whole capture.
pub fn decode_capture<R: std::io::Read>(
    reader: R,
    opts: &CaptureOptions,
    proto: &'static Protocol,
    f: &mut dyn FnMut(Decoded<'_>),
) -> Result<CaptureSummary, CaptureError> {
    decode_capture_with(reader, opts, proto, RecordsOptions::default(), f)
}

/// [`decode_capture`] with a choice of how `records` fields decode (`stats`, which shows no record
/// contents, only needs batch headers and their CRC checks).
pub fn decode_capture_with<R: std::io::Read>(
    reader: R,
    opts: &CaptureOptions,
    proto: &'static Protocol,
    records: RecordsOptions,
    f: &mut dyn FnMut(Decoded<'_>),
) -> Result<CaptureSummary, CaptureError> {
    let mut dl = DecodeLoop::new(proto);
    dl.set_records(records);
    read_capture(reader, opts, &mut |ev| dl.event(ev, f))
}
