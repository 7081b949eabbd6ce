//! Kafka framing on one direction of a reassembled TCP stream: 4-byte size prefixes, frames
//! delivered with the capture frames holding their first and last bytes, frames with holes
//! delivered as their captured prefix, and resynchronisation (after a gap, a bad size, or a
//! stream whose start was not captured) at the next plausible frame boundary.

use crate::limits::{MAX_FRAME_SIZE, RESERVE_AHEAD};
use crate::pdu::{Assembled, FrameBuf};
use std::collections::VecDeque;

/// Whether bytes at a candidate boundary look like the start of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plausible {
    Yes,
    No,
    /// Not enough bytes yet to tell.
    NeedMore,
}

/// Where a delivered frame sits in the stream and in the capture.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    pub stream_offset: u64,
    pub first_frame: u64,
    pub last_frame: u64,
    pub ts_ns: i64,
}

/// A frame gathered from several segments is handed on in the buffer it was gathered in (see
/// [`FrameBuf::Assembled`]) from this size on, when the bytes after it in the buffer are no
/// more than the frame: whoever keeps it then takes the buffer instead of copying the frame.
const HAND_OVER: usize = 16 << 10;

/// What the framer needs from its connection.
pub(crate) trait FlowCtx {
    fn plausible(&self, bytes: &[u8]) -> Plausible;
    fn frame(&mut self, data: FrameBuf<'_>, at: Placement);
    /// A note about the stream at `offset`, concerning capture frame `frame`.
    fn note(&mut self, code: &'static str, error: bool, offset: u64, frame: u64, message: String);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `buf[0]` is a frame boundary.
    Sync,
    /// Looking for a boundary; `buf` holds unexamined bytes.
    Resync,
    /// `buf` holds the captured prefix of a frame that ends at `total_end`; the rest of its
    /// bytes are discarded as they arrive.
    Damaged { total_end: u64 },
}

pub(crate) struct Framer {
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    buf_off: u64,
    /// Stream offset just past the last byte received or declared missing.
    end: u64,
    /// Which capture frame (and timestamp) delivered the bytes up to each end offset.
    prov: VecDeque<(u64, u64, i64)>,
    mode: Mode,
    /// Bytes skipped while resynchronising, not yet reported, and where that started.
    skipped: u64,
    skip_from: u64,
}

/// The whole length, size prefix included, of the frame whose size prefix is the first 4 bytes
/// of `head`; `Err(size)` when the size is negative or over [`MAX_FRAME_SIZE`] (or `head` is
/// shorter than 4 bytes, as `Err(-1)`).
fn frame_len(head: &[u8]) -> Result<usize, i32> {
    let Some(&[a, b, c, d]) = head.get(..4) else {
        return Err(-1);
    };
    let size = i32::from_be_bytes([a, b, c, d]);
    if size < 0 || size as u32 > MAX_FRAME_SIZE {
        Err(size)
    } else {
        Ok(4 + size as usize)
    }
}

impl Framer {
    /// A framer for a stream whose start was seen (`in_sync`) or not.
    pub(crate) fn new(start: u64, in_sync: bool) -> Self {
        Framer {
            buf: Vec::new(),
            buf_off: start,
            end: start,
            prov: VecDeque::new(),
            mode: if in_sync { Mode::Sync } else { Mode::Resync },
            skipped: 0,
            skip_from: start,
        }
    }

    fn frame_at(&self, off: u64) -> (u64, i64) {
        self.prov
            .iter()
            .find(|e| e.0 > off)
            .or(self.prov.back())
            .map(|e| (e.1, e.2))
            .unwrap_or((0, 0))
    }

    /// Records which capture frame delivered the bytes up to `end`. Only two entries are ever
    /// asked for: the one holding the first pending byte (a frame's first frame) and the newest
    /// (its last frame, since a frame completes in the segment that delivers its last byte).
    /// Keeping just those bounds the list however many segments a long frame spans.
    fn remember(&mut self, end: u64, frame: u64, ts: i64) {
        if self.prov.len() >= 2 {
            self.prov.truncate(1);
        }
        self.prov.push_back((end, frame, ts));
    }

    fn trim_prov(&mut self) {
        while self.prov.front().is_some_and(|e| e.0 <= self.buf_off) {
            self.prov.pop_front();
        }
    }

    fn placement(&self, start: u64, end: u64) -> Placement {
        let (first_frame, _) = self.frame_at(start);
        let (last_frame, ts_ns) = self.frame_at(end.saturating_sub(1).max(start));
        Placement {
            stream_offset: start,
            first_frame,
            last_frame,
            ts_ns,
        }
    }

    /// The next in-order bytes of the stream, from capture frame `frame`.
    pub(crate) fn push(&mut self, mut data: &[u8], frame: u64, ts: i64, ctx: &mut dyn FlowCtx) {
        if data.is_empty() {
            return;
        }
        self.prov
            .push_back((self.end + data.len() as u64, frame, ts));
        if let Mode::Damaged { total_end } = self.mode {
            let take = (total_end - self.end).min(data.len() as u64) as usize;
            self.end += take as u64;
            data = &data[take..];
            if self.end == total_end {
                self.deliver_damaged(total_end, ctx);
            }
            if data.is_empty() {
                self.trim_prov();
                return;
            }
        }
        let start = self.end;
        self.end += data.len() as u64;
        if self.mode == Mode::Sync && self.buf.is_empty() {
            // Fast path: frames wholly inside this segment go out without being copied.
            let used = self.deliver_complete(data, start, ctx);
            self.buf_off = start + used as u64;
            if self.mode == Mode::Sync {
                self.reserve_frame(&data[used..]);
                self.buf.extend_from_slice(&data[used..]);
                self.trim_prov();
                return;
            }
            self.buf.extend_from_slice(&data[used..]);
        } else {
            self.reserve_frame(data);
            self.buf.extend_from_slice(data);
        }
        self.process(ctx);
        self.trim_prov();
    }

    /// `len` bytes of the stream were never captured; the last captured packet was `frame`.
    pub(crate) fn gap(&mut self, len: u64, frame: u64, ts: i64, ctx: &mut dyn FlowCtx) {
        if len == 0 {
            return;
        }
        let gap_end = self.end + len;
        self.remember(gap_end, frame, ts);
        match self.mode {
            Mode::Sync if self.buf.len() >= 4 => {
                let size = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
                // A bad size was already handled by `process`, so size is sane here.
                let total_end = self.buf_off + 4 + size.max(0) as u64;
                self.mode = Mode::Damaged { total_end };
                self.end = gap_end.min(total_end);
                if self.end == total_end {
                    self.deliver_damaged(total_end, ctx);
                }
                if gap_end > total_end {
                    self.lose_sync(gap_end);
                }
            }
            Mode::Damaged { total_end } => {
                self.end = gap_end.min(total_end);
                if self.end == total_end {
                    self.deliver_damaged(total_end, ctx);
                }
                if gap_end > total_end {
                    self.lose_sync(gap_end);
                }
            }
            Mode::Sync | Mode::Resync => {
                // Bytes before the hole cannot start a frame we could finish.
                self.count_skip(self.buf_off, self.buf.len() as u64);
                self.lose_sync(gap_end);
            }
        }
        self.trim_prov();
    }

    fn count_skip(&mut self, from: u64, n: u64) {
        if n > 0 && self.skipped == 0 {
            self.skip_from = from;
        }
        self.skipped += n;
    }

    fn lose_sync(&mut self, at: u64) {
        self.mode = Mode::Resync;
        self.buf.clear();
        self.buf_off = at;
        self.end = at;
    }

    fn deliver_damaged(&mut self, total_end: u64, ctx: &mut dyn FlowCtx) {
        let captured = self.buf.len() as u64;
        let total = total_end - self.buf_off;
        let at = self.placement(self.buf_off, total_end);
        ctx.note(
            "frame-incomplete",
            false,
            self.buf_off,
            at.last_frame,
            format!("only {captured} of this frame's {total} bytes were captured (snap length or capture loss); it is delivered cut short"),
        );
        ctx.frame(FrameBuf::Borrowed(&self.buf), at);
        self.buf.clear();
        self.buf_off = total_end;
        self.mode = Mode::Sync;
    }

    /// Delivers the complete frames at the start of `data` (stream offset `start`); returns the
    /// bytes used. Switches to Resync on an impossible size.
    fn deliver_complete(&mut self, data: &[u8], start: u64, ctx: &mut dyn FlowCtx) -> usize {
        let mut pos = 0usize;
        while let Some(head) = data.get(pos..pos + 4) {
            let need = match frame_len(head) {
                Ok(need) => need,
                Err(size) => {
                    let off = start + pos as u64;
                    let (frame, _) = self.frame_at(off);
                    ctx.note(
                        "bad-frame-size",
                        true,
                        off,
                        frame,
                        format!("expected a frame size between 0 and {MAX_FRAME_SIZE}, found {size}; looking for the next frame boundary"),
                    );
                    self.mode = Mode::Resync;
                    return pos;
                }
            };
            let Some(frame) = data.get(pos..pos + need) else {
                break;
            };
            let off = start + pos as u64;
            let at = self.placement(off, off + need as u64);
            ctx.frame(FrameBuf::Borrowed(frame), at);
            pos += need;
        }
        pos
    }

    /// Before `incoming` is appended to the buffer: when the buffer, with it, begins a frame of
    /// a sane size that does not fit, room for the whole frame is made at once rather than by
    /// doubling (each doubling copies every byte gathered so far: a 1 MiB fetch response arriving
    /// in 64 KiB segments was copied four more times) — but only once the frame's bytes in hand
    /// are at least 1/[`RESERVE_AHEAD`] of it, so that a size prefix alone cannot reserve memory
    /// the capture does not bring.
    fn reserve_frame(&mut self, incoming: &[u8]) {
        let have = self.buf.len() + incoming.len();
        let mut head = [0u8; 4];
        for (i, b) in head.iter_mut().enumerate() {
            match self.buf.get(i).or_else(|| incoming.get(i - self.buf.len())) {
                Some(&v) => *b = v,
                None => return,
            }
        }
        let Ok(need) = frame_len(&head) else {
            return;
        };
        if need > have && need > self.buf.capacity() && need / RESERVE_AHEAD <= have {
            match crate::pdu::spare::take(need) {
                Some(mut kept) => {
                    kept.extend_from_slice(&self.buf);
                    self.buf = kept;
                }
                None => self.buf.reserve(need - self.buf.len()),
            }
        }
    }

    /// The size of the frame at the start of the buffer, when it is complete, at least
    /// [`HAND_OVER`] bytes and no smaller than what follows it.
    fn large_first_frame(&self) -> Option<usize> {
        let need = frame_len(self.buf.get(..4)?).ok()?;
        (need >= HAND_OVER && need <= self.buf.len() && self.buf.len() - need <= need)
            .then_some(need)
    }

    fn process(&mut self, ctx: &mut dyn FlowCtx) {
        loop {
            match self.mode {
                Mode::Sync => {
                    if let Some(need) = self.large_first_frame() {
                        let at = self.placement(self.buf_off, self.buf_off + need as u64);
                        let mut a = Assembled::new(std::mem::take(&mut self.buf), need);
                        ctx.frame(FrameBuf::Assembled(&mut a), at);
                        self.buf = a.into_rest();
                        self.buf_off += need as u64;
                        continue;
                    }
                    let buf = std::mem::take(&mut self.buf);
                    let used = self.deliver_complete(&buf, self.buf_off, ctx);
                    self.buf = buf;
                    self.buf.drain(..used);
                    self.buf_off += used as u64;
                    if self.mode == Mode::Sync {
                        return;
                    }
                }
                Mode::Resync => {
                    let mut i = 0usize;
                    let mut found = false;
                    while i + 4 <= self.buf.len() {
                        match ctx.plausible(&self.buf[i..]) {
                            Plausible::Yes => {
                                found = true;
                                break;
                            }
                            Plausible::No => i += 1,
                            Plausible::NeedMore => break,
                        }
                    }
                    self.buf.drain(..i);
                    self.count_skip(self.buf_off, i as u64);
                    self.buf_off += i as u64;
                    if !found {
                        return;
                    }
                    if self.skipped > 0 {
                        let (frame, _) = self.frame_at(self.buf_off);
                        let from = self.skip_from;
                        ctx.note(
                            "resync",
                            false,
                            self.buf_off,
                            frame,
                            format!("skipped {} byte(s), the first at stream offset {from}, to reach the next plausible frame boundary", self.skipped),
                        );
                    }
                    self.skipped = 0;
                    self.mode = Mode::Sync;
                }
                Mode::Damaged { .. } => return,
            }
        }
    }

    /// The stream ended (FIN, RST, end of capture): report what was left undelivered.
    pub(crate) fn finish(&mut self, ctx: &mut dyn FlowCtx) {
        let (frame, _) = self.frame_at(self.end.saturating_sub(1));
        match self.mode {
            Mode::Damaged { total_end } => {
                let total = total_end - self.buf_off;
                let captured = self.buf.len() as u64;
                ctx.note(
                    "frame-incomplete",
                    false,
                    self.buf_off,
                    frame,
                    format!("the stream ends inside a frame of {total} bytes of which {captured} were captured"),
                );
            }
            Mode::Sync if !self.buf.is_empty() => {
                let have = self.buf.len();
                let want = match self.buf.get(..4) {
                    Some(h) => format!(
                        "{} bytes",
                        4 + i32::from_be_bytes([h[0], h[1], h[2], h[3]]) as i64
                    ),
                    None => "a 4-byte size prefix".to_string(),
                };
                ctx.note(
                    "frame-incomplete",
                    false,
                    self.buf_off,
                    frame,
                    format!("the stream ends {have} byte(s) into a frame: expected {want}"),
                );
            }
            Mode::Resync if self.skipped + self.buf.len() as u64 > 0 => {
                ctx.note(
                    "resync",
                    false,
                    self.skip_from,
                    frame,
                    format!("skipped {} byte(s) from stream offset {} without finding a frame boundary before the stream ended", self.skipped + self.buf.len() as u64, self.skip_from),
                );
            }
            _ => {}
        }
        self.buf = Vec::new();
        self.prov = VecDeque::new();
        self.buf_off = self.end;
        self.skipped = 0;
        self.mode = Mode::Resync;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps the frames delivered, every byte plausible.
    #[derive(Default)]
    struct Frames(Vec<Vec<u8>>);

    impl FlowCtx for Frames {
        fn plausible(&self, _: &[u8]) -> Plausible {
            Plausible::Yes
        }
        fn frame(&mut self, data: FrameBuf<'_>, _: Placement) {
            self.0.push(data.bytes().to_vec());
        }
        fn note(&mut self, code: &'static str, _: bool, _: u64, _: u64, message: String) {
            panic!("unexpected note {code}: {message}");
        }
    }

    fn frame(size: usize, fill: u8) -> Vec<u8> {
        let mut f = (size as u32).to_be_bytes().to_vec();
        f.resize(4 + size, fill);
        f
    }

    /// A frame gathered from segments gets room for all of it once a sixteenth has come (the
    /// size prefix split across segments too), and arrives whole.
    #[test]
    fn a_large_frame_is_given_its_room_once_a_sixteenth_of_it_is_here() {
        let big = frame(1 << 20, 7);
        let mut stream = frame(10, 1);
        stream.extend_from_slice(&big);
        stream.extend_from_slice(&frame(3, 2));
        let mut f = Framer::new(0, true);
        let mut out = Frames::default();
        // The first frame and two bytes of the big one's size prefix; then the rest of the prefix.
        f.push(&stream[..16], 1, 0, &mut out);
        f.push(&stream[16..18], 2, 0, &mut out);
        assert!(
            f.buf.capacity() < 1 << 20,
            "nothing reserved for the size prefix alone"
        );
        let seg = 64 << 10;
        let mut at = 18;
        f.push(&stream[at..at + seg], 3, 0, &mut out);
        at += seg;
        assert!(
            f.buf.capacity() >= big.len(),
            "a sixteenth in hand: the room is made"
        );
        let mut n = 4;
        while at < stream.len() {
            let end = (at + seg).min(stream.len());
            f.push(&stream[at..end], n, 0, &mut out);
            (at, n) = (end, n + 1);
        }
        assert_eq!(out.0, [frame(10, 1), big, frame(3, 2)]);
    }

    /// A large frame is gathered in a buffer given back by the decoding thread (`pdu::spare`)
    /// when one holds it, not in new memory; a size prefix alone still takes none.
    #[test]
    fn a_large_frame_is_gathered_in_a_kept_buffer() {
        crate::pdu::spare::let_go();
        let kept = Vec::with_capacity(2 << 20);
        let at = kept.as_ptr();
        crate::pdu::spare::give(kept);
        let big = frame(1 << 20, 7);
        let mut f = Framer::new(0, true);
        let mut out = Frames::default();
        f.push(&big[..4], 1, 0, &mut out);
        assert_eq!(
            crate::pdu::spare::held(),
            2 << 20,
            "not for the size prefix alone"
        );
        f.push(&big[4..64 << 10], 2, 0, &mut out);
        assert_eq!(f.buf.as_ptr(), at, "the kept buffer gathers the frame");
        assert_eq!(crate::pdu::spare::held(), 0);
        f.push(&big[64 << 10..], 3, 0, &mut out);
        assert_eq!(out.0, [big]);
    }

    /// A size prefix alone reserves nothing: what the buffer holds stays within a few times
    /// the bytes the stream brought.
    #[test]
    fn a_size_prefix_alone_reserves_nothing() {
        let mut f = Framer::new(0, true);
        let mut out = Frames::default();
        let mut head = ((64 << 20) as u32).to_be_bytes().to_vec();
        head.resize(1024, 0);
        f.push(&head, 1, 0, &mut out);
        f.push(&[0; 1024], 2, 0, &mut out);
        assert!(
            f.buf.capacity() <= 4 * 2048,
            "{} bytes held",
            f.buf.capacity()
        );
        assert!(out.0.is_empty());
    }
}
