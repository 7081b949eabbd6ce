//! Decompression of record data: gzip, snappy (raw and the xerial snappy-java framing), LZ4
//! frames (including the KafkaLZ4 header checksum of magic-0 messages) and zstd.
//!
//! Every codec writes through [`Sink`], which enforces the one output cap computed by
//! [`output_cap`] from `crate::limits`; a decompression bomb therefore ends as
//! [`CodecError::TooLarge`] after at most the cap has been allocated, never as an OOM.

use crate::limits::{MAX_DECOMPRESSED_BYTES, MAX_DECOMPRESSED_PER_TREE, MAX_DECOMPRESSION_RATIO};
use std::io::Read;

/// The ratio cap only applies once the output passes this size, so tiny, very compressible
/// batches (a few repeated bytes) are not reported as bombs.
const RATIO_FLOOR: usize = 1024 * 1024;

/// A batch's compression codec (attribute bits 0-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Codec {
    /// The codec for an attribute id; `None` for the ids Kafka rejects (5-7).
    pub fn from_id(id: u8) -> Option<Codec> {
        Some(match id {
            0 => Codec::None,
            1 => Codec::Gzip,
            2 => Codec::Snappy,
            3 => Codec::Lz4,
            4 => Codec::Zstd,
            _ => return None,
        })
    }

    /// The label printed for an attribute id (0-7).
    pub fn label(id: u8) -> &'static str {
        const NAMES: [&str; 8] = [
            "none",
            "gzip",
            "snappy",
            "lz4",
            "zstd",
            "unknown(5)",
            "unknown(6)",
            "unknown(7)",
        ];
        NAMES[(id & 7) as usize]
    }
}

/// Why data could not be decompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodecError {
    /// The compressed data is malformed; the message says where (offset into the compressed
    /// data) when the codec tells us.
    Corrupt(String),
    /// The output would pass `limit` bytes; `which` names the limit.
    TooLarge { limit: usize, which: &'static str },
    /// A valid but unsupported feature (an LZ4 dictionary id, codec 5-7).
    Unsupported(String),
}

impl std::fmt::Display for CodecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodecError::Corrupt(m) => write!(f, "corrupt compressed data: {m}"),
            CodecError::TooLarge { limit, which } => {
                write!(
                    f,
                    "decompressed data would exceed {limit} bytes ({which}); decompression stopped"
                )
            }
            CodecError::Unsupported(m) => write!(f, "unsupported: {m}"),
        }
    }
}

/// Decompressed bytes plus remarks worth a diagnostic (a framing fallback, a non-standard
/// checksum) that did not prevent decoding.
#[derive(Debug, Default)]
pub struct Decompressed {
    pub data: Vec<u8>,
    pub notes: Vec<String>,
}

/// The most bytes one compressed input of `input_len` bytes may decompress to, given that the
/// tree already holds `tree_used` decompressed bytes. The only place the three limits meet.
pub fn output_cap(input_len: usize, tree_used: usize) -> (usize, &'static str) {
    let per_batch = MAX_DECOMPRESSED_BYTES;
    let per_tree = MAX_DECOMPRESSED_PER_TREE.saturating_sub(tree_used);
    let ratio = input_len
        .saturating_mul(MAX_DECOMPRESSION_RATIO)
        .max(RATIO_FLOOR);
    let mut cap = (per_batch, "limits::MAX_DECOMPRESSED_BYTES per batch");
    if per_tree < cap.0 {
        cap = (
            per_tree,
            "limits::MAX_DECOMPRESSED_PER_TREE for one decoded message",
        );
    }
    if ratio < cap.0 {
        cap = (ratio, "limits::MAX_DECOMPRESSION_RATIO");
    }
    cap
}

/// Decompresses `input` with `codec`, producing at most `cap` bytes. `magic` is the record
/// format (0 selects the KafkaLZ4 header checksum). Never panics: a panic inside a codec
/// library is caught and reported as corrupt data.
pub fn decompress(
    codec: Codec,
    input: &[u8],
    magic: i8,
    cap: (usize, &'static str),
) -> Result<Decompressed, CodecError> {
    let run = || match codec {
        Codec::None => {
            let mut s = Sink::new(cap);
            s.extend(input)?;
            Ok(Decompressed {
                data: s.out,
                notes: Vec::new(),
            })
        }
        Codec::Gzip => gzip(input, cap),
        Codec::Snappy => snappy(input, cap),
        Codec::Lz4 => lz4(input, magic, cap),
        Codec::Zstd => zstd(input, cap),
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(_) => Err(CodecError::Corrupt(format!(
            "the {codec:?} decoder gave up on this input"
        ))),
    }
}

/// Output with a hard cap.
struct Sink {
    out: Vec<u8>,
    cap: usize,
    which: &'static str,
}

impl Sink {
    fn new((cap, which): (usize, &'static str)) -> Sink {
        Sink {
            out: Vec::new(),
            cap,
            which,
        }
    }

    fn too_large(&self) -> CodecError {
        CodecError::TooLarge {
            limit: self.cap,
            which: self.which,
        }
    }

    /// Tells the thread's tree-growth hook what taking `n` more bytes will allocate.
    #[inline]
    fn will_grow(&self, n: usize) {
        crate::wire::tree::growth::before_push(self.out.len(), self.out.capacity(), n, 1);
    }

    /// Room for `n` more bytes, or the cap error.
    fn room(&self, n: usize) -> Result<(), CodecError> {
        if self.out.len().saturating_add(n) > self.cap {
            return Err(self.too_large());
        }
        Ok(())
    }

    fn extend(&mut self, b: &[u8]) -> Result<(), CodecError> {
        self.room(b.len())?;
        self.will_grow(b.len());
        self.out.extend_from_slice(b);
        Ok(())
    }

    /// Drains a decoder, stopping (with the cap error) one byte past the cap.
    fn read_from<Rd: Read>(&mut self, r: Rd, what: &str) -> Result<(), CodecError> {
        let room = (self.cap - self.out.len()) as u64;
        let mut limited = r.take(room + 1);
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match limited.read(&mut chunk) {
                Ok(0) => return Ok(()),
                Ok(n) => self.extend(&chunk[..n])?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CodecError::Corrupt(format!("{what}: {e}"))),
            }
        }
    }
}

fn gzip(input: &[u8], cap: (usize, &'static str)) -> Result<Decompressed, CodecError> {
    // Java's GZIPInputStream reads concatenated members, so this does too.
    let mut s = Sink::new(cap);
    s.read_from(flate2::read::MultiGzDecoder::new(input), "gzip")?;
    Ok(Decompressed {
        data: s.out,
        notes: Vec::new(),
    })
}

const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER: usize = 16;

fn snappy_raw_into(s: &mut Sink, block: &[u8], at: usize) -> Result<(), CodecError> {
    let n = snap::raw::decompress_len(block)
        .map_err(|e| CodecError::Corrupt(format!("snappy block at byte {at}: {e}")))?;
    // The declared length is checked before anything is allocated for it.
    s.room(n)?;
    let start = s.out.len();
    s.will_grow(n);
    s.out.resize(start + n, 0);
    match snap::raw::Decoder::new().decompress(block, &mut s.out[start..]) {
        Ok(w) => {
            s.out.truncate(start + w);
            Ok(())
        }
        Err(e) => {
            s.out.truncate(start);
            Err(CodecError::Corrupt(format!(
                "snappy block at byte {at}: {e}"
            )))
        }
    }
}

fn snappy(input: &[u8], cap: (usize, &'static str)) -> Result<Decompressed, CodecError> {
    let mut s = Sink::new(cap);
    if input.len() < XERIAL_HEADER || input[..8] != XERIAL_MAGIC {
        // snappy-java falls back to one raw block when the stream header is absent; librdkafka
        // and kafka-python write raw blocks.
        snappy_raw_into(&mut s, input, 0)?;
        return Ok(Decompressed {
            data: s.out,
            notes: Vec::new(),
        });
    }
    let mut pos = XERIAL_HEADER;
    while pos < input.len() {
        let Some(len_bytes) = input.get(pos..pos + 4) else {
            return Err(CodecError::Corrupt(format!(
                "xerial snappy: chunk length at byte {pos} is cut short"
            )));
        };
        if len_bytes == &XERIAL_MAGIC[..4] {
            // A concatenated stream: its header repeats mid-stream.
            if input.get(pos..pos + 8) != Some(&XERIAL_MAGIC[..])
                || input.len() < pos + XERIAL_HEADER
            {
                return Err(CodecError::Corrupt(format!(
                    "xerial snappy: broken repeated header at byte {pos}"
                )));
            }
            pos += XERIAL_HEADER;
            continue;
        }
        let len = i32::from_be_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]]);
        let body = pos + 4;
        let Some(block) = usize::try_from(len)
            .ok()
            .and_then(|l| input.get(body..body.checked_add(l)?))
        else {
            return Err(CodecError::Corrupt(format!(
                "xerial snappy: chunk at byte {pos} declares {len} bytes, {} remain",
                input.len() - body
            )));
        };
        snappy_raw_into(&mut s, block, body)?;
        pos = body + block.len();
    }
    Ok(Decompressed {
        data: s.out,
        notes: vec!["snappy: xerial snappy-java stream framing".into()],
    })
}

/// Largest zstd window accepted: libzstd's own default limit, the one Kafka's zstd-jni
/// decoder applies, so every frame Kafka reads is read here too.
const ZSTD_WINDOW_LOG_MAX: u32 = 27;

thread_local! {
    /// One libzstd decoding context per thread, reused: creating one (and its window buffer)
    /// for every small batch would cost more than decoding it.
    static ZSTD_DCTX: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// zstd with the reference library (libzstd, as Kafka's zstd-jni), straight into the output
/// vector, which grows geometrically up to one byte past the cap.
fn zstd(input: &[u8], cap: (usize, &'static str)) -> Result<Decompressed, CodecError> {
    use zstd::zstd_safe::{get_error_name, DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};
    let mut s = Sink::new(cap);
    // zstd-jni's stream reads concatenated frames; libzstd's streaming decoder does too.
    if input.is_empty() {
        return Ok(Decompressed::default());
    }
    let corrupt = |at: usize, code: usize| {
        CodecError::Corrupt(format!("zstd at byte {at}: {}", get_error_name(code)))
    };
    ZSTD_DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = match slot.as_mut() {
            Some(d) => d,
            None => {
                let mut d = DCtx::try_create()
                    .ok_or_else(|| CodecError::Corrupt("zstd: no memory for a decoder".into()))?;
                d.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX))
                    .map_err(|c| corrupt(0, c))?;
                slot.insert(d)
            }
        };
        // A previous input may have ended mid-frame or in error.
        dctx.reset(ResetDirective::SessionOnly)
            .map_err(|c| corrupt(0, c))?;
        let limit = s.cap.saturating_add(1);
        let mut inb = InBuffer::around(input);
        loop {
            if s.out.len() == s.out.capacity() {
                if s.out.len() >= limit {
                    return Err(s.too_large());
                }
                let grow = (s.out.capacity().max(32 * 1024) * 2).min(limit) - s.out.len();
                crate::wire::tree::growth::note(grow);
                s.out.reserve_exact(grow);
            }
            let (in_before, out_before) = (inb.pos(), s.out.len());
            let mut outb = OutBuffer::around_pos(&mut s.out, out_before);
            let left = dctx
                .decompress_stream(&mut outb, &mut inb)
                .map_err(|c| corrupt(inb.pos(), c))?;
            let out_pos = outb.pos();
            if left == 0 && inb.pos() == input.len() {
                break;
            }
            if inb.pos() == in_before && out_pos == out_before && out_pos < s.out.capacity() {
                return Err(CodecError::Corrupt(format!(
                    "zstd: frame cut short at byte {}",
                    input.len()
                )));
            }
        }
        if s.out.len() > s.cap {
            return Err(s.too_large());
        }
        Ok(Decompressed {
            data: s.out,
            notes: Vec::new(),
        })
    })
}

const LZ4_MAGIC: u32 = 0x184D_2204;

fn lz4(input: &[u8], magic: i8, cap: (usize, &'static str)) -> Result<Decompressed, CodecError> {
    let mut s = Sink::new(cap);
    match s.read_from(lz4_flex::frame::FrameDecoder::new(input), "lz4") {
        Ok(()) => Ok(Decompressed {
            data: s.out,
            notes: Vec::new(),
        }),
        Err(CodecError::Corrupt(m)) if m.contains("HeaderChecksumError") => {
            // The KafkaLZ4 writer hashed the magic too; read the frame ourselves.
            let mut s = Sink::new(cap);
            let note = lz4_frame_by_hand(input, magic, &mut s)?;
            Ok(Decompressed {
                data: s.out,
                notes: vec![note],
            })
        }
        Err(e) => Err(e),
    }
}

fn xxh32(data: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(0, data)
}

/// Reads an LZ4 frame whose header checksum the library refused: checks it against both the
/// standard and the KafkaLZ4 (magic included) computations, then decodes the blocks.
fn lz4_frame_by_hand(input: &[u8], magic: i8, s: &mut Sink) -> Result<String, CodecError> {
    let bad = |m: String| CodecError::Corrupt(format!("lz4: {m}"));
    let get = |a: usize, n: usize| {
        input
            .get(a..a + n)
            .ok_or_else(|| bad(format!("frame cut short at byte {a}")))
    };
    let m = get(0, 4)?;
    if u32::from_le_bytes([m[0], m[1], m[2], m[3]]) != LZ4_MAGIC {
        return Err(bad("no LZ4 frame magic at byte 0".into()));
    }
    let flg = get(4, 1)?[0];
    if flg >> 6 != 1 {
        return Err(bad(format!(
            "frame version {} at byte 4, expected 1",
            flg >> 6
        )));
    }
    let independent = flg & 0x20 != 0;
    let block_checksum = flg & 0x10 != 0;
    let has_size = flg & 0x08 != 0;
    if flg & 0x01 != 0 {
        return Err(CodecError::Unsupported(
            "lz4 frame with a dictionary id".into(),
        ));
    }
    let hdr_end = 6 + if has_size { 8 } else { 0 };
    let hc = get(hdr_end, 1)?[0];
    let standard = ((xxh32(&input[4..hdr_end]) >> 8) & 0xff) as u8;
    let kafka = ((xxh32(&input[0..hdr_end]) >> 8) & 0xff) as u8;
    let note = if hc == kafka && magic == 0 {
        "lz4: KafkaLZ4 header checksum (computed over the magic too), as magic-0 writers produce"
            .to_string()
    } else if hc == kafka {
        format!("lz4: KafkaLZ4 header checksum (over the magic too) in a magic-{magic} batch; Kafka expects it only for magic 0")
    } else if hc != standard {
        format!("lz4: header checksum {hc:#04x} matches neither the standard ({standard:#04x}) nor the KafkaLZ4 ({kafka:#04x}) computation; decoded anyway as Kafka does for magic 0")
    } else {
        "lz4: frame read by hand".to_string()
    };
    let mut pos = hdr_end + 1;
    loop {
        let b = get(pos, 4)?;
        let word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        pos += 4;
        if word == 0 {
            break;
        }
        let size = (word & 0x7fff_ffff) as usize;
        let data = get(pos, size)?;
        if word & 0x8000_0000 != 0 {
            s.extend(data)?;
        } else {
            // Blocks decode to at most 4 MiB (the largest LZ4 block size).
            let room = (s.cap - s.out.len()).min(4 * 1024 * 1024);
            let start = s.out.len();
            let dict_from = if independent {
                start
            } else {
                start.saturating_sub(64 * 1024)
            };
            let mut block = vec![0u8; room];
            let n = lz4_flex::block::decompress_into_with_dict(
                data,
                &mut block,
                &s.out[dict_from..start],
            )
            .map_err(|e| bad(format!("block at byte {pos}: {e}")))?;
            s.extend(&block[..n])?;
        }
        pos += size;
        if block_checksum {
            let c = get(pos, 4)?;
            if u32::from_le_bytes([c[0], c[1], c[2], c[3]]) != xxh32(data) {
                return Err(bad(format!("block checksum at byte {pos} does not match")));
            }
            pos += 4;
        }
    }
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn cap() -> (usize, &'static str) {
        (MAX_DECOMPRESSED_BYTES, "test")
    }

    fn sample() -> Vec<u8> {
        (0..50_000u32)
            .flat_map(|i| format!("record {i} value {}\n", i % 97).into_bytes())
            .collect()
    }

    #[test]
    fn gzip_including_concatenated_members() {
        let data = sample();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&data[..1000]).unwrap();
        let mut z = e.finish().unwrap();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&data[1000..]).unwrap();
        z.extend(e.finish().unwrap());
        assert_eq!(decompress(Codec::Gzip, &z, 2, cap()).unwrap().data, data);
    }

    #[test]
    fn snappy_raw_and_xerial_with_repeated_header() {
        let data = sample();
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(
            decompress(Codec::Snappy, &raw, 2, cap()).unwrap().data,
            data
        );
        // xerial framing as snappy-java writes it: header, then length-prefixed raw blocks; a
        // second stream appended with its own header.
        let mut x = Vec::new();
        for part in [&data[..30_000], &data[30_000..]] {
            x.extend_from_slice(&XERIAL_MAGIC);
            x.extend_from_slice(&1i32.to_be_bytes());
            x.extend_from_slice(&1i32.to_be_bytes());
            for chunk in part.chunks(32 * 1024) {
                let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                x.extend_from_slice(&(c.len() as i32).to_be_bytes());
                x.extend_from_slice(&c);
            }
        }
        let d = decompress(Codec::Snappy, &x, 2, cap()).unwrap();
        assert_eq!(d.data, data);
        assert!(d.notes[0].contains("xerial"));
        // A chunk length past the end is corrupt, with its offset.
        let mut cut = x[..40].to_vec();
        cut[16..20].copy_from_slice(&1000i32.to_be_bytes());
        let e = decompress(Codec::Snappy, &cut, 2, cap()).unwrap_err();
        assert!(
            matches!(&e, CodecError::Corrupt(m) if m.contains("byte 16")),
            "{e}"
        );
    }

    #[test]
    fn lz4_frame_standard_and_kafka_broken_checksum() {
        let data = sample();
        let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
        e.write_all(&data).unwrap();
        let mut f = e.finish().unwrap();
        assert_eq!(decompress(Codec::Lz4, &f, 2, cap()).unwrap().data, data);
        // Rewrite the header checksum the way the KafkaLZ4 writer did: xxh32 over magic+FLG+BD.
        let hdr_end = if f[4] & 0x08 != 0 { 14 } else { 6 };
        f[hdr_end] = ((xxh32(&f[..hdr_end]) >> 8) & 0xff) as u8;
        let d = decompress(Codec::Lz4, &f, 0, cap()).unwrap();
        assert_eq!(d.data, data);
        assert!(d.notes[0].contains("KafkaLZ4"), "{:?}", d.notes);
    }

    #[test]
    fn zstd_concatenated_frames() {
        let data = sample();
        let mut z = ruzstd::encoding::compress_to_vec(
            &data[..7000],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        z.extend(ruzstd::encoding::compress_to_vec(
            &data[7000..],
            ruzstd::encoding::CompressionLevel::Fastest,
        ));
        assert_eq!(decompress(Codec::Zstd, &z, 2, cap()).unwrap().data, data);
    }

    /// The reused libzstd context: a cut-short frame, a frame declaring a window past
    /// Kafka's limit and a frame one byte over the cap are errors, never hangs, and none of
    /// them spoils the next input; output exactly at the cap is fine.
    #[test]
    fn zstd_edges_and_context_reuse() {
        let data = sample();
        let z = ruzstd::encoding::compress_to_vec(
            &data[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        for cut in [1, 5, z.len() / 2, z.len() - 1] {
            match decompress(Codec::Zstd, &z[..cut], 2, cap()) {
                Err(CodecError::Corrupt(m)) => assert!(m.starts_with("zstd"), "{m}"),
                other => panic!("cut at {cut}: {other:?}"),
            }
            assert_eq!(decompress(Codec::Zstd, &z, 2, cap()).unwrap().data, data);
        }
        // Frame header: magic, descriptor 0 (no content size, not single-segment), window
        // descriptor 0x90 = exponent 18 → 2^28 bytes, past the 2^27 limit.
        let wide = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x90, 0x01, 0x00, 0x00];
        assert!(matches!(
            decompress(Codec::Zstd, &wide, 2, cap()),
            Err(CodecError::Corrupt(_))
        ));
        let exact = (data.len(), "test cap");
        assert_eq!(decompress(Codec::Zstd, &z, 2, exact).unwrap().data, data);
        let under = (data.len() - 1, "test cap");
        assert!(matches!(
            decompress(Codec::Zstd, &z, 2, under),
            Err(CodecError::TooLarge { .. })
        ));
        assert_eq!(decompress(Codec::Zstd, &z, 2, cap()).unwrap().data, data);
    }

    #[test]
    fn decompression_bomb_is_capped_by_ratio() {
        // 32 MiB of zeros compresses to a few KiB: far past MAX_DECOMPRESSION_RATIO.
        let zeros = vec![0u8; 32 * 1024 * 1024];
        let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        g.write_all(&zeros).unwrap();
        let inputs = [
            (Codec::Gzip, g.finish().unwrap()),
            (
                Codec::Zstd,
                ruzstd::encoding::compress_to_vec(
                    &zeros[..],
                    ruzstd::encoding::CompressionLevel::Fastest,
                ),
            ),
        ];
        for (codec, z) in inputs {
            let c = output_cap(z.len(), 0);
            assert!(
                c.0 < zeros.len(),
                "{codec:?}: {} compressed bytes allow {}",
                z.len(),
                c.0
            );
            match decompress(codec, &z, 2, c) {
                Err(CodecError::TooLarge { which, .. }) => {
                    assert!(which.contains("RATIO"), "{codec:?}: {which}")
                }
                other => panic!("{codec:?}: expected a capped bomb, got {other:?}"),
            }
        }
    }

    #[test]
    fn lz4_bomb_is_capped_by_the_per_batch_limit() {
        // LZ4 tops out near 255:1, under the ratio cap, so 80 MiB of zeros meets the size cap.
        let zeros = vec![0u8; 80 * 1024 * 1024];
        let mut l = lz4_flex::frame::FrameEncoder::new(Vec::new());
        l.write_all(&zeros).unwrap();
        let z = l.finish().unwrap();
        let e = decompress(Codec::Lz4, &z, 2, output_cap(z.len(), 0)).unwrap_err();
        assert!(
            matches!(
                e,
                CodecError::TooLarge {
                    limit: MAX_DECOMPRESSED_BYTES,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn snappy_declaring_two_gib_is_refused_before_allocating() {
        // Snappy cannot exceed ~21:1, so its bomb is a block header declaring a huge length.
        let mut block = vec![0xff, 0xff, 0xff, 0xff, 0x07];
        block.extend_from_slice(&[0u8; 64]);
        let c = output_cap(block.len(), 0);
        let e = decompress(Codec::Snappy, &block, 2, c).unwrap_err();
        assert!(matches!(e, CodecError::TooLarge { .. }), "{e:?}");
    }

    #[test]
    fn per_tree_budget_applies_when_nearly_spent() {
        let c = output_cap(10_000, MAX_DECOMPRESSED_PER_TREE - 100);
        assert_eq!(
            c,
            (
                100,
                "limits::MAX_DECOMPRESSED_PER_TREE for one decoded message"
            )
        );
        let e = decompress(Codec::None, &[0u8; 101], 2, c).unwrap_err();
        assert!(matches!(e, CodecError::TooLarge { limit: 100, .. }));
    }

    #[test]
    fn garbage_is_corrupt_not_a_panic() {
        let junk: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
            for n in [0, 1, 4, 7, 16, 100, 4096] {
                // Either error is fine (junk may declare a huge length); decoding junk is not.
                let r = decompress(codec, &junk[..n], 2, cap());
                assert!(
                    n < 100 || r.is_err(),
                    "{codec:?} decoded {n} junk bytes: {r:?}"
                );
            }
        }
    }
}
