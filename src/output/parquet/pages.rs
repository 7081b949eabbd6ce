//! The `value` column of the `records` table, encoded here rather than by the parquet crate.
//!
//! Record values are nearly all of a records table's bytes (697 of the 801 MB of JSON Lines the
//! benchmark capture makes), and the crate's column writer handles each one four times on the
//! writer's thread: copied into a page buffer grown by doubling, copied again into the page it
//! compresses, compressed into an output it first fills with zeros and grows, then copied into
//! the column chunk. Here the rows' own thread writes each value once, PLAIN, into a page of
//! about [`PAGE_BYTES`], and snappy-compresses the page into a reused buffer while the bytes are
//! still in its cache. The writer only lays the finished pages out as a column chunk
//! ([`ValueChunk::append_to`]), so that compression runs on both decoding threads and not on
//! the writer's alone.
//!
//! The pages are Parquet data pages v2 (what the rest of the file uses too): definition levels
//! (the column is optional, max level 1) RLE-encoded and left uncompressed, then the PLAIN values
//! (a 4-byte little-endian length before each value's bytes) snappy-compressed. Pages begin on row
//! boundaries; there are no repetition levels and no statistics (nobody filters on min/max of
//! payloads).

use super::rows::other;
use crate::wire::cursor::put_uvarint;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::SerializedRowGroupWriter;
use parquet::schema::types::ColumnDescPtr;
use std::io::{self, Read, Write};

/// A page is closed once its PLAIN values reach this many bytes (snappy compresses in blocks of
/// 64 KiB, so larger pages would compress no better and only leave the cache).
pub const PAGE_BYTES: usize = 64 << 10;

/// The page and compression buffers a thread keeps between pages (a page of ordinary values
/// fits; one grown past it by a single large value is let go).
const KEEP_BYTES: usize = 2 * PAGE_BYTES;

/// One finished page: definition levels, then the compressed values.
pub struct EncodedPage {
    data: Bytes,
    def_levels_len: u32,
    rows: u32,
    nulls: u32,
    uncompressed: usize,
}

/// Values being written into pages (on a decoding thread).
pub struct ValuePages {
    /// The open page's values, PLAIN.
    plain: Vec<u8>,
    /// The open page's definition levels, one byte (0 null, 1 present) per row.
    levels: Vec<u8>,
    nulls: u32,
    /// Where snappy writes: grown once, reused for every page (never zero-filled again).
    scratch: Vec<u8>,
    snappy: snap::raw::Encoder,
    done: Vec<EncodedPage>,
    /// What went wrong, told by [`ValuePages::finish`].
    failed: Option<String>,
}

impl Default for ValuePages {
    fn default() -> Self {
        ValuePages {
            plain: Vec::with_capacity(KEEP_BYTES),
            levels: Vec::new(),
            nulls: 0,
            scratch: Vec::new(),
            snappy: snap::raw::Encoder::new(),
            done: Vec::new(),
            failed: None,
        }
    }
}

impl ValuePages {
    /// Appends one row's value (`None`: null).
    pub fn push(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                // A value is at most a frame's size, which the framer caps far below 4 GiB.
                let Ok(len) = u32::try_from(v.len()) else {
                    self.failed = Some(format!("a record value of {} bytes", v.len()));
                    return;
                };
                self.levels.push(1);
                self.plain.extend_from_slice(&len.to_le_bytes());
                self.plain.extend_from_slice(v);
            }
            None => {
                self.levels.push(0);
                self.nulls += 1;
            }
        }
        if self.plain.len() >= PAGE_BYTES {
            self.end_page();
        }
    }

    fn end_page(&mut self) {
        if self.levels.is_empty() {
            return;
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
        let mut data = Vec::with_capacity(levels_bound(self.levels.len()) + n);
        rle_levels(&self.levels, &mut data);
        let def_levels_len = data.len();
        data.extend_from_slice(&self.scratch[..n]);
        self.done.push(EncodedPage {
            uncompressed: def_levels_len + self.plain.len(),
            data: Bytes::from(data),
            def_levels_len: def_levels_len as u32,
            rows: self.levels.len() as u32,
            nulls: self.nulls,
        });
        self.plain.clear();
        self.levels.clear();
        self.nulls = 0;
        // A page holding one huge value grew these to its size: not kept for the ordinary pages
        // that follow.
        if self.scratch.len() > KEEP_BYTES {
            self.scratch = Vec::new();
        }
        self.plain.shrink_to(KEEP_BYTES);
    }

    /// Closes the open page and hands over every finished one.
    pub fn finish(&mut self) -> io::Result<Vec<EncodedPage>> {
        self.end_page();
        let pages = std::mem::take(&mut self.done);
        match self.failed.take() {
            Some(e) => Err(other(e)),
            None => Ok(pages),
        }
    }
}

/// The most bytes [`rle_levels`] writes for `n` levels: a run of one level each, two bytes.
fn levels_bound(n: usize) -> usize {
    2 * n
}

/// Definition levels of bit width 1 in Parquet's RLE/bit-packing hybrid, as RLE runs only: each
/// run a ULEB128 header (`length << 1`, low bit 0 for RLE) and the level in one byte. Data pages
/// v2 store the levels without a length prefix.
fn rle_levels(levels: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while let Some(&level) = levels.get(i) {
        // A run as long as its header can say; a longer one goes on in the next run.
        let run = levels[i..]
            .iter()
            .take(u32::MAX as usize >> 1)
            .take_while(|&&l| l == level)
            .count();
        put_uvarint(out, (run as u32) << 1);
        out.push(level);
        i += run;
    }
}

/// The pages of one row group's `value` column, as the writer gathers them from batches.
#[derive(Default)]
pub struct ValueChunk {
    pages: Vec<EncodedPage>,
    bytes: usize,
}

impl ValueChunk {
    pub fn extend(&mut self, pages: Vec<EncodedPage>) {
        self.bytes += pages.iter().map(|p| p.data.len()).sum::<usize>();
        self.pages.extend(pages);
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
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
        let (mut values, mut compressed, mut uncompressed) = (0i64, 0i64, 0i64);
        let mut locations = Vec::with_capacity(self.pages.len());
        let mut pieces = Vec::with_capacity(self.pages.len());
        for p in self.pages {
            let header = page_header(&p)?;
            let size = header.len() + p.data.len();
            locations.push(PageLocation {
                offset: compressed,
                compressed_page_size: i32::try_from(size)
                    .map_err(|_| other("a page of more than 2 GiB"))?,
                first_row_index: values,
            });
            values += i64::from(p.rows);
            compressed += size as i64;
            uncompressed += (header.len() + p.uncompressed) as i64;
            pieces.push((header, p.data));
        }
        let metadata = ColumnChunkMetaData::builder(descr)
            .set_compression(Compression::SNAPPY)
            .set_encodings(vec![Encoding::PLAIN, Encoding::RLE])
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(values)
            .set_data_page_offset(0)
            .build()
            .map_err(other)?;
        let close = ColumnCloseResult {
            bytes_written: compressed as u64,
            rows_written: values as u64,
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
        group.append_column(&rope, close).map_err(other)
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
    i32_field(&mut h, int(p.rows as usize)?); // 1: num_values
    i32_field(&mut h, int(p.nulls as usize)?); // 2: num_nulls
    i32_field(&mut h, int(p.rows as usize)?); // 3: num_rows
    i32_field(&mut h, 0); // 4: encoding = PLAIN
    i32_field(&mut h, int(p.def_levels_len as usize)?); // 5: definition_levels_byte_length
    i32_field(&mut h, 0); // 6: repetition_levels_byte_length
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

    #[test]
    fn levels_are_rle_runs() {
        let mut out = Vec::new();
        rle_levels(&[1, 1, 1, 0, 1], &mut out);
        assert_eq!(out, [6, 1, 2, 0, 2, 1]);
        out.clear();
        // 200 ones: a header of two ULEB128 bytes (400 = 0b1_1001_0000).
        rle_levels(&[1; 200], &mut out);
        assert_eq!(out, [0x90, 0x03, 1]);
        out.clear();
        rle_levels(&[0, 1, 0, 1], &mut out);
        assert!(out.len() <= levels_bound(4));
    }

    /// The header written here is the one the parquet crate's page writer writes for the same
    /// page, and the page follows it.
    #[test]
    fn page_headers_are_the_parquet_crates() {
        use parquet::column::page::{CompressedPage, Page, PageWriter};
        use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
        let mut p = ValuePages::default();
        for i in 0..300u32 {
            let v = i.to_string().repeat(i as usize % 7);
            p.push((i % 5 != 0).then_some(v.as_bytes()));
        }
        let page = p.finish().unwrap().remove(0);
        let mut sink = TrackedWrite::new(Vec::new());
        {
            let mut w = SerializedPageWriter::new(&mut sink);
            let theirs = Page::DataPageV2 {
                buf: page.data.clone(),
                num_values: page.rows,
                encoding: Encoding::PLAIN,
                num_nulls: page.nulls,
                num_rows: page.rows,
                def_levels_byte_len: page.def_levels_len,
                rep_levels_byte_len: 0,
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
        assert_eq!((page.rows, page.nulls), (300, 60));
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
    fn a_page_closes_past_its_size_and_rows_are_counted_with_their_nulls() {
        let mut p = ValuePages::default();
        let big = vec![7u8; 4 * PAGE_BYTES];
        p.push(Some(b"a"));
        p.push(None);
        p.push(Some(&big));
        p.push(None);
        let pages = p.finish().unwrap();
        assert_eq!(pages.len(), 2);
        assert_eq!((pages[0].rows, pages[0].nulls), (3, 1));
        assert_eq!((pages[1].rows, pages[1].nulls), (1, 1));
        // The large value's room is not kept.
        assert!(p.plain.capacity() <= KEEP_BYTES && p.scratch.len() <= KEEP_BYTES);
        // Levels 1, 0, 1: three runs of two bytes.
        assert_eq!(pages[0].uncompressed, 6 + (4 + 1) + (4 + 4 * PAGE_BYTES));
    }
}
