//! The `records` table's columns, encoded here rather than by the parquet crate: every one,
//! the two leaves of `headers` (a list of structs) with their repetition levels too.
//!
//! Record values are nearly all of a records table's bytes (697 of the 801 MB of JSON Lines the
//! benchmark capture makes), and the crate's column writer handles each one four times on the
//! writer's thread: copied into a page buffer grown by doubling, copied again into the page it
//! compresses, compressed into an output it first fills with zeros and grows, then copied into
//! the column chunk. The other columns went through Arrow builders on the decoding threads and
//! then through the crate's level, statistics and encoding work on the writer's, which set the
//! pace of the whole run. Here the rows' own thread writes each value once, PLAIN, into a page
//! of about [`PAGE_BYTES`] per column, keeps the column's min and max, and snappy-compresses the
//! page into a reused buffer while the bytes are still in its cache. The writer only lays the
//! finished pages out as column chunks ([`ColumnChunk::append_to`]), so that encoding and
//! compression run on both decoding threads and not on the writer's alone.
//!
//! The pages are Parquet data pages v2 (what the rest of the file uses too): for a leaf of a
//! list, repetition levels; for an optional column or a leaf of a list, definition levels; both
//! RLE-encoded and left uncompressed; then the PLAIN values snappy-compressed. Pages begin on row
//! boundaries; there are no page statistics. Column chunks have statistics (min, max, null count)
//! when their column asks for them: chunk-level only, no column index. The headers' leaves were
//! the last column the crate wrote from an Arrow list, and its level work for a table's every
//! row (nearly all with no header) was most of what the writer's thread did besides writing.

use super::rows::{from_parquet, other};
use crate::wire::cursor::put_uvarint;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::ByteArray;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::statistics::{Statistics, ValueStatistics};
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::ColumnDescPtr;
use std::io::{self, Read, Write};

/// A page is closed once its PLAIN values reach this many bytes (snappy compresses in blocks of
/// 64 KiB, so larger pages would compress no better and only leave the cache).
pub const PAGE_BYTES: usize = 64 << 10;

/// The page and compression buffers a thread keeps between pages (a page of ordinary values
/// fits; one grown past it by a single large value is let go).
const KEEP_BYTES: usize = 2 * PAGE_BYTES;

/// A byte-array min or max longer than this is cut to this length (the max then raised to stay
/// an upper bound), as the parquet crate does by default; the statistics then say they are not
/// exact.
const MAX_STAT_BYTES: usize = 64;

/// How a column's values are laid out PLAIN, and ordered for its statistics. The physical
/// types are those the parquet crate gives the Arrow types of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// BYTE_ARRAY (Binary): a 4-byte little-endian length, then the bytes; ordered bytewise,
    /// unsigned.
    Bytes,
    /// BYTE_ARRAY holding UTF-8 (Utf8): as [`Kind::Bytes`], but a min or max is cut on a
    /// character boundary.
    Str,
    /// INT32, signed (Int8, Int16, Int32).
    I32,
    /// INT64, signed (Int64, timestamps).
    I64,
    /// INT64 holding an unsigned 64-bit number (UInt64), ordered unsigned.
    U64,
    /// BOOLEAN: one bit per value, least significant first.
    Bool,
}

/// A column's min and max over some values, in its order (numbers widened to `i128`, which
/// orders signed and unsigned ones alike).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Bounds {
    #[default]
    Empty,
    Int(i128, i128),
    Bytes(Vec<u8>, Vec<u8>),
}

impl Kind {
    /// The kind the parquet crate's physical type for an Arrow type is (`None`: not one the
    /// pages write).
    pub fn of(t: &arrow_schema::DataType) -> Option<Kind> {
        use arrow_schema::DataType as T;
        Some(match t {
            T::Utf8 => Kind::Str,
            T::Binary => Kind::Bytes,
            T::Int8 | T::Int16 | T::Int32 => Kind::I32,
            T::Int64 | T::Timestamp(..) => Kind::I64,
            T::UInt64 => Kind::U64,
            T::Boolean => Kind::Bool,
            _ => return None,
        })
    }
}

impl Bounds {
    fn int(&mut self, v: i128) {
        match self {
            Bounds::Int(lo, hi) => {
                *lo = (*lo).min(v);
                *hi = (*hi).max(v);
            }
            _ => *self = Bounds::Int(v, v),
        }
    }

    fn bytes(&mut self, v: &[u8]) {
        match self {
            Bounds::Bytes(lo, hi) => {
                if v < lo.as_slice() {
                    lo.clear();
                    lo.extend_from_slice(v);
                } else if v > hi.as_slice() {
                    hi.clear();
                    hi.extend_from_slice(v);
                }
            }
            _ => *self = Bounds::Bytes(v.to_vec(), v.to_vec()),
        }
    }

    fn merge(&mut self, other: Bounds) {
        match other {
            Bounds::Empty => {}
            Bounds::Int(lo, hi) => {
                self.int(lo);
                self.int(hi);
            }
            Bounds::Bytes(lo, hi) => {
                self.bytes(&lo);
                self.bytes(&hi);
            }
        }
    }
}

/// One finished page: repetition levels (a leaf of a list), definition levels (an optional
/// column or a leaf of a list), then the compressed values.
pub struct EncodedPage {
    data: Bytes,
    rep_levels_len: u32,
    def_levels_len: u32,
    rows: u32,
    /// Level entries: the rows, for a column that is not in a list.
    values: u32,
    /// Entries without a value (defined below the column's maximum).
    nulls: u32,
    uncompressed: usize,
}

/// What a column's encoder hands the writer for a batch of rows: its pages, and the min/max and
/// nulls over them.
pub struct Paged {
    kind: Kind,
    stats: bool,
    /// The levels the pages have: the highest definition level, and whether there are
    /// repetition levels (checked against the schema's leaf).
    max_def: u8,
    repeated: bool,
    pages: Vec<EncodedPage>,
    bounds: Bounds,
    nulls: u64,
}

impl Paged {
    /// Rows in the pages.
    pub fn rows(&self) -> usize {
        self.pages.iter().map(|p| p.rows as usize).sum()
    }
}

/// A column's values being written into pages (on a decoding thread).
pub struct ColumnPages {
    kind: Kind,
    /// The definition level of a value: 0 for a required column (no levels written), 1 for an
    /// optional one, more for a leaf of a list.
    max_def: u8,
    /// A leaf of a list: the open page's repetition levels (0 begins a row, 1 goes on with it).
    reps: Option<Levels>,
    /// Whether min and max are kept.
    stats: bool,
    /// The open page's values, PLAIN.
    plain: Vec<u8>,
    /// The open page's definition levels, RLE runs as they come.
    levels: Levels,
    rows: u32,
    /// The open page's level entries (its rows, but in a list), and those without a value.
    entries: u32,
    nulls: u32,
    /// Booleans not yet packed into `plain`, and how many.
    bits: u8,
    nbits: u8,
    bounds: Bounds,
    batch_nulls: u64,
    /// Where snappy writes: grown once, reused for every page (never zero-filled again).
    scratch: Vec<u8>,
    snappy: snap::raw::Encoder,
    done: Vec<EncodedPage>,
    /// What went wrong, told by [`ColumnPages::finish`].
    failed: Option<String>,
}

/// A column that was never set up: [`ColumnPages::finish`] says so (a placeholder to assign).
impl Default for ColumnPages {
    fn default() -> ColumnPages {
        let mut c = ColumnPages::new(Kind::Bytes, true, false);
        c.fail("a column whose encoder was never set up".into());
        c
    }
}

impl ColumnPages {
    /// An encoder for a column of `kind`, nullable or not, with min/max statistics or not.
    pub fn new(kind: Kind, optional: bool, stats: bool) -> ColumnPages {
        ColumnPages {
            kind,
            max_def: u8::from(optional),
            reps: None,
            stats,
            plain: Vec::new(),
            levels: Levels::default(),
            rows: 0,
            entries: 0,
            nulls: 0,
            bits: 0,
            nbits: 0,
            bounds: Bounds::Empty,
            batch_nulls: 0,
            scratch: Vec::new(),
            snappy: snap::raw::Encoder::new(),
            done: Vec::new(),
            failed: None,
        }
    }

    /// An encoder for a leaf of a list (one level of repetition) whose values are defined at
    /// level `max_def`; see [`ColumnPages::push_entry`] and [`ColumnPages::push_no_entry`].
    pub fn in_list(kind: Kind, max_def: u8, stats: bool) -> ColumnPages {
        let mut c = ColumnPages::new(kind, true, stats);
        c.max_def = max_def;
        c.reps = Some(Levels::default());
        c
    }

    /// The highest definition level and repetition level of the pages (as a schema's leaf has
    /// them).
    #[cfg(test)]
    pub(super) fn levels(&self) -> (i16, i16) {
        (i16::from(self.max_def), i16::from(self.reps.is_some()))
    }

    /// Makes [`ColumnPages::finish`] fail with `why`.
    pub fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// `n` more rows, all null (`present` false) or all not.
    #[inline]
    fn rows(&mut self, present: bool, n: u32) {
        if self.max_def > 0 {
            if self.reps.is_some() {
                self.fail("a row pushed without its list's levels into a leaf of a list".into());
            }
            self.levels.push(u8::from(present), n);
        } else if !present {
            self.failed = Some("a null in a column that has none".into());
        }
        self.rows += n;
        self.entries += n;
        if !present {
            self.nulls += n;
            self.batch_nulls += u64::from(n);
        }
    }

    #[inline]
    fn after_row(&mut self) {
        if self.plain.len() >= PAGE_BYTES {
            self.end_page();
        }
    }

    /// How many of `n` rows of `each` PLAIN bytes go into the open page: those that take it to
    /// [`PAGE_BYTES`] (at least one), so that a run closes its pages where as many single rows
    /// would.
    #[inline]
    fn fit(&self, each: usize, n: u32) -> u32 {
        if n == 1 {
            return 1;
        }
        let room = PAGE_BYTES.saturating_sub(self.plain.len());
        (room.div_ceil(each.max(1)).clamp(1, n as usize)) as u32
    }

    /// Appends one row's bytes (`None`: null); for a [`Kind::Bytes`] or [`Kind::Str`] column.
    #[inline]
    pub fn push_bytes(&mut self, value: Option<&[u8]>) {
        self.push_bytes_n(value, 1);
    }

    /// Appends `n` rows of the same bytes (`None`: nulls).
    #[inline]
    pub fn push_bytes_n(&mut self, value: Option<&[u8]>, mut n: u32) {
        debug_assert!(matches!(self.kind, Kind::Bytes | Kind::Str));
        let Some(v) = value else {
            self.rows(false, n);
            return;
        };
        // A value is at most a frame's size, which the framer caps far below 4 GiB.
        let Ok(len) = u32::try_from(v.len()) else {
            self.failed = Some(format!("a value of {} bytes", v.len()));
            return;
        };
        if self.stats && n > 0 {
            self.bounds.bytes(v);
        }
        while n > 0 {
            let k = self.fit(4 + v.len(), n);
            self.rows(true, k);
            for _ in 0..k {
                self.plain.extend_from_slice(&len.to_le_bytes());
                self.plain.extend_from_slice(v);
            }
            n -= k;
            self.after_row();
        }
    }

    /// Appends `n` rows of the same string (`None`: nulls).
    #[inline]
    pub fn push_str_n(&mut self, value: Option<&str>, n: u32) {
        self.push_bytes_n(value.map(str::as_bytes), n);
    }

    /// Appends one row's number (`None`: null); for the integer kinds ([`Kind::U64`] takes the
    /// number's bits: `u64 as i64`).
    #[inline]
    pub fn push_int(&mut self, value: Option<i64>) {
        self.push_int_n(value, 1);
    }

    /// Appends `n` rows of the same number (`None`: nulls).
    #[inline]
    pub fn push_int_n(&mut self, value: Option<i64>, mut n: u32) {
        let Some(v) = value else {
            self.rows(false, n);
            return;
        };
        let (order, bytes, width) = match self.kind {
            Kind::I32 => (i128::from(v as i32), (v as i32 as i64).to_le_bytes(), 4),
            Kind::U64 => (i128::from(v as u64), v.to_le_bytes(), 8),
            _ => (i128::from(v), v.to_le_bytes(), 8),
        };
        if self.stats && n > 0 {
            self.bounds.int(order);
        }
        while n > 0 {
            let k = self.fit(width, n);
            self.rows(true, k);
            // Each width a copy of a length known here, not a call to copy a slice.
            for _ in 0..k {
                if width == 4 {
                    self.plain.extend_from_slice(&bytes[..4]);
                } else {
                    self.plain.extend_from_slice(&bytes);
                }
            }
            n -= k;
            self.after_row();
        }
    }

    /// Appends `n` rows of the same boolean (`None`: nulls).
    #[inline]
    pub fn push_bool_n(&mut self, value: Option<bool>, n: u32) {
        debug_assert_eq!(self.kind, Kind::Bool);
        let Some(b) = value else {
            self.rows(false, n);
            return;
        };
        if self.stats && n > 0 {
            self.bounds.int(i128::from(b));
        }
        // Bit-packed values fill a page eight times more slowly than any other column's: one
        // row at a time, as they come.
        for _ in 0..n {
            self.rows(true, 1);
            self.bits |= u8::from(b) << self.nbits;
            self.nbits += 1;
            if self.nbits == 8 {
                self.plain.push(self.bits);
                (self.bits, self.nbits) = (0, 0);
            }
            self.after_row();
        }
    }

    /// One entry of a list in a leaf of it ([`ColumnPages::in_list`]): `first` when it begins
    /// its row; its value (bytes) when `def` is the column's maximum, else a null defined to
    /// level `def` (the struct around it, say).
    pub fn push_entry(&mut self, first: bool, def: u8, value: Option<&[u8]>) {
        debug_assert!(matches!(self.kind, Kind::Bytes | Kind::Str));
        if first && self.plain.len() >= PAGE_BYTES {
            self.end_page();
        }
        let Some(reps) = &mut self.reps else {
            self.fail("an entry of a list in a column not in one".into());
            return;
        };
        reps.push(u8::from(!first), 1);
        self.levels.push(def, 1);
        self.rows += u32::from(first);
        self.entries += 1;
        match value.filter(|_| def == self.max_def) {
            Some(v) => {
                let Ok(len) = u32::try_from(v.len()) else {
                    self.fail(format!("a value of {} bytes", v.len()));
                    return;
                };
                self.plain.extend_from_slice(&len.to_le_bytes());
                self.plain.extend_from_slice(v);
                if self.stats {
                    self.bounds.bytes(v);
                }
            }
            None => {
                self.nulls += 1;
                self.batch_nulls += 1;
            }
        }
    }

    /// `n` rows without an entry in a leaf of a list: an empty (or null) list, at level `def`.
    pub fn push_no_entry(&mut self, def: u8, n: u32) {
        if self.plain.len() >= PAGE_BYTES {
            self.end_page();
        }
        let Some(reps) = &mut self.reps else {
            self.fail("a list in a column not in one".into());
            return;
        };
        reps.push(0, n);
        self.levels.push(def, n);
        self.rows += n;
        self.entries += n;
        self.nulls += n;
        self.batch_nulls += u64::from(n);
    }

    fn end_page(&mut self) {
        if self.entries == 0 {
            return;
        }
        if self.nbits > 0 {
            self.plain.push(self.bits);
            (self.bits, self.nbits) = (0, 0);
        }
        let need = snap::raw::max_compress_len(self.plain.len());
        if self.scratch.len() < need {
            self.scratch.resize(need, 0);
        }
        let n = match self.snappy.compress(&self.plain, &mut self.scratch) {
            Ok(n) => n,
            Err(e) => {
                self.failed = Some(format!("snappy: {e}"));
                0
            }
        };
        let reps = self.reps.as_mut().map_or(&[][..], Levels::finish);
        let levels = self.levels.finish();
        let mut data = Vec::with_capacity(reps.len() + levels.len() + n);
        data.extend_from_slice(reps);
        let rep_levels_len = data.len();
        data.extend_from_slice(levels);
        let def_levels_len = data.len() - rep_levels_len;
        data.extend_from_slice(&self.scratch[..n]);
        self.done.push(EncodedPage {
            uncompressed: rep_levels_len + def_levels_len + self.plain.len(),
            data: Bytes::from(data),
            rep_levels_len: rep_levels_len as u32,
            def_levels_len: def_levels_len as u32,
            rows: self.rows,
            values: self.entries,
            nulls: self.nulls,
        });
        self.plain.clear();
        self.levels.clear();
        (self.rows, self.entries, self.nulls) = (0, 0, 0);
        if let Some(r) = &mut self.reps {
            r.clear();
        }
        // A page holding one huge value grew these to its size: not kept for the ordinary pages
        // that follow.
        if self.scratch.len() > KEEP_BYTES {
            self.scratch = Vec::new();
        }
        self.plain.shrink_to(KEEP_BYTES);
    }

    /// Closes the open page and hands over every finished one, with their bounds.
    pub fn finish(&mut self) -> io::Result<Paged> {
        self.end_page();
        let paged = Paged {
            kind: self.kind,
            stats: self.stats,
            max_def: self.max_def,
            repeated: self.reps.is_some(),
            pages: std::mem::take(&mut self.done),
            bounds: std::mem::take(&mut self.bounds),
            nulls: std::mem::take(&mut self.batch_nulls),
        };
        match self.failed.take() {
            Some(e) => Err(other(e)),
            None => Ok(paged),
        }
    }
}

/// The longest run one RLE header can say (`length << 1` in a `u32`).
const MAX_RUN: u32 = u32::MAX >> 1;

/// Definition levels of bit width 1 in Parquet's RLE/bit-packing hybrid, as RLE runs only, kept
/// as they come: each run a ULEB128 header (`length << 1`, low bit 0 for RLE) and the level in
/// one byte. Data pages v2 store the levels without a length prefix. A row adds to the open run
/// (a compare and an add), and a batch's rows of one value make one run at once.
#[derive(Default)]
struct Levels {
    /// The runs closed so far.
    out: Vec<u8>,
    /// The open run: its level, and its length (0: none).
    level: u8,
    run: u32,
}

impl Levels {
    /// `n` more levels `level`.
    #[inline]
    fn push(&mut self, level: u8, n: u32) {
        if level == self.level && n <= MAX_RUN - self.run {
            self.run += n;
        } else {
            self.push_new(level, n);
        }
    }

    /// A run of another level, or one its header could not say.
    #[cold]
    fn push_new(&mut self, level: u8, mut n: u32) {
        if level == self.level {
            let more = MAX_RUN - self.run;
            self.run += more;
            n -= more;
        }
        while n > 0 {
            self.close();
            self.level = level;
            self.run = n.min(MAX_RUN);
            n -= self.run;
        }
    }

    fn close(&mut self) {
        if self.run > 0 {
            put_uvarint(&mut self.out, self.run << 1);
            self.out.push(self.level);
            self.run = 0;
        }
    }

    /// Every run, encoded.
    fn finish(&mut self) -> &[u8] {
        self.close();
        &self.out
    }

    fn clear(&mut self) {
        self.out.clear();
        self.run = 0;
    }
}

/// A min cut to at most [`MAX_STAT_BYTES`] (on a character boundary when `utf8`): a prefix is
/// never larger. With whether it is the whole value.
fn cut_min(v: &[u8], utf8: bool) -> (Vec<u8>, bool) {
    if v.len() <= MAX_STAT_BYTES {
        return (v.to_vec(), true);
    }
    (v[..boundary(v, MAX_STAT_BYTES, utf8)].to_vec(), false)
}

/// A max cut to at most [`MAX_STAT_BYTES`] and raised so that it stays above every value it
/// bounds: the last byte (character, when `utf8`) that can grow without changing its width is
/// incremented and what follows dropped. A max that cannot be raised is kept whole.
fn cut_max(v: &[u8], utf8: bool) -> (Vec<u8>, bool) {
    if v.len() <= MAX_STAT_BYTES {
        return (v.to_vec(), true);
    }
    let cut = &v[..boundary(v, MAX_STAT_BYTES, utf8)];
    let raised = match std::str::from_utf8(cut).ok().filter(|_| utf8) {
        Some(text) => text.char_indices().rev().find_map(|(i, c)| {
            let next = char::from_u32(u32::from(c) + 1).filter(|n| n.len_utf8() == c.len_utf8())?;
            let mut out = cut[..i].to_vec();
            let mut buf = [0u8; 4];
            out.extend_from_slice(next.encode_utf8(&mut buf).as_bytes());
            Some(out)
        }),
        None => cut.iter().rposition(|&b| b < u8::MAX).map(|i| {
            let mut out = cut[..=i].to_vec();
            out[i] += 1;
            out
        }),
    };
    match raised {
        Some(r) => (r, false),
        None => (v.to_vec(), true),
    }
}

/// The largest cut of `v` at most `len` bytes long (on a UTF-8 character boundary when `utf8`
/// and `v` is UTF-8).
fn boundary(v: &[u8], len: usize, utf8: bool) -> usize {
    if !utf8 || std::str::from_utf8(v).is_err() {
        return len;
    }
    // UTF-8 continuation bytes are 0b10xx_xxxx: a character begins at any other byte.
    (0..=len)
        .rev()
        .find(|&i| v.get(i).is_none_or(|&b| b & 0xc0 != 0x80))
        .unwrap_or(0)
}

/// The pages of one row group's column, as the writer gathers them from batches.
pub struct ColumnChunk {
    kind: Kind,
    stats: bool,
    max_def: u8,
    repeated: bool,
    pages: Vec<EncodedPage>,
    bounds: Bounds,
    nulls: u64,
    bytes: usize,
}

impl ColumnChunk {
    /// A chunk beginning with `paged`.
    pub fn new(paged: Paged) -> ColumnChunk {
        let mut c = ColumnChunk {
            kind: paged.kind,
            stats: paged.stats,
            max_def: paged.max_def,
            repeated: paged.repeated,
            pages: Vec::new(),
            bounds: Bounds::Empty,
            nulls: 0,
            bytes: 0,
        };
        c.extend(paged);
        c
    }

    pub fn extend(&mut self, paged: Paged) {
        self.bytes += paged.pages.iter().map(|p| p.data.len()).sum::<usize>();
        self.pages.extend(paged.pages);
        self.bounds.merge(paged.bounds);
        self.nulls += paged.nulls;
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The chunk's statistics, as the parquet crate writes them: min and max in the column's
    /// order (also in the deprecated fields when the order is signed), and the null count.
    fn statistics(&self, signed: bool) -> Option<Statistics> {
        // (The crate's value-type trait is sealed: a macro, not a generic function.)
        macro_rules! make {
            ($lo:expr, $hi:expr, $nulls:expr, $signed:expr $(,)?) => {
                Statistics::from(
                    ValueStatistics::new($lo, $hi, None, Some($nulls), false)
                        .with_backwards_compatible_min_max($signed),
                )
            };
        }
        if !self.stats {
            return None;
        }
        let (lo, hi) = match &self.bounds {
            Bounds::Int(lo, hi) => (Some(*lo), Some(*hi)),
            _ => (None, None),
        };
        let n = self.nulls;
        Some(match self.kind {
            Kind::I32 => make!(lo.map(|v| v as i32), hi.map(|v| v as i32), n, signed),
            Kind::I64 => make!(lo.map(|v| v as i64), hi.map(|v| v as i64), n, signed),
            Kind::U64 => make!(
                lo.map(|v| v as u64 as i64),
                hi.map(|v| v as u64 as i64),
                n,
                signed,
            ),
            Kind::Bool => make!(lo.map(|v| v != 0), hi.map(|v| v != 0), n, signed),
            Kind::Bytes | Kind::Str => {
                let utf8 = self.kind == Kind::Str;
                let (lo, hi) = match &self.bounds {
                    Bounds::Bytes(lo, hi) => (Some(cut_min(lo, utf8)), Some(cut_max(hi, utf8))),
                    _ => (None, None),
                };
                let exact = |b: &Option<(Vec<u8>, bool)>| b.as_ref().is_none_or(|b| b.1);
                let (lo_exact, hi_exact) = (exact(&lo), exact(&hi));
                let stats = ValueStatistics::new(
                    lo.map(|b| ByteArray::from(b.0)),
                    hi.map(|b| ByteArray::from(b.0)),
                    None,
                    Some(n),
                    false,
                )
                .with_backwards_compatible_min_max(signed)
                .with_min_is_exact(lo_exact)
                .with_max_is_exact(hi_exact);
                Statistics::from(stats)
            }
        })
    }

    /// Lays the pages out as the column chunk of `descr` (each page's header, then its bytes)
    /// and appends it to the row group, whose next column must be this one. The pages are not
    /// gathered into one buffer first: the row group copies them from where they are into the
    /// file.
    pub fn append_to<W: Write + Send>(
        self,
        descr: ColumnDescPtr,
        group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> io::Result<()> {
        let levels = (i16::from(self.max_def), i16::from(self.repeated));
        if levels != (descr.max_def_level(), descr.max_rep_level()) {
            return Err(other(format!(
                "pages of {} with levels up to {levels:?} (definition, repetition), where the schema has {:?}",
                descr.path(),
                (descr.max_def_level(), descr.max_rep_level())
            )));
        }
        let statistics = self.statistics(descr.sort_order().is_signed());
        let (mut rows, mut values, mut compressed, mut uncompressed) = (0i64, 0i64, 0i64, 0i64);
        let mut locations = Vec::with_capacity(self.pages.len());
        let mut pieces = Vec::with_capacity(self.pages.len());
        for p in self.pages {
            let header = page_header(&p)?;
            let size = header.len() + p.data.len();
            locations.push(PageLocation {
                offset: compressed,
                compressed_page_size: i32::try_from(size)
                    .map_err(|_| other("a page of more than 2 GiB"))?,
                first_row_index: rows,
            });
            rows += i64::from(p.rows);
            values += i64::from(p.values);
            compressed += size as i64;
            uncompressed += (header.len() + p.uncompressed) as i64;
            pieces.push((header, p.data));
        }
        let mut metadata = ColumnChunkMetaData::builder(descr)
            .set_compression(Compression::SNAPPY)
            .set_encodings(vec![Encoding::PLAIN, Encoding::RLE])
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(values)
            .set_data_page_offset(0);
        if let Some(s) = statistics {
            metadata = metadata.set_statistics(s);
        }
        let metadata = metadata.build().map_err(from_parquet)?;
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: rows as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            // The crate's other columns have an offset index: so must this one.
            offset_index: Some(OffsetIndexMetaData {
                page_locations: locations,
                unencoded_byte_array_data_bytes: None,
            }),
        };
        let rope = Rope {
            pieces: &pieces,
            len: compressed as u64,
        };
        group.append_column(&rope, close).map_err(from_parquet)
    }
}

/// A page's header: Thrift's compact encoding of Parquet's `PageHeader` for a `DATA_PAGE_V2`
/// (a unit test checks it against the parquet crate's own page writer).
fn page_header(p: &EncodedPage) -> io::Result<Vec<u8>> {
    let int = |n: usize| i32::try_from(n).map_err(|_| other("a page of more than 2 GiB"));
    let mut h = Vec::with_capacity(64);
    // Field header: (id delta << 4) | type, types 5 = i32, 12 = struct, 1 = bool true.
    let i32_field = |h: &mut Vec<u8>, v: i32| {
        h.push(0x15);
        put_uvarint(h, ((v << 1) ^ (v >> 31)) as u32);
    };
    i32_field(&mut h, 3); // 1: type = DATA_PAGE_V2
    i32_field(&mut h, int(p.uncompressed)?); // 2: uncompressed_page_size
    i32_field(&mut h, int(p.data.len())?); // 3: compressed_page_size (levels and values)
    h.push(0x5c); // 8: data_page_header_v2 (struct, id 3 + 5)
    i32_field(&mut h, int(p.values as usize)?); // 1: num_values (level entries)
    i32_field(&mut h, int(p.nulls as usize)?); // 2: num_nulls
    i32_field(&mut h, int(p.rows as usize)?); // 3: num_rows
    i32_field(&mut h, 0); // 4: encoding = PLAIN
    i32_field(&mut h, int(p.def_levels_len as usize)?); // 5: definition_levels_byte_length
    i32_field(&mut h, int(p.rep_levels_len as usize)?); // 6: repetition_levels_byte_length
    h.push(0x11); // 7: is_compressed = true
    h.push(0); // end of DataPageHeaderV2
    h.push(0); // end of PageHeader
    Ok(h)
}

/// A column chunk as its pieces (page headers and page bytes), read in order.
struct Rope<'a> {
    pieces: &'a [(Vec<u8>, Bytes)],
    len: u64,
}

impl Length for Rope<'_> {
    fn len(&self) -> u64 {
        self.len
    }
}

impl<'a> ChunkReader for Rope<'a> {
    type T = RopeRead<'a>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<RopeRead<'a>> {
        let mut r = RopeRead {
            pieces: self.pieces,
            piece: 0,
            at: 0,
        };
        io::copy(&mut (&mut r).take(start), &mut io::sink())?;
        Ok(r)
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let mut out = Vec::with_capacity(length);
        self.get_read(start)?
            .take(length as u64)
            .read_to_end(&mut out)?;
        Ok(Bytes::from(out))
    }
}

/// Reads a [`Rope`]: piece `piece` (header and bytes as one), `at` bytes into it.
struct RopeRead<'a> {
    pieces: &'a [(Vec<u8>, Bytes)],
    piece: usize,
    at: usize,
}

impl Read for RopeRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let Some((header, data)) = self.pieces.get(self.piece) else {
                break;
            };
            let part: &[u8] = if self.at < header.len() {
                &header[self.at..]
            } else {
                &data[self.at - header.len()..]
            };
            let take = part.len().min(buf.len() - n);
            buf[n..n + take].copy_from_slice(&part[..take]);
            n += take;
            self.at += take;
            if self.at == header.len() + data.len() {
                self.piece += 1;
                self.at = 0;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels given one at a time or as runs are the same RLE runs.
    fn levels(runs: &[(u8, u32)]) -> Vec<u8> {
        let mut l = Levels::default();
        for &(level, n) in runs {
            l.push(level, n);
        }
        l.finish().to_vec()
    }

    #[test]
    fn levels_are_rle_runs() {
        assert_eq!(
            levels(&[(1, 1), (1, 1), (1, 1), (0, 1), (1, 1)]),
            [6, 1, 2, 0, 2, 1]
        );
        assert_eq!(
            levels(&[(1, 2), (1, 1), (0, 1), (1, 1)]),
            [6, 1, 2, 0, 2, 1]
        );
        // A run that starts with level 0 (the open run's level before any push).
        assert_eq!(levels(&[(0, 3), (1, 1)]), [6, 0, 2, 1]);
        // 200 ones: a header of two ULEB128 bytes (400 = 0b1_1001_0000).
        assert_eq!(levels(&[(1, 150), (1, 50)]), [0x90, 0x03, 1]);
        // A run longer than a header can say goes on in a second run.
        let mut want = Vec::new();
        put_uvarint(&mut want, MAX_RUN << 1);
        want.push(1);
        want.extend([4, 1]);
        assert_eq!(levels(&[(1, MAX_RUN - 1), (1, 3)]), want);
        assert_eq!(levels(&[(1, MAX_RUN), (1, 2)]), want);
        // Cleared, the levels start again.
        let mut l = Levels::default();
        l.push(1, 5);
        l.clear();
        l.push(0, 1);
        assert_eq!(l.finish(), [2, 0]);
    }

    /// Rows pushed as runs make the same pages, bounds and nulls as the same rows pushed one by
    /// one, in every kind, across page ends.
    #[test]
    fn runs_are_the_rows_one_by_one() {
        let long = vec![b'x'; 3000];
        /// A run: bytes, number or boolean (per the kind; `None`: nulls), and its length.
        type Run<'a> = (Option<&'a [u8]>, Option<i64>, Option<bool>, u32);
        let cases: [(Kind, &[Run]); 4] = [
            (
                Kind::Bytes,
                &[
                    (Some(b"ab"), None, None, 7),
                    (None, None, None, 3),
                    (Some(&long), None, None, 40),
                    (Some(b""), None, None, 2),
                ],
            ),
            (
                Kind::I32,
                &[
                    (None, Some(-5), None, 40_000),
                    (None, None, None, 9),
                    (None, Some(7), None, 1),
                ],
            ),
            (
                Kind::U64,
                &[(None, Some(-1), None, 9_000), (None, Some(3), None, 2)],
            ),
            (
                Kind::Bool,
                &[
                    (None, None, Some(true), 600_000),
                    (None, None, None, 2),
                    (None, None, Some(false), 11),
                ],
            ),
        ];
        for (kind, rows) in cases {
            let (mut one, mut run) = (
                ColumnPages::new(kind, true, true),
                ColumnPages::new(kind, true, true),
            );
            for &(bytes, int, bool, n) in rows {
                for _ in 0..n {
                    match kind {
                        Kind::Bytes | Kind::Str => one.push_bytes(bytes),
                        Kind::Bool => one.push_bool_n(bool, 1),
                        _ => one.push_int(int),
                    }
                }
                match kind {
                    Kind::Bytes | Kind::Str => run.push_bytes_n(bytes, n),
                    Kind::Bool => run.push_bool_n(bool, n),
                    _ => run.push_int_n(int, n),
                }
            }
            let (one, run) = (one.finish().unwrap(), run.finish().unwrap());
            assert!(one.pages.len() > 1, "{kind:?}: the rows make several pages");
            assert_eq!(one.pages.len(), run.pages.len(), "{kind:?}");
            for (a, b) in one.pages.iter().zip(&run.pages) {
                assert_eq!(a.data, b.data, "{kind:?}");
                assert_eq!(
                    (a.rows, a.nulls, a.def_levels_len, a.uncompressed),
                    (b.rows, b.nulls, b.def_levels_len, b.uncompressed),
                    "{kind:?}"
                );
            }
            assert_eq!((one.bounds, one.nulls), (run.bounds, run.nulls), "{kind:?}");
        }
    }

    /// The header written here is the one the parquet crate's page writer writes for the same
    /// page, and the page follows it.
    #[test]
    fn page_headers_are_the_parquet_crates() {
        use parquet::column::page::{CompressedPage, Page, PageWriter};
        use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
        let mut p = ColumnPages::new(Kind::Bytes, true, false);
        for i in 0..300u32 {
            let v = i.to_string().repeat(i as usize % 7);
            p.push_bytes((i % 5 != 0).then_some(v.as_bytes()));
        }
        // A leaf of a list: 100 rows of 0 to 3 entries, some null.
        let mut l = ColumnPages::in_list(Kind::Bytes, 3, false);
        for i in 0..100u32 {
            match i % 4 {
                0 => l.push_no_entry(0, 1),
                n => {
                    for e in 0..n {
                        let def = if e == 1 { 2 } else { 3 };
                        l.push_entry(e == 0, def, Some(i.to_string().as_bytes()));
                    }
                }
            }
        }
        let flat = p.finish().unwrap().pages.remove(0);
        let list = l.finish().unwrap().pages.remove(0);
        assert_eq!((flat.rows, flat.values, flat.nulls), (300, 300, 60));
        // 25 empty lists and 50 null entries; 25 * (1 + 2 + 3) entries and empty lists.
        assert_eq!((list.rows, list.values, list.nulls), (100, 175, 75));
        assert!(list.rep_levels_len > 0 && flat.rep_levels_len == 0);
        for page in [flat, list] {
            let mut sink = TrackedWrite::new(Vec::new());
            {
                let mut w = SerializedPageWriter::new(&mut sink);
                let theirs = Page::DataPageV2 {
                    buf: page.data.clone(),
                    num_values: page.values,
                    encoding: Encoding::PLAIN,
                    num_nulls: page.nulls,
                    num_rows: page.rows,
                    def_levels_byte_len: page.def_levels_len,
                    rep_levels_byte_len: page.rep_levels_len,
                    is_compressed: true,
                    statistics: None,
                };
                w.write_page(CompressedPage::new(theirs, page.uncompressed))
                    .unwrap();
                w.close().unwrap();
            }
            let theirs = sink.into_inner().unwrap();
            let mut ours = page_header(&page).unwrap();
            ours.extend_from_slice(&page.data);
            assert_eq!(ours, theirs);
        }
        // And the rope reads the pieces back in order, from any start.
        let pieces = vec![
            (b"ab".to_vec(), Bytes::from_static(b"cde")),
            (b"f".to_vec(), Bytes::from_static(b"gh")),
        ];
        let rope = Rope {
            pieces: &pieces,
            len: 8,
        };
        let mut all = Vec::new();
        rope.get_read(0).unwrap().read_to_end(&mut all).unwrap();
        assert_eq!(all, b"abcdefgh");
        assert_eq!(&rope.get_bytes(3, 4).unwrap()[..], b"defg");
    }

    #[test]
    fn long_min_and_max_are_cut_to_bounds() {
        let long = "a".repeat(70);
        assert_eq!(
            cut_min(long.as_bytes(), true),
            ("a".repeat(64).into_bytes(), false)
        );
        assert_eq!(
            cut_max(long.as_bytes(), true),
            (format!("{}b", "a".repeat(63)).into_bytes(), false)
        );
        assert_eq!(cut_max(b"short", true), (b"short".to_vec(), true));
        // A two-byte character across byte 64 is not split: cut before it; the max raises the
        // character before the cut.
        let s = format!("{}é{}", "x".repeat(63), "y".repeat(9));
        assert_eq!(cut_min(s.as_bytes(), true).0, "x".repeat(63).into_bytes());
        assert_eq!(
            cut_max(s.as_bytes(), true).0,
            format!("{}y", "x".repeat(62)).into_bytes()
        );
        // Bytes that cannot be raised stay whole; binary is cut anywhere and raised bytewise.
        let ff = vec![0xff; 70];
        assert_eq!(cut_max(&ff, false), (ff.clone(), true));
        let mut b = vec![0x10; 64];
        b.extend([0xff; 6]);
        let mut want = vec![0x10; 63];
        want.push(0x11);
        assert_eq!(cut_max(&b, false), (want, false));
        // Unsigned order: the largest u64 is the max, written as its bits.
        let mut c = ColumnPages::new(Kind::U64, true, true);
        c.push_int(Some(1));
        c.push_int(Some(u64::MAX as i64));
        c.push_int(None);
        let chunk = ColumnChunk::new(c.finish().unwrap());
        match chunk.statistics(false) {
            Some(Statistics::Int64(v)) => {
                assert_eq!(
                    (v.min_opt(), v.max_opt(), v.null_count_opt()),
                    (Some(&1), Some(&-1), Some(1))
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_page_closes_past_its_size_and_rows_are_counted_with_their_nulls() {
        let mut p = ColumnPages::new(Kind::Bytes, true, false);
        let big = vec![7u8; 4 * PAGE_BYTES];
        p.push_bytes(Some(b"a"));
        p.push_bytes(None);
        p.push_bytes(Some(&big));
        p.push_bytes(None);
        let pages = p.finish().unwrap().pages;
        assert_eq!(pages.len(), 2);
        assert_eq!((pages[0].rows, pages[0].nulls), (3, 1));
        assert_eq!((pages[1].rows, pages[1].nulls), (1, 1));
        // The large value's room is not kept.
        assert!(p.plain.capacity() <= KEEP_BYTES && p.scratch.len() <= KEEP_BYTES);
        // Levels 1, 0, 1: three runs of two bytes.
        assert_eq!(pages[0].uncompressed, 6 + (4 + 1) + (4 + 4 * PAGE_BYTES));
    }

    /// Rows pushed into a leaf of a list without the list's levels, and list entries pushed
    /// into a column not in a list, fail the column instead of making pages a reader would
    /// misread.
    #[test]
    fn a_row_without_the_columns_levels_fails_the_column() {
        let mut l = ColumnPages::in_list(Kind::Bytes, 3, false);
        l.push_bytes(Some(b"x"));
        assert!(l.finish().is_err());
        let mut l = ColumnPages::in_list(Kind::I64, 3, false);
        l.push_int_n(None, 3);
        assert!(l.finish().is_err());
        let mut flat = ColumnPages::new(Kind::Bytes, true, false);
        flat.push_entry(true, 1, Some(b"x"));
        assert!(flat.finish().is_err());
        let mut flat = ColumnPages::new(Kind::Bytes, true, false);
        flat.push_no_entry(0, 2);
        assert!(flat.finish().is_err());
    }

    /// A list of structs written as pages of its two leaves (repetition and definition levels)
    /// reads back, through the parquet crate's Arrow reader, as the list Arrow's builders make
    /// of the same rows: empty lists, one and several entries, null values, across pages.
    #[test]
    fn a_list_in_pages_reads_back_as_the_list() {
        use arrow_array::builder::{BinaryBuilder, ListBuilder, StringBuilder, StructBuilder};
        use arrow_array::{Array, ArrayRef};
        use arrow_schema::{DataType, Field, Fields, Schema};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::arrow::ArrowSchemaConverter;
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use std::sync::Arc;
        let fields = Fields::from(vec![
            Field::new("key", DataType::Utf8, true),
            Field::new("value", DataType::Binary, true),
        ]);
        let item = Field::new("item", DataType::Struct(fields.clone()), true);
        let schema = Schema::new(vec![Field::new("h", DataType::List(Arc::new(item)), false)]);
        let big = vec![b'v'; 30_000];
        /// A header: its key and value (`None`: null).
        type Header<'a> = (&'a str, Option<&'a [u8]>);
        let rows: Vec<Vec<Header>> = (0..40)
            .map(|i| match i % 5 {
                0 => vec![],
                1 => vec![("a", Some(&b"1"[..]))],
                2 => vec![("b", None), ("c", Some(&big[..])), ("d", Some(&b""[..]))],
                3 => vec![("e", Some(&big[..i]))],
                _ => vec![],
            })
            .collect();
        let (mut key, mut value) = (
            ColumnPages::in_list(Kind::Str, 3, true),
            ColumnPages::in_list(Kind::Bytes, 3, false),
        );
        let mut want = ListBuilder::new(StructBuilder::from_fields(fields, 0));
        for row in &rows {
            for (i, (k, v)) in row.iter().enumerate() {
                key.push_entry(i == 0, 3, Some(k.as_bytes()));
                value.push_entry(i == 0, if v.is_some() { 3 } else { 2 }, *v);
                let s = want.values();
                s.field_builder::<StringBuilder>(0).unwrap().append_value(k);
                s.field_builder::<BinaryBuilder>(1)
                    .unwrap()
                    .append_option(*v);
                s.append(true);
            }
            if row.is_empty() {
                key.push_no_entry(0, 1);
                value.push_no_entry(0, 1);
            }
            want.append(true);
        }
        let want: ArrayRef = Arc::new(want.finish());
        let (key, value) = (key.finish().unwrap(), value.finish().unwrap());
        assert!(value.pages.len() >= 3, "the values fill several pages");
        let descr = ArrowSchemaConverter::new().convert(&schema).unwrap();
        let mut file = Vec::new();
        let mut w = SerializedFileWriter::new(
            &mut file,
            descr.root_schema_ptr(),
            Arc::new(WriterProperties::builder().build()),
        )
        .unwrap();
        let mut g = w.next_row_group().unwrap();
        ColumnChunk::new(key)
            .append_to(Arc::clone(&descr.columns()[0]), &mut g)
            .unwrap();
        ColumnChunk::new(value)
            .append_to(Arc::clone(&descr.columns()[1]), &mut g)
            .unwrap();
        g.close().unwrap();
        w.close().unwrap();
        let read = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(file))
            .unwrap()
            .with_batch_size(rows.len())
            .build()
            .unwrap();
        let got: Vec<ArrayRef> = read.map(|b| Arc::clone(b.unwrap().column(0))).collect();
        assert_eq!(got.len(), 1, "one batch of every row");
        assert_eq!(got[0].to_data(), want.to_data());
    }
}
