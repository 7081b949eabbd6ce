//! Compressed inputs, read transparently as tshark does: a capture (or dump, or log file)
//! compressed with gzip or zstd is recognised by its magic bytes, never by its name, and
//! decompressed as it is read. Nothing here buffers the decompressed stream: what is read is what
//! the reader downstream asked for. The decompressed size is capped by
//! [`MAX_DECOMPRESSED_INPUT`] so a small bomb cannot keep kinspect busy for hours.
//!
//! xz is recognised and refused with a message saying how to read it (`xz -d`): the pure-Rust
//! decoders would be a new dependency for a format captures are rarely shipped in, and the C
//! one (liblzma) a new C build.

use crate::limits::MAX_DECOMPRESSED_INPUT;
use std::fmt;
use std::io::{self, BufReader, Chain, Cursor, Read};

/// A compression format recognised at the start of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Xz,
}

impl Compression {
    /// From the first bytes of an input (at least 6 to tell all of them).
    pub fn detect(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Compression::Xz)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The bytes peeked at, then the rest of the input.
type Peeked<R> = Chain<Cursor<Vec<u8>>, R>;

/// An input as [`open`] hands it back: plain, or decompressed as it is read. `Send` when `R` is.
pub enum Opened<R: Read> {
    Plain(Peeked<R>),
    /// Boxed: the inflater's state is several times the size of the other variants.
    Gzip(Box<Capped<flate2::read::MultiGzDecoder<Peeked<R>>>>),
    Zstd(Capped<zstd::stream::read::Decoder<'static, BufReader<Peeked<R>>>>),
}

impl<R: Read> Read for Opened<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Opened::Plain(r) => r.read(buf),
            Opened::Gzip(r) => r.read(buf),
            Opened::Zstd(r) => r.read(buf),
        }
    }
}

/// Peeks at the first bytes of `r` and wraps it in a decompressor when they are the magic of a
/// compression format: the format found (if any) and the reader to use instead of `r`. An xz
/// input is an `InvalidData` error saying so; a gzip or zstd input that turns out damaged is
/// an error from the reader, at the decompressed offset it was found.
pub fn open<R: Read>(mut r: R) -> io::Result<(Option<Compression>, Opened<R>)> {
    let mut head = Vec::with_capacity(6);
    (&mut r).take(6).read_to_end(&mut head)?;
    let c = Compression::detect(&head);
    let peeked = Cursor::new(head).chain(r);
    let opened =
        match c {
            None => Opened::Plain(peeked),
            Some(Compression::Gzip) => Opened::Gzip(Box::new(Capped::new(
                flate2::read::MultiGzDecoder::new(peeked),
                Compression::Gzip,
            ))),
            Some(Compression::Zstd) => Opened::Zstd(Capped::new(
                zstd::stream::read::Decoder::new(peeked)?,
                Compression::Zstd,
            )),
            Some(Compression::Xz) => return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "byte 0: the input is xz-compressed, which kinspect does not read; decompress it \
                 first (xz -dc FILE | kinspect decode -)",
            )),
        };
    Ok((c, opened))
}

/// A decompressing reader that stops with an error past [`MAX_DECOMPRESSED_INPUT`] bytes.
pub struct Capped<D> {
    inner: D,
    format: Compression,
    out: u64,
    limit: u64,
}

impl<D> Capped<D> {
    fn new(inner: D, format: Compression) -> Capped<D> {
        Capped {
            inner,
            format,
            out: 0,
            limit: MAX_DECOMPRESSED_INPUT,
        }
    }
}

impl<D: Read> Read for Capped<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.out >= self.limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "decompressed byte {}: the {} input decompresses to more than {} bytes \
                     (limits::MAX_DECOMPRESSED_INPUT); decompress it yourself to read it all",
                    self.out, self.format, self.limit
                ),
            ));
        }
        let room = (self.limit - self.out).min(buf.len() as u64) as usize;
        let n = self.inner.read(&mut buf[..room]).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "decompressed byte {}: the {} input is damaged: {e}",
                    self.out, self.format
                ),
            )
        })?;
        self.out += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(data: &[u8]) -> (Option<Compression>, io::Result<Vec<u8>>) {
        let (c, mut r) = open(data).unwrap();
        let mut out = Vec::new();
        let res = r.read_to_end(&mut out).map(|_| out);
        (c, res)
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn plain_inputs_pass_through_whole() {
        for data in [
            &b""[..],
            b"\x1f",
            b"abc",
            &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 9],
        ] {
            let (c, got) = read_all(data);
            assert_eq!((c, got.unwrap()), (None, data.to_vec()));
        }
    }

    #[test]
    fn gzip_and_zstd_are_found_by_their_magic_and_read_back() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let (c, got) = read_all(&gzip(&data));
        assert_eq!((c, got.unwrap()), (Some(Compression::Gzip), data.clone()));
        // Concatenated gzip members, as `cat a.gz b.gz` makes.
        let two = [gzip(&data[..1000]), gzip(&data[1000..])].concat();
        assert_eq!(read_all(&two).1.unwrap(), data);
        let z = zstd::stream::encode_all(&data[..], 3).unwrap();
        let (c, got) = read_all(&z);
        assert_eq!((c, got.unwrap()), (Some(Compression::Zstd), data));
    }

    #[test]
    fn xz_is_refused_with_what_to_do() {
        let e = open(&[0xfd, b'7', b'z', b'X', b'Z', 0, 0, 4][..])
            .map(|(c, _)| c)
            .unwrap_err();
        assert!(e.to_string().contains("xz -dc"), "{e}");
    }

    #[test]
    fn a_damaged_stream_says_where() {
        let mut g = gzip(&[7u8; 100_000]);
        let n = g.len();
        g.truncate(n / 2);
        let e = read_all(&g).1.unwrap_err();
        assert!(e.to_string().starts_with("decompressed byte "), "{e}");
        assert!(e.to_string().contains("gzip input is damaged"), "{e}");
    }

    /// A gzip bomb is read in pieces as it is asked for, and stops at the cap with an error that
    /// names it: memory never holds more than what the reader downstream buffers.
    #[test]
    fn decompression_stops_at_the_cap() {
        let bomb = gzip(&vec![0u8; 4 << 20]);
        let (_, r) = open(&bomb[..]).unwrap();
        let Opened::Gzip(mut capped) = r else {
            panic!("not gzip")
        };
        capped.limit = 1 << 20;
        let mut buf = [0u8; 64 * 1024];
        let mut total = 0u64;
        let e = loop {
            match capped.read(&mut buf) {
                Ok(0) => panic!("ended at {total}"),
                Ok(n) => total += n as u64,
                Err(e) => break e,
            }
        };
        assert_eq!(total, 1 << 20);
        assert!(
            e.to_string().contains("limits::MAX_DECOMPRESSED_INPUT"),
            "{e}"
        );
    }
}
