//! Hex dumps as people paste them: plain (one long Wireshark hex stream, or many lines), spaced
//! bytes, with offsets (`0000:`, `0x0010`, `00000020`), `xxd` (2-byte groups and an ASCII
//! column), `hexdump -C` (`|ascii|` column, `*` for repeated lines, a final offset-only line),
//! tshark `-x` / Wireshark "Copy as Hex Dump" (`0000  bytes   ascii`, `Frame (N bytes):`
//! section titles). Read line by line; a block of bytes ends at a blank line, a section title,
//! or an offset that restarts at 0.
//!
//! The ASCII column is told apart from data by checking it against the bytes it claims to
//! show, so a column reading `dead` after `64 65 61 64` is not taken for two more bytes.

use super::InputError;
use crate::limits::{MAX_FRAME_SIZE, MAX_HEX_REPEAT_BYTES};
use std::io::BufRead;

/// Longest line read: a Wireshark hex stream of the largest frame, plus slack.
const MAX_LINE: u64 = 2 * MAX_FRAME_SIZE as u64 + 4096;

/// Most bytes one block may hold: the largest frame and its size prefix.
const MAX_BLOCK: u64 = MAX_FRAME_SIZE as u64 + 4;

/// One block of bytes from the dump, and the line it started on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub data: Vec<u8>,
    pub line: u64,
}

pub struct HexReader<R: BufRead> {
    r: R,
    line_no: u64,
    line: Vec<u8>,
    cur: Vec<u8>,
    cur_line: u64,
    /// The block in progress came with offsets (so a lone offset line can end it).
    offsets: bool,
    /// Inside a section other than `Frame` (tshark's "Reassembled TCP" etc.): skipped, since
    /// the frame's own bytes are what a capture reader reassembles.
    skipping: bool,
    /// `hexdump -C` printed `*`: the last row repeats until the next offset.
    repeat: Option<Vec<u8>>,
    last_row: Vec<u8>,
    /// Bytes of the block in progress that `*` lines stood for.
    repeated: u64,
    /// The row being parsed, appended to `cur` once it is known to fit.
    row: Vec<u8>,
    done: bool,
}

impl<R: BufRead> HexReader<R> {
    pub fn new(r: R) -> HexReader<R> {
        HexReader {
            r,
            line_no: 0,
            line: Vec::new(),
            cur: Vec::new(),
            cur_line: 0,
            offsets: false,
            skipping: false,
            repeat: None,
            last_row: Vec::new(),
            repeated: 0,
            row: Vec::new(),
            done: false,
        }
    }

    fn take_block(&mut self) -> Option<Block> {
        self.offsets = false;
        self.repeat = None;
        self.repeated = 0;
        if self.cur.is_empty() {
            return None;
        }
        Some(Block {
            data: std::mem::take(&mut self.cur),
            line: self.cur_line,
        })
    }

    /// The next block, `Ok(None)` at the end of input.
    pub fn next_block(&mut self) -> Result<Option<Block>, InputError> {
        while !self.done {
            self.line.clear();
            let n = std::io::Read::take(&mut self.r, MAX_LINE)
                .read_until(b'\n', &mut self.line)
                .map_err(|e| InputError::io(self.line_no + 1, e))?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.line_no += 1;
            if n as u64 == MAX_LINE && self.line.last() != Some(&b'\n') {
                return Err(InputError::at(
                    self.line_no,
                    1,
                    format!("line longer than {MAX_LINE} bytes"),
                ));
            }
            let text = match std::str::from_utf8(&self.line) {
                Ok(t) => t.trim_end().to_string(),
                Err(e) => {
                    let col = String::from_utf8_lossy(&self.line[..e.valid_up_to()])
                        .chars()
                        .count()
                        + 1;
                    return Err(InputError::at(
                        self.line_no,
                        col as u64,
                        "not text (invalid UTF-8); use --input raw for binary frames",
                    ));
                }
            };
            if let Some(b) = self.line(&text)? {
                return Ok(Some(b));
            }
        }
        Ok(self.take_block())
    }

    /// Handles one line; returns a block when the line ended one.
    fn line(&mut self, text: &str) -> Result<Option<Block>, InputError> {
        let trimmed = text.trim_start();
        if trimmed.is_empty() {
            self.skipping = false;
            return Ok(self.take_block());
        }
        if trimmed.starts_with('#') || trimmed.starts_with("//") || c_array_wrapper(trimmed) {
            return Ok(None);
        }
        if let Some(title) = section_title(trimmed) {
            let b = self.take_block();
            self.skipping = title != "Frame";
            return Ok(b);
        }
        if self.skipping {
            return Ok(None);
        }
        if trimmed == "*" {
            self.repeat = Some(self.last_row.clone());
            return Ok(None);
        }
        let lead = text.len() - trimmed.len();
        let (mut offset, mut rest_at) = parse_offset(trimmed);
        if offset.is_some() && rest_at >= trimmed.len() && !self.offsets {
            // A lone short token ends an offset-style dump; anywhere else it is data.
            (offset, rest_at) = (None, 0);
        }
        let mut out = None;
        if let Some(off) = offset {
            let have = self.cur.len() as u64;
            if off == 0 && have > 0 {
                out = self.take_block();
            } else if let Some(row) = self.repeat.take() {
                // `*`: the previous row repeated up to this offset. Checked before anything is
                // allocated: a few hundred bytes of dump must not become a 100 MiB frame.
                let at = |m: String| InputError::at(self.line_no, lead as u64 + 1, m);
                if off < have || row.is_empty() {
                    return Err(at(format!(
                        "offset 0x{off:x} after `*` does not follow 0x{have:x}"
                    )));
                }
                if off > MAX_BLOCK {
                    return Err(at(format!(
                        "offset 0x{off:x} after `*` makes a block of {off} bytes, more than the \
                         largest frame ({MAX_BLOCK} bytes with its size prefix: \
                         limits::MAX_FRAME_SIZE)"
                    )));
                }
                let need = off - have;
                if self.repeated + need > MAX_HEX_REPEAT_BYTES {
                    return Err(at(format!(
                        "`*` before offset 0x{off:x} stands for {need} repeated bytes{}, more than \
                         {MAX_HEX_REPEAT_BYTES} in one block (limits::MAX_HEX_REPEAT_BYTES); \
                         dump those bytes instead (hexdump -v)",
                        if self.repeated > 0 {
                            format!(" (after {} already)", self.repeated)
                        } else {
                            String::new()
                        }
                    )));
                }
                self.repeated += need;
                self.cur.reserve_exact(need as usize);
                while (self.cur.len() as u64) < off {
                    let need = (off - self.cur.len() as u64) as usize;
                    self.cur.extend_from_slice(&row[..need.min(row.len())]);
                }
            } else if off != have {
                return Err(InputError::at(
                    self.line_no,
                    lead as u64 + 1,
                    format!("offset 0x{off:x} does not follow the 0x{have:x} bytes read so far in this block (a missing or repeated line?)"),
                ));
            }
            self.offsets = true;
            if rest_at >= trimmed.len() {
                // hexdump -C ends with the total length alone on a line.
                return Ok(out);
            }
        }
        if self.cur.is_empty() {
            self.cur_line = self.line_no;
        }
        self.row.clear();
        parse_row(&trimmed[rest_at..], &mut self.row).map_err(|(col, msg)| {
            let col = trimmed[..rest_at].chars().count() + lead + col;
            InputError::at(self.line_no, col as u64, msg)
        })?;
        if (self.cur.len() + self.row.len()) as u64 > MAX_BLOCK {
            return Err(InputError::at(
                self.line_no,
                (lead + 1) as u64,
                format!(
                    "this line makes a block of {} bytes, more than the largest frame ({MAX_BLOCK} \
                     bytes with its size prefix: limits::MAX_FRAME_SIZE)",
                    self.cur.len() + self.row.len()
                ),
            ));
        }
        self.cur.extend_from_slice(&self.row);
        // Only dump rows (16 or 32 bytes) can be repeated by `*`; a hex stream's one long
        // line is not kept twice.
        self.last_row.clear();
        if self.row.len() <= 64 {
            self.last_row.extend_from_slice(&self.row);
        }
        if self.row.capacity() > 1 << 16 {
            self.row = Vec::new();
        }
        Ok(out)
    }
}

/// The lines `xxd -i` puts around a C array's bytes: `unsigned char NAME[] = {`, `};` and
/// `unsigned int NAME_len = N;`.
pub(super) fn c_array_wrapper(s: &str) -> bool {
    let s = s.trim();
    s == "};"
        || (s.starts_with("unsigned char ") && s.ends_with("= {"))
        || (s.starts_with("unsigned int ") && s.ends_with(';'))
}

/// `Frame (90 bytes):`, `Reassembled TCP (2705 bytes):` → the title.
fn section_title(s: &str) -> Option<&str> {
    let body = s.strip_suffix(" bytes):")?;
    let (title, n) = body.rsplit_once(" (")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(title)
}

/// An offset at the start of a row: `0000:`, `0x0010:`, `00000020` followed by byte pairs.
/// Returns the offset and where the rest of the row starts.
fn parse_offset(s: &str) -> (Option<u64>, usize) {
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    let tok = &s[..end];
    let after = s[end..].trim_start();
    let rest_at = s.len() - after.len();
    let (digits, colon) = match tok.strip_suffix(':') {
        Some(d) => (d, true),
        None => (tok, false),
    };
    let digits = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
        .unwrap_or(digits);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return (None, 0);
    }
    let value = match u64::from_str_radix(digits, 16) {
        Ok(v) => v,
        Err(_) => return (None, 0),
    };
    let next = after.split_whitespace().next();
    let looks_like_offset = colon
        || tok.starts_with("0x")
        // a wide token followed by single bytes (`0010  00 12 ...`, hexdump -C, tshark -x) or
        // alone on the line (hexdump -C's final length)
        || (digits.len() >= 4 && digits.len() <= 8 && next.is_none_or(|n| n.len() == 2));
    if looks_like_offset && next.is_none() && !colon && !tok.starts_with("0x") {
        // A lone token is data (a hex stream line) unless it is as short as an offset.
        return if digits.len() <= 8 && digits.len() % 2 == 0 && digits.len() >= 6 {
            (Some(value), s.len())
        } else {
            (None, 0)
        };
    }
    if looks_like_offset {
        (Some(value), rest_at)
    } else {
        (None, 0)
    }
}

/// ASCII rendering as dump tools print it: printable ASCII as is, anything else as `.`.
fn render(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if (0x20..0x7f).contains(&c) {
                c as char
            } else {
                '.'
            }
        })
        .collect()
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Parses a row's hex groups (and skips its ASCII column) into `out`. Error: (0-based char
/// column within `s` + 1, message).
fn parse_row(s: &str, out: &mut Vec<u8>) -> Result<(), (usize, String)> {
    // Tokens: (byte start, text without 0x prefix / trailing comma).
    let mut toks: Vec<(usize, &str)> = Vec::new();
    let mut i = 0;
    let bytes = s.as_bytes();
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let raw = &s[start..i];
        let t = raw.strip_suffix(',').unwrap_or(raw);
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        toks.push((start, t));
    }
    // Leading run of hex groups of one width (the last one may be shorter, as xxd prints).
    let mut k_max = 0;
    let mut width = 0;
    for (j, (_, t)) in toks.iter().enumerate() {
        let ok = !t.is_empty() && t.len() % 2 == 0 && t.bytes().all(|b| b.is_ascii_hexdigit());
        if !ok {
            break;
        }
        if j == 0 {
            width = t.len();
        } else if t.len() > width || (j > 0 && toks[j - 1].1.len() < width) {
            break;
        }
        k_max = j + 1;
    }
    let decode = |ts: &[(usize, &str)]| -> Vec<u8> {
        ts.iter()
            .flat_map(|(_, t)| {
                t.as_bytes()
                    .chunks(2)
                    .map(|p| hex_val(p[0]) << 4 | hex_val(p[1]))
            })
            .collect()
    };
    // The longest prefix of groups whose remainder is the ASCII column of exactly those bytes.
    for k in (1..=k_max).rev() {
        let Some(&(at, _)) = toks.get(k) else {
            continue;
        };
        // Every dump tool puts at least two spaces before its ASCII column.
        if !s[..at].ends_with("  ") {
            continue;
        }
        let rest = s[at..].trim();
        let rest = rest
            .strip_prefix('|')
            .and_then(|r| r.strip_suffix('|'))
            .unwrap_or(rest);
        let data = decode(&toks[..k]);
        if render(&data).trim() == rest.trim() {
            out.extend_from_slice(&data);
            return Ok(());
        }
    }
    if k_max == toks.len() {
        out.extend_from_slice(&decode(&toks));
        return Ok(());
    }
    let (at, t) = toks[k_max];
    let col = s[..at].chars().count() + 1;
    let bad = t.char_indices().find(|(_, c)| !c.is_ascii_hexdigit());
    Err(match bad {
        Some((bi, c)) => (
            col + t[..bi].chars().count(),
            format!("expected a hex digit, found {c:?}"),
        ),
        None if t.len() % 2 == 1 => (col, format!("odd number of hex digits in {t:?}")),
        None => (
            col,
            format!("hex group {t:?} is wider than the groups before it"),
        ),
    })
}

#[cfg(test)]
#[path = "hex_tests.rs"]
mod tests;
