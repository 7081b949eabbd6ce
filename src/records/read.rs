//! The records reader: `wire::cursor` (the one implementation of Kafka's primitives and varint
//! rules) seen through a window of a tree buffer, with a `what` label and an absolute byte offset
//! on every failure. Record batches are stricter than the protocol's tagged fields: a varint whose
//! bits do not fit its type is an error here (`varint-overflow`), where `Cursor` only flags it.
//! Nothing here panics on any input.

use crate::wire::cursor::{Cursor, ReadError, VarintForm};
use crate::wire::tree::Span;

/// Why a read failed: a stable diagnostic code, the byte offset in the buffer, and what was
/// expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fail {
    pub code: &'static str,
    pub offset: u32,
    pub message: String,
}

impl Fail {
    pub fn new(code: &'static str, offset: u32, message: impl Into<String>) -> Fail {
        Fail {
            code,
            offset,
            message: message.into(),
        }
    }
}

pub type R<T> = Result<T, Fail>;

/// A cursor over `pos..end` of a buffer that each read is handed (so that the tree owning the
/// buffer can be written between reads). Offsets are absolute within the buffer so that nodes
/// can be pushed with them directly.
#[derive(Clone, Copy, Debug)]
pub struct Rd {
    pub pos: u32,
    pub end: u32,
}

impl Rd {
    /// A cursor over `data[start..start+len]`, clamped to the data.
    pub fn new(data: &[u8], start: u32, len: u32) -> Rd {
        let dlen = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let end = start.saturating_add(len).min(dlen);
        Rd {
            pos: start.min(end),
            end,
        }
    }

    pub fn remaining(&self) -> u32 {
        self.end - self.pos
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    /// The wire cursor over this window of `d` (which may be shorter than the window if the
    /// caller hands a different buffer; `Cursor` clamps, and the failure says so).
    fn cursor<'d>(&self, d: &'d [u8]) -> Cursor<'d> {
        Cursor::new(d, self.pos as usize, self.end as usize)
    }

    /// Moves past what `c` consumed.
    fn advance(&mut self, c: &Cursor<'_>) {
        // `c.pos()` lies within `self.pos..=self.end`, both u32.
        self.pos = u32::try_from(c.pos()).unwrap_or(self.end);
    }

    /// A fixed-width read failed for want of `n` bytes: either the window or the buffer ran out.
    fn short(&self, n: u32, what: &str) -> Fail {
        let message = if n > self.remaining() {
            format!("{what}: needs {n} bytes, only {} remain", self.remaining())
        } else {
            format!("{what}: the buffer ends before byte {}", self.pos + n)
        };
        Fail::new("truncated", self.pos, message)
    }

    /// The next `n` bytes, advancing past them.
    pub fn take<'d>(&mut self, d: &'d [u8], n: u32, what: &str) -> R<&'d [u8]> {
        let mut c = self.cursor(d);
        match c.bytes(n as usize) {
            Ok(s) => {
                self.advance(&c);
                Ok(s)
            }
            Err(_) => Err(self.short(n, what)),
        }
    }

    /// Runs one fixed-width `Cursor` read of `n` bytes.
    fn fixed<'d, T>(
        &mut self,
        d: &'d [u8],
        n: u32,
        what: &str,
        read: impl FnOnce(&mut Cursor<'d>) -> Result<T, ReadError>,
    ) -> R<T> {
        let mut c = self.cursor(d);
        match read(&mut c) {
            Ok(v) => {
                self.advance(&c);
                Ok(v)
            }
            Err(_) => Err(self.short(n, what)),
        }
    }

    /// The next `N` bytes when the window and the buffer both hold them, advancing past them:
    /// the common case of a fixed-width read, without the cursor. `None` leaves the position
    /// where it was, for the cursor to say what is missing.
    #[inline(always)]
    fn array<const N: usize>(&mut self, d: &[u8]) -> Option<[u8; N]> {
        let p = self.pos as usize;
        if p + N > self.end as usize {
            return None;
        }
        let a = d.get(p..p + N)?.try_into().ok()?;
        self.pos += N as u32;
        Some(a)
    }

    /// The next unsigned varint when it takes one or two bytes (at most 14 bits: never too big
    /// for any type) inside the window and the buffer, advancing past it.
    #[inline(always)]
    fn short_varint(&mut self, d: &[u8]) -> Option<u32> {
        let p = self.pos as usize;
        let w = d.get(p..(p + 2).min(self.end as usize))?;
        let (v, n) = match *w {
            [b, ..] if b < 0x80 => (u32::from(b), 1),
            [b0, b1] if b1 < 0x80 => (u32::from(b0 & 0x7f) | u32::from(b1) << 7, 2),
            _ => return None,
        };
        self.pos += n;
        Some(v)
    }

    #[inline]
    pub fn i8(&mut self, d: &[u8], what: &str) -> R<i8> {
        match self.array::<1>(d) {
            Some(a) => Ok(i8::from_be_bytes(a)),
            None => self.fixed(d, 1, what, Cursor::i8),
        }
    }
    #[inline]
    pub fn i16(&mut self, d: &[u8], what: &str) -> R<i16> {
        match self.array::<2>(d) {
            Some(a) => Ok(i16::from_be_bytes(a)),
            None => self.fixed(d, 2, what, Cursor::i16),
        }
    }
    #[inline]
    pub fn i32(&mut self, d: &[u8], what: &str) -> R<i32> {
        match self.array::<4>(d) {
            Some(a) => Ok(i32::from_be_bytes(a)),
            None => self.fixed(d, 4, what, Cursor::i32),
        }
    }
    #[inline]
    pub fn u32(&mut self, d: &[u8], what: &str) -> R<u32> {
        match self.array::<4>(d) {
            Some(a) => Ok(u32::from_be_bytes(a)),
            None => self.fixed(d, 4, what, Cursor::u32),
        }
    }
    #[inline]
    pub fn i64(&mut self, d: &[u8], what: &str) -> R<i64> {
        match self.array::<8>(d) {
            Some(a) => Ok(i64::from_be_bytes(a)),
            None => self.fixed(d, 8, what, Cursor::i64),
        }
    }

    /// A length prefix (zig-zag varint when `varint`, else int32) and the bytes it declares,
    /// checked to be in the window: where the prefix started, its size, and the content
    /// (`None` for length -1, null), the position past it.
    #[inline(always)]
    pub fn len_prefixed(
        &mut self,
        d: &[u8],
        name: &str,
        varint: bool,
    ) -> R<(u32, u16, Option<Span>)> {
        let at = self.pos;
        let n = if varint {
            self.varint(d, name)?
        } else {
            self.i32(d, name)?
        };
        let hdr = (self.pos - at) as u16;
        if n == -1 {
            return Ok((at, hdr, None));
        }
        if n < -1 || n as u32 > self.remaining() {
            return Err(self.bad_length(at, name, n));
        }
        let s = Span {
            start: self.pos,
            len: n as u32,
        };
        self.pos += n as u32;
        Ok((at, hdr, Some(s)))
    }

    /// Why a length prefix `n` read at `at` is refused (out of line: the hot path only tests).
    #[cold]
    #[inline(never)]
    fn bad_length(&self, at: u32, name: &str, n: i32) -> Fail {
        if n < -1 {
            Fail::new(
                "negative-length",
                at,
                format!("{name}: length {n}, expected -1 (null) or ≥ 0"),
            )
        } else {
            Fail::new(
                "truncated",
                at,
                format!(
                    "{name}: declares {n} bytes, only {} remain",
                    self.remaining()
                ),
            )
        }
    }

    /// Runs one varint-family `Cursor` read whose last byte may carry at most `top_bits` value
    /// bits (4 of a 5-byte varint's 7, 1 of a 10-byte varlong's) and turns Kafka's lenient
    /// outcomes into this reader's failures: bits beyond the type are `varint-overflow`, a
    /// continuation past the last byte `varint-overlong`. On failure the window's position is
    /// left past the bytes looked at, as callers reporting `pos` expect.
    fn leb<'d, T>(
        &mut self,
        d: &'d [u8],
        max_bytes: u32,
        top_bits: u32,
        what: &str,
        read: impl FnOnce(&mut Cursor<'d>) -> Result<(T, VarintForm), ReadError>,
    ) -> R<T> {
        let start = self.pos;
        let mut c = self.cursor(d);
        let overflow = |rd: &mut Rd, len: u32| {
            rd.pos = start + len;
            let bits = if max_bytes == 5 { 32 } else { 64 };
            Fail::new(
                "varint-overflow",
                start,
                format!("{what}: varint does not fit in {bits} bits"),
            )
        };
        match read(&mut c) {
            Ok((_, form)) if form.dropped_bits => Err(overflow(self, u32::from(form.len))),
            Ok((v, _)) => {
                self.advance(&c);
                Ok(v)
            }
            Err(ReadError::Truncated { have, .. }) => {
                // `have` is what remained, so at most the window.
                self.pos = start + u32::try_from(have).unwrap_or(0);
                Err(Fail::new(
                    "truncated",
                    self.pos,
                    format!("{what}: varint runs past the end of the data"),
                ))
            }
            Err(ReadError::VarintTooLong { .. }) => {
                let last = d
                    .get((start + max_bytes - 1) as usize)
                    .copied()
                    .unwrap_or(0);
                if u32::from(last & 0x7f) >> top_bits != 0 {
                    return Err(overflow(self, max_bytes));
                }
                self.pos = start + max_bytes;
                Err(Fail::new(
                    "varint-overlong",
                    start,
                    format!("{what}: varint longer than {max_bytes} bytes"),
                ))
            }
        }
    }

    /// Kafka's zig-zag `varint` (record lengths, deltas, key/value/header lengths).
    #[inline]
    pub fn varint(&mut self, d: &[u8], what: &str) -> R<i32> {
        match self.short_varint(d) {
            Some(v) => Ok((v >> 1) as i32 ^ -((v & 1) as i32)),
            None => self.leb(d, 5, 4, what, Cursor::varint),
        }
    }

    /// Kafka's zig-zag `varlong` (record timestamp delta).
    #[inline]
    pub fn varlong(&mut self, d: &[u8], what: &str) -> R<i64> {
        match self.short_varint(d) {
            Some(v) => Ok(i64::from(v >> 1) ^ -i64::from(v & 1)),
            None => self.leb(d, 10, 1, what, Cursor::varlong),
        }
    }

    /// An unsigned varint (the `__cluster_metadata` value framing).
    pub fn uvarint(&mut self, d: &[u8], what: &str) -> R<u32> {
        self.leb(d, 5, 4, what, Cursor::uvarint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_varints_match_kafka_encoding() {
        // Values and encodings from Kafka's ByteUtils zig-zag definition: 0→00, -1→01, 1→02,
        // 63→7e, -64→7f, 64→80 01, i32::MIN→ff ff ff ff 0f.
        let cases: &[(&[u8], i32)] = &[
            (&[0x00], 0),
            (&[0x01], -1),
            (&[0x02], 1),
            (&[0x7e], 63),
            (&[0x7f], -64),
            (&[0x80, 0x01], 64),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], i32::MIN),
            (&[0xfe, 0xff, 0xff, 0xff, 0x0f], i32::MAX),
        ];
        for (bytes, want) in cases {
            let mut r = Rd::new(bytes, 0, bytes.len() as u32);
            assert_eq!(r.varint(bytes, "x"), Ok(*want), "{bytes:02x?}");
            assert!(r.at_end());
        }
    }

    #[test]
    fn varint_longer_than_five_bytes_is_overlong_not_a_hang() {
        let bytes = [0x80u8; 64];
        let mut r = Rd::new(&bytes, 0, 64);
        assert_eq!(r.varint(&bytes, "len").unwrap_err().code, "varint-overlong");
        let big = [0xff, 0xff, 0xff, 0xff, 0x1f];
        let mut r = Rd::new(&big, 0, 5);
        assert_eq!(r.varint(&big, "len").unwrap_err().code, "varint-overflow");
        let cut = [0x80, 0x80];
        let mut r = Rd::new(&cut, 0, 2);
        assert_eq!(r.varint(&cut, "len").unwrap_err().code, "truncated");
    }

    #[test]
    fn a_last_byte_that_continues_is_overflow_if_it_carries_excess_bits() {
        // 5th byte 0x90: continuation set and a bit above 2^32 -> too big before too long.
        let b = [0xff, 0xff, 0xff, 0xff, 0x90, 0x00];
        let mut r = Rd::new(&b, 0, 6);
        let e = r.varint(&b, "len").unwrap_err();
        assert_eq!((e.code, e.offset, r.pos), ("varint-overflow", 0, 5));
        // 5th byte 0x8f: every bit fits, only the continuation is wrong.
        let b = [0xff, 0xff, 0xff, 0xff, 0x8f, 0x00];
        let mut r = Rd::new(&b, 0, 6);
        let e = r.uvarint(&b, "len").unwrap_err();
        assert_eq!((e.code, e.offset, r.pos), ("varint-overlong", 0, 5));
        // 10th byte 0x82 of a varlong: bit 64 set.
        let mut b = [0xffu8; 11];
        b[9] = 0x82;
        let mut r = Rd::new(&b, 0, 11);
        assert_eq!(r.varlong(&b, "ts").unwrap_err().code, "varint-overflow");
        // Truncation is reported where the missing byte would be.
        let b = [0x00, 0x80, 0x80];
        let mut r = Rd::new(&b, 1, 2);
        let e = r.varint(&b, "len").unwrap_err();
        assert_eq!((e.code, e.offset, r.pos), ("truncated", 3, 3));
    }

    #[test]
    fn a_buffer_shorter_than_the_window_says_so() {
        let long = [0u8; 8];
        let mut r = Rd::new(&long, 0, 8);
        let e = r.i32(&long[..2], "n").unwrap_err();
        assert_eq!(e.message, "n: the buffer ends before byte 4");
        assert_eq!(r.pos, 0);
    }

    #[test]
    fn the_fast_paths_read_as_the_cursor_does() {
        // Every first byte, with a second byte that ends or continues, through
        // windows of 0 to 9 bytes of buffers cut shorter or not: value or failure, and the
        // position after, are those of the cursor's path.
        for b0 in 0..=255u8 {
            for b1 in [0x00, 0x01, 0x7f, 0x80, 0xff, 0x81] {
                let full = [b0, b1, 0x81, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07];
                for len in 0..=9u32 {
                    for d in [&full[..], &full[..len.min(2) as usize]] {
                        let both =
                            |fast: &dyn Fn(&mut Rd) -> R<i64>, slow: &dyn Fn(&mut Rd) -> R<i64>| {
                                let (mut a, mut b) =
                                    (Rd::new(&full, 0, len), Rd::new(&full, 0, len));
                                let (x, y) = (fast(&mut a), slow(&mut b));
                                assert_eq!(
                                    (x, a.pos),
                                    (y, b.pos),
                                    "{full:02x?} window {len} of {}",
                                    d.len()
                                );
                            };
                        both(&|r| r.varint(d, "v").map(i64::from), &|r| {
                            r.leb(d, 5, 4, "v", Cursor::varint).map(i64::from)
                        });
                        both(&|r| r.varlong(d, "v"), &|r| {
                            r.leb(d, 10, 1, "v", Cursor::varlong)
                        });
                        both(&|r| r.i8(d, "v").map(i64::from), &|r| {
                            r.fixed(d, 1, "v", Cursor::i8).map(i64::from)
                        });
                        both(&|r| r.i16(d, "v").map(i64::from), &|r| {
                            r.fixed(d, 2, "v", Cursor::i16).map(i64::from)
                        });
                        both(&|r| r.i32(d, "v").map(i64::from), &|r| {
                            r.fixed(d, 4, "v", Cursor::i32).map(i64::from)
                        });
                        both(&|r| r.u32(d, "v").map(i64::from), &|r| {
                            r.fixed(d, 4, "v", Cursor::u32).map(i64::from)
                        });
                        both(&|r| r.i64(d, "v"), &|r| r.fixed(d, 8, "v", Cursor::i64));
                    }
                }
            }
        }
    }

    #[test]
    fn a_length_prefix_takes_what_remains_and_not_a_byte_more() {
        // Zig-zag 3 (0x06), then three bytes: all of the window.
        let d = [0x06, b'a', b'b', b'c', b'd'];
        let mut r = Rd::new(&d, 0, 4);
        assert_eq!(
            r.len_prefixed(&d, "v", true),
            Ok((0, 1, Some(Span { start: 1, len: 3 })))
        );
        assert!(r.at_end());
        // Zig-zag 4 (0x08): one more than the window holds, though the buffer has it.
        let d = [0x08, b'a', b'b', b'c', b'd'];
        let mut r = Rd::new(&d, 0, 4);
        let e = r.len_prefixed(&d, "v", true).unwrap_err();
        assert_eq!((e.code, e.offset), ("truncated", 0));
        assert_eq!(e.message, "v: declares 4 bytes, only 3 remain");
        // -1 is null; -2 is refused; an int32 prefix reads the same way.
        let mut r = Rd::new(&[0x01], 0, 1);
        assert_eq!(r.len_prefixed(&[0x01], "v", true), Ok((0, 1, None)));
        let mut r = Rd::new(&[0x03], 0, 1);
        assert_eq!(
            r.len_prefixed(&[0x03], "v", true).unwrap_err().code,
            "negative-length"
        );
        let d = [0, 0, 0, 2, b'x', b'y'];
        let mut r = Rd::new(&d, 0, 6);
        assert_eq!(
            r.len_prefixed(&d, "v", false),
            Ok((0, 4, Some(Span { start: 4, len: 2 })))
        );
    }

    #[test]
    fn varlong_extremes() {
        let mut enc = [0xffu8; 10];
        enc[9] = 0x01;
        let mut r = Rd::new(&enc, 0, 10);
        assert_eq!(r.varlong(&enc, "ts"), Ok(i64::MIN));
        enc[9] = 0x03;
        let mut r = Rd::new(&enc, 0, 10);
        assert_eq!(r.varlong(&enc, "ts").unwrap_err().code, "varint-overflow");
    }

    #[test]
    fn reads_past_the_window_fail_with_the_offset() {
        let data = [0u8, 1, 2, 3, 4, 5];
        let mut r = Rd::new(&data, 2, 3);
        assert_eq!(r.i16(&data, "a"), Ok(0x0203));
        let e = r.i32(&data, "b").unwrap_err();
        assert_eq!((e.code, e.offset), ("truncated", 4));
        // A window past the data is clamped, never out of bounds.
        let r = Rd::new(&data, 5, u32::MAX);
        assert_eq!(r.remaining(), 1);
    }
}
