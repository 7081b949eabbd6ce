//! Dumps below were made by the real tools (xxd 2022-01-14, util-linux hexdump, tshark 4.0.17)
//! from mock-kcat-none.pcap frame 4; the oracle is tshark's `tcp.payload` of that frame.

use super::*;

const PAYLOAD: &str =
    "000000240012000300000001000772646b61666b61000b6c696272646b61666b6106322e302e3200";

fn want() -> Vec<u8> {
    (0..PAYLOAD.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&PAYLOAD[i..i + 2], 16).unwrap())
        .collect()
}

fn blocks(text: &str) -> Result<Vec<Vec<u8>>, InputError> {
    let mut r = HexReader::new(text.as_bytes());
    let mut v = Vec::new();
    while let Some(b) = r.next_block()? {
        v.push(b.data);
    }
    Ok(v)
}

fn one(text: &str) -> Vec<u8> {
    let b = blocks(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.len(), 1, "{b:?}");
    b.into_iter().next().unwrap()
}

#[test]
fn wireshark_hex_stream() {
    assert_eq!(one(PAYLOAD), want());
    assert_eq!(one(&format!("{PAYLOAD}\n")), want());
}

#[test]
fn xxd_plain_postscript_style() {
    assert_eq!(
        one("000000240012000300000001000772646b61666b61000b6c696272646b61\n666b6106322e302e3200\n"),
        want()
    );
}

#[test]
fn xxd_default() {
    let d = "00000000: 0000 0024 0012 0003 0000 0001 0007 7264  ...$..........rd
00000010: 6b61 666b 6100 0b6c 6962 7264 6b61 666b  kafka..librdkafk
00000020: 6106 322e 302e 3200                      a.2.0.2.
";
    assert_eq!(one(d), want());
}

#[test]
fn xxd_g1() {
    let d = "00000000: 00 00 00 24 00 12 00 03 00 00 00 01 00 07 72 64  ...$..........rd
00000010: 6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61 66 6b  kafka..librdkafk
00000020: 61 06 32 2e 30 2e 32 00                          a.2.0.2.
";
    assert_eq!(one(d), want());
}

#[test]
fn hexdump_canonical_with_final_offset() {
    let d = "00000000  00 00 00 24 00 12 00 03  00 00 00 01 00 07 72 64  |...$..........rd|
00000010  6b 61 66 6b 61 00 0b 6c  69 62 72 64 6b 61 66 6b  |kafka..librdkafk|
00000020  61 06 32 2e 30 2e 32 00                           |a.2.0.2.|
00000028
";
    assert_eq!(one(d), want());
}

#[test]
fn hexdump_star_repeats_the_row() {
    let d = "00000000  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|
*
00000040  41                                                |A|
00000041
";
    assert_eq!(one(d), vec![0x41; 0x41]);
}

#[test]
fn spaced_and_offset_styles() {
    let spaced = "00 00 00 24 00 12 00 03 00 00 00 01 00 07 72 64\n6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61 66 6b\n61 06 32 2e 30 2e 32 00\n";
    assert_eq!(one(spaced), want());
    let colon = "0000: 00 00 00 24 00 12 00 03 00 00 00 01 00 07 72 64\n0010: 6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61 66 6b\n0020: 61 06 32 2e 30 2e 32 00\n";
    assert_eq!(one(colon), want());
    let ox = "0x0000 00 00 00 24 00 12 00 03 00 00 00 01 00 07 72 64\n0x0010 6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61 66 6b\n0x0020 61 06 32 2e 30 2e 32 00\n";
    assert_eq!(one(ox), want());
    let c_array = "0x00, 0x00, 0x00, 0x24, 0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07, 0x72, 0x64,\n0x6b, 0x61, 0x66, 0x6b, 0x61, 0x00, 0x0b, 0x6c, 0x69, 0x62, 0x72, 0x64, 0x6b, 0x61, 0x66, 0x6b,\n0x61, 0x06, 0x32, 0x2e, 0x30, 0x2e, 0x32, 0x00\n";
    assert_eq!(one(c_array), want());
}

#[test]
fn tshark_x_kafka_layer() {
    // Wireshark "Copy as Hex Dump" of the Kafka bytes: tshark -x layout.
    let d = "0000  00 00 00 24 00 12 00 03 00 00 00 01 00 07 72 64   ...$..........rd
0010  6b 61 66 6b 61 00 0b 6c 69 62 72 64 6b 61 66 6b   kafka..librdkafk
0020  61 06 32 2e 30 2e 32 00                           a.2.0.2.
";
    assert_eq!(one(d), want());
}

#[test]
fn ascii_column_that_looks_like_hex_is_not_data() {
    // 61 62 63 64 renders as "abcd", itself a valid 4-digit group.
    assert_eq!(one("00000000: 6162 6364  abcd\n"), b"abcd");
    assert_eq!(one("0000  61 62   ab\n"), b"ab");
    // without an ASCII column the same digits are data
    assert_eq!(
        one("6162 6364 abcd\n"),
        vec![0x61, 0x62, 0x63, 0x64, 0xab, 0xcd]
    );
}

#[test]
fn several_frames_split_by_blank_lines_offsets_and_sections() {
    let d = "# two frames\n0012 0003\n\n0000 0001\n";
    assert_eq!(
        blocks(d).unwrap(),
        vec![vec![0, 0x12, 0, 3], vec![0, 0, 0, 1]]
    );
    let restart = "0000  00 01\n0000  00 02\n";
    assert_eq!(blocks(restart).unwrap(), vec![vec![0, 1], vec![0, 2]]);
    let sections = "Frame (2 bytes):\n0000  00 01   ..\nReassembled TCP (2 bytes):\n0000  00 09   ..\n\nFrame (1 bytes):\n0000  07   .\n";
    assert_eq!(blocks(sections).unwrap(), vec![vec![0, 1], vec![7]]);
}

#[test]
fn errors_name_line_and_column() {
    let e = blocks("00 01\n00 0g 02\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 5));
    assert!(e.message.contains("'g'"), "{e}");
    let e = blocks("0000: 00 01\n0020: 00 02\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 1));
    assert!(e.message.contains("does not follow"), "{e}");
    let e = blocks("  abc\n").unwrap_err();
    assert_eq!((e.line, e.column), (1, 3));
    assert!(e.message.contains("odd"), "{e}");
    let e = blocks("00 01 \u{a0}02\n").unwrap_err();
    assert_eq!((e.line, e.column), (1, 7));
    let e = blocks("00\n\u{ff}\u{fe}").unwrap_err();
    assert_eq!(e.line, 2);
    let mut bad = b"00 01\n".to_vec();
    bad.extend_from_slice(&[0x30, 0xff, 0x0a]);
    let mut r = HexReader::new(&bad[..]);
    let e = loop {
        match r.next_block() {
            Err(e) => break e,
            Ok(None) => panic!("no error"),
            Ok(Some(_)) => {}
        }
    };
    assert_eq!((e.line, e.column), (2, 2));
}

#[test]
fn never_panics_on_arbitrary_text() {
    let alphabet = b"0a9F :|*#\n\r\t x.,-";
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        let len = (seed % 60) as usize;
        let mut s = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let mut r = HexReader::new(&s[..]);
        for _ in 0..100 {
            match r.next_block() {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
    }
}

/// Issue 11: 966 bytes of `hexdump -C` whose `*` lines run to offset 0x06400000 (100 MiB) became
/// two 100 MiB frames of zeros (0.97 GB RSS). The expansion is refused before anything is
/// allocated, saying where and which limit.
#[test]
fn a_star_line_cannot_turn_a_short_dump_into_a_huge_frame() {
    let row = "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n";
    let block = format!("{row}*\n06400000\n");
    let dump = format!("{block}\n{block}");
    let mut r = HexReader::new(dump.as_bytes());
    // (Never print a block here: the old reader returned 100 MiB.)
    let e = match r.next_block() {
        Err(e) => e,
        Ok(b) => panic!("a block of {:?} bytes", b.map(|b| b.data.len())),
    };
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(e.message.contains("limits::MAX_HEX_REPEAT_BYTES"), "{e}");
    assert!(e.message.contains("104857584 repeated bytes"), "{e}");
    assert!(r.cur.capacity() < 4096, "allocated {}", r.cur.capacity());
    // Past the largest frame: the frame limit, checked first.
    let e = blocks(&format!("{row}*\n10000000\n"))
        .map(|v| v.len())
        .unwrap_err();
    assert_eq!((e.line, e.column), (3, 1), "{e}");
    assert!(e.message.contains("limits::MAX_FRAME_SIZE"), "{e}");
    // Several `*` lines of one block add up.
    let half = MAX_HEX_REPEAT_BYTES / 2 + 16;
    let two = format!(
        "{row}*\n{half:08x}  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n{:08x}\n",
        2 * half + 16
    );
    let e = blocks(&two).map(|v| v.len()).unwrap_err();
    assert_eq!((e.line, e.column), (5, 1), "{e}");
    assert!(e.message.contains("after 8388608 already"), "{e}");
}

#[test]
fn a_star_line_up_to_the_limit_still_expands() {
    let n = MAX_HEX_REPEAT_BYTES + 16;
    let dump = format!(
        "00000000  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|\n*\n{n:08x}\n"
    );
    let got = one(&dump);
    assert_eq!(got.len() as u64, n);
    assert!(got.iter().all(|&b| b == 0x41));
}
