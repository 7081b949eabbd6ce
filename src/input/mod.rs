//! Inputs: what kind of file this is (from its first bytes and its name), and the readers for
//! the kinds that are not captures: hex dumps ([`hex`]), raw frames ([`raw`]), and hex dumps of
//! whole packets turned back into a pcap stream for the capture reader ([`packets`]).

pub mod compressed;
pub mod hex;
pub mod packets;
pub mod raw;

pub use compressed::{open, Compression, Opened};

use std::fmt;
use std::ops::Range;

/// What an input holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// A hex dump (any of the usual styles).
    Hex,
    /// Raw binary: one frame, or size-prefixed frames one after another.
    Raw,
    /// A pcap or pcapng capture.
    Pcap,
    /// A Kafka log segment (`*.log`), KRaft snapshot (`*.checkpoint`) or `quorum-state` file.
    Log,
}

impl crate::choice::Choice for InputKind {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "hex",
            "A hex dump (any of the usual styles)",
            InputKind::Hex,
        ),
        (
            "raw",
            "Raw binary: one frame, or size-prefixed frames one after another",
            InputKind::Raw,
        ),
        ("pcap", "A pcap or pcapng capture", InputKind::Pcap),
        (
            "log",
            "A Kafka log segment (`*.log`), KRaft snapshot (`*.checkpoint`) or `quorum-state` file",
            InputKind::Log,
        ),
    ];
}

/// Bytes the detector looks at.
pub const DETECT_BYTES: usize = 512;

/// Kind of an input from its name and first bytes (at most [`DETECT_BYTES`]).
pub fn detect(name: Option<&str>, head: &[u8]) -> InputKind {
    let magic = head.get(..4);
    let pcap_magics: [[u8; 4]; 5] = [
        [0xd4, 0xc3, 0xb2, 0xa1], // little-endian, microseconds
        [0xa1, 0xb2, 0xc3, 0xd4], // big-endian, microseconds
        [0x4d, 0x3c, 0xb2, 0xa1], // little-endian, nanoseconds
        [0xa1, 0xb2, 0x3c, 0x4d], // big-endian, nanoseconds
        [0x0a, 0x0d, 0x0d, 0x0a], // pcapng section header block
    ];
    if magic.is_some_and(|m| pcap_magics.iter().any(|p| p == m)) {
        return InputKind::Pcap;
    }
    let base = name
        .map(|n| n.rsplit(['/', '\\']).next().unwrap_or(n))
        .unwrap_or("");
    if base.ends_with(".log") && looks_like_segment(head) {
        return InputKind::Log;
    }
    if base.ends_with(".checkpoint") || base == "quorum-state" {
        return InputKind::Log;
    }
    if looks_like_hex(head) {
        InputKind::Hex
    } else {
        InputKind::Raw
    }
}

/// A log segment starts with a batch: base offset (int64), batch length (int32), partition
/// leader epoch (int32), magic (int8, 0..=2) — or is empty.
fn looks_like_segment(head: &[u8]) -> bool {
    head.is_empty() || (head.len() >= 17 && head[16] <= 2 && head[8] & 0x80 == 0)
}

/// Text made of hex digits, whitespace and the punctuation of dump formats, with at least one
/// pair of hex digits. (Truncated UTF-8 at the end of the window is allowed.)
fn looks_like_hex(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return false;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| {
        let l = l.strip_prefix("Frame (").map(|_| "00").unwrap_or(l);
        // A C array (`xxd -i`: `unsigned char f[] = {` then `0x00, 0x12, …`).
        let l = if hex::c_array_wrapper(l) { "00" } else { l };
        let l = l.strip_prefix("0x").unwrap_or(l);
        l.len() >= 2 && l.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit)
    })
}

/// Text that is none of the inputs kinspect reads (a README, a broker's `server.log`): where it
/// shows, and what it looks like. Refuse it unless the user forces `--input raw`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnInput {
    /// 1-based line and column of the first text that is not a hex dump.
    pub line: u64,
    pub column: u64,
    /// "Markdown", "a log file", "JSON" or "text".
    pub looks_like: &'static str,
    /// That line, cut to 60 characters.
    pub excerpt: String,
}

impl fmt::Display for NotAnInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: this input is {} ({:?}), not a capture, hex dump, Kafka log file or frame; \
             use --input raw to decode its bytes as a Kafka frame anyway",
            self.line, self.column, self.looks_like, self.excerpt
        )
    }
}

/// [`detect`], telling text apart: `Err` when the input is text (valid UTF-8, no control bytes
/// but whitespace) that is not a hex dump. A binary Kafka frame is never such text: its size
/// prefix (or API key) would be at least 0x20202020 (0x2020), past every limit (key).
pub fn classify(name: Option<&str>, head: &[u8]) -> Result<InputKind, NotAnInput> {
    let kind = detect(name, head);
    if kind != InputKind::Raw {
        return Ok(kind);
    }
    match not_an_input(head) {
        Some(n) => Err(n),
        None => Ok(kind),
    }
}

fn not_an_input(head: &[u8]) -> Option<NotAnInput> {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    if text.trim().is_empty()
        || text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return None;
    }
    let (i, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty())?;
    let t = l.trim_start();
    let looks_like = if t.starts_with('#') || t.starts_with("```") || t.starts_with("- ") {
        "Markdown"
    } else if t.starts_with("[20")
        || t.get(..4)
            .is_some_and(|y| y.bytes().all(|b| b.is_ascii_digit()))
    {
        "a log file"
    } else if t.starts_with('{') || t.starts_with('[') {
        "JSON"
    } else {
        "text"
    };
    Some(NotAnInput {
        line: i as u64 + 1,
        column: (l.len() - t.len()) as u64 + 1,
        looks_like,
        excerpt: t.chars().take(60).collect(),
    })
}

/// An input that could not be read, and where: `line:column` for text, a byte offset for
/// binary, nothing for I/O errors on no particular line.
#[derive(Debug)]
pub struct InputError {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

impl InputError {
    pub fn at(line: u64, column: u64, message: impl Into<String>) -> InputError {
        InputError {
            line,
            column,
            message: message.into(),
        }
    }
    pub fn io(line: u64, e: std::io::Error) -> InputError {
        InputError {
            line,
            column: 0,
            message: format!("read error: {e}"),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.message),
            (l, 0) => write!(f, "{l}: {}", self.message),
            (l, c) => write!(f, "{l}:{c}: {}", self.message),
        }
    }
}

/// Splits `data` into size-prefixed frames when the prefixes tile it exactly (every frame at
/// least a response header long); `None` when they do not.
pub fn split_prefixed(data: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let p = data.get(at..at + 4)?;
        let size = i32::from_be_bytes([p[0], p[1], p[2], p[3]]);
        if !(4..=crate::limits::MAX_FRAME_SIZE as i32).contains(&size) {
            return None;
        }
        let end = at.checked_add(4 + size as usize)?;
        if end > data.len() {
            return None;
        }
        out.push(at..end);
        at = end;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_capture_magics_and_text() {
        assert_eq!(
            detect(None, &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0]),
            InputKind::Pcap
        );
        assert_eq!(detect(None, &[0x4d, 0x3c, 0xb2, 0xa1]), InputKind::Pcap);
        assert_eq!(detect(None, &[0xa1, 0xb2, 0x3c, 0x4d]), InputKind::Pcap);
        assert_eq!(
            detect(None, &[0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0]),
            InputKind::Pcap
        );
        assert_eq!(detect(None, b"00000000: 0000 0024 0012"), InputKind::Hex);
        assert_eq!(
            detect(None, b"# from wireshark\n0000  00 00"),
            InputKind::Hex
        );
        assert_eq!(detect(None, b"Frame (90 bytes):\n0000  00"), InputKind::Hex);
        assert_eq!(
            detect(None, &[0, 0, 0, 0x24, 0, 0x12, 0, 3]),
            InputKind::Raw
        );
        assert_eq!(detect(None, b"hello world"), InputKind::Raw);
        assert_eq!(detect(None, b""), InputKind::Raw);
    }

    /// Issue 11: README.md, a broker's server.log and an `xxd -i` dump were decoded as raw
    /// frames (`request api 23346`, exit 1).
    #[test]
    fn text_that_is_no_input_is_told_apart() {
        let readme = b"# kinspect\n\nA Rust inspector for the Apache Kafka wire protocol.\n";
        let n = classify(Some("README.md"), readme).unwrap_err();
        assert_eq!((n.line, n.column, n.looks_like), (1, 1, "Markdown"));
        assert!(n.to_string().contains("--input raw"), "{n}");
        let log = b"\n[2024-05-01 10:00:00,123] INFO Kafka version: 3.9.0 (org.apache.kafka)\n";
        let n = classify(Some("server.log"), log).unwrap_err();
        assert_eq!((n.line, n.looks_like), (2, "a log file"));
        assert_eq!(
            classify(None, b"{\"a\": 1}").unwrap_err().looks_like,
            "JSON"
        );
        assert_eq!(
            classify(None, b"hello world").unwrap_err().looks_like,
            "text"
        );
        // Not text: frames, empty input, binary.
        assert_eq!(
            classify(None, &[0, 0, 0, 0x24, 0, 0x12, 0, 3]),
            Ok(InputKind::Raw)
        );
        assert_eq!(classify(None, b""), Ok(InputKind::Raw));
        assert_eq!(classify(None, b"\xff\xfe\x00"), Ok(InputKind::Raw));
        // What we do read still is.
        assert_eq!(
            classify(None, b"00000000: 0000 0024 0012"),
            Ok(InputKind::Hex)
        );
    }

    #[test]
    fn c_array_dumps_are_hex() {
        assert_eq!(
            detect(None, b"0x00, 0x00, 0x00, 0x24, 0x00, 0x12,"),
            InputKind::Hex
        );
        let xxd_i = b"unsigned char frame_bin[] = {\n  0x00, 0x00, 0x00, 0x08, 0x00, 0x12, 0x00, 0x03,\n  0x00, 0x00, 0x00, 0x01\n};\nunsigned int frame_bin_len = 12;\n";
        assert_eq!(detect(None, xxd_i), InputKind::Hex);
        let mut r = hex::HexReader::new(&xxd_i[..]);
        let b = r.next_block().unwrap().unwrap();
        assert_eq!(b.data, [0, 0, 0, 8, 0, 0x12, 0, 3, 0, 0, 0, 1]);
        assert!(r.next_block().unwrap().is_none());
    }

    #[test]
    fn detects_log_segments_by_name_and_shape() {
        let mut seg = vec![0u8; 61];
        seg[16] = 2;
        assert_eq!(
            detect(Some("/d/t-0/00000000000000000000.log"), &seg),
            InputKind::Log
        );
        assert_eq!(detect(Some("x.log"), b"0000  00 12"), InputKind::Hex);
        assert_eq!(
            detect(
                Some("/m/__cluster_metadata-0/00000000000000000100-0000000001.checkpoint"),
                &seg
            ),
            InputKind::Log
        );
        assert_eq!(
            detect(Some("quorum-state"), b"{\"leaderId\":1}"),
            InputKind::Log
        );
    }

    #[test]
    fn splits_only_exact_tilings() {
        let two = [0, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 5, 9, 9, 9, 9, 9];
        assert_eq!(split_prefixed(&two), Some(vec![0..8, 8..17]));
        assert_eq!(split_prefixed(&two[..16]), None);
        // an ApiVersions request without its prefix: 0x00120003 is no plausible size here
        assert_eq!(split_prefixed(&[0, 0x12, 0, 3, 0, 0, 0, 1]), None);
        assert_eq!(split_prefixed(&[0xff, 0xff, 0xff, 0xff]), None);
    }
}

#[cfg(test)]
mod hostile {
    use super::*;

    /// Every reader on arbitrary bytes and on dump-like text: no panic, and each stops.
    #[test]
    fn readers_never_panic_on_arbitrary_input() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let text = b"0123456789abcdefx :|*\n\n Frame (9 bytes):\n";
        for round in 0..2000 {
            let len = (next() % 300) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    if round % 2 == 0 {
                        next() as u8
                    } else {
                        text[(next() % text.len() as u64) as usize]
                    }
                })
                .collect();
            let _ = detect(Some("x.log"), &data);
            let _ = split_prefixed(&data);
            let _ = packets::link_type(&data);
            let mut h = hex::HexReader::new(&data[..]);
            for _ in 0..1000 {
                match h.next_block() {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
            for no_prefix in [false, true] {
                let mut r = raw::RawReader::new(&data[..], no_prefix);
                let mut n = 0;
                while let Ok(Some(_)) = r.next_frame() {
                    n += 1;
                    assert!(n <= data.len() + 1, "raw reader does not stop");
                }
            }
        }
    }
}
