//! A bounds-checked forward cursor over one tree buffer, with the big-endian integers and the
//! zig-zag varints that record batches use. Every read either succeeds or says at which byte and
//! what it expected; nothing here panics on any input.

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

    /// The next `n` bytes, advancing past them.
    pub fn take<'d>(&mut self, d: &'d [u8], n: u32, what: &str) -> R<&'d [u8]> {
        if n > self.remaining() {
            return Err(Fail::new(
                "truncated",
                self.pos,
                format!("{what}: needs {n} bytes, only {} remain", self.remaining()),
            ));
        }
        let s = d
            .get(self.pos as usize..(self.pos + n) as usize)
            .ok_or_else(|| {
                Fail::new(
                    "truncated",
                    self.pos,
                    format!("{what}: the buffer ends before byte {}", self.pos + n),
                )
            })?;
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, d: &[u8], what: &str) -> R<[u8; N]> {
        let s = self.take(d, N as u32, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn i8(&mut self, d: &[u8], what: &str) -> R<i8> {
        Ok(i8::from_be_bytes(self.array(d, what)?))
    }
    pub fn i16(&mut self, d: &[u8], what: &str) -> R<i16> {
        Ok(i16::from_be_bytes(self.array(d, what)?))
    }
    pub fn i32(&mut self, d: &[u8], what: &str) -> R<i32> {
        Ok(i32::from_be_bytes(self.array(d, what)?))
    }
    pub fn u32(&mut self, d: &[u8], what: &str) -> R<u32> {
        Ok(u32::from_be_bytes(self.array(d, what)?))
    }
    pub fn i64(&mut self, d: &[u8], what: &str) -> R<i64> {
        Ok(i64::from_be_bytes(self.array(d, what)?))
    }

    /// An unsigned LEB128 varint of at most `max_bytes` bytes whose value fits `bits` bits.
    fn uleb(&mut self, d: &[u8], max_bytes: u32, bits: u32, what: &str) -> R<u64> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            let Some(&b) = d.get(self.pos as usize).filter(|_| self.pos < self.end) else {
                return Err(Fail::new(
                    "truncated",
                    self.pos,
                    format!("{what}: varint runs past the end of the data"),
                ));
            };
            self.pos += 1;
            let shift = 7 * i;
            let chunk = u64::from(b & 0x7f);
            if shift + 7 > bits && (chunk >> (bits - shift)) != 0 {
                return Err(Fail::new(
                    "varint-overflow",
                    start,
                    format!("{what}: varint does not fit in {bits} bits"),
                ));
            }
            value |= chunk << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Fail::new(
            "varint-overlong",
            start,
            format!("{what}: varint longer than {max_bytes} bytes"),
        ))
    }

    /// Kafka's zig-zag `varint` (record lengths, deltas, key/value/header lengths).
    pub fn varint(&mut self, d: &[u8], what: &str) -> R<i32> {
        let u = self.uleb(d, 5, 32, what)? as u32;
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// Kafka's zig-zag `varlong` (record timestamp delta).
    pub fn varlong(&mut self, d: &[u8], what: &str) -> R<i64> {
        let u = self.uleb(d, 10, 64, what)?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// An unsigned varint (the `__cluster_metadata` value framing).
    pub fn uvarint(&mut self, d: &[u8], what: &str) -> R<u32> {
        Ok(self.uleb(d, 5, 32, what)? as u32)
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
