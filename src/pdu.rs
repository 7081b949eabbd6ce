//! A Kafka PDU as it flows from the inputs to the printers: where it came from, what it is,
//! and its decoded tree.

use crate::wire::tree::{NodeId, Tree, Value};
use std::net::SocketAddr;
use std::sync::Arc;

pub use crate::protocol::Direction;

/// A TCP connection, oriented client → server when known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conn {
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Connection number in order of first appearance, from 0 (like tshark's `tcp.stream`).
    pub stream: u32,
}

/// Where a PDU came from. Every field is optional: a hex dump has no frame numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Origin {
    /// Index of the PDU within its input, from 0.
    pub index: u64,
    /// Capture frame (1-based, as Wireshark numbers them) holding the PDU's first byte.
    pub frame: Option<u64>,
    /// Capture frame holding its last byte, when different.
    pub last_frame: Option<u64>,
    /// Capture timestamp of the last frame, in nanoseconds since the Unix epoch.
    pub ts_ns: Option<i64>,
    pub conn: Option<Conn>,
    /// Offset of the size prefix in the reassembled stream of that direction (or in the file).
    pub stream_offset: Option<u64>,
    /// The client id of the request (on a response: of its request, which the capture matched
    /// by correlation id; responses carry none on the wire). Shared, not copied, from PDU to
    /// PDU of a connection while it stays the same.
    pub client_id: Option<Arc<str>>,
    /// Time zero of relative times: the timestamp of the first packet read in this run (as the
    /// summary's `-t r` column counts from), when known.
    pub first_ts_ns: Option<i64>,
}

/// What the decoder needs to know beyond the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    pub direction: Option<Direction>,
    /// For a response: the API key and version of its request.
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    /// Whether the frame starts with its 4-byte size prefix.
    pub has_size_prefix: Option<bool>,
    /// The frame is a raw SASL token (after SaslHandshake v0), not a Kafka message.
    pub sasl_token: bool,
    /// On a response: the capture frame of its request and the time between them.
    pub request_frame: Option<u64>,
    pub latency_ns: Option<i64>,
}

/// A decoded PDU.
#[derive(Clone, Debug, Default)]
pub struct Pdu {
    pub origin: Origin,
    pub direction: Option<Direction>,
    pub api_key: Option<i16>,
    pub api_name: Option<&'static str>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// Release whose schema decoded the body ("4.3.1" or "3.9.0"), or a user overlay.
    pub release: Option<&'static str>,
    /// On a response: the frame of the matching request and the time between them.
    pub request_frame: Option<u64>,
    pub latency_ns: Option<i64>,
    /// Root: a struct with `header` and `body` members.
    pub tree: Tree,
    /// Topic names the capture's session knows for `TopicId` nodes of `tree` that their struct
    /// does not name otherwise, in node order (see `capture::session::name_topic_ids`).
    pub topic_names: Vec<(NodeId, String)>,
}

impl Pdu {
    /// The frame's bytes as decoded: with its size prefix when it came with one, as far as the
    /// capture holds it; a log batch's bytes. The `pdus` table's `size` and the `size` field.
    pub fn size(&self) -> usize {
        self.tree.buf(0).len()
    }

    /// The name resolved for the `TopicId` node `id`, if any.
    pub fn topic_name(&self, id: NodeId) -> Option<&str> {
        self.topic_names
            .binary_search_by_key(&id, |(n, _)| *n)
            .ok()
            .and_then(|i| self.topic_names.get(i))
            .map(|(_, s)| s.as_str())
    }

    /// The `ClientId` of a request's header, as on the wire (not always UTF-8); `None` when
    /// null, absent (request header v0) or not a request.
    pub fn header_client_id(&self) -> Option<&[u8]> {
        let t = &self.tree;
        let h = t.nodes.first().and_then(|_| t.child(0, "header"))?;
        let n = t.node(t.child(h, "ClientId")?);
        match n.value {
            Value::Str(s) => Some(t.bytes(n.buf, s)),
            _ => None,
        }
    }

    /// The client id the capture gave the PDU (a response's, from its request), else its
    /// header's ([`Pdu::header_client_id`]).
    pub fn client_id(&self) -> Option<&[u8]> {
        match &self.origin.client_id {
            Some(c) => Some(c.as_bytes()),
            None => self.header_client_id(),
        }
    }
}

/// A frame's bytes as the reader hands them on: borrowed (from the capture's buffer, a raw
/// input), or assembled by the TCP reassembly in a buffer of its own, which whoever keeps the
/// frame may take instead of copying it ([`FrameBuf::take`]).
#[derive(Debug)]
pub enum FrameBuf<'a> {
    Borrowed(&'a [u8]),
    Assembled(&'a mut Assembled),
}

/// A frame at the start of the buffer the reassembly gathered it in, and the stream's next
/// bytes after it, which stay the reader's.
#[derive(Debug, Default)]
pub struct Assembled {
    buf: Vec<u8>,
    len: usize,
    taken: bool,
}

impl Assembled {
    /// The first `len` bytes of `buf` are a frame (`len` is cut to the buffer).
    pub fn new(buf: Vec<u8>, len: usize) -> Assembled {
        let len = len.min(buf.len());
        Assembled {
            buf,
            len,
            taken: false,
        }
    }

    /// The frame, while it is here.
    pub fn frame(&self) -> &[u8] {
        match self.taken {
            true => &[],
            false => self.buf.get(..self.len).unwrap_or(&[]),
        }
    }

    /// The buffer, holding the bytes after the frame (the frame is dropped if nobody took it).
    pub fn into_rest(mut self) -> Vec<u8> {
        if !self.taken {
            self.buf.drain(..self.len);
        }
        self.buf
    }
}

/// Frame buffers given back after a frame gathered in them was decoded on another thread, kept
/// on the thread that reassembles for its next large frames, at most
/// [`SPARE_FRAME_BYTES`](crate::limits::SPARE_FRAME_BYTES) of them. Let go instead, their
/// memory went back to the kernel and was faulted in anew, a page at a time, for each next
/// frame (the figures: `engine::parallel`'s module doc).
pub(crate) mod spare {
    use crate::limits::SPARE_FRAME_BYTES;
    use std::cell::RefCell;

    thread_local! {
        static KEPT: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    /// The smallest kept buffer that holds `len` bytes, emptied.
    pub fn take(len: usize) -> Option<Vec<u8>> {
        KEPT.with(|k| {
            let mut k = k.borrow_mut();
            let i = (0..k.len())
                .filter(|&i| k[i].capacity() >= len)
                .min_by_key(|&i| k[i].capacity())?;
            Some(k.swap_remove(i))
        })
    }

    /// Keeps `buf` for a next frame, letting the smallest kept ones go past the limit.
    pub fn give(mut buf: Vec<u8>) {
        if buf.capacity() > SPARE_FRAME_BYTES {
            return;
        }
        buf.clear();
        KEPT.with(|k| {
            let mut k = k.borrow_mut();
            k.push(buf);
            let mut held: usize = k.iter().map(Vec::capacity).sum();
            while held > SPARE_FRAME_BYTES {
                let Some(i) = (0..k.len()).min_by_key(|&i| k[i].capacity()) else {
                    break;
                };
                held -= k.swap_remove(i).capacity();
            }
        })
    }

    /// What is kept, in bytes of capacity.
    #[cfg(test)]
    pub fn held() -> usize {
        KEPT.with(|k| k.borrow().iter().map(Vec::capacity).sum())
    }

    /// Lets go of every kept buffer (tests on one thread start from none).
    #[cfg(test)]
    pub fn let_go() {
        KEPT.with(|k| k.borrow_mut().clear())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// What is kept stays within the limit, the smallest let go first; a buffer over the
        /// limit is not kept; a frame gets the smallest buffer that holds it, emptied.
        #[test]
        fn kept_buffers_stay_within_the_limit_and_the_smallest_that_fits_is_taken() {
            const MIB: usize = 1 << 20;
            let_go();
            give(Vec::with_capacity(SPARE_FRAME_BYTES + 1));
            assert_eq!(held(), 0, "a buffer over the limit is not kept");
            give(vec![1; MIB / 2]);
            give(vec![1; MIB]);
            give(Vec::with_capacity(2 * MIB));
            assert_eq!(held(), MIB / 2 + MIB + 2 * MIB);
            // Past the limit the smallest go: the half MiB, then the MiB.
            give(Vec::with_capacity(3 * MIB / 2));
            assert_eq!(held(), 2 * MIB + 3 * MIB / 2);
            assert!(take(2 * MIB + 1).is_none());
            assert_eq!(take(MIB).map(|b| b.capacity()), Some(3 * MIB / 2));
            assert_eq!(take(MIB).map(|b| b.capacity()), Some(2 * MIB));
            assert!(take(0).is_none());
            give(vec![1; MIB]);
            assert_eq!(take(1).map(|b| b.len()), Some(0), "emptied");
        }
    }
}

impl<'a> From<&'a [u8]> for FrameBuf<'a> {
    fn from(b: &'a [u8]) -> FrameBuf<'a> {
        FrameBuf::Borrowed(b)
    }
}

impl FrameBuf<'_> {
    /// The frame.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match self {
            FrameBuf::Borrowed(b) => b,
            FrameBuf::Assembled(a) => a.frame(),
        }
    }

    /// Puts the frame into `into`, whose contents it replaces: a copy when borrowed; when
    /// assembled, `into`'s allocation and the reassembly's are swapped, and only the bytes after
    /// the frame (a part of a segment at most) are copied, into the allocation the reassembly
    /// gets back.
    pub fn take(self, into: &mut Vec<u8>) {
        into.clear();
        match self {
            FrameBuf::Borrowed(b) => into.extend_from_slice(b),
            FrameBuf::Assembled(a) if a.taken => {}
            FrameBuf::Assembled(a) => {
                let len = a.len.min(a.buf.len());
                into.extend_from_slice(a.buf.get(len..).unwrap_or(&[]));
                std::mem::swap(&mut a.buf, into);
                into.truncate(len);
                a.taken = true;
            }
        }
    }
}
