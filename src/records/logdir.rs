//! A partition's log folder as the broker keeps it and `kafka-dump-log` reads it
//! (`orders-0/00000000000000000000.log`, `.index`, `.timeindex`, …): its segments in offset
//! order, and each segment's offset and time indexes checked against the segment's batches.
//!
//! The checks are Kafka's own (`kafka-dump-log --verify-index-only` makes the same ones): an
//! offset-index entry (relative offset int32, position int32) points at the start of a batch
//! whose last offset is the entry's offset; a time-index entry (timestamp int64, relative offset
//! int32) names the last offset of a batch whose max timestamp is the entry's timestamp; both
//! grow strictly. An entry of relative offset 0 after the first ends the entries (the active
//! segment's index is preallocated with zeros). The check streams: one entry of each index is
//! held at a time, merged with the batches as they are read.
//!
//! Codes (file, entry number and byte offset in the message and the diagnostic): `index-size`
//! (warning: the file is no whole number of entries), `index-out-of-order`,
//! `index-not-at-batch`, `index-offset-mismatch`, `index-past-end`, `timeindex-out-of-order`,
//! `timeindex-offset-mismatch`, `timeindex-timestamp-mismatch`, `timeindex-offset-not-found`
//! (errors). A folder's `.log` files not named by a base offset are not read, and named in one
//! `not-a-segment` warning (engine/logdir.rs).

use crate::diag::Diagnostic;
use crate::wire::tree::{Kind, Tree, Value};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// The topic a partition folder is named for (`orders-3` is partition 3 of `orders`), as Kafka
/// names them: the name up to the last `-`, when what follows is a partition number.
pub fn topic_of_folder(dir: &Path) -> Option<String> {
    dir.file_name()
        .and_then(|d| d.to_str())
        .and_then(|d| d.rsplit_once('-'))
        .filter(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .map(|(t, _)| t.to_string())
}

/// What a folder holds for reading it as a partition: its segments, and, by name, what looked
/// like something else.
#[derive(Debug, Default)]
pub struct Folder {
    /// The `.log` segments, in base-offset order.
    pub segments: Vec<PathBuf>,
    /// `.log` files not named by a base offset (a broker's own `server.log`, say), which are not
    /// read: the first [`NAMED`] by name, and how many in all.
    pub other_logs: Named,
    /// Sub-folders named as partition folders (`orders-0`): the folder is a log directory.
    pub partitions: Named,
    /// Capture files (`.pcap`, `.pcapng`, `.cap`, also gzip- or zstd-compressed), which are
    /// inputs of their own: a user who gives a folder of them means them.
    pub captures: Named,
}

/// A capture file's name, compressed or not.
fn is_capture_name(name: &str) -> bool {
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    [".pcap", ".pcapng", ".cap"]
        .iter()
        .any(|x| name.len() > x.len() && name.ends_with(x))
}

/// Names kept to show (the first few in byte order) and how many there were.
#[derive(Debug, Default)]
pub struct Named {
    pub first: std::collections::BTreeSet<String>,
    pub count: usize,
}

/// How many names of skipped files or folders [`Named`] keeps to show.
pub const NAMED: usize = 3;

impl Named {
    fn add(&mut self, name: String) {
        self.count += 1;
        self.first.insert(name);
        if self.first.len() > NAMED {
            self.first.pop_last();
        }
    }

    /// `a, b, c` or `a, b, c, … (12 in all)`, each name followed by `suffix`.
    pub fn list(&self, suffix: &str) -> String {
        let mut s = self
            .first
            .iter()
            .map(|n| format!("{n}{suffix}"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.count > self.first.len() {
            s.push_str(&format!(", … ({} in all)", self.count));
        }
        s
    }
}

/// A segment's base offset from its file name: Kafka names a segment by its base offset,
/// zero-padded to 20 digits (`00000000000000000000.log`); any other `.log` file is not one.
fn base_offset(stem: &str) -> Option<u64> {
    if stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()) {
        stem.parse().ok()
    } else {
        None
    }
}

/// The `.log` segments of a partition folder, in base-offset order, and what else it holds
/// that a user may have meant ([`Folder`]).
pub fn segments(dir: &Path) -> io::Result<Folder> {
    let mut segs: Vec<(u64, PathBuf)> = Vec::new();
    let mut folder = Folder::default();
    let name = |p: &Path| {
        p.file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    };
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            if topic_of_folder(&p).is_some() {
                folder.partitions.add(name(&p));
            }
        } else if p.extension().is_some_and(|x| x == "log") && p.is_file() {
            match p.file_stem().and_then(|s| s.to_str()).and_then(base_offset) {
                Some(base) => segs.push((base, p)),
                None => folder.other_logs.add(name(&p)),
            }
        } else if is_capture_name(&name(&p)) && p.is_file() {
            folder.captures.add(name(&p));
        }
    }
    segs.sort();
    folder.segments = segs.into_iter().map(|(_, p)| p).collect();
    Ok(folder)
}

/// What the indexes need of one complete batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchSpan {
    /// File offset of the batch.
    pub position: u64,
    pub last_offset: i64,
    /// -1 when the format has no timestamps (magic 0).
    pub max_timestamp: i64,
}

/// The batch of a log file's tree (as [`super::file::decode_log_file`] hands them out), when it
/// is one complete batch.
pub fn batch_span(position: u64, t: &Tree) -> Option<BatchSpan> {
    let b = t.children(0).next()?;
    if t.node(b).kind != Kind::Struct {
        return None;
    }
    let int = |name: &str| match t.node(t.child(b, name)?).value {
        Value::Int(v) => Some(v),
        _ => None,
    };
    if t.child(b, "Partial").is_some() {
        return None;
    }
    match int("Magic")? {
        2 => Some(BatchSpan {
            position,
            last_offset: int("BaseOffset")?.wrapping_add(int("LastOffsetDelta")?),
            max_timestamp: int("MaxTimestamp")?,
        }),
        _ => Some(BatchSpan {
            position,
            last_offset: int("Offset")?,
            max_timestamp: int("Timestamp").unwrap_or(-1),
        }),
    }
}

/// One index file, read an entry at a time.
struct Entries {
    r: Option<BufReader<std::fs::File>>,
    name: String,
    size: usize,
    /// Entries read so far.
    read: u64,
    /// The entry held, and its number.
    held: Option<(u64, i64, i64)>,
    prev: Option<(i64, i64)>,
}

impl Entries {
    fn open(path: &Path, size: usize, diags: &mut Vec<Diagnostic>) -> Entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let r = std::fs::File::open(path).ok();
        if let Some(len) = r.as_ref().and_then(|f| f.metadata().ok()).map(|m| m.len()) {
            if len % size as u64 != 0 {
                diags.push(Diagnostic::warning(
                    "index-size",
                    name.clone(),
                    len,
                    format!(
                        "{name}: {len} bytes is no whole number of {size}-byte entries; the last {} bytes are ignored",
                        len % size as u64
                    ),
                ));
            }
        }
        Entries {
            r: r.map(|f| BufReader::with_capacity(64 << 10, f)),
            name,
            size,
            read: 0,
            held: None,
            prev: None,
        }
    }

    /// The next entry as raw bytes, `None` at the end (or the preallocated zero tail).
    fn raw(&mut self) -> Option<(u64, [u8; 12])> {
        let r = self.r.as_mut()?;
        let mut b = [0u8; 12];
        if r.read_exact(&mut b[..self.size]).is_err() {
            self.r = None;
            return None;
        }
        let n = self.read;
        self.read += 1;
        Some((n, b))
    }

    fn at(&self, n: u64) -> u64 {
        n * self.size as u64
    }

    fn diag(&self, code: &'static str, n: u64, msg: String) -> Diagnostic {
        let at = self.at(n);
        Diagnostic::error(
            code,
            format!("{}[{n}]", self.name),
            at,
            format!("{}:{at}: entry {n} {msg}", self.name),
        )
    }
}

/// Checks a segment's `.index` and `.timeindex` (when present) against its batches, in the
/// order they are read.
pub struct IndexCheck {
    base: i64,
    offsets: Entries,
    times: Entries,
}

impl IndexCheck {
    /// Opens the indexes beside `segment` (missing ones are not checked).
    pub fn open(segment: &Path, diags: &mut Vec<Diagnostic>) -> IndexCheck {
        let base = segment
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0);
        let mut c = IndexCheck {
            base,
            offsets: Entries::open(&segment.with_extension("index"), 8, diags),
            times: Entries::open(&segment.with_extension("timeindex"), 12, diags),
        };
        c.next_offset(diags);
        c.next_time(diags);
        c
    }

    /// Holds the next usable offset-index entry: (number, offset, position).
    fn next_offset(&mut self, diags: &mut Vec<Diagnostic>) {
        let e = &mut self.offsets;
        e.held = None;
        while let Some((n, b)) = e.raw() {
            let rel = i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64;
            let pos = i32::from_be_bytes([b[4], b[5], b[6], b[7]]) as i64;
            if rel == 0 && n > 0 {
                e.r = None;
                return;
            }
            let off = self.base + rel;
            if let Some((po, pp)) = e.prev {
                if off <= po || pos <= pp {
                    diags.push(e.diag("index-out-of-order", n, format!(
                        "(offset {off}, position {pos}) does not follow entry {} (offset {po}, position {pp}): entries grow strictly",
                        n - 1
                    )));
                    continue;
                }
            }
            e.prev = Some((off, pos));
            e.held = Some((n, off, pos));
            return;
        }
    }

    /// Holds the next usable time-index entry: (number, timestamp, offset).
    fn next_time(&mut self, diags: &mut Vec<Diagnostic>) {
        let e = &mut self.times;
        e.held = None;
        while let Some((n, b)) = e.raw() {
            let ts = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let rel = i32::from_be_bytes([b[8], b[9], b[10], b[11]]) as i64;
            if rel == 0 && n > 0 {
                e.r = None;
                return;
            }
            let off = self.base + rel;
            if let Some((pt, po)) = e.prev {
                if ts <= pt || off < po {
                    diags.push(e.diag("timeindex-out-of-order", n, format!(
                        "(timestamp {ts}, offset {off}) does not follow entry {} (timestamp {pt}, offset {po}): timestamps grow strictly",
                        n - 1
                    )));
                    continue;
                }
            }
            e.prev = Some((ts, off));
            e.held = Some((n, ts, off));
            return;
        }
    }

    /// The next complete batch of the segment, in file order.
    pub fn batch(&mut self, b: &BatchSpan, diags: &mut Vec<Diagnostic>) {
        let pos = b.position as i64;
        while let Some((n, off, p)) = self.offsets.held.filter(|e| e.2 <= pos) {
            if p < pos {
                let d = self.offsets.diag("index-not-at-batch", n, format!(
                    "(offset {off}) points at position {p}, which is no batch start (the batch before starts earlier, the next at {pos})"
                ));
                diags.push(d);
            } else if off != b.last_offset {
                let d = self.offsets.diag(
                    "index-offset-mismatch",
                    n,
                    format!(
                        "says offset {off} at position {p}; the batch there ends at offset {}",
                        b.last_offset
                    ),
                );
                diags.push(d);
            }
            self.next_offset(diags);
        }
        while let Some((n, ts, off)) = self.times.held.filter(|e| e.2 <= b.last_offset) {
            if off != b.last_offset {
                diags.push(self.times.diag("timeindex-offset-mismatch", n, format!(
                    "(timestamp {ts}) names offset {off}, which is no batch's last offset (the batch at position {pos} ends at {})",
                    b.last_offset
                )));
            } else if ts != b.max_timestamp {
                diags.push(self.times.diag("timeindex-timestamp-mismatch", n, format!(
                    "says timestamp {ts} for offset {off}; that batch (position {pos}) has max timestamp {}",
                    b.max_timestamp
                )));
            }
            self.next_time(diags);
        }
    }

    /// The segment ended after `len` bytes: entries not matched yet point past its batches.
    pub fn finish(&mut self, len: u64, diags: &mut Vec<Diagnostic>) {
        while let Some((n, off, p)) = self.offsets.held {
            let d = if p as u64 >= len {
                self.offsets.diag(
                    "index-past-end",
                    n,
                    format!(
                        "(offset {off}) points at position {p}, past the segment's {len} bytes"
                    ),
                )
            } else {
                self.offsets.diag(
                    "index-not-at-batch",
                    n,
                    format!("(offset {off}) points at position {p}, which is no batch start"),
                )
            };
            diags.push(d);
            self.next_offset(diags);
        }
        while let Some((n, ts, off)) = self.times.held {
            diags.push(self.times.diag(
                "timeindex-offset-not-found",
                n,
                format!("(timestamp {ts}) names offset {off}, past the segment's last batch"),
            ));
            self.next_time(diags);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `kinspect` reads as captures (detection goes by content; this is only what a
    /// refused folder names), compressed too; a bare extension or another ending is not one.
    #[test]
    fn capture_names() {
        for n in ["a.pcap", "a.pcapng", "b.cap", "a.pcap.gz", "a.pcapng.zst"] {
            assert!(is_capture_name(n), "{n}");
        }
        for n in [".pcap", "a.pcap.txt", "pcap", "a.log", "a.gz"] {
            assert!(!is_capture_name(n), "{n}");
        }
    }

    fn span(position: u64, last_offset: i64, max_timestamp: i64) -> BatchSpan {
        BatchSpan {
            position,
            last_offset,
            max_timestamp,
        }
    }

    fn codes(d: &[Diagnostic]) -> Vec<&'static str> {
        d.iter().map(|d| d.code).collect()
    }

    #[test]
    fn indexes_are_merged_with_the_batches() {
        let dir = std::env::temp_dir().join(format!("kinspect-logdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let seg = dir.join("00000000000000000100.log");
        // Offset index: good (offset 104 at 0), wrong offset (at 200), inside a batch (250),
        // then out of order, then the preallocated zero tail.
        let mut idx = Vec::new();
        for (rel, pos) in [(4i32, 0i32), (8, 200), (12, 250), (11, 260), (0, 0), (0, 0)] {
            idx.extend_from_slice(&rel.to_be_bytes());
            idx.extend_from_slice(&pos.to_be_bytes());
        }
        std::fs::write(seg.with_extension("index"), idx).unwrap();
        let mut tix = Vec::new();
        for (ts, rel) in [(1000i64, 4i32), (1900, 9), (3000, 20)] {
            tix.extend_from_slice(&ts.to_be_bytes());
            tix.extend_from_slice(&rel.to_be_bytes());
        }
        std::fs::write(seg.with_extension("timeindex"), tix).unwrap();
        let mut d = Vec::new();
        let mut c = IndexCheck::open(&seg, &mut d);
        c.batch(&span(0, 104, 1000), &mut d);
        c.batch(&span(200, 109, 2000), &mut d);
        c.batch(&span(300, 112, 2100), &mut d);
        c.finish(400, &mut d);
        assert_eq!(
            codes(&d),
            [
                "index-offset-mismatch",
                "timeindex-timestamp-mismatch",
                "index-not-at-batch",
                "index-out-of-order",
                "timeindex-offset-not-found"
            ]
        );
        assert!(
            d[0].message
                .starts_with("00000000000000000100.index:8: entry 1"),
            "{}",
            d[0].message
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
