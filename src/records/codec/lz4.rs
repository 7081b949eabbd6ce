//! LZ4 frames as Kafka reads them: the descriptor, the blocks and what follows the end mark,
//! decided by the rules of Kafka's own reader rather than by the LZ4 frame format's (the two part
//! in a few places: see [`lz4`]). Blocks are decoded by lz4_flex's block decoder.

use super::{CodecError, Decompressed, Sink};
use crate::limits::MAX_LZ4_BLOCK;

const LZ4_MAGIC: u32 = 0x184D_2204;

thread_local! {
    /// One block buffer per thread, as large as the largest block maximum seen (64 KiB to
    /// `MAX_LZ4_BLOCK`), zeroed only when it grows: a buffer zeroed for every batch cost more than
    /// decompressing a batch of a few records.
    static LZ4_BLOCK: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An LZ4 frame read as Kafka reads it (`compress/Lz4BlockInputStream.java` with the `FLG` and
/// `BD` checks of `Lz4BlockOutputStream.java`, 3.9 and 4.3), so that kinspect accepts and refuses
/// the batches Kafka does:
/// - the descriptor: FLG version 1, its reserved bits (0-1, the dictionary id among them) clear,
///   blocks independent (Kafka refuses linked blocks); BD's reserved bits clear, a block size
///   code of 4-7; a content size, when flagged, is skipped, not checked;
/// - the header checksum is checked for magic 1 and 2 and ignored for magic 0, whose writers
///   hashed the magic too (the KafkaLZ4 checksum, noted when seen);
/// - blocks up to the end mark (a size word of 0, whatever its top bit), each at most the
///   declared maximum, compressed or stored, with its checksum checked when flagged; a frame that
///   ends before its end mark is cut short;
/// - the content checksum, when flagged, must be there but Kafka does not check it: a mismatch
///   is noted, not refused;
/// - what follows the end mark is never read by Kafka (a second frame included): noted.
pub(super) fn lz4(
    input: &[u8],
    magic: i8,
    cap: (usize, &'static str),
) -> Result<Decompressed, CodecError> {
    let bad = |m: String| CodecError::Corrupt(format!("lz4: {m}"));
    let get = |at: usize, n: usize, what: &str| {
        input.get(at..at.saturating_add(n)).ok_or_else(|| {
            bad(format!(
                "frame cut short at byte {at}: {what} ({n} bytes) expected, {} remain",
                input.len().saturating_sub(at)
            ))
        })
    };
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let m = get(0, 4, "the frame magic")?;
    if word(m) != LZ4_MAGIC {
        return Err(bad(format!(
            "no LZ4 frame magic at byte 0 (found {:#010x}, expected 0x184d2204)",
            word(m)
        )));
    }
    let d = get(4, 2, "the FLG and BD bytes")?;
    let (flg, bd) = (d[0], d[1]);
    if flg >> 6 != 1 {
        return Err(bad(format!(
            "frame version {} at byte 4, expected 1",
            flg >> 6
        )));
    }
    if flg & 0x01 != 0 {
        return Err(CodecError::Unsupported(
            "lz4 frame with a dictionary id (FLG bit 0, reserved for Kafka)".into(),
        ));
    }
    if flg & 0x02 != 0 {
        return Err(bad("reserved FLG bit 1 set at byte 4".into()));
    }
    if flg & 0x20 == 0 {
        return Err(CodecError::Unsupported(
            "lz4 frame with linked blocks (FLG bit 5 clear): Kafka reads only independent blocks"
                .into(),
        ));
    }
    if bd & 0x8f != 0 {
        return Err(bad(format!(
            "reserved BD bits set at byte 5 ({bd:#04x}): only bits 4-6 may be"
        )));
    }
    let code = (bd >> 4) & 7;
    if code < 4 {
        return Err(bad(format!(
            "block size code {code} at byte 5, expected 4-7 (64 KiB to 4 MiB)"
        )));
    }
    let max_block = (1usize << (2 * code + 8)).min(MAX_LZ4_BLOCK);
    let block_checksum = flg & 0x10 != 0;
    let content_checksum = flg & 0x04 != 0;
    let hdr_end = if flg & 0x08 != 0 {
        get(6, 8, "the content size")?;
        14
    } else {
        6
    };
    let hc = get(hdr_end, 1, "the header checksum")?[0];
    let standard = ((xxh32(&input[4..hdr_end]) >> 8) & 0xff) as u8;
    let mut notes = Vec::new();
    if hc != standard {
        // The KafkaLZ4 computation (over the magic too), needed only when the standard one fails.
        let kafka = ((xxh32(&input[..hdr_end]) >> 8) & 0xff) as u8;
        match (magic, hc == kafka) {
            (0, true) => notes.push(
                "lz4: KafkaLZ4 header checksum (computed over the magic too), as magic-0 writers produce"
                    .to_string(),
            ),
            (0, false) => notes.push(format!(
                "lz4: header checksum {hc:#04x} at byte {hdr_end} matches neither the standard ({standard:#04x}) nor the KafkaLZ4 ({kafka:#04x}) computation; Kafka does not check it for magic 0"
            )),
            (_, true) => return Err(bad(format!(
                "KafkaLZ4 header checksum (over the magic too) at byte {hdr_end} in a magic-{magic} batch: Kafka ignores it only for magic 0 and refuses it here (expected {standard:#04x})"
            ))),
            (_, false) => return Err(bad(format!(
                "header checksum {hc:#04x} at byte {hdr_end}, expected {standard:#04x}"
            ))),
        }
    }
    let mut s = Sink::new(cap);
    let mut pos = hdr_end + 1;
    let mut content = content_checksum.then(|| twox_hash::XxHash32::with_seed(0));
    let mut blocks = |scratch: &mut Vec<u8>| -> Result<(), CodecError> {
        loop {
            let w = word(get(pos, 4, "a block size or the end mark")?);
            let size = (w & 0x7fff_ffff) as usize;
            if size == 0 {
                pos += 4;
                break;
            }
            if size > max_block {
                return Err(bad(format!(
                    "block at byte {pos} declares {size} bytes, more than the frame's {max_block}-byte maximum"
                )));
            }
            let data = get(pos + 4, size, "the block")?;
            let after = pos + 4 + size;
            if block_checksum {
                let c = word(get(after, 4, "the block checksum")?);
                if c != xxh32(data) {
                    return Err(bad(format!(
                        "block checksum at byte {after} does not match the block at byte {pos}"
                    )));
                }
            }
            let out_from = s.out.len();
            if w & 0x8000_0000 != 0 {
                s.extend(data)?;
            } else {
                // The block decodes into the thread's buffer, bounded by the declared maximum
                // (Kafka's buffer is that size too) and by the room the cap leaves.
                let room = max_block.min(s.cap - s.out.len() + 1);
                if scratch.len() < room {
                    scratch.resize(room, 0);
                }
                let n =
                    lz4_flex::block::decompress_into(data, &mut scratch[..room]).map_err(|e| {
                        if room < max_block
                            && matches!(e, lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        {
                            s.too_large()
                        } else {
                            bad(format!("block at byte {pos}: {e}"))
                        }
                    })?;
                s.extend(&scratch[..n])?;
            }
            if let Some(h) = content.as_mut() {
                std::hash::Hasher::write(h, &s.out[out_from..]);
            }
            pos = after + if block_checksum { 4 } else { 0 };
        }
        Ok(())
    };
    // The thread's buffer, or one of this call's own while the thread is being torn down.
    match LZ4_BLOCK.try_with(|cell| cell.try_borrow_mut().ok().map(|mut b| blocks(&mut b))) {
        Ok(Some(r)) => r?,
        _ => blocks(&mut Vec::new())?,
    }
    if let Some(h) = content {
        let stored = word(get(pos, 4, "the content checksum")?);
        let computed = h.finish_32();
        if stored != computed {
            notes.push(format!(
                "lz4: content checksum {stored:#010x} at byte {pos} does not match the content ({computed:#010x}); Kafka 3.9 and 4.3 do not check it"
            ));
        }
        pos += 4;
    }
    if pos < input.len() {
        let rest = input.len() - pos;
        let second = input
            .get(pos..pos + 4)
            .is_some_and(|m| word(m) == LZ4_MAGIC);
        notes.push(if second {
            format!("lz4: a second frame at byte {pos} ({rest} bytes): Kafka reads only the first frame of a batch")
        } else {
            format!("lz4: {rest} bytes after the end mark at byte {pos}: Kafka never reads them")
        });
    }
    Ok(Decompressed { data: s.out, notes })
}

fn xxh32(data: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(0, data)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cap, mixed, sample};
    use super::super::{decompress, output_cap, Codec};
    use super::*;
    use crate::limits::MAX_DECOMPRESSED_BYTES;
    use std::io::Write;

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
        noted(&d, "KafkaLZ4");
    }

    /// A one-block LZ4 frame with a 64 KiB block maximum (BD 0x40), its header checksum as the
    /// standard says or as the KafkaLZ4 writer computed it (over the magic too).
    fn lz4_one_block_frame(content: &[u8], kafka_checksum: bool) -> Vec<u8> {
        let mut f = LZ4_MAGIC.to_le_bytes().to_vec();
        f.extend([0x60, 0x40]);
        let over = if kafka_checksum { &f[..6] } else { &f[4..6] };
        f.push(((xxh32(over) >> 8) & 0xff) as u8);
        let block = lz4_flex::block::compress(content);
        f.extend((block.len() as u32).to_le_bytes());
        f.extend(block);
        f.extend(0u32.to_le_bytes());
        f
    }

    /// The hand reader of KafkaLZ4 frames holds a block to the frame's declared maximum, as the
    /// library does for the same frame with the standard checksum (and Kafka's reader, which
    /// decompresses into a buffer of that size): 60,000 bytes fit a 64 KiB block, 70,000 do not.
    #[test]
    fn lz4_kafka_checksum_frames_hold_blocks_to_the_declared_maximum() {
        let data = sample();
        for (n, fits) in [(60_000, true), (65_536, true), (70_000, false)] {
            let standard = decompress(
                Codec::Lz4,
                &lz4_one_block_frame(&data[..n], false),
                2,
                cap(),
            );
            let kafka = decompress(Codec::Lz4, &lz4_one_block_frame(&data[..n], true), 0, cap());
            assert_eq!(standard.is_ok(), fits, "{n}: {standard:?}");
            assert_eq!(kafka.is_ok(), fits, "{n}: {kafka:?}");
            if fits {
                assert_eq!(kafka.unwrap().data, &data[..n]);
            }
        }
    }

    /// lz4_flex's own frame reader, as the oracle where Kafka's rules and the LZ4 frame format
    /// agree.
    fn lz4_oracle(f: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut lz4_flex::frame::FrameDecoder::new(f), &mut out).ok()?;
        Some(out)
    }

    fn lz4_frame(data: &[u8], info: lz4_flex::frame::FrameInfo) -> Vec<u8> {
        let mut e = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Every frame lz4_flex writes with independent blocks (every block size, block and content
    /// checksums on and off, with and without a content size; text, and LCG bytes mixed with
    /// runs so that some blocks are stored; sizes on both sides of the block sizes) decodes to what lz4_flex reads back.
    #[test]
    fn lz4_frames_decode_as_lz4_flex_reads_them() {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
        let text = sample();
        let varied = mixed(300_000);
        let mut checked = 0;
        for size in [
            BlockSize::Max64KB,
            BlockSize::Max256KB,
            BlockSize::Max1MB,
            BlockSize::Max4MB,
        ] {
            for (block_sums, content_sum, with_size) in [
                (false, false, false),
                (true, false, false),
                (false, true, true),
                (true, true, true),
            ] {
                for data in [
                    &text[..0],
                    &text[..1],
                    &text[..100],
                    &text[..65_535],
                    &text[..65_536],
                    &text[..65_537],
                    &text[..300_000],
                    &varied[..70_000],
                    &varied[..],
                ] {
                    let info = FrameInfo::new()
                        .block_size(size)
                        .block_mode(BlockMode::Independent)
                        .block_checksums(block_sums)
                        .content_checksum(content_sum)
                        .content_size(with_size.then_some(data.len() as u64));
                    let f = lz4_frame(data, info);
                    let d = decompress(Codec::Lz4, &f, 2, cap()).unwrap();
                    assert_eq!(Some(&d.data), lz4_oracle(&f).as_ref());
                    assert_eq!(d.data, data);
                    assert!(d.notes.is_empty(), "{:?}", d.notes);
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 4 * 4 * 9);
    }

    /// Every cut of a three-block frame is refused, also at a block boundary, where lz4_flex
    /// takes the frame as complete and Kafka says "Stream ended prematurely". Every bit flip
    /// (the lowest and the highest of every byte) gets lz4_flex's verdict, and the same bytes
    /// when both accept, but one: the top bit of the end mark, which Kafka masks off (an end
    /// mark still) and lz4_flex reads as a stored block of 0 bytes followed by a checksum. The
    /// reader is called directly, not through `decompress` (which turns a panic into an error),
    /// so that a panic on any of these inputs fails the test.
    #[test]
    fn lz4_cuts_are_refused_and_flips_get_the_library_s_verdict() {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
        // Repetitive, so that the frame is small (each flip decodes the whole of it again) and
        // still three blocks long.
        let data: Vec<u8> = (0..150_000u32)
            .map(|i| ((i % 251) as u8).wrapping_add((i / 4096) as u8))
            .collect();
        let info = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Independent)
            .block_checksums(true);
        let f = lz4_frame(&data[..150_000], info);
        let mut accepted_by_the_library = 0;
        for cut in 0..f.len() {
            assert!(lz4(&f[..cut], 2, cap()).is_err(), "cut at {cut}");
            accepted_by_the_library += lz4_oracle(&f[..cut]).is_some() as usize;
        }
        // The library took the cuts at the block boundaries (and before the end mark) whole.
        assert!(accepted_by_the_library >= 3, "{accepted_by_the_library}");
        let (mut same, mut accepted) = (0, 0);
        for p in 0..f.len() {
            for bit in [0x01u8, 0x80] {
                let mut g = f.clone();
                g[p] ^= bit;
                let ours = lz4(&g, 2, cap()).ok().map(|d| d.data);
                if p == f.len() - 1 && bit == 0x80 {
                    assert_eq!(ours.as_deref(), Some(&data[..150_000]));
                    assert!(lz4_oracle(&g).is_none());
                    continue;
                }
                assert_eq!(ours, lz4_oracle(&g), "bit {bit:#04x} of byte {p}");
                same += 1;
                accepted += ours.is_some() as usize;
            }
        }
        assert_eq!(same, 2 * f.len() - 1);
        assert!(accepted < same / 10, "{accepted} of {same} flips accepted");
    }

    /// Frame builder for the cases lz4_flex cannot write: FLG and BD as given, the header checksum
    /// as the standard says (or as the KafkaLZ4 writer computed it), then `blocks` (raw block
    /// words and bytes), then `tail`.
    fn lz4_crafted(
        flg: u8,
        bd: u8,
        kafka_hc: bool,
        blocks: &[(u32, &[u8])],
        tail: &[u8],
    ) -> Vec<u8> {
        let mut f = LZ4_MAGIC.to_le_bytes().to_vec();
        f.extend([flg, bd]);
        if flg & 0x08 != 0 {
            f.extend(123_456u64.to_le_bytes());
        }
        let over = if kafka_hc { &f[..] } else { &f[4..] };
        f.push(((xxh32(over) >> 8) & 0xff) as u8);
        for (w, b) in blocks {
            f.extend(w.to_le_bytes());
            f.extend(*b);
        }
        f.extend(tail);
        f
    }

    /// The first note says `what`.
    fn noted(d: &Decompressed, what: &str) {
        assert!(
            d.notes.first().is_some_and(|n| n.contains(what)),
            "{:?}",
            d.notes
        );
    }

    /// Where Kafka's reader (`Lz4BlockInputStream`, 3.9 and 4.3) and the LZ4 frame format part,
    /// kinspect follows Kafka.
    #[test]
    fn lz4_frames_are_judged_as_kafka_s_reader_judges_them() {
        let text = &sample()[..5000];
        let block = lz4_flex::block::compress(text);
        let b = (block.len() as u32, &block[..]);
        let end = 0u32.to_le_bytes();
        let ok = |f: &[u8], magic: i8| decompress(Codec::Lz4, f, magic, cap());
        // Linked blocks: Kafka refuses them ("Dependent block stream is unsupported").
        let linked = lz4_crafted(0x40, 0x40, false, &[b], &end);
        assert!(lz4_oracle(&linked).is_some());
        assert!(matches!(ok(&linked, 2), Err(CodecError::Unsupported(m)) if m.contains("linked")));
        // No end mark: cut short for Kafka, complete for the library.
        let open = lz4_crafted(0x60, 0x40, false, &[b], &[]);
        assert!(lz4_oracle(&open).is_some());
        assert!(ok(&open, 2).is_err());
        // Bytes after the end mark, even a whole second frame: Kafka never reads them.
        let mut two = lz4_crafted(0x60, 0x40, false, &[b], &end);
        let first = two.len();
        two.extend(lz4_crafted(0x60, 0x40, false, &[b], &end));
        // (lz4_flex's reader stops at the first end mark too, but says nothing.)
        assert_eq!(lz4_oracle(&two).as_deref(), Some(text));
        let d = ok(&two, 2).unwrap();
        assert_eq!(d.data, text);
        noted(&d, &format!("second frame at byte {first}"));
        let junk = lz4_crafted(0x60, 0x40, false, &[b], &[0, 0, 0, 0, 7, 7]);
        assert_eq!(lz4_oracle(&junk).as_deref(), Some(text));
        let d = ok(&junk, 2).unwrap();
        assert_eq!(d.data, text);
        noted(&d, "2 bytes after the end mark");
        // An end mark with the stored-block bit: Kafka masks the bit, and the size is 0.
        let marked = lz4_crafted(0x60, 0x40, false, &[b], &0x8000_0000u32.to_le_bytes());
        assert_eq!(ok(&marked, 2).unwrap().data, text);
        // The content size is skipped and the content checksum read but not checked.
        let sized = lz4_crafted(0x68, 0x40, false, &[b], &end);
        assert_eq!(ok(&sized, 2).unwrap().data, text);
        assert!(
            lz4_oracle(&sized).is_none(),
            "the library checks the content size"
        );
        let summed = lz4_crafted(0x64, 0x40, false, &[b], &[0, 0, 0, 0, 1, 2, 3, 4]);
        let d = ok(&summed, 2).unwrap();
        assert_eq!(d.data, text);
        noted(&d, "content checksum 0x04030201");
        let mut right = lz4_crafted(0x64, 0x40, false, &[b], &end);
        right.extend(xxh32(text).to_le_bytes());
        let d = ok(&right, 2).unwrap();
        assert!(d.notes.is_empty() && lz4_oracle(&right) == Some(d.data));
        let no_sum = lz4_crafted(0x64, 0x40, false, &[b], &end);
        assert!(
            ok(&no_sum, 2).is_err(),
            "a flagged content checksum must be there"
        );
        // The KafkaLZ4 header checksum: ignored for magic 0 (noted), refused for magic 1 and 2.
        let kafka = lz4_crafted(0x60, 0x40, true, &[b], &end);
        assert_eq!(ok(&kafka, 0).unwrap().notes.len(), 1);
        for magic in [1, 2] {
            let e = ok(&kafka, magic).unwrap_err().to_string();
            assert!(e.contains("KafkaLZ4") && e.contains("refuses"), "{e}");
        }
        let mut garbled = lz4_crafted(0x60, 0x40, false, &[b], &end);
        garbled[6] ^= 0xff;
        assert!(ok(&garbled, 0).unwrap().notes[0].contains("matches neither"));
        assert!(ok(&garbled, 2)
            .unwrap_err()
            .to_string()
            .contains("header checksum"));
        // Reserved bits and block size codes Kafka's FLG and BD refuse.
        for (flg, bd) in [
            (0x62, 0x40),
            (0x61, 0x40),
            (0x60, 0x41),
            (0x60, 0xc0),
            (0x60, 0x30),
            (0xa0, 0x40),
        ] {
            let f = lz4_crafted(flg, bd, false, &[b], &end);
            assert!(ok(&f, 2).is_err(), "FLG {flg:#04x} BD {bd:#04x}");
        }
        // A block larger than the declared maximum, stored or compressed.
        let big = vec![b'x'; 65_537];
        let stored = lz4_crafted(0x60, 0x40, false, &[(0x8000_0000 | 65_537, &big[..])], &end);
        assert!(ok(&stored, 2)
            .unwrap_err()
            .to_string()
            .contains("more than the frame's 65536-byte maximum"));
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
}
