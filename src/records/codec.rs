//! Decompression of record data: gzip, snappy (raw and the xerial snappy-java framing), LZ4
//! frames ([`lz4`]: as Kafka's reader takes them, the KafkaLZ4 header checksum of magic-0
//! messages included) and zstd.
//!
//! Every codec writes through [`Sink`], which enforces the one output cap computed by
//! [`output_cap`] from `crate::limits`; a decompression bomb therefore ends as
//! [`CodecError::TooLarge`] after at most the cap has been allocated, never as an OOM.

mod lz4;

use crate::limits::{MAX_DECOMPRESSED_BYTES, MAX_DECOMPRESSED_PER_TREE, MAX_DECOMPRESSION_RATIO};

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
        Codec::Lz4 => lz4::lz4(input, magic, cap),
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

    /// Makes room for `n` more bytes (which the caller checked fit the cap): doubling, as a
    /// vector grows, but never past the cap, so that what the sink holds stays within it (a
    /// vector left to grow itself could reserve twice the cap), telling the thread's growth
    /// hook what that allocates.
    fn make_room(&mut self, n: usize) {
        let want = self.out.len().saturating_add(n);
        if want > self.out.capacity() {
            let grown = self
                .out
                .capacity()
                .saturating_mul(2)
                .max(want)
                .max(4096)
                .min(self.cap.max(want));
            self.reserve_exact(grown - self.out.len());
        }
    }

    /// Room for `n` more bytes, or the cap error.
    fn room(&self, n: usize) -> Result<(), CodecError> {
        if self.out.len().saturating_add(n) > self.cap {
            return Err(self.too_large());
        }
        Ok(())
    }

    /// Reserves room for exactly `n` more bytes, telling the growth hook what that allocates
    /// (what [`Sink::make_room`] tells for amortized growth). Callers keep `n` within the cap.
    fn reserve_exact(&mut self, n: usize) {
        let extra = self
            .out
            .len()
            .saturating_add(n)
            .saturating_sub(self.out.capacity());
        if extra > 0 {
            crate::wire::tree::growth::note(extra);
            self.out.reserve_exact(n);
        }
    }

    fn extend(&mut self, b: &[u8]) -> Result<(), CodecError> {
        self.room(b.len())?;
        self.make_room(b.len());
        self.out.extend_from_slice(b);
        Ok(())
    }
}

thread_local! {
    /// One raw-deflate inflater per thread, reset for every gzip member: a fresh one allocates
    /// and zero-fills tens of KiB of state, more than inflating a small batch costs.
    static INFLATE: std::cell::RefCell<Option<flate2::Decompress>> =
        const { std::cell::RefCell::new(None) };
}

/// gzip (RFC 1952) read by hand around flate2's raw inflater, straight into the output vector,
/// accepting what Kafka's reader accepts: `java.util.zip.GZIPInputStream` over the batch's
/// bytes with an 8 KiB input buffer (`compress/GzipCompression.java:70`), read to its end
/// (`record/DefaultRecordBatch.java:645-651`). Members are read one after another; what follows
/// the last member is Java's to judge ([`gzip_members`]); a member cut short anywhere is an
/// error.
fn gzip(input: &[u8], cap: (usize, &'static str)) -> Result<Decompressed, CodecError> {
    let mut s = Sink::new(cap);
    let mut notes = Vec::new();
    let mut fresh = None;
    let reused = INFLATE.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => Some(gzip_members(
            input,
            &mut s,
            slot.get_or_insert_with(|| flate2::Decompress::new(false)),
            &mut notes,
        )),
        Err(_) => None,
    });
    match reused {
        Ok(Some(r)) => r?,
        // The thread's inflater is gone (thread exit) or in use: a one-off one.
        _ => gzip_members(
            input,
            &mut s,
            fresh.get_or_insert_with(|| flate2::Decompress::new(false)),
            &mut notes,
        )?,
    }
    Ok(Decompressed { data: s.out, notes })
}

const GZIP_FHCRC: u8 = 0x02;
const GZIP_FEXTRA: u8 = 0x04;
const GZIP_FNAME: u8 = 0x08;
const GZIP_FCOMMENT: u8 = 0x10;
const GZIP_FRESERVED: u8 = 0xe0;

/// The input buffer Kafka gives `GZIPInputStream` (`compress/GzipCompression.java:70`): it
/// reads the compressed bytes this many at a time, which decides what it makes of bytes after
/// a member (see [`gzip_members`]).
const JAVA_GZIP_BUFFER: usize = 8 * 1024;

/// The most a deflate stream expands: a 258-byte match costs at least 2 bits, so at most this
/// many output bytes per input byte.
const DEFLATE_MAX_RATIO: usize = 1032;

fn gzip_error(member: usize, what: String) -> CodecError {
    CodecError::Corrupt(format!("gzip member at byte {member}: {what}"))
}

/// Every member of `input` onto the sink, and after the last one what Java's `GZIPInputStream`
/// (JDK 8 to 21, `readTrailer`) does: once a member's trailer checks out, it looks for another
/// member only when bytes remain unread in the stream or more than 26 are left in its buffer
/// (the trailer's 8 and 18 more); it then reads a member header there, and a header it cannot
/// read (wrong magic, method, cut short) ends the stream without error: those bytes are
/// ignored. Bytes it does not look at are ignored too. A header it can read starts a member
/// that must then be whole. Java reads the first header straight from the stream and fills its
/// buffer [`JAVA_GZIP_BUFFER`] bytes at a time from wherever it stopped reading, so where its
/// buffer ends is known from the offsets alone. Ignored bytes and reserved header flags (which
/// Java does not check) are told in `notes`.
fn gzip_members(
    input: &[u8],
    s: &mut Sink,
    d: &mut flate2::Decompress,
    notes: &mut Vec<String>,
) -> Result<(), CodecError> {
    let len = input.len();
    let mut m = 0;
    let mut body = gzip_header(input, m)?;
    let mut reserved_told = reserved_flags(input, m, notes);
    // Bytes Java has taken from the underlying stream: the first header was read from it.
    let mut taken = body;
    loop {
        let start = s.out.len();
        let end = gzip_inflate(input, m, body, s, d)?;
        // Java's buffer at the end of the deflate data: filled from `taken` until it held the
        // data's last byte.
        let filled = if end <= taken {
            taken
        } else {
            let reads = (end - taken).div_ceil(JAVA_GZIP_BUFFER);
            taken
                .saturating_add(reads.saturating_mul(JAVA_GZIP_BUFFER))
                .min(len)
        };
        let in_buffer = filled - end;
        let Some(t) = input.get(end..end + 8) else {
            return Err(gzip_error(
                m,
                format!(
                    "trailer (CRC-32, ISIZE) cut short: 8 bytes expected at byte {end}, {} remain",
                    len - end
                ),
            ));
        };
        let data = &s.out[start..];
        let (crc, size) = (
            u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
            u32::from_le_bytes([t[4], t[5], t[6], t[7]]),
        );
        let actual = crc32fast::hash(data);
        if crc != actual {
            return Err(gzip_error(
                m,
                format!(
                    "CRC-32 {crc:#010x} at byte {end} does not match the decompressed data's {actual:#010x}"
                ),
            ));
        }
        if size != data.len() as u32 {
            return Err(gzip_error(
                m,
                format!(
                    "ISIZE {size} at byte {} does not match the {} decompressed bytes (mod 2^32)",
                    end + 4,
                    data.len()
                ),
            ));
        }
        let next = end + 8;
        taken = taken.max(filled).max(next);
        if next == len {
            return Ok(());
        }
        let left = len - next;
        if taken == len && in_buffer <= 26 {
            notes.push(format!(
                "gzip: {left} bytes after the member ending at byte {next} are ignored, as Kafka's \
                 reader (java.util.zip.GZIPInputStream) does not look at so few"
            ));
            return Ok(());
        }
        match gzip_header(input, next) {
            Ok(b) => {
                reserved_told = reserved_told || reserved_flags(input, next, notes);
                (m, body) = (next, b);
                taken = taken.max(b);
            }
            Err(e) => {
                notes.push(format!(
                    "gzip: {left} bytes after the member ending at byte {next} are not another \
                     member and are ignored, as Kafka's reader (java.util.zip.GZIPInputStream) \
                     ignores them ({e})"
                ));
                return Ok(());
            }
        }
    }
}

/// Notes reserved flag bits in the member header at `m`: RFC 1952 says to refuse the member;
/// Java (so Kafka) does not look at them. True when it noted them: the caller tells only the
/// first member that sets them, so that a batch of many tiny members makes one note, not one
/// per member.
fn reserved_flags(input: &[u8], m: usize, notes: &mut Vec<String>) -> bool {
    let Some(flg) = input
        .get(m + 3)
        .map(|f| f & GZIP_FRESERVED)
        .filter(|&f| f != 0)
    else {
        return false;
    };
    notes.push(format!(
        "gzip member at byte {m}: reserved flag bits {flg:#04x} set at byte {} (RFC 1952 \
         says to refuse it; Kafka's reader, java.util.zip.GZIPInputStream, ignores them; \
         later members are not told)",
        m + 3
    ));
    true
}

/// Checks the member header at `m`; returns where its deflate data starts.
fn gzip_header(input: &[u8], m: usize) -> Result<usize, CodecError> {
    let need = |at: usize, n: usize, what: &str| {
        input.get(at..at.saturating_add(n)).ok_or_else(|| {
            gzip_error(
                m,
                format!(
                    "{what} cut short: {n} bytes expected at byte {at}, {} remain",
                    input.len().saturating_sub(at)
                ),
            )
        })
    };
    let rest = input.get(m..).unwrap_or(&[]);
    if rest.first().is_some_and(|&b| b != 0x1f) || rest.get(1).is_some_and(|&b| b != 0x8b) {
        let found: Vec<String> = rest.iter().take(2).map(|b| format!("{b:02x}")).collect();
        return Err(gzip_error(
            m,
            format!("expected the gzip magic 1f 8b, found {}", found.join(" ")),
        ));
    }
    let h = need(m, 10, "header")?;
    if h[2] != 8 {
        return Err(gzip_error(
            m,
            format!(
                "compression method {} at byte {}, expected 8 (deflate)",
                h[2],
                m + 2
            ),
        ));
    }
    let flg = h[3];
    let mut p = m + 10;
    if flg & GZIP_FEXTRA != 0 {
        let x = need(p, 2, "FEXTRA length")?;
        let xlen = u16::from_le_bytes([x[0], x[1]]) as usize;
        need(p + 2, xlen, "FEXTRA field")?;
        p += 2 + xlen;
    }
    for (bit, what) in [(GZIP_FNAME, "FNAME"), (GZIP_FCOMMENT, "FCOMMENT")] {
        if flg & bit != 0 {
            let field = input.get(p..).unwrap_or(&[]);
            let Some(nul) = field.iter().position(|&b| b == 0) else {
                return Err(gzip_error(
                    m,
                    format!(
                        "{what} at byte {p} cut short: no terminating zero byte before the end at byte {}",
                        input.len()
                    ),
                ));
            };
            p += nul + 1;
        }
    }
    if flg & GZIP_FHCRC != 0 {
        let c = need(p, 2, "FHCRC")?;
        let stored = u16::from_le_bytes([c[0], c[1]]);
        let actual = crc32fast::hash(&input[m..p]) as u16;
        if stored != actual {
            return Err(gzip_error(
                m,
                format!(
                    "header CRC-16 {stored:#06x} at byte {p} does not match the header's {actual:#06x}"
                ),
            ));
        }
        p += 2;
    }
    Ok(p)
}

/// Inflates the raw deflate data of the member at `m`, which starts at `body`, onto the sink;
/// returns where the data ends (the trailer's offset). Stops with the cap error as soon as
/// the output passes the cap, as reading it through `Sink::read_from` did.
fn gzip_inflate(
    input: &[u8],
    m: usize,
    body: usize,
    s: &mut Sink,
    d: &mut flate2::Decompress,
) -> Result<usize, CodecError> {
    use flate2::{FlushDecompress, Status};
    let data = &input[body..];
    let start = s.out.len();
    let room = s.cap.saturating_sub(start);
    // A single member ends the input with its ISIZE: if it fits, reserve that once and let
    // the inflater write the whole member in one call, with no window copy. Any surprise (a
    // lying ISIZE, more members, a corrupt stream) is redone by the general loop below.
    let hint = input
        .len()
        .checked_sub(4)
        .map(|i| u32::from_le_bytes([input[i], input[i + 1], input[i + 2], input[i + 3]]) as usize);
    if let Some(hint) =
        hint.filter(|&h| h > 0 && h <= room && h <= data.len().saturating_mul(DEFLATE_MAX_RATIO))
    {
        d.reset(false);
        s.reserve_exact(hint);
        let r = d.decompress_vec(data, &mut s.out, FlushDecompress::Finish);
        if let Ok(Status::StreamEnd) = r {
            if s.out.len() > s.cap {
                return Err(s.too_large());
            }
            return Ok(body + d.total_in() as usize);
        }
        s.out.truncate(start);
    }
    d.reset(false);
    let limit = s.cap.saturating_add(1);
    loop {
        if s.out.len() == s.out.capacity() {
            let next = (s.out.capacity().saturating_mul(2))
                .max(32 * 1024)
                .min(limit);
            if next <= s.out.len() {
                return Err(s.too_large());
            }
            s.reserve_exact(next - s.out.len());
        }
        let (in_before, out_before) = (d.total_in(), s.out.len());
        let consumed = in_before as usize;
        let r = d.decompress_vec(&data[consumed..], &mut s.out, FlushDecompress::None);
        let at = body + d.total_in() as usize;
        match r {
            Err(_) => {
                return Err(gzip_error(
                    m,
                    format!(
                        "corrupt deflate data (the inflater stopped at byte {at}, {} bytes into the data starting at byte {body})",
                        at - body
                    ),
                ))
            }
            Ok(_) if s.out.len() > s.cap => return Err(s.too_large()),
            Ok(Status::StreamEnd) => return Ok(at),
            Ok(_) => {
                if d.total_in() == in_before
                    && s.out.len() == out_before
                    && s.out.len() < s.out.capacity()
                {
                    return Err(gzip_error(
                        m,
                        if at == input.len() {
                            format!(
                                "deflate data cut short: the input ends at byte {at} before the last block"
                            )
                        } else {
                            format!("the inflater made no progress at byte {at}")
                        },
                    ));
                }
            }
        }
    }
}

const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER: usize = 16;

fn snappy_raw_into(s: &mut Sink, block: &[u8], at: usize) -> Result<(), CodecError> {
    let n = snap::raw::decompress_len(block)
        .map_err(|e| CodecError::Corrupt(format!("snappy block at byte {at}: {e}")))?;
    // The declared length is checked before anything is allocated for it.
    s.room(n)?;
    let start = s.out.len();
    s.make_room(n);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    pub(super) fn cap() -> (usize, &'static str) {
        (MAX_DECOMPRESSED_BYTES, "test")
    }

    pub(super) fn sample() -> Vec<u8> {
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

    /// flate2's own gzip reader (the one this codec used before), as the oracle.
    fn gzip_oracle(z: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(z), &mut out).ok()?;
        Some(out)
    }

    fn gzip_member(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Hard-to-compress bytes (an LCG) mixed with runs and text, so blocks of every kind occur.
    pub(super) fn mixed(n: usize) -> Vec<u8> {
        let mut x = 0x1234_5678u32;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                match (i / 4096) % 3 {
                    0 => (x >> 24) as u8,
                    1 => b"record value "[i % 13],
                    _ => 0,
                }
            })
            .collect()
    }

    /// The gzip reader called directly, not through `decompress` (which turns a panic into an
    /// error), so that a panic fails the tests that use it.
    fn gunzip(z: &[u8], cap: usize) -> Result<Vec<u8>, CodecError> {
        gzip(z, (cap, "test cap")).map(|d| d.data)
    }

    /// The error for `bad`, which flate2 must refuse too.
    fn refused(bad: &[u8]) -> String {
        assert!(gzip_oracle(bad).is_none());
        gunzip(bad, MAX_DECOMPRESSED_BYTES).unwrap_err().to_string()
    }

    #[test]
    fn gzip_round_trips_every_size_like_flate2() {
        for n in [
            0,
            1,
            2,
            100,
            32 * 1024,
            64 * 1024 + 1,
            1_000_000,
            5 * 1024 * 1024 + 7,
        ] {
            let data = mixed(n);
            for level in [0, 1, 6, 9] {
                let z = gzip_member(&data, level);
                let got = gunzip(&z, MAX_DECOMPRESSED_BYTES).unwrap();
                assert_eq!(got, data, "{n} bytes, level {level}");
                assert_eq!(gzip_oracle(&z).as_deref(), Some(&got[..]));
            }
        }
    }

    /// Several members, the first larger than the last's ISIZE (so not read in one go), the
    /// last empty, and members whose sizes the last ISIZE overstates.
    #[test]
    fn gzip_several_members_of_every_shape() {
        let data = mixed(300_000);
        let shapes: [&[usize]; 5] = [
            &[0, 0],
            &[200_000, 100, 0],
            &[10, 290_000],
            &[1, 1, 1, 1],
            &[100_000, 100_000, 100_000],
        ];
        for sizes in shapes {
            let (mut z, mut want, mut at) = (Vec::new(), Vec::new(), 0);
            for &n in sizes {
                z.extend(gzip_member(&data[at..at + n], 6));
                want.extend_from_slice(&data[at..at + n]);
                at += n;
            }
            assert_eq!(
                gunzip(&z, MAX_DECOMPRESSED_BYTES).unwrap(),
                want,
                "{sizes:?}"
            );
            assert_eq!(gzip_oracle(&z), Some(want), "{sizes:?}");
        }
    }

    /// A member with FTEXT, FEXTRA, FNAME, FCOMMENT and FHCRC, built by hand around raw
    /// deflate data from flate2's encoder.
    fn gzip_by_hand(data: &[u8], flg: u8) -> Vec<u8> {
        let mut z = vec![0x1f, 0x8b, 8, flg, 0x78, 0x56, 0x34, 0x12, 2, 3];
        if flg & GZIP_FEXTRA != 0 {
            z.extend_from_slice(&6u16.to_le_bytes());
            z.extend_from_slice(b"AB\x02\x00hi");
        }
        if flg & GZIP_FNAME != 0 {
            z.extend_from_slice(b"batch.bin\0");
        }
        if flg & GZIP_FCOMMENT != 0 {
            z.extend_from_slice(b"a comment\0");
        }
        if flg & GZIP_FHCRC != 0 {
            let c = crc32fast::hash(&z) as u16;
            z.extend_from_slice(&c.to_le_bytes());
        }
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        z.extend(e.finish().unwrap());
        z.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
        z.extend_from_slice(&(data.len() as u32).to_le_bytes());
        z
    }

    #[test]
    fn gzip_headers_with_every_optional_field() {
        let data = sample();
        for flg in 0..32u8 {
            let z = gzip_by_hand(&data, flg);
            assert_eq!(
                gunzip(&z, MAX_DECOMPRESSED_BYTES).unwrap(),
                data,
                "FLG {flg:#x}"
            );
            assert_eq!(gzip_oracle(&z).as_ref(), Some(&data), "FLG {flg:#x}");
        }
        let all = GZIP_FEXTRA | GZIP_FNAME | GZIP_FCOMMENT | GZIP_FHCRC;
        let z = gzip_by_hand(&data, all);
        let hcrc = 10 + 2 + 6 + 10 + 10;
        let mut bad = z.clone();
        bad[hcrc] ^= 1;
        let e = refused(&bad);
        assert!(
            e.contains("CRC-16 ") && e.contains(&format!("at byte {hcrc}")),
            "{e}"
        );
        // Reserved flag bits: RFC 1952 refuses them, Java (so Kafka) reads on; told in a note.
        let mut odd = gzip_by_hand(&data, all & !GZIP_FHCRC);
        odd[3] |= 0x20;
        let d = decompress(Codec::Gzip, &odd, 2, cap()).unwrap();
        assert_eq!(d.data, data);
        assert!(
            d.notes[0].contains("reserved flag bits 0x20 set at byte 3"),
            "{:?}",
            d.notes
        );
        // A batch of many such members: one note, not one per member.
        let mut tiny = gzip_by_hand(&data[..100], 0);
        tiny[3] |= 0x40;
        let many: Vec<u8> = (0..1000).flat_map(|_| tiny.clone()).collect();
        let d = decompress(Codec::Gzip, &many, 2, cap()).unwrap();
        assert_eq!(d.data.len(), 1000 * 100);
        assert_eq!(d.notes.len(), 1, "{:?}", &d.notes[..d.notes.len().min(3)]);
        // Another method, no magic: refused, with where and what.
        for (at, v, says) in [
            (2, 7, "compression method 7 at byte 2, expected 8"),
            (1, 0x8c, "expected the gzip magic 1f 8b, found 1f 8c"),
        ] {
            let mut bad = z.clone();
            bad[at] = v;
            let e = refused(&bad);
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn gzip_wrong_crc_or_isize_is_corrupt_with_its_offset() {
        let data = sample();
        let z = gzip_member(&data, 6);
        let t = z.len() - 8;
        for (at, says) in [
            (t, "CRC-32 ".to_string()),
            (t + 4, format!("ISIZE {} at byte {}", data.len() ^ 1, t + 4)),
        ] {
            let mut bad = z.clone();
            bad[at] ^= 1;
            let e = refused(&bad);
            assert!(
                e.contains(&says) && e.contains(&format!("byte {at}")),
                "{e}"
            );
            // The thread's inflater is fine afterwards.
            assert_eq!(gunzip(&z, MAX_DECOMPRESSED_BYTES).unwrap(), data);
        }
        // ISIZE is modulo 2^32; a member declaring 2^32 more bytes is still wrong.
        let mut bad = z.clone();
        bad[t + 4..].copy_from_slice(&((data.len() as u32).wrapping_add(1)).to_le_bytes());
        assert!(gunzip(&bad, MAX_DECOMPRESSED_BYTES).is_err());
    }

    /// Every prefix of a member is an error, as flate2 says too: only the end of a member is a
    /// place to stop. (What a cut second member is, Java decides: `tests/it/gzip_java.rs`.)
    #[test]
    fn gzip_cut_at_every_byte_is_an_error_like_flate2() {
        let data = sample();
        let mut z = gzip_member(&data[..3000], 6);
        let first = z.len();
        z.extend(gzip_by_hand(
            &data[3000..3100],
            GZIP_FEXTRA | GZIP_FNAME | GZIP_FCOMMENT | GZIP_FHCRC,
        ));
        for cut in 0..first {
            let got = gunzip(&z[..cut], MAX_DECOMPRESSED_BYTES);
            let want = gzip_oracle(&z[..cut]);
            assert!(want.is_none(), "flate2 accepted a cut at {cut}");
            match got {
                Err(CodecError::Corrupt(m)) => {
                    assert!(m.starts_with("gzip member at byte "), "{m}")
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        assert_eq!(
            gunzip(&z[..first], MAX_DECOMPRESSED_BYTES).unwrap(),
            data[..3000]
        );
        assert_eq!(gunzip(&z, MAX_DECOMPRESSED_BYTES).unwrap(), data[..3100]);
    }

    /// A flipped bit anywhere in a member: accepted or refused exactly as flate2 does, but for
    /// the reserved header flags, which Java does not look at.
    #[test]
    fn gzip_flipped_bits_are_judged_like_flate2() {
        let data = mixed(20_000);
        let z = gzip_member(&data, 6);
        for at in 0..z.len() {
            for bit in [0x01, 0x80] {
                let mut bad = z.clone();
                bad[at] ^= bit;
                let got = gunzip(&bad, MAX_DECOMPRESSED_BYTES).ok();
                let want = match (at, bit) {
                    (3, 0x80) => Some(data.clone()),
                    _ => gzip_oracle(&bad),
                };
                assert_eq!(got, want, "bit {bit:#x} of byte {at}");
            }
        }
    }

    /// Bytes after the last member, as Java's GZIPInputStream judges them (a member of less
    /// than 8 KiB: all of it is in Java's buffer): up to 18 are not looked at; more that do not
    /// start with a readable member header are ignored; a readable header starts a member that
    /// must be whole. flate2 refuses all of these.
    #[test]
    fn gzip_trailing_bytes_are_judged_as_java_judges_them() {
        let data = sample()[..3000].to_vec();
        let z = gzip_member(&data, 6);
        assert!(z.len() < JAVA_GZIP_BUFFER);
        let header = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
        let mut header_and_junk = header.to_vec();
        header_and_junk.extend_from_slice(&[0xff; 12]);
        let eighteen = [
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3, 4, 5, 6, 7, 8,
        ];
        for (tail, ignored) in [
            (&[0u8][..], true),
            (&[0; 8], true),
            (&[0x1f], true),
            (&[0x1f, 0x8b, 8], true),
            (b"junk after it", true),
            // A header and 8 bytes that cannot be a member: 18 bytes, not looked at.
            (&eighteen, true),
            (&[0; 19], true),
            (&[0x1f; 40], true),
            (&header_and_junk, false),
        ] {
            let mut t = z.clone();
            t.extend_from_slice(tail);
            assert!(gzip_oracle(&t).is_none(), "{tail:?}");
            let got = decompress(Codec::Gzip, &t, 2, cap());
            if ignored {
                let d = got.unwrap();
                assert_eq!(d.data, data, "{tail:?}");
                let says = format!(
                    "{} bytes after the member ending at byte {}",
                    tail.len(),
                    z.len()
                );
                assert!(d.notes.iter().any(|n| n.contains(&says)), "{:?}", d.notes);
            } else {
                let e = got.unwrap_err().to_string();
                assert!(
                    e.contains(&format!("gzip member at byte {}", z.len())),
                    "{e}"
                );
            }
        }
        assert!(gunzip(&[], MAX_DECOMPRESSED_BYTES).is_err());
        assert!(gzip_oracle(&[]).is_none());
    }

    /// Output of exactly the cap is fine, one byte more is the cap error, whether the member
    /// is read in one go or in steps, and whichever member crosses it.
    #[test]
    fn gzip_cap_hit_exactly_and_by_one_byte() {
        let data = mixed(200_000);
        let one = gzip_member(&data, 6);
        let mut two = gzip_member(&data[..150_000], 6);
        two.extend(gzip_member(&data[150_000..], 6));
        let mut big_last = gzip_member(&data[..10], 6);
        big_last.extend(gzip_member(&data[10..], 6));
        for z in [&one, &two, &big_last] {
            assert_eq!(gunzip(z, data.len()).unwrap(), data);
            for under in [1, 2, 100, 50_000, 199_990, data.len()] {
                match gunzip(z, data.len() - under) {
                    Err(CodecError::TooLarge { limit, .. }) => {
                        assert_eq!(limit, data.len() - under)
                    }
                    other => panic!("cap {}: {other:?}", data.len() - under),
                }
            }
        }
        // An empty member fits a cap of 0; one byte does not.
        assert_eq!(gunzip(&gzip_member(&[], 6), 0).unwrap(), b"");
        assert!(matches!(
            gunzip(&gzip_member(b"x", 6), 0),
            Err(CodecError::TooLarge { limit: 0, .. })
        ));
    }

    /// Output gathered block by block (xerial snappy, lz4 frames, uncompressed) never holds
    /// more than the cap, however its growth by doubling falls: 2^k + 1 bytes used to reserve
    /// 2^(k+1).
    #[test]
    fn output_never_reserves_past_its_cap() {
        let data = sample();
        for len in [4097, 32 * 1024 + 1, 100_001, 512 * 1024 + 1] {
            let part = &data[..len.min(data.len())];
            let mut x = Vec::new();
            x.extend_from_slice(&XERIAL_MAGIC);
            x.extend_from_slice(&1i32.to_be_bytes());
            x.extend_from_slice(&1i32.to_be_bytes());
            for chunk in part.chunks(1000) {
                let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
                x.extend_from_slice(&(c.len() as i32).to_be_bytes());
                x.extend_from_slice(&c);
            }
            let lz4 = {
                let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
                e.write_all(part).unwrap();
                e.finish().unwrap()
            };
            for (codec, input) in [
                (Codec::Snappy, &x),
                (Codec::Lz4, &lz4),
                (Codec::None, &part.to_vec()),
            ] {
                let d = decompress(codec, input, 2, (part.len(), "test cap")).unwrap();
                assert_eq!(d.data, part, "{codec:?}");
                assert!(
                    d.data.capacity() <= part.len(),
                    "{codec:?}: {} bytes reserved for a cap of {}",
                    d.data.capacity(),
                    part.len()
                );
            }
        }
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
