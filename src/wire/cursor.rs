//! Reading Kafka's primitive encodings from a byte slice, bounds-checked, with Kafka's exact edge
//! cases (see `reference/kafka-wire-rules.md` §2). Fixed-width integers go through nom's
//! big-endian parsers; the varint family is hand-written because Kafka's rules (5-byte cap,
//! silently dropped high bits, non-minimal forms accepted) are not protobuf's.
//!
//! Nothing here allocates or panics: every read either returns the value and the bytes it used,
//! or says how many bytes it needed.

use nom::number::complete as num;

type NomErr<'a> = nom::error::Error<&'a [u8]>;

/// Why a primitive could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// `need` bytes were required at the cursor but only `have` remain.
    Truncated { need: u64, have: u64 },
    /// An unsigned varint whose 5th byte (or a varint/varlong whose last allowed byte) still has
    /// its continuation bit set.
    VarintTooLong { max_bytes: u8 },
}

/// How an unsigned varint was written, beyond its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VarintForm {
    /// Bytes it took.
    pub len: u8,
    /// Longer than the minimal encoding (`80 00` for 0): Kafka accepts it.
    pub overlong: bool,
    /// Bits above 2^32 were set in the 5th byte: Kafka drops them silently.
    pub dropped_bits: bool,
}

/// A forward-only reader over `data[pos..end]`.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data[pos..end]` (clamped to the data).
    pub fn new(data: &'a [u8], pos: usize, end: usize) -> Cursor<'a> {
        let end = end.min(data.len());
        Cursor {
            data,
            pos: pos.min(end),
            end,
        }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn end(&self) -> usize {
        self.end
    }
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }
    fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..self.end).unwrap_or(&[])
    }
    fn need(&self, n: usize) -> Result<(), ReadError> {
        if self.remaining() < n {
            Err(ReadError::Truncated {
                need: n as u64,
                have: self.remaining() as u64,
            })
        } else {
            Ok(())
        }
    }

    /// Runs a nom parser of a fixed width `n` on the remaining bytes.
    fn fixed<T>(
        &mut self,
        n: usize,
        p: impl Fn(&'a [u8]) -> nom::IResult<&'a [u8], T, NomErr<'a>>,
    ) -> Result<T, ReadError> {
        self.need(n)?;
        match p(self.rest()) {
            Ok((_, v)) => {
                self.pos += n;
                Ok(v)
            }
            // Unreachable after `need`, but never trust that with input-derived sizes.
            Err(_) => Err(ReadError::Truncated {
                need: n as u64,
                have: self.remaining() as u64,
            }),
        }
    }

    pub fn i8(&mut self) -> Result<i8, ReadError> {
        self.fixed(1, num::be_i8)
    }
    pub fn u8(&mut self) -> Result<u8, ReadError> {
        self.fixed(1, num::be_u8)
    }
    pub fn i16(&mut self) -> Result<i16, ReadError> {
        self.fixed(2, num::be_i16)
    }
    pub fn u16(&mut self) -> Result<u16, ReadError> {
        self.fixed(2, num::be_u16)
    }
    pub fn i32(&mut self) -> Result<i32, ReadError> {
        self.fixed(4, num::be_i32)
    }
    pub fn u32(&mut self) -> Result<u32, ReadError> {
        self.fixed(4, num::be_u32)
    }
    pub fn i64(&mut self) -> Result<i64, ReadError> {
        self.fixed(8, num::be_i64)
    }
    pub fn f64(&mut self) -> Result<f64, ReadError> {
        self.fixed(8, num::be_f64)
    }
    pub fn uuid(&mut self) -> Result<[u8; 16], ReadError> {
        let v = self.fixed(16, num::be_u128)?;
        Ok(v.to_be_bytes())
    }

    /// Skips `n` bytes (a string, bytes or records payload) after checking they are there.
    pub fn skip(&mut self, n: usize) -> Result<(), ReadError> {
        self.need(n)?;
        self.pos += n;
        Ok(())
    }

    /// The next `n` bytes, after checking they are there.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        self.need(n)?;
        let s = self
            .data
            .get(self.pos..self.pos + n)
            .ok_or(ReadError::Truncated {
                need: n as u64,
                have: self.remaining() as u64,
            })?;
        self.pos += n;
        Ok(s)
    }

    /// Kafka's unsigned varint (`ByteUtils.readUnsignedVarint`): at most 5 bytes, the 5th byte's
    /// bits above 2^32 dropped, non-minimal forms accepted. The caller reinterprets the result as
    /// a Java int where Kafka does (`as i32`).
    pub fn uvarint(&mut self) -> Result<(u32, VarintForm), ReadError> {
        let rest = self.rest();
        let mut value: u64 = 0;
        for i in 0..5usize {
            let Some(&b) = rest.get(i) else {
                return Err(ReadError::Truncated {
                    need: i as u64 + 1,
                    have: rest.len() as u64,
                });
            };
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                let len = i + 1;
                self.pos += len;
                let form = VarintForm {
                    len: len as u8,
                    overlong: len > 1 && b == 0,
                    dropped_bits: value > u64::from(u32::MAX),
                };
                return Ok((value as u32, form));
            }
        }
        Err(ReadError::VarintTooLong { max_bytes: 5 })
    }

    /// A zig-zag signed varint (record batches only): at most 5 bytes.
    pub fn varint(&mut self) -> Result<(i32, VarintForm), ReadError> {
        let (raw, form) = self.uvarint()?;
        Ok((((raw >> 1) as i32) ^ -((raw & 1) as i32), form))
    }

    /// A zig-zag signed varlong (record batches only): at most 10 bytes.
    pub fn varlong(&mut self) -> Result<(i64, VarintForm), ReadError> {
        let rest = self.rest();
        let mut value: u64 = 0;
        for i in 0..10usize {
            let Some(&b) = rest.get(i) else {
                return Err(ReadError::Truncated {
                    need: i as u64 + 1,
                    have: rest.len() as u64,
                });
            };
            // The 10th byte holds only the top bit; more is dropped like Kafka's shift does.
            value |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
            if b & 0x80 == 0 {
                let len = i + 1;
                self.pos += len;
                let form = VarintForm {
                    len: len as u8,
                    overlong: len > 1 && b == 0,
                    dropped_bits: i == 9 && b > 1,
                };
                return Ok((((value >> 1) as i64) ^ -((value & 1) as i64), form));
            }
        }
        Err(ReadError::VarintTooLong { max_bytes: 10 })
    }
}

/// The big-endian `u16` at `d[at..]`, or `None` if the data ends first (fixed headers of captured
/// packets and frames, read at known offsets).
pub fn be_u16_at(d: &[u8], at: usize) -> Option<u16> {
    Cursor::new(d, at, d.len()).u16().ok()
}

/// The big-endian `u32` at `d[at..]`, or `None` if the data ends first.
pub fn be_u32_at(d: &[u8], at: usize) -> Option<u32> {
    Cursor::new(d, at, d.len()).u32().ok()
}

/// The big-endian `i16` at `d[at..]`, or `None` if the data ends first.
pub fn be_i16_at(d: &[u8], at: usize) -> Option<i16> {
    Cursor::new(d, at, d.len()).i16().ok()
}

/// The big-endian `i32` at `d[at..]`, or `None` if the data ends first.
pub fn be_i32_at(d: &[u8], at: usize) -> Option<i32> {
    Cursor::new(d, at, d.len()).i32().ok()
}

/// Bytes the minimal unsigned varint encoding of `v` takes.
pub fn uvarint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// Appends the minimal unsigned varint encoding of `v`.
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uv(bytes: &[u8]) -> Result<(u32, VarintForm), ReadError> {
        Cursor::new(bytes, 0, bytes.len()).uvarint()
    }

    #[test]
    fn uvarint_follows_kafka_edge_cases() {
        assert_eq!(uv(&[0x00]).unwrap().0, 0);
        assert_eq!(uv(&[0x96, 0x01]).unwrap().0, 150);
        // Non-minimal zero: accepted, flagged.
        let (v, f) = uv(&[0x80, 0x00]).unwrap();
        assert_eq!((v, f.overlong, f.len), (0, true, 2));
        // u32::MAX in five bytes; as a Java int it is -1.
        let (v, f) = uv(&[0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap();
        assert_eq!((v as i32, f.dropped_bits), (-1, false));
        // High bits of the 5th byte are dropped, not an error.
        let (v, f) = uv(&[0xff, 0xff, 0xff, 0xff, 0x7f]).unwrap();
        assert_eq!((v, f.dropped_bits), (u32::MAX, true));
        assert_eq!(
            uv(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
            Err(ReadError::VarintTooLong { max_bytes: 5 })
        );
        assert_eq!(
            uv(&[0x80, 0x80]),
            Err(ReadError::Truncated { need: 3, have: 2 })
        );
        assert_eq!(uv(&[]), Err(ReadError::Truncated { need: 1, have: 0 }));
    }

    #[test]
    fn uvarint_writer_matches_reader_at_every_width() {
        for v in [
            0u32,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            0x1f_ffff,
            0x20_0000,
            0xfff_ffff,
            0x1000_0000,
            u32::MAX,
        ] {
            let mut out = Vec::new();
            put_uvarint(&mut out, v);
            assert_eq!(out.len(), uvarint_len(v), "{v:#x}");
            let (back, f) = uv(&out).unwrap();
            assert_eq!((back, f.overlong), (v, false));
        }
    }

    #[test]
    fn zigzag_varints() {
        let c = |b: &[u8]| Cursor::new(b, 0, b.len()).varint().unwrap().0;
        assert_eq!(c(&[0x00]), 0);
        assert_eq!(c(&[0x01]), -1);
        assert_eq!(c(&[0x02]), 1);
        assert_eq!(c(&[0xff, 0xff, 0xff, 0xff, 0x0f]), i32::MIN);
        let l = |b: &[u8]| Cursor::new(b, 0, b.len()).varlong();
        assert_eq!(l(&[0x01]).unwrap().0, -1);
        let max = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(l(&max).unwrap().0, i64::MAX);
        assert_eq!(
            l(&[0x80; 11]),
            Err(ReadError::VarintTooLong { max_bytes: 10 })
        );
    }

    #[test]
    fn reads_at_an_offset_stop_at_the_data() {
        let d = [0x80, 0x01, 0xff, 0xfe];
        assert_eq!(be_u16_at(&d, 0), Some(0x8001));
        assert_eq!(be_i16_at(&d, 2), Some(-2));
        assert_eq!(be_i32_at(&d, 0), Some(-0x7ffe_0002));
        assert_eq!(be_u32_at(&d, 0), Some(0x8001_fffe));
        assert_eq!(be_u16_at(&d, 3), None);
        assert_eq!(be_u32_at(&d, 1), None);
        assert_eq!(be_i16_at(&d, usize::MAX), None);
    }

    #[test]
    fn fixed_width_reads_are_bounded_by_end() {
        let data = [0x12, 0x34, 0x56, 0x78, 0x9a];
        let mut c = Cursor::new(&data, 1, 4);
        assert_eq!(c.i16().unwrap(), 0x3456);
        assert_eq!(c.i16(), Err(ReadError::Truncated { need: 2, have: 1 }));
        assert_eq!(c.i8().unwrap(), 0x78);
        assert_eq!(c.remaining(), 0);
        assert_eq!(c.skip(1), Err(ReadError::Truncated { need: 1, have: 0 }));
        let mut c = Cursor::new(&data, 0, 99);
        assert_eq!(c.end(), 5);
        assert_eq!(c.u32().unwrap(), 0x1234_5678);
    }
}
