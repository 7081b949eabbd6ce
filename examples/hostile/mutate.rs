//! Mutators shared by the generators: bytes (bit flips, byte runs, truncation, splices,
//! length-looking words set to extremes) and JSON values (types swapped, extremes, members
//! dropped or invented, structures repeated or nested deep).

use kinspect::wire::sample::Rng;
use serde_json::{json, Map, Value as J};

pub fn pick<'a, T>(rng: &mut Rng, xs: &'a [T]) -> &'a T {
    &xs[rng.below(xs.len() as u64) as usize]
}

/// 32-bit words a length field should never hold (or should, exactly at a limit).
pub const LIES32: [u32; 12] = [
    0x7fff_ffff,
    0xffff_ffff,
    0x8000_0000,
    0,
    1,
    100 * 1024 * 1024,
    100 * 1024 * 1024 + 1,
    0x00ff_ffff,
    0xffff,
    0x1_0000,
    0x7fff_fffe,
    64 * 1024 * 1024,
];

/// One to `max` byte mutations of `b`.
pub fn bytes(b: &mut Vec<u8>, rng: &mut Rng, max: u64) {
    for _ in 0..=rng.below(max.max(1)) {
        one(b, rng, None);
    }
}

/// One byte mutation; `other` is splice material.
pub fn one(b: &mut Vec<u8>, rng: &mut Rng, other: Option<&[u8]>) {
    if b.is_empty() {
        b.extend((0..=rng.below(8)).map(|_| rng.next_u64() as u8));
        return;
    }
    let len = b.len() as u64;
    let at = rng.below(len) as usize;
    match rng.below(10) {
        0 | 1 => {
            for _ in 0..=rng.below(8) {
                let i = rng.below(len) as usize;
                b[i] ^= 1 << rng.below(8);
            }
        }
        2 => {
            let v = *pick(rng, &[0x00, 0xff, 0x7f, 0x80, 0x01]);
            let n = 1 + rng.below(64) as usize;
            let random = rng.chance(3);
            for x in b.iter_mut().skip(at).take(n) {
                *x = if random { rng.next_u64() as u8 } else { v };
            }
        }
        3 => b.truncate(at),
        4 => {
            let w = pick(rng, &LIES32).to_be_bytes();
            let le = rng.chance(3);
            for (k, x) in b.iter_mut().skip(at).take(4).enumerate() {
                *x = if le { w[3 - k] } else { w[k] };
            }
        }
        5 => {
            // Duplicate a chunk (repeats records, frames, fields).
            let n = (1 + rng.below(512) as usize).min(b.len() - at);
            let chunk = b[at..at + n].to_vec();
            let to = rng.below(len) as usize;
            let times = 1 + rng.below(4) as usize;
            for _ in 0..times {
                b.splice(to..to, chunk.iter().copied());
            }
        }
        6 => {
            let n = (1 + rng.below(256) as usize).min(b.len() - at);
            b.drain(at..at + n);
        }
        7 => {
            let n = 1 + rng.below(32) as usize;
            let ins: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            b.splice(at..at, ins);
        }
        8 => {
            if let Some(o) = other.filter(|o| !o.is_empty()) {
                let from = rng.below(o.len() as u64) as usize;
                b.truncate(at);
                b.extend_from_slice(&o[from..]);
            } else {
                let i = rng.below(len) as usize;
                b[i] = rng.next_u64() as u8;
            }
        }
        _ => {
            // A varint-looking run: continuation bits forever.
            let n = 1 + rng.below(12) as usize;
            for x in b.iter_mut().skip(at).take(n) {
                *x = 0xff;
            }
        }
    }
}

/// Values that strain a decoder or encoder wherever they land.
pub fn hostile_value(rng: &mut Rng) -> J {
    match rng.below(22) {
        0 => J::Null,
        1 => J::Bool(rng.chance(2)),
        2 => json!(i64::MAX),
        3 => json!(i64::MIN),
        4 => json!(u64::MAX),
        5 => json!(1.5),
        6 => json!(-1),
        7 => json!(2147483648u64),
        8 => json!(-32769),
        9 => json!(1e308),
        10 => json!(""),
        11 => J::String("x".repeat(1 + rng.below(200_000) as usize)),
        12 => json!("not base64 !!"),
        13 => json!("AAAA"),
        14 => json!([]),
        15 => json!({}),
        16 => json!("\u{0}\u{ffff}\u{10ffff}é"),
        17 => json!({"_error": "x", "_data": "////"}),
        18 => J::Array(vec![json!(0); rng.below(100_000) as usize]),
        19 => json!("0-2147483647"),
        20 => json!(-9223372036854775807i64),
        _ => json!(65536),
    }
}

/// Counts the values of `v` (to pick one uniformly).
fn count(v: &J) -> usize {
    1 + match v {
        J::Array(a) => a.iter().map(count).sum(),
        J::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// The `n`-th value of `v` in preorder, and its parent container's key (when in an object).
fn nth<'a>(v: &'a mut J, n: &mut usize) -> Option<&'a mut J> {
    if *n == 0 {
        return Some(v);
    }
    *n -= 1;
    match v {
        J::Array(a) => a.iter_mut().find_map(|c| nth(c, n)),
        J::Object(o) => o.values_mut().find_map(|c| nth(c, n)),
        _ => None,
    }
}

/// Roughly the serialized size of `v`, and its nesting depth.
pub fn size_depth(v: &J) -> (usize, usize) {
    match v {
        J::Array(a) => a
            .iter()
            .map(size_depth)
            .fold((2, 1), |(s, d), (cs, cd)| (s + cs + 1, d.max(cd + 1))),
        J::Object(o) => o
            .iter()
            .map(|(k, c)| (k.len() + 4, size_depth(c)))
            .fold((2, 1), |(s, d), (k, (cs, cd))| (s + k + cs, d.max(cd + 1))),
        J::String(x) => (x.len() + 2, 0),
        _ => (8, 0),
    }
}

/// Inputs stay under this (a mutation that would pass it is undone): repeating a long string
/// thousands of times in twenty documents once took the harness to 23 GB.
const MAX_JSON: usize = 2 << 20;

/// One structural mutation somewhere in `v`, undone when it makes `v` too large.
pub fn json_one(v: &mut J, rng: &mut Rng) {
    let before = v.clone();
    json_one_unbounded(v, rng);
    if size_depth(v).0 > MAX_JSON {
        *v = before;
    }
}

fn json_one_unbounded(v: &mut J, rng: &mut Rng) {
    let total = count(v);
    let mut n = rng.below(total as u64) as usize;
    let Some(t) = nth(v, &mut n) else { return };
    match rng.below(12) {
        0..=3 => *t = hostile_value(rng),
        4 => {
            if let J::Object(o) = t {
                if !o.is_empty() {
                    let k = rng.below(o.len() as u64) as usize;
                    let key = o.keys().nth(k).cloned().unwrap_or_default();
                    o.shift_remove(&key);
                }
            }
        }
        5 => {
            if let J::Object(o) = t {
                let name = pick(
                    rng,
                    &[
                        "Unknown",
                        "_trailing",
                        "_undecoded",
                        "_compressed",
                        "_records_count",
                        "length",
                        "token",
                        "",
                    ],
                )
                .to_string();
                o.insert(name, hostile_value(rng));
            }
        }
        6 => {
            if let J::Array(a) = t {
                if let Some(first) = a.first().filter(|f| count(f) < 50).cloned() {
                    let times = 1 + rng.below(2000) as usize;
                    a.extend(std::iter::repeat_n(first, times));
                }
            }
        }
        7 => {
            // Wrap in itself a few levels deep.
            let depth = 1 + rng.below(200) as usize;
            let mut inner = t.take();
            for _ in 0..depth {
                inner = if rng.chance(2) {
                    J::Array(vec![inner])
                } else {
                    let mut m = Map::new();
                    m.insert("x".into(), inner);
                    J::Object(m)
                };
            }
            *t = inner;
        }
        8 => {
            if let J::Number(num) = t {
                let x = num.as_i64().unwrap_or(0);
                *t = json!(x.wrapping_add(*pick(rng, &[1i64, -1, 1 << 31, 1 << 15, 1 << 7])));
            } else if let J::String(s) = t {
                *t = J::Number((s.len() as u64).into());
            }
        }
        9 => {
            if let J::Array(a) = t {
                a.clear();
            } else if let J::Object(o) = t {
                o.clear();
            }
        }
        10 => {
            if let J::String(s) = t {
                let cut = rng.below(s.len() as u64 + 1) as usize;
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| s.is_char_boundary(c))
                    .unwrap_or(0);
                s.truncate(cut);
            }
        }
        _ => {
            if let J::Array(a) = t {
                a.reverse();
            } else {
                *t = J::Array(vec![t.take()]);
            }
        }
    }
}

const INSERTS: &[&[u8]] = &[
    b"/*",
    b"//",
    b"\xff\xfe",
    b"\x00",
    b"{",
    b"]",
    b"\"",
    b",,",
    b"\xef\xbb\xbf",
    b"\\u00",
    b"1e99999",
];

/// Text-level damage to serialized JSON: cut, flipped, unbalanced, invalid UTF-8.
pub fn json_text(s: &mut Vec<u8>, rng: &mut Rng) {
    match rng.below(6) {
        0 => {
            let at = rng.below(s.len() as u64 + 1) as usize;
            s.truncate(at);
        }
        1 => {
            let at = rng.below(s.len() as u64 + 1) as usize;
            let ins = *pick(rng, INSERTS);
            s.splice(at..at, ins.iter().copied());
        }
        2 => {
            let depth = 1 + rng.below(200_000) as usize;
            let at = rng.below(s.len() as u64 + 1) as usize;
            let open = if rng.chance(2) { b'[' } else { b'{' };
            s.splice(at..at, std::iter::repeat_n(open, depth));
        }
        _ => one(s, rng, None),
    }
}
