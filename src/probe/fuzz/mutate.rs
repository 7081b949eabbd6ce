//! Schema-aware mutators: each takes a well-formed request frame and its [`Layout`] and
//! changes exactly one thing the schema gives a meaning to — a count, a length, a prefix's
//! encoding, a tag, a field boundary, a batch's CRC — then fixes the frame's size prefix (and
//! nothing else) so that the broker reads the whole lie. Deterministic: the same frame, layout
//! and RNG state give the same bytes.

use super::layout::{Layout, Slot, What};
use crate::wire::sample::Rng;

/// A mutation: the new frame and what was done (for the reproducer and the logs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutated {
    pub bytes: Vec<u8>,
    pub note: String,
}

type MutFn = fn(&[u8], &Layout, &mut Rng, &Ctx) -> Option<Mutated>;

/// What a mutator may need besides the frame: the broker's range for the request's API.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctx {
    pub max_version: i16,
}

/// Every mutator, by name, in the order `--list` shows them.
pub const MUTATORS: &[(&str, MutFn, &str)] = &[
    (
        "count-lies",
        count_lies,
        "an array count larger, smaller, negative or huge",
    ),
    (
        "length-lies",
        length_lies,
        "a string or bytes length larger, smaller, negative or huge",
    ),
    (
        "compact-confusion",
        compact_confusion,
        "a length or count prefix in the other encoding (compact uvarint ↔ int16/int32)",
    ),
    (
        "header-version",
        header_version,
        "the request header one version off (its tagged section added or removed)",
    ),
    (
        "unknown-tag",
        unknown_tag,
        "a tag the schema does not define appended to a tagged section",
    ),
    (
        "duplicate-tag",
        duplicate_tag,
        "a tagged section's first tag repeated",
    ),
    (
        "tag-size-lies",
        tag_size_lies,
        "a tag's size larger or smaller than its payload",
    ),
    (
        "truncate",
        truncate,
        "the frame cut at a field boundary (size prefix fixed)",
    ),
    (
        "huge-varint",
        huge_varint,
        "a uvarint prefix replaced by 2^32-1 or an over-long (6-byte) encoding",
    ),
    (
        "invalid-utf8",
        invalid_utf8,
        "a string's bytes replaced by invalid UTF-8 of the same length",
    ),
    (
        "null-not-nullable",
        null_not_nullable,
        "null where the schema does not allow it",
    ),
    (
        "version-past-range",
        version_past_range,
        "the header's version past the broker's range (max+1, 32767, -1)",
    ),
    (
        "batch-bad-crc",
        batch_bad_crc,
        "a record batch whose CRC-32C is off by one bit",
    ),
    (
        "batch-unknown-codec",
        batch_unknown_codec,
        "a record batch with codec 5, 6 or 7 (CRC recomputed)",
    ),
    (
        "batch-length-lies",
        batch_length_lies,
        "a record batch whose BatchLength lies",
    ),
    (
        "compressed-bomb",
        compressed_bomb,
        "a gzip batch that inflates to up to 1 MiB (CRC right)",
    ),
];

/// The mutators that need a record batch in the request.
pub const NEEDS_BATCH: &[&str] = &[
    "batch-bad-crc",
    "batch-unknown-codec",
    "batch-length-lies",
    "compressed-bomb",
];

/// Bound on a bomb's decompressed size.
pub const BOMB_MAX: usize = 1 << 20;

/// Applies mutator `name`; `None` when the frame has nothing it can aim at.
pub fn apply(
    name: &str,
    frame: &[u8],
    layout: &Layout,
    rng: &mut Rng,
    ctx: &Ctx,
) -> Option<Mutated> {
    let (_, f, _) = MUTATORS.iter().find(|(n, _, _)| *n == name)?;
    f(frame, layout, rng, ctx)
}

// ---- helpers -------------------------------------------------------------------------------

/// Rewrites the 4-byte size prefix to the frame's length.
pub fn fix_size(v: &mut [u8]) {
    if v.len() >= 4 {
        let n = (v.len() - 4) as u32;
        v[..4].copy_from_slice(&n.to_be_bytes());
    }
}

/// `frame` with `len` bytes at `off` replaced by `new`, size prefix fixed.
pub fn splice(frame: &[u8], off: usize, len: usize, new: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(frame.len() + new.len());
    v.extend_from_slice(&frame[..off]);
    v.extend_from_slice(new);
    v.extend_from_slice(&frame[(off + len).min(frame.len())..]);
    fix_size(&mut v);
    v
}

pub fn uvarint(mut x: u64) -> Vec<u8> {
    let mut v = Vec::new();
    loop {
        let b = (x & 0x7f) as u8;
        x >>= 7;
        if x == 0 {
            v.push(b);
            return v;
        }
        v.push(b | 0x80);
    }
}

/// Reads a uvarint at `at`: (value, bytes).
pub fn read_uvarint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut x = 0u64;
    for i in 0..10 {
        let c = *b.get(at + i)?;
        x |= u64::from(c & 0x7f) << (7 * i);
        if c & 0x80 == 0 {
            return Some((x, i + 1));
        }
    }
    None
}

fn pick<'a>(rng: &mut Rng, v: &[&'a Slot]) -> Option<&'a Slot> {
    if v.is_empty() {
        None
    } else {
        Some(v[rng.below(v.len() as u64) as usize])
    }
}

fn candidates(l: &Layout, f: impl Fn(&Slot) -> bool) -> Vec<&Slot> {
    l.slots.iter().filter(|s| f(s)).collect()
}

/// The prefix a length or count `n` (-1 = null) takes in a slot's encoding.
fn prefix(s: &Slot, n: i64) -> Vec<u8> {
    if s.compact {
        uvarint((n + 1).max(0) as u64)
    } else if s.what == What::Str {
        (n as i16).to_be_bytes().to_vec()
    } else {
        (n as i32).to_be_bytes().to_vec()
    }
}

/// The length or count a slot's prefix holds (-1 for null).
fn stored(frame: &[u8], s: &Slot) -> Option<i64> {
    let b = frame.get(s.offset..s.offset + s.hdr)?;
    if s.compact {
        let (x, _) = read_uvarint(b, 0)?;
        Some(x as i64 - 1)
    } else if s.hdr == 2 {
        Some(i64::from(i16::from_be_bytes([b[0], b[1]])))
    } else if s.hdr == 4 {
        Some(i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])))
    } else {
        None
    }
}

fn prefixed(s: &Slot) -> bool {
    matches!(
        s.what,
        What::Str | What::Bytes | What::Array | What::Records
    ) && s.hdr > 0
        && !s.covered
        && !s.in_header
}

/// A lie about `n`: one more, one less, far more, negative, the type's maximum.
fn lie(rng: &mut Rng, n: i64, s: &Slot) -> i64 {
    let max = if s.compact {
        i64::from(i32::MAX) - 1
    } else if s.what == What::Str {
        i64::from(i16::MAX)
    } else {
        i64::from(i32::MAX)
    };
    let choices = [n + 1, n - 1, n + 1000, -2, max];
    let mut v = choices[rng.below(choices.len() as u64) as usize];
    if v == n {
        v = n + 1;
    }
    // A compact prefix cannot say less than -1 (0 = null).
    if s.compact && v < -1 {
        v = max;
    }
    v
}

// ---- mutators ------------------------------------------------------------------------------

fn count_lies(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| s.what == What::Array && prefixed(s) && !s.null),
    )?;
    let n = stored(frame, s)?;
    let v = lie(rng, n, s);
    Some(Mutated {
        bytes: splice(frame, s.offset, s.hdr, &prefix(s, v)),
        note: format!("{} at {}: count {n} → {v}", s.name, s.offset),
    })
}

fn length_lies(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| {
            matches!(s.what, What::Str | What::Bytes) && prefixed(s) && !s.null
        }),
    )?;
    let n = stored(frame, s)?;
    let v = lie(rng, n, s);
    Some(Mutated {
        bytes: splice(frame, s.offset, s.hdr, &prefix(s, v)),
        note: format!("{} at {}: length {n} → {v}", s.name, s.offset),
    })
}

fn compact_confusion(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(rng, &candidates(l, |s| prefixed(s) && !s.null))?;
    let n = stored(frame, s)?;
    let mut other = *s;
    other.compact = !s.compact;
    Some(Mutated {
        bytes: splice(frame, s.offset, s.hdr, &prefix(&other, n)),
        note: format!(
            "{} at {}: length {n} written {}",
            s.name,
            s.offset,
            if s.compact {
                "non-compact (int16/int32) where compact is due"
            } else {
                "compact (uvarint) where int16/int32 is due"
            }
        ),
    })
}

fn header_version(frame: &[u8], l: &Layout, _: &mut Rng, _: &Ctx) -> Option<Mutated> {
    if let Some(sec) = l
        .slots
        .iter()
        .find(|s| s.in_header && s.what == What::Section)
    {
        return Some(Mutated {
            bytes: splice(frame, sec.offset, sec.len, &[]),
            note: "header v2's tagged section removed (a v1 header where v2 is due)".into(),
        });
    }
    let cid = l
        .slots
        .iter()
        .find(|s| s.in_header && s.name == "ClientId")?;
    let at = cid.offset + cid.len;
    Some(Mutated {
        bytes: splice(frame, at, 0, &[0]),
        note: "an empty tagged section added to the header (a v2 header where v1 is due)".into(),
    })
}

/// A section's count and the bytes of its tags.
fn section_parts(frame: &[u8], s: &Slot) -> Option<(u64, usize)> {
    let (count, w) = read_uvarint(frame, s.offset)?;
    Some((count, w))
}

fn unknown_tag(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| s.what == What::Section && !s.covered),
    )?;
    let (count, w) = section_parts(frame, s)?;
    // Above every tag the spec defines, so the section stays in ascending order.
    let tag = 10_000 + rng.below(1000);
    let mut new = uvarint(count + 1);
    new.extend_from_slice(&frame[s.offset + w..s.offset + s.len]);
    new.extend(uvarint(tag));
    new.extend(uvarint(3));
    new.extend_from_slice(b"kin");
    Some(Mutated {
        bytes: splice(frame, s.offset, s.len, &new),
        note: format!(
            "unknown tag {tag} (3 bytes) appended to the section at {}",
            s.offset
        ),
    })
}

fn duplicate_tag(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let tags: Vec<&Slot> = candidates(l, |s| s.what == What::Tag && !s.covered);
    let s = pick(rng, &tags)?;
    // Its section: the last one that starts before it.
    let sec = l.slots.iter().rfind(|x| {
        x.what == What::Section && x.offset < s.offset && x.offset + x.len >= s.offset + s.len
    })?;
    let (count, w) = section_parts(frame, sec)?;
    let mut new = uvarint(count + 1);
    new.extend_from_slice(&frame[sec.offset + w..s.offset + s.len]);
    new.extend_from_slice(&frame[s.offset..s.offset + s.len]);
    new.extend_from_slice(&frame[s.offset + s.len..sec.offset + sec.len]);
    Some(Mutated {
        bytes: splice(frame, sec.offset, sec.len, &new),
        note: format!("the tag at {} repeated right after itself", s.offset),
    })
}

fn tag_size_lies(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(rng, &candidates(l, |s| s.what == What::Tag && !s.covered))?;
    let (tag, tw) = read_uvarint(frame, s.offset)?;
    let (size, sw) = read_uvarint(frame, s.offset + tw)?;
    let choices = [
        size + 1,
        size.saturating_sub(1),
        size + 100,
        u64::from(u32::MAX),
    ];
    let mut v = choices[rng.below(choices.len() as u64) as usize];
    if v == size {
        v = size + 1;
    }
    Some(Mutated {
        bytes: splice(frame, s.offset + tw, sw, &uvarint(v)),
        note: format!("tag {tag} at {}: size {size} → {v}", s.offset),
    })
}

fn truncate(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    // Every field boundary past the header's api key and version.
    let mut cuts: Vec<usize> = l
        .slots
        .iter()
        .flat_map(|s| [s.offset, s.offset + s.len])
        .filter(|&c| c >= 8 && c < frame.len())
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    if cuts.is_empty() {
        return None;
    }
    let at = cuts[rng.below(cuts.len() as u64) as usize];
    let mut v = frame[..at].to_vec();
    fix_size(&mut v);
    Some(Mutated {
        bytes: v,
        note: format!("cut at byte {at} of {}", frame.len()),
    })
}

fn huge_varint(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| {
            s.compact && !s.covered && !s.in_header && (prefixed(s) || s.what == What::Section)
        }),
    )?;
    let (x, w) = read_uvarint(frame, s.offset)?;
    let (new, what): (Vec<u8>, String) = if rng.chance(2) {
        (
            vec![0xff, 0xff, 0xff, 0xff, 0x0f],
            "2^32-1 (5 bytes)".into(),
        )
    } else {
        // The same value, over-long: six bytes, more than a 32-bit uvarint may take.
        let mut v = Vec::new();
        let mut y = x;
        for _ in 0..5 {
            v.push((y & 0x7f) as u8 | 0x80);
            y >>= 7;
        }
        v.push(0);
        (v, format!("{x} in 6 bytes"))
    };
    Some(Mutated {
        bytes: splice(frame, s.offset, w, &new),
        note: format!("{} at {}: uvarint {x} → {what}", s.name, s.offset),
    })
}

fn invalid_utf8(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| s.what == What::Str && !s.null && s.len > s.hdr),
    )?;
    let body = s.len - s.hdr;
    let pat: &[u8] = match rng.below(3) {
        0 => &[0xff],
        1 => &[0xc3, 0x28],
        _ => &[0xed, 0xa0, 0x80],
    };
    let new: Vec<u8> = pat.iter().copied().cycle().take(body).collect();
    Some(Mutated {
        bytes: splice(frame, s.offset + s.hdr, body, &new),
        note: format!("{} at {}: {body} bytes of invalid UTF-8", s.name, s.offset),
    })
}

fn null_not_nullable(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| prefixed(s) && !s.nullable && !s.null),
    )?;
    Some(Mutated {
        bytes: splice(frame, s.offset, s.len, &prefix(s, -1)),
        note: format!(
            "{} at {}: null, which the schema does not allow",
            s.name, s.offset
        ),
    })
}

fn version_past_range(frame: &[u8], _: &Layout, rng: &mut Rng, ctx: &Ctx) -> Option<Mutated> {
    if frame.len() < 8 {
        return None;
    }
    let choices = [ctx.max_version.saturating_add(1), i16::MAX, -1];
    let v = choices[rng.below(3) as usize];
    Some(Mutated {
        bytes: splice(frame, 6, 2, &v.to_be_bytes()),
        note: format!("header version → {v} (broker max {})", ctx.max_version),
    })
}

fn batch_slot<'a>(l: &'a Layout, rng: &mut Rng, what: What) -> Option<&'a Slot> {
    pick(rng, &candidates(l, |s| s.what == what))
}

fn batch_bad_crc(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = batch_slot(l, rng, What::BatchCrc)?;
    let bit = rng.below(32) as usize;
    let mut v = frame.to_vec();
    v[s.offset + 3 - bit / 8] ^= 1 << (bit % 8);
    Some(Mutated {
        bytes: v,
        note: format!("batch CRC at {}: bit {bit} flipped", s.offset),
    })
}

/// The batch that holds slot `s`.
fn batch_of<'a>(l: &'a Layout, s: &Slot) -> Option<&'a Slot> {
    l.slots
        .iter()
        .rfind(|b| b.what == What::Batch && b.offset <= s.offset && s.offset < b.offset + b.len)
}

/// Recomputes the CRC-32C of the batch (from Attributes to its end).
fn fix_crc(v: &mut [u8], batch: &Slot) {
    // Batch v2: BaseOffset 8, BatchLength 4, PartitionLeaderEpoch 4, Magic 1, Crc 4.
    let crc_at = batch.offset + 17;
    let end = (batch.offset + batch.len).min(v.len());
    if crc_at + 4 > end {
        return;
    }
    let c = crc32c::crc32c(&v[crc_at + 4..end]);
    v[crc_at..crc_at + 4].copy_from_slice(&c.to_be_bytes());
}

fn batch_unknown_codec(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = batch_slot(l, rng, What::BatchAttributes)?;
    let b = batch_of(l, s)?;
    let codec = 5 + rng.below(3) as u8;
    let mut v = frame.to_vec();
    v[s.offset + 1] = (v[s.offset + 1] & !7) | codec;
    fix_crc(&mut v, b);
    Some(Mutated {
        bytes: v,
        note: format!("batch at {}: codec {codec} (CRC recomputed)", b.offset),
    })
}

fn batch_length_lies(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = batch_slot(l, rng, What::BatchLength)?;
    let b = frame.get(s.offset..s.offset + 4)?;
    let n = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let choices = [n + 1, n - 1, n + 4096, 0, -1, i32::MAX];
    let v = choices[rng.below(choices.len() as u64) as usize];
    let mut out = frame.to_vec();
    out[s.offset..s.offset + 4].copy_from_slice(&v.to_be_bytes());
    Some(Mutated {
        bytes: out,
        note: format!("BatchLength at {}: {n} → {v}", s.offset),
    })
}

fn compressed_bomb(frame: &[u8], l: &Layout, rng: &mut Rng, _: &Ctx) -> Option<Mutated> {
    let s = pick(
        rng,
        &candidates(l, |s| s.what == What::Records && s.hdr > 0 && !s.covered),
    )?;
    let size = [64 << 10, 256 << 10, BOMB_MAX][rng.below(3) as usize];
    let batch = bomb_batch(size);
    let mut new = prefix(s, batch.len() as i64);
    new.extend_from_slice(&batch);
    Some(Mutated {
        bytes: splice(frame, s.offset, s.len, &new),
        note: format!(
            "{} at {}: a {}-byte gzip batch inflating to {size} bytes",
            s.name,
            s.offset,
            batch.len()
        ),
    })
}

fn varint(x: i64) -> Vec<u8> {
    uvarint(((x << 1) ^ (x >> 63)) as u64)
}

/// A batch v2 (gzip, CRC right) of one record whose value is `size` zero bytes.
pub fn bomb_batch(size: usize) -> Vec<u8> {
    use std::io::Write;
    let size = size.min(BOMB_MAX);
    let mut rec = vec![0u8]; // attributes
    rec.extend(varint(0)); // timestamp delta
    rec.extend(varint(0)); // offset delta
    rec.extend(varint(-1)); // key: null
    rec.extend(varint(size as i64));
    rec.resize(rec.len() + size, 0);
    rec.extend(varint(0)); // headers
    let mut records = varint(rec.len() as i64);
    records.extend_from_slice(&rec);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let _ = gz.write_all(&records);
    let body = gz.finish().unwrap_or_default();
    let mut after_crc = Vec::new();
    after_crc.extend_from_slice(&1i16.to_be_bytes()); // attributes: gzip
    after_crc.extend_from_slice(&0i32.to_be_bytes()); // last offset delta
    after_crc.extend_from_slice(&0i64.to_be_bytes()); // base timestamp
    after_crc.extend_from_slice(&0i64.to_be_bytes()); // max timestamp
    after_crc.extend_from_slice(&(-1i64).to_be_bytes()); // producer id
    after_crc.extend_from_slice(&(-1i16).to_be_bytes()); // producer epoch
    after_crc.extend_from_slice(&(-1i32).to_be_bytes()); // base sequence
    after_crc.extend_from_slice(&1i32.to_be_bytes()); // records
    after_crc.extend_from_slice(&body);
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes());
    b.extend_from_slice(&((4 + 1 + 4 + after_crc.len()) as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend_from_slice(&crc32c::crc32c(&after_crc).to_be_bytes());
    b.extend_from_slice(&after_crc);
    b
}
