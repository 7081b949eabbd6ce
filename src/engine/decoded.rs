//! The decode loop of the engine (every input kind, one thread or two): every
//! frame is decoded with the schema decoder (topics known only by id named from the session, so
//! their records decode), stamped with where it came from, checked against the session
//! (negotiated versions, topic ids learnt) and handed on as a `Pdu` carrying the session's
//! diagnostics and resolved topic names; capture notes pass through. One `Pdu` and one
//! `Decoder` are reused for the whole input, so memory stays flat however long it is.

use crate::capture::session::{name_topic_ids, Session};
use crate::capture::{read_capture, CaptureError, CaptureOptions, CaptureSummary, Event};
use crate::check::Checker;
use crate::diag::Diagnostic;
use crate::pdu::{Hints, Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::decode::{Decoder, RecordsOptions};
use std::sync::Arc;

/// What the decode loop hands on.
pub enum Decoded<'a> {
    Pdu(&'a Pdu),
    Note(&'a Origin, &'a Diagnostic),
}

/// Decoding state for one input; feed it the reader's events.
pub struct DecodeLoop {
    decoder: Decoder,
    /// Shared with frames decoded elsewhere against a snapshot; copied before a change
    /// while a snapshot is out.
    session: Arc<Session>,
    pdu: Pdu,
    /// The conversation rules, when asked (`Options::check`): their findings join each PDU's
    /// diagnostics before the filters see it.
    checker: Option<Box<Checker>>,
}

impl DecodeLoop {
    pub fn new(proto: &'static Protocol) -> Self {
        DecodeLoop {
            decoder: crate::records::decoder(proto),
            session: Arc::new(Session::new()),
            pdu: Pdu::default(),
            checker: None,
        }
    }

    /// Runs the conversation rules on every PDU from now on (or not).
    pub fn set_check(&mut self, on: bool) {
        self.checker = on.then(|| Box::new(Checker::new()));
    }

    /// Adds the rules' findings on `pdu` to its diagnostics (when checking).
    pub fn check(&mut self, pdu: &mut Pdu) {
        if let Some(c) = self.checker.as_mut() {
            let found: Vec<Diagnostic> = c.pdu(pdu).map(|f| f.diagnostic()).collect();
            pdu.tree.diags.extend(found);
        }
    }

    /// Tells the rules about a capture note (a gap forgets what was in flight).
    pub fn check_note(&mut self, origin: &Origin, d: &Diagnostic) {
        if let Some(c) = self.checker.as_mut() {
            c.note(origin, d);
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session as it stands, to be cloned as a snapshot for decoding frames that cannot
    /// change it elsewhere (see [`Session::may_learn_from`]).
    pub fn shared_session(&self) -> &Arc<Session> {
        &self.session
    }

    /// How frames decode, for a decoder of its own elsewhere.
    pub fn records(&self) -> RecordsOptions {
        self.decoder.records()
    }

    /// How `records` fields decode from now on.
    pub fn set_records(&mut self, opts: RecordsOptions) {
        self.decoder.set_records(opts);
    }

    /// Forgets the conversation: the next frames belong to another input.
    pub fn new_input(&mut self) {
        self.session = Arc::new(Session::new());
        if self.checker.is_some() {
            self.set_check(true);
        }
    }

    /// Decodes one frame, checks it against the session and learns from it.
    pub fn frame(&mut self, origin: Origin, hints: &Hints, data: &[u8]) -> &Pdu {
        decode_frame(
            &mut self.decoder,
            &mut self.session,
            true,
            origin,
            hints,
            data,
            &mut self.pdu,
        );
        if let Some(c) = self.checker.as_mut() {
            let found: Vec<Diagnostic> = c.pdu(&self.pdu).map(|f| f.diagnostic()).collect();
            self.pdu.tree.diags.extend(found);
        }
        &self.pdu
    }

    /// Lets go of the PDU's memory if a large frame left it holding more than `max` bytes (the
    /// PDU is reused from frame to frame, so one huge frame would otherwise stay in memory).
    pub fn shrink(&mut self, max: usize) -> usize {
        let_go_over(&mut self.pdu, max)
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

/// Decodes one frame into `pdu`, learns from it when `learn` (else `session` is left as it is,
/// for a frame that [`Session::may_learn_from`] rules out) and names its topic ids.
pub fn decode_frame(
    decoder: &mut Decoder,
    session: &mut Arc<Session>,
    learn: bool,
    origin: Origin,
    hints: &Hints,
    data: &[u8],
    pdu: &mut Pdu,
) {
    decoder.decode_frame_with(data, hints, pdu, &**session);
    pdu.origin = origin;
    // Also when the decoder stopped early (a frame too large to decode).
    pdu.request_frame = hints.request_frame;
    pdu.latency_ns = hints.latency_ns;
    if learn && Session::may_learn_from(pdu.direction, pdu.api_key) {
        Arc::make_mut(session).learn(pdu);
    }
    name_topic_ids(&pdu.tree, &**session, &mut pdu.topic_names);
}

/// About how many bytes of heap a decoded PDU holds (its nodes, buffers and diagnostics, as
/// allocated: a reused PDU keeps what its largest frame needed).
pub fn held_bytes(pdu: &Pdu) -> usize {
    let t = &pdu.tree;
    t.nodes.capacity() * std::mem::size_of::<crate::wire::tree::Node>()
        + t.diags.capacity() * std::mem::size_of::<Diagnostic>()
        + t.buf_capacity()
        + pdu.topic_names.capacity() * std::mem::size_of::<(u32, String)>()
}

/// Lets go of a reused PDU's memory when it holds more than `max` bytes ([`held_bytes`]), so
/// that one huge frame or batch does not stay in memory. Returns what it still holds (0 when
/// let go).
pub fn let_go_over(pdu: &mut Pdu, max: usize) -> usize {
    let held = held_bytes(pdu);
    if held > max {
        *pdu = Pdu::default();
        return 0;
    }
    held
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
