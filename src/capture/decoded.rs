//! The decode loop over a capture: every frame the reader delivers is decoded with the schema
//! decoder, stamped with where it came from, checked against the session (negotiated versions)
//! and handed on as a `Pdu`; notes pass through. One `Pdu` and one `Decoder` are reused for the
//! whole capture, so memory stays flat however long it is.

use super::session::Session;
use super::{read_capture, CaptureError, CaptureOptions, CaptureSummary, Event};
use crate::pdu::{Direction, Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::decode::Decoder;
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

    /// Decodes one event and passes the result to `f`.
    pub fn event(&mut self, ev: Event<'_>, f: &mut dyn FnMut(Decoded<'_>)) {
        match ev {
            Event::Frame {
                origin,
                hints,
                data,
            } => {
                self.decoder.decode_frame(data, &hints, &mut self.pdu);
                self.pdu.origin = origin;
                let found = self.session.observe(&self.pdu);
                self.pdu.tree.diags.extend(found);
                f(Decoded::Pdu(&self.pdu));
            }
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
    let mut dl = DecodeLoop::new(proto);
    read_capture(reader, opts, &mut |ev| dl.event(ev, f))
}
