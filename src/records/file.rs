//! Kafka's on-disk files: log segments (`00000000000000000000.log`, a sequence of batches),
//! KRaft cluster-metadata snapshots (`*.checkpoint`, batches too) and the KRaft `quorum-state`
//! JSON file.
//!
//! Segments and snapshots are streamed: read batch by batch through a bounded window, one
//! [`Tree`] per batch (buffer 0 = that batch's bytes; diagnostics' offsets are relative to the
//! batch, whose file offset comes with it). Where a batch header is implausible the reader
//! reports the bytes as a corrupt region and resynchronises at the next offset where a batch
//! header is plausible and, for magic 2, its CRC-32C verifies.
//!
//! Codes: `corrupt-region` (error), `snapshot-header-missing`, `snapshot-footer-missing`
//! (warnings), `quorum-state-invalid` (error), `unknown-field` (warning), plus every batch code.

use super::{decode_records, AsType, RecordsContext, MIN_BATCH_SIZE};
use crate::diag::Diagnostic;
use crate::limits::MAX_FRAME_SIZE;
use crate::wire::tree::{Kind, Span, Tree, Value};
use std::io::{self, Read};
use std::path::Path;

/// Longest stretch of unreadable bytes kept in one error tree.
const CORRUPT_CHUNK: usize = 1024 * 1024;
/// Most bytes of candidate batches whose CRC one resynchronisation may compute.
const RESYNC_CRC_BUDGET: usize = 256 * 1024 * 1024;
/// Largest `quorum-state` file read (it is a few hundred bytes in practice).
const MAX_QUORUM_STATE: u64 = 1024 * 1024;

/// The kinds of Kafka file kinspect reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `*.log`: a partition's log segment.
    Segment,
    /// `*.checkpoint` holding batches: a KRaft cluster-metadata snapshot.
    Snapshot,
    /// The KRaft `quorum-state` JSON file.
    QuorumState,
}

impl FileKind {
    /// Recognises a file by its name.
    pub fn of_path(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.to_str()?;
        if name == "quorum-state" {
            Some(FileKind::QuorumState)
        } else if name.ends_with(".log") {
            Some(FileKind::Segment)
        } else if name.ends_with(".checkpoint") {
            Some(FileKind::Snapshot)
        } else {
            None
        }
    }
}

/// What a streamed file held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSummary {
    /// Trees handed out (batches, partial tails and corrupt regions).
    pub items: u64,
    pub batches: u64,
    pub corrupt_regions: u64,
    pub corrupt_bytes: u64,
    pub bytes: u64,
    /// Whether any tree held an error diagnostic.
    pub had_errors: bool,
}

/// Decodes the Kafka file at `path` by its kind (see [`FileKind::of_path`]; `kind` overrides
/// it): segments and snapshots are streamed through [`decode_log_file`], a quorum-state file is
/// one tree. `Ok(None)` when the name says nothing and no kind was given.
pub fn decode_path(
    path: &Path,
    kind: Option<FileKind>,
    ctx: &RecordsContext,
    each: &mut dyn FnMut(u64, &mut Tree),
) -> io::Result<Option<LogSummary>> {
    let Some(kind) = kind.or_else(|| FileKind::of_path(path)) else {
        return Ok(None);
    };
    let f = io::BufReader::with_capacity(256 * 1024, std::fs::File::open(path)?);
    if kind == FileKind::QuorumState {
        let mut t = decode_quorum_state(f)?;
        let sum = LogSummary {
            items: 1,
            bytes: t.buf(0).len() as u64,
            had_errors: t.has_errors(),
            ..Default::default()
        };
        each(0, &mut t);
        return Ok(Some(sum));
    }
    decode_log_file(f, kind, ctx, each).map(Some)
}

/// Streams a segment or snapshot from `r`, calling `each(file_offset, tree)` once per batch (or
/// corrupt region, or cut-short tail). `each` may take the tree (swap another in, whose
/// allocations the next batch reuses) instead of copying it: nothing here reads a tree after
/// handing it out. A snapshot gets `AsType::ClusterMetadata` unless the
/// context says otherwise, and its first and last batches are checked for the snapshot
/// header and footer control records. Returns the I/O error that stopped it, if any.
pub fn decode_log_file<R: Read>(
    r: R,
    kind: FileKind,
    ctx: &RecordsContext,
    each: &mut dyn FnMut(u64, &mut Tree),
) -> io::Result<LogSummary> {
    let mut ctx = *ctx;
    ctx.partial_tail_ok = true;
    if kind == FileKind::Snapshot && ctx.as_type.is_none() && ctx.topic.is_none() {
        ctx.as_type = Some(AsType::ClusterMetadata);
    }
    decode_stream(&mut Stream::new(r), kind, &ctx, each)
}

/// [`decode_log_file`] over a [`Stream`] (whose work counters tests read).
fn decode_stream<R: Read>(
    s: &mut Stream<R>,
    kind: FileKind,
    ctx: &RecordsContext,
    each: &mut dyn FnMut(u64, &mut Tree),
) -> io::Result<LogSummary> {
    let ctx = *ctx;
    let mut tree = Tree::new();
    let mut sum = LogSummary::default();
    let mut first_type: Option<i64> = None;
    let mut last_type: Option<i64> = None;
    loop {
        s.fill(17)?;
        let avail = s.avail();
        if avail == 0 {
            break;
        }
        let at = s.pos;
        match plausible(s.window()) {
            Some(total) => {
                s.fill(total)?;
                let take = total.min(s.avail());
                let t = emit(&mut tree, s.take(take), &ctx, at, &mut sum, each);
                if take == total {
                    sum.batches += 1;
                    first_type.get_or_insert(t.unwrap_or(-1));
                    last_type = Some(t.unwrap_or(-1));
                }
            }
            None if avail < 17 && s.eof => {
                emit(&mut tree, s.take(avail), &ctx, at, &mut sum, each);
            }
            None => {
                let bytes = resync(s)?;
                tree.reset(&bytes);
                let root = tree.open("", Kind::Array, 0, 0);
                let d = Diagnostic::error("corrupt-region", "batches", 0, format!(
                    "{} bytes at file offset {at} hold no plausible batch header (size 14..{MAX_FRAME_SIZE}, magic 0-2, CRC); skipped to the next one",
                    bytes.len()
                ));
                tree.error_node("", 0, 0, bytes.len() as u32, d);
                tree.close(root, bytes.len() as u32);
                sum.corrupt_regions += 1;
                sum.corrupt_bytes += bytes.len() as u64;
                sum.items += 1;
                sum.had_errors = true;
                each(at, &mut tree);
            }
        }
    }
    sum.bytes = s.pos;
    if kind == FileKind::Snapshot && sum.batches > 0 {
        snapshot_checks(&mut tree, first_type, last_type, &mut sum, each, s.pos);
    }
    Ok(sum)
}

fn emit(
    tree: &mut Tree,
    bytes: Vec<u8>,
    ctx: &RecordsContext,
    at: u64,
    sum: &mut LogSummary,
    each: &mut dyn FnMut(u64, &mut Tree),
) -> Option<i64> {
    tree.reset(&bytes);
    let len = bytes.len() as u32;
    let root = tree.open("", Kind::Array, 0, 0);
    decode_records(tree, 0, 0, len, ctx, "batches");
    tree.close(root, len);
    sum.items += 1;
    sum.had_errors |= tree.has_errors();
    // Read before `each`, which may take the tree.
    let control = control_type(tree);
    each(at, tree);
    control
}

/// The total size of the batch starting `w`, when its header is plausible.
fn plausible(w: &[u8]) -> Option<usize> {
    let size = i32::from_be_bytes(w.get(8..12)?.try_into().ok()?);
    let magic = *w.get(16)?;
    (size >= MIN_BATCH_SIZE && size as u32 <= MAX_FRAME_SIZE && magic <= 2)
        .then(|| size as usize + 12)
}

/// Whether the complete batch or message at the start of `w` has a verifying checksum:
/// CRC-32C over [21, end) for magic 2, CRC-32 over [16, end) for magic 0 and 1.
fn crc_ok(w: &[u8], total: usize) -> bool {
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    match (w.get(16), w.get(..total)) {
        (Some(2), Some(b)) if total >= 21 => crc32c::crc32c(&b[21..]) == be(&b[17..21]),
        (Some(0 | 1), Some(b)) if total >= 16 => crc32fast::hash(&b[16..]) == be(&b[12..16]),
        _ => false,
    }
}

/// Skips forward from the current position (an implausible header) to the next plausible
/// batch, at most [`CORRUPT_CHUNK`] bytes, and returns the bytes skipped. Checking candidates'
/// CRCs is capped at [`RESYNC_CRC_BUDGET`] bytes per call, so hostile data full of plausible
/// headers cannot make one resync read gigabytes; past it a plausible header is enough.
fn resync<R: Read>(s: &mut Stream<R>) -> io::Result<Vec<u8>> {
    let mut skipped = Vec::new();
    let mut budget = RESYNC_CRC_BUDGET;
    loop {
        if let Some(&b) = s.window().first() {
            skipped.push(b);
            s.advance(1);
        }
        if skipped.len() >= CORRUPT_CHUNK {
            break;
        }
        s.fill(17)?;
        if s.avail() == 0 {
            break;
        }
        if let Some(total) = plausible(s.window()) {
            // A candidate counts only when its checksum verifies: after corruption, a header
            // that runs past the end of the file is more likely garbage than a cut-short tail.
            s.fill(total)?;
            if s.avail() >= total {
                if budget < total {
                    break;
                }
                budget -= total;
                if crc_ok(s.window(), total) {
                    break;
                }
            }
        }
    }
    Ok(skipped)
}

/// The control record type of a batch's first record (`Key.Type`), when it is a control batch.
fn control_type(t: &Tree) -> Option<i64> {
    let b = t.children(0).next()?;
    let r = t.children(t.child(b, "Records")?).next()?;
    let k = t.child(r, "Key")?;
    match t.node(t.child(k, "Type")?).value {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

fn snapshot_checks(
    tree: &mut Tree,
    first: Option<i64>,
    last: Option<i64>,
    sum: &mut LogSummary,
    each: &mut dyn FnMut(u64, &mut Tree),
    end: u64,
) {
    let mut diags = Vec::new();
    if first != Some(3) {
        diags.push(Diagnostic::warning(
            "snapshot-header-missing",
            "batches[0]",
            0,
            "a snapshot starts with a SNAPSHOT_HEADER control batch; this one does not",
        ));
    }
    if last != Some(4) {
        diags.push(Diagnostic::warning(
            "snapshot-footer-missing",
            "batches",
            // Offsets are relative to the item, which is handed out at `end`.
            0,
            "a snapshot ends with a SNAPSHOT_FOOTER control batch; this one does not",
        ));
    }
    if diags.is_empty() {
        return;
    }
    tree.reset(&[]);
    let root = tree.open("", Kind::Array, 0, 0);
    tree.close(root, 0);
    tree.diags.extend(diags);
    sum.items += 1;
    each(end, tree);
}

/// A read window over a stream: `buf[pos - start ..]` is unread.
struct Stream<R> {
    r: R,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: u64,
    /// File offset of the next unread byte.
    pos: u64,
    eof: bool,
    /// Bytes moved to the front of the buffer, in all (work a test can bound).
    moved: u64,
}

/// Fewest bytes [`Stream::fill`] asks the reader for when it reads at all.
const READ_CHUNK: usize = 64 * 1024;

impl<R: Read> Stream<R> {
    fn new(r: R) -> Stream<R> {
        Stream {
            r,
            buf: Vec::new(),
            start: 0,
            pos: 0,
            eof: false,
            moved: 0,
        }
    }
    fn avail(&self) -> usize {
        self.buf.len() - (self.pos - self.start) as usize
    }
    fn window(&self) -> &[u8] {
        &self.buf[(self.pos - self.start) as usize..]
    }
    /// Reads until `n` bytes are unread or the stream ends. Consumed bytes are dropped only when
    /// there is more to read and they are at least as many as the unread ones, so each byte is
    /// moved at most once on average: resynchronising byte by byte under a header that claims
    /// more than the file holds stays linear (it used to move the rest of the file every byte).
    /// The buffer stays under twice the largest window asked for, plus [`READ_CHUNK`].
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.eof || self.avail() >= n {
            return Ok(());
        }
        let consumed = (self.pos - self.start) as usize;
        if consumed > 0 && consumed >= self.avail() {
            self.moved += self.avail() as u64;
            self.buf.drain(..consumed);
            self.start = self.pos;
        }
        let mut chunk = [0u8; READ_CHUNK];
        while !self.eof && self.avail() < n {
            match self.r.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    fn advance(&mut self, n: usize) {
        self.pos += n.min(self.avail()) as u64;
    }
    fn take(&mut self, n: usize) -> Vec<u8> {
        let from = (self.pos - self.start) as usize;
        let v = self.buf[from..from + n.min(self.avail())].to_vec();
        self.advance(n);
        v
    }
}

/// Decodes a KRaft `quorum-state` file into a tree: a struct of its members, each spanning its
/// JSON value in the file. Known members: leaderId, leaderEpoch, votedId, votedDirectoryId,
/// appliedOffset, currentVoters, data_version.
pub fn decode_quorum_state<R: Read>(r: R) -> io::Result<Tree> {
    let mut text = Vec::new();
    r.take(MAX_QUORUM_STATE + 1).read_to_end(&mut text)?;
    let mut t = Tree::new();
    t.reset(&text);
    let len = text.len() as u32;
    let root = t.open("", Kind::Struct, 0, 0);
    if text.len() as u64 > MAX_QUORUM_STATE {
        let d = Diagnostic::error(
            "quorum-state-invalid",
            "",
            0,
            format!("larger than {MAX_QUORUM_STATE} bytes; not a quorum-state file"),
        );
        t.error_node("", 0, 0, len, d);
        t.close(root, len);
        return Ok(t);
    }
    let parsed: Result<serde_json::Map<String, serde_json::Value>, _> =
        serde_json::from_slice(&text);
    let map = match parsed {
        Ok(m) => m,
        Err(e) => {
            let d = Diagnostic::error(
                "quorum-state-invalid",
                "",
                0,
                format!(
                    "line {} column {}: {}",
                    e.line(),
                    e.column(),
                    crate::diag::json_error_message(&e)
                ),
            );
            t.error_node("", 0, 0, len, d);
            t.close(root, len);
            return Ok(t);
        }
    };
    let mut cursor = 0usize;
    for (k, v) in &map {
        let Some((at, vlen)) = value_span(&text, k, cursor) else {
            continue;
        };
        cursor = at + vlen;
        let (at, vlen) = (at as u32, vlen as u32);
        let name: &'static str = match k.as_str() {
            "leaderId" => "leaderId",
            "leaderEpoch" => "leaderEpoch",
            "votedId" => "votedId",
            "votedDirectoryId" => "votedDirectoryId",
            "appliedOffset" => "appliedOffset",
            "currentVoters" => "currentVoters",
            "data_version" => "data_version",
            _ => {
                t.diags.push(Diagnostic::warning(
                    "unknown-field",
                    k.clone(),
                    at as u64,
                    format!("quorum-state member {k:?} is not one kinspect knows; shown raw"),
                ));
                t.leaf(
                    "_unknown_field",
                    Value::Str(Span {
                        start: at,
                        len: vlen,
                    }),
                    0,
                    at,
                    vlen,
                );
                continue;
            }
        };
        match (name, v) {
            ("votedDirectoryId", serde_json::Value::String(s)) => match kafka_uuid(s) {
                Some(u) => {
                    t.leaf(name, Value::Uuid(u), 0, at, vlen);
                }
                None => {
                    let d = Diagnostic::error(
                        "quorum-state-invalid",
                        name,
                        at as u64,
                        format!("{s:?} is not a Kafka uuid (22 base64url characters)"),
                    );
                    t.error_node(name, 0, at, vlen, d);
                }
            },
            ("currentVoters", serde_json::Value::Array(items)) => {
                let arr = t.open(name, Kind::Array, 0, at);
                // Old-format voters are {"voterId": n}; spans are found in order inside the array.
                let mut c = at as usize;
                for it in items {
                    let id = it.get("voterId").and_then(|x| x.as_i64());
                    match (id, value_span(&text, "voterId", c)) {
                        (Some(id), Some((vat, vl))) => {
                            let el = t.open("", Kind::Struct, 0, vat as u32);
                            t.leaf("voterId", Value::Int(id), 0, vat as u32, vl as u32);
                            t.close(el, (vat + vl) as u32);
                            c = vat + vl;
                        }
                        _ => {
                            let d = Diagnostic::error(
                                "quorum-state-invalid",
                                name,
                                at as u64,
                                "a currentVoters element without an integer voterId",
                            );
                            t.diags.push(d);
                        }
                    }
                }
                t.close(arr, at + vlen);
            }
            (_, serde_json::Value::Number(n)) if n.as_i64().is_some() => {
                t.leaf(name, Value::Int(n.as_i64().unwrap_or(0)), 0, at, vlen);
            }
            _ => {
                let d = Diagnostic::error(
                    "quorum-state-invalid",
                    name,
                    at as u64,
                    format!("{name}: unexpected value {v}"),
                );
                t.error_node(name, 0, at, vlen, d);
            }
        }
    }
    t.close(root, len);
    Ok(t)
}

/// Kafka's uuid text: 22 characters of unpadded base64url.
fn kafka_uuid(s: &str) -> Option<[u8; 16]> {
    use base64::Engine;
    let b = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()?;
    b.try_into().ok()
}

/// Where the value of member `"key"` lies in JSON `text`, searching from `from`: (offset, len).
fn value_span(text: &[u8], key: &str, from: usize) -> Option<(usize, usize)> {
    let pat = format!("\"{key}\"");
    let rel = text
        .get(from..)?
        .windows(pat.len())
        .position(|w| w == pat.as_bytes())?;
    let mut i = from + rel + pat.len();
    while text
        .get(i)
        .is_some_and(|c| c.is_ascii_whitespace() || *c == b':')
    {
        i += 1;
    }
    let start = i;
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    while let Some(&c) = text.get(i) {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => {
                    in_str = false;
                    if depth == 0 {
                        return Some((start, i + 1 - start));
                    }
                }
                _ => {}
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((start, i + 1 - start));
                    }
                }
                b',' | b'}' | b']' if depth == 0 => {
                    let v = &text[start..i];
                    let trimmed = v.len()
                        - v.iter()
                            .rev()
                            .take_while(|c| c.is_ascii_whitespace())
                            .count();
                    return Some((start, trimmed));
                }
                _ => {}
            }
        }
        i += 1;
    }
    Some((start, i - start))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The segment of issue 11: a batch header with length 0 and magic 2, then 0x01 bytes, so
    /// that every offset after the first reads as a header of 0x01010101 bytes, more than the
    /// file holds. Resync used to move the rest of the buffer forward at every such offset
    /// (2 MB: 14 s, growing with the square of the size).
    fn ones_after_an_empty_header(len: usize) -> Vec<u8> {
        let mut seg = vec![0x01u8; len];
        seg[..17].fill(0);
        seg[16] = 2;
        seg
    }

    /// (file offset, length, diagnostic codes) of each item handed out.
    type Items = Vec<(u64, usize, Vec<&'static str>)>;

    fn run(data: &[u8]) -> (Stream<&[u8]>, LogSummary, Items) {
        let mut s = Stream::new(data);
        let mut items = Vec::new();
        let ctx = RecordsContext {
            partial_tail_ok: true,
            ..Default::default()
        };
        let sum = decode_stream(&mut s, FileKind::Segment, &ctx, &mut |at, t| {
            items.push((at, t.buf(0).len(), t.diags.iter().map(|d| d.code).collect()))
        })
        .unwrap();
        (s, sum, items)
    }

    #[test]
    fn resync_under_headers_running_past_the_end_is_linear() {
        let seg = ones_after_an_empty_header(2_000_000);
        let (s, sum, items) = run(&seg);
        // Work: bytes moved within the buffer, at most the file's size (it was ~10^12).
        assert!(s.moved <= seg.len() as u64, "moved {} bytes", s.moved);
        assert_eq!(sum.bytes, seg.len() as u64);
        // Output: a corrupt region of at most CORRUPT_CHUNK bytes, then the claimed batch cut
        // short at the end of the file, as before.
        assert_eq!(
            items,
            vec![
                (0, CORRUPT_CHUNK, vec!["corrupt-region"]),
                (
                    CORRUPT_CHUNK as u64,
                    seg.len() - CORRUPT_CHUNK,
                    vec!["partial-batch"]
                ),
            ]
        );
        assert_eq!((sum.corrupt_regions, sum.batches), (1, 0));
    }

    #[test]
    fn work_grows_linearly_with_the_size() {
        let small = run(&ones_after_an_empty_header(100_000)).0.moved;
        let large = run(&ones_after_an_empty_header(800_000)).0.moved;
        assert!(
            large <= 8 * small.max(1) + 2 * READ_CHUNK as u64,
            "{small} → {large}"
        );
    }
}
