//! Categories `bombs` (compressed batches of every codec that expand to far more than they
//! hold: zeros, 0x01 runs, millions of tiny records, headers that lie, nested legacy
//! wrappers; in log segments, raw Produce frames and captures) and `logs` (log segments,
//! KRaft snapshots and quorum-state files written from scratch, then damaged, with the
//! resync shapes that once made reading quadratic).

use crate::frames::{decode_output, other_command};
use crate::mutate::{self, pick};
use crate::run::{Case, Out};
use kinspect::capture::testgen::{self, Conversation, Link};
use kinspect::protocol::builtin;
use kinspect::wire::encode::encode_message;
use kinspect::wire::plan::shared;
use kinspect::wire::sample::{varied, Rng};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

pub const GZIP: u8 = 1;
pub const SNAPPY: u8 = 2;
pub const LZ4: u8 = 3;
pub const ZSTD: u8 = 4;

fn varint(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn uvarint(out: &mut Vec<u8>, mut z: u64) {
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// One v2 record.
pub fn record(
    offset_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], &[u8])],
) -> Vec<u8> {
    let mut b = vec![0u8];
    varint(&mut b, offset_delta);
    varint(&mut b, offset_delta);
    for x in [key, value] {
        match x {
            Some(x) => {
                varint(&mut b, x.len() as i64);
                b.extend_from_slice(x);
            }
            None => varint(&mut b, -1),
        }
    }
    varint(&mut b, headers.len() as i64);
    for (k, v) in headers {
        varint(&mut b, k.len() as i64);
        b.extend_from_slice(k);
        varint(&mut b, v.len() as i64);
        b.extend_from_slice(v);
    }
    let mut out = Vec::new();
    varint(&mut out, b.len() as i64);
    out.extend(b);
    out
}

/// A v2 batch around `payload` (records, compressed when `attrs & 7` says so).
pub fn batch(base_offset: i64, attrs: i16, count: i32, payload: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(payload.len() + 40);
    body.extend_from_slice(&attrs.to_be_bytes());
    body.extend_from_slice(&(count.max(1) - 1).to_be_bytes());
    body.extend_from_slice(&1_714_557_600_000i64.to_be_bytes());
    body.extend_from_slice(&1_714_557_600_000i64.to_be_bytes());
    body.extend_from_slice(&(-1i64).to_be_bytes());
    body.extend_from_slice(&(-1i16).to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&count.to_be_bytes());
    body.extend_from_slice(payload);
    let crc = crc32c::crc32c(&body);
    let mut out = Vec::with_capacity(body.len() + 21);
    out.extend_from_slice(&base_offset.to_be_bytes());
    out.extend_from_slice(&((body.len() + 9) as i32).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out.push(2);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend(body);
    out
}

/// A legacy (magic 0/1) message with its offset and size.
pub fn legacy(
    offset: i64,
    magic: u8,
    attrs: u8,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    let mut m = vec![magic, attrs];
    if magic == 1 {
        m.extend_from_slice(&1_714_557_600_000i64.to_be_bytes());
    }
    for x in [key, value] {
        match x {
            Some(x) => {
                m.extend_from_slice(&(x.len() as i32).to_be_bytes());
                m.extend_from_slice(x);
            }
            None => m.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let crc = crc32fast::hash(&m);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((m.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend(m);
    out
}

/// Compresses `total` bytes produced by repeating `unit` with codec `codec`, streaming.
pub fn compress(codec: u8, unit: &[u8], total: usize, xerial: bool) -> Vec<u8> {
    let feed = |w: &mut dyn Write| {
        // At least one unit (a unit over 64 KiB left the chunk empty and this loop writing
        // nothing forever); an empty unit is zeros.
        let mut chunk = Vec::with_capacity((1 << 16) + unit.len());
        if unit.is_empty() {
            chunk.resize(1 << 16, 0);
        } else {
            loop {
                chunk.extend_from_slice(unit);
                if chunk.len() + unit.len() > 1 << 16 {
                    break;
                }
            }
        }
        let mut left = total;
        while left > 0 {
            let n = left.min(chunk.len());
            w.write_all(&chunk[..n]).expect("in-memory write");
            left -= n;
        }
    };
    match codec {
        // Past 64 MiB (the per-batch limit) the stream is concatenated members/frames of 16 MiB
        // each (both codecs allow it, and Kafka's readers accept it): made in a fraction of
        // the time, and a shape a decoder must bound as well.
        GZIP | ZSTD if total > CHUNK => {
            let one = compress(codec, unit, CHUNK, false);
            let mut out = Vec::with_capacity(one.len() * (total / CHUNK + 1));
            for _ in 0..total / CHUNK {
                out.extend_from_slice(&one);
            }
            out.extend(compress(codec, unit, total % CHUNK, false));
            out
        }
        GZIP => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            feed(&mut e);
            e.finish().expect("gzip")
        }
        SNAPPY if xerial => {
            let mut out = b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01".to_vec();
            let mut enc = snap::raw::Encoder::new();
            let mut buf = Vec::new();
            feed(&mut buf);
            // Identical blocks compress identically: compress each distinct one once.
            let mut last: Option<(&[u8], Vec<u8>)> = None;
            for block in buf.chunks(32 * 1024) {
                if last.as_ref().is_none_or(|(b, _)| *b != block) {
                    last = Some((block, enc.compress_vec(block).expect("snappy")));
                }
                let c = &last.as_ref().expect("set").1;
                out.extend_from_slice(&(c.len() as u32).to_be_bytes());
                out.extend_from_slice(c);
            }
            out
        }
        SNAPPY => {
            let mut buf = Vec::new();
            feed(&mut buf);
            snap::raw::Encoder::new()
                .compress_vec(&buf)
                .expect("snappy")
        }
        LZ4 => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            feed(&mut e);
            e.finish().expect("lz4")
        }
        _ => {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).expect("zstd");
            feed(&mut e);
            e.finish().expect("zstd")
        }
    }
}

const CHUNK: usize = 16 << 20;

type Key = (u8, u8, usize, bool);

/// Compressed bombs are costly to make and the same few come up again and again: made once.
type Cell = Arc<OnceLock<Arc<Vec<u8>>>>;

fn cached(codec: u8, pattern: u8, total: usize, xerial: bool) -> Arc<Vec<u8>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Cell>>> = OnceLock::new();
    let cell = CACHE
        .get_or_init(Default::default)
        .lock()
        .expect("cache")
        .entry((codec, pattern, total, xerial))
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let unit: Vec<u8> = match pattern {
            0 => vec![0],
            1 => vec![1],
            2 => record(0, None, None, &[]),
            3 => record(0, Some(b"k"), Some(b"v"), &[(b"h", b"x")]),
            _ => vec![0x02, 0x00],
        };
        Arc::new(compress(codec, &unit, total, xerial))
    })
    .clone()
}

fn codec_name(c: u8) -> &'static str {
    ["none", "gzip", "snappy", "lz4", "zstd"][c as usize]
}

/// The most a codec's bomb may expand to while the compressed input stays small.
fn sizes(codec: u8) -> &'static [usize] {
    const MI: usize = 1 << 20;
    match codec {
        SNAPPY => &[2_200_000, 8 * MI, 30 * MI],
        LZ4 => &[2_200_000, 16 * MI, 64 * MI, 64 * MI + 1, 200 * MI],
        _ => &[2_200_000, 16 * MI, 64 * MI, 64 * MI + 1, 300 * MI, 1 << 30],
    }
}

/// A Produce v7 request holding `records` for one partition.
pub fn produce(corr: i32, records: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(records.len() + 64);
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&7i16.to_be_bytes());
    b.extend_from_slice(&corr.to_be_bytes());
    b.extend_from_slice(&6i16.to_be_bytes());
    b.extend_from_slice(b"client");
    b.extend_from_slice(&(-1i16).to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&30_000i32.to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.push(b't');
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes());
    b.extend_from_slice(&(records.len() as i32).to_be_bytes());
    b.extend_from_slice(records);
    let mut out = (b.len() as i32).to_be_bytes().to_vec();
    out.extend(b);
    out
}

pub fn bombs_case(i: u64, rng: &mut Rng) -> Case {
    let codec = [GZIP, SNAPPY, LZ4, ZSTD][(i % 4) as usize];
    let total = *pick(rng, sizes(codec));
    let pattern = rng.below(5) as u8;
    let xerial = codec == SNAPPY && rng.chance(2);
    let nested = rng.chance(8);
    let c_bytes = cached(codec, pattern, total, xerial);
    let count = match pattern {
        2 => (total / 7) as i32,
        3 => (total / 13) as i32,
        _ => *pick(rng, &[1, 1000, i32::MAX, -1]),
    };
    let mut what = format!(
        "{} {} of pattern {pattern}{}",
        codec_name(codec),
        total,
        if xerial { " xerial" } else { "" }
    );
    let one = if nested {
        // Legacy wrappers inside wrappers, each compressed: depth beyond any limit.
        what = format!("{} nested legacy wrappers", codec_name(codec));
        let mut inner = legacy(0, 1, 0, None, Some(b"v"));
        for _ in 0..(2 + rng.below(100)) {
            let z = compress(codec, &inner, inner.len(), false);
            inner = legacy(0, 1, codec, None, Some(&z));
        }
        inner
    } else if rng.chance(6) {
        what += " legacy wrapper";
        legacy(0, 1, codec, None, Some(&c_bytes))
    } else {
        batch(0, i16::from(codec), count, &c_bytes)
    };
    let mut copies = *pick(rng, &[1usize, 1, 1, 2, 5, 20]);
    // Up to 4 frames of these copies: keep the input under the harness's 64 MiB (a bomb is
    // small compressed; an incompressible pattern is not).
    while copies > 1 && one.len() * copies * 4 > 48 << 20 {
        copies /= 2;
    }
    let mut recs = Vec::new();
    for k in 0..copies {
        let mut b = one.clone();
        b[..8].copy_from_slice(&(k as i64 * 1000).to_be_bytes());
        recs.extend(b);
    }
    what += &format!(", {copies} batches");
    let mut c = Case::new(String::new());
    let mut args: Vec<String> = vec!["decode".into()];
    decode_output(&mut c, &mut args, rng);
    let frames = *pick(rng, &[1, 1, 2, 4]);
    match rng.below(3) {
        0 => {
            c.file("00000000000000000000.log", recs);
            args.push("00000000000000000000.log".into());
            what += " in a log segment";
        }
        1 => {
            let mut raw = Vec::new();
            for k in 0..frames {
                raw.extend(produce(k, &recs));
            }
            c.file("produce.bin", raw);
            args.extend([
                "--input".to_string(),
                "raw".to_string(),
                "produce.bin".into(),
            ]);
            what += &format!(" in {frames} raw Produce frames");
        }
        _ => {
            let mut conv =
                Conversation::new(([10, 0, 0, 1], 40000).into(), ([10, 0, 0, 2], 9092).into());
            conv.handshake();
            for k in 0..frames {
                conv.send(true, &produce(k, &recs));
            }
            let r = testgen::records(&Link::Ethernet, &conv.packets, usize::MAX);
            c.file("bomb.pcap", testgen::pcap(1, &r, false, false, 262_144));
            args.push("bomb.pcap".into());
            what += &format!(" in {frames} captured Produce frames");
        }
    }
    c.what = what;
    c.args(args);
    c
}

/// Small valid batches: every codec, control batches, legacy messages, keys and headers.
fn some_batches(rng: &mut Rng, value: &mut dyn FnMut(&mut Rng) -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = 0i64;
    for _ in 0..(1 + rng.below(12)) {
        let n = 1 + rng.below(20) as i64;
        let mut recs = Vec::new();
        for d in 0..n {
            let v = value(rng);
            recs.extend(record(
                d,
                Some(format!("key-{d}").as_bytes()),
                Some(&v),
                if rng.chance(3) { &[(b"h", b"v")] } else { &[] },
            ));
        }
        match rng.below(8) {
            0 => out.extend(legacy(
                offset,
                rng.below(2) as u8,
                0,
                Some(b"k"),
                Some(&value(rng)),
            )),
            1 => {
                // A control batch: a commit marker.
                let marker = record(0, Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 0]), &[]);
                out.extend(batch(offset, 0x30, 1, &marker));
            }
            k => {
                let codec = (k % 5) as u8;
                let payload = if codec == 0 {
                    recs
                } else {
                    compress(codec, &recs, recs.len(), codec == SNAPPY && rng.chance(2))
                };
                out.extend(batch(
                    offset,
                    i16::from(codec) | if rng.chance(4) { 0x10 } else { 0 },
                    n as i32,
                    &payload,
                ));
            }
        }
        offset += n;
    }
    out
}

/// A KRaft metadata record value as the log holds it: frame version, key, version, message.
fn metadata_value(rng: &mut Rng) -> Vec<u8> {
    let proto = builtin();
    for _ in 0..20 {
        let key = rng.below(30) as i16;
        let ver = rng.below(3) as i16;
        if let Some(r) = proto.metadata_record(key, ver) {
            let j = varied(&shared(r.spec, ver), rng);
            let mut out = Vec::new();
            uvarint(&mut out, 1);
            uvarint(&mut out, key as u64);
            uvarint(&mut out, ver as u64);
            if encode_message(&shared(r.spec, ver), &j, &mut out, "").is_ok() {
                return out;
            }
        }
    }
    vec![1, 0, 0]
}

pub fn logs_case(i: u64, rng: &mut Rng) -> Case {
    let mut c = Case::new(String::new());
    // The two slow-on-purpose resync shapes come up on a fixed schedule (1 in 250 cases).
    let kind = match i % 500 {
        0 => 0,
        250 => 1,
        _ => 2 + i % 8,
    };
    let (name, mut data, what): (String, Vec<u8>, String) = match kind {
        0 => {
            // The quadratic-resync shape: a batch header with length 0 and magic 2, then 0x01s.
            let size = *pick(rng, &[256 << 10, 512 << 10, 1 << 20, 1_900_000, 2_000_000]);
            let mut d = vec![0u8; 8];
            d.extend_from_slice(&0i32.to_be_bytes());
            d.extend_from_slice(&0i32.to_be_bytes());
            d.push(2);
            d.resize(size, 1);
            (
                "00000000000000000000.log".into(),
                d,
                format!("len-0 magic-2 header, then 0x01 to {size} bytes"),
            )
        }
        1 => {
            // Header after header, each claiming to run past the end.
            let mut d = Vec::new();
            while d.len() < 1_500_000 {
                d.extend_from_slice(&0i64.to_be_bytes());
                d.extend_from_slice(&0x7fff_0000i32.to_be_bytes());
                d.extend_from_slice(&[0, 0, 0, 0, 2]);
                let fill = *pick(rng, &[0u8, 1, 2, 0xff]);
                let n = rng.below(40) as usize;
                d.extend(std::iter::repeat_n(fill, n));
            }
            (
                "00000000000000000000.log".into(),
                d,
                "repeated long-claiming headers".into(),
            )
        }
        2 => {
            let d = some_batches(rng, &mut metadata_value);
            let snap = rng.chance(2);
            let name = if snap {
                "__cluster_metadata-0/00000000000000000100-0000000001.checkpoint"
            } else {
                "__cluster_metadata-0/00000000000000000000.log"
            };
            (name.into(), d, "cluster metadata".into())
        }
        3 => {
            let q = format!(
                "{{\"leaderId\":{},\"leaderEpoch\":{},\"votedId\":-1,\"appliedOffset\":0,\"currentVoters\":[{{\"voterId\":1}}],\"data_version\":{}}}",
                rng.next_u64() as i32, rng.next_u64() as i64, rng.below(3)
            );
            ("quorum-state".into(), q.into_bytes(), "quorum-state".into())
        }
        _ => {
            let folder = *pick(
                rng,
                &[
                    "t-0",
                    "__consumer_offsets-3",
                    "__transaction_state-1",
                    "__share_group_state-0",
                    "__cluster_metadata-0",
                    ".",
                ],
            );
            let d = some_batches(rng, &mut |rng: &mut Rng| {
                (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect()
            });
            (
                format!("{folder}/00000000000000000000.log"),
                d,
                format!("batches in {folder}"),
            )
        }
    };
    let mut what = what;
    if kind >= 2 && !rng.chance(5) {
        mutate::bytes(&mut data, rng, 6);
        what += ", mutated";
    } else if kind < 2 && rng.chance(3) {
        // The same shapes under another name: read as raw frames or forced as a log.
        mutate::bytes(&mut data, rng, 2);
        what += ", slightly mutated";
    }
    let mut args: Vec<String> = Vec::new();
    if rng.chance(3) {
        other_command(&mut c, &mut args, rng, false);
    } else {
        args.push("decode".into());
        decode_output(&mut c, &mut args, rng);
    }
    if rng.chance(6) {
        args.extend([
            "--as".to_string(),
            pick(
                rng,
                &[
                    "consumer-offsets",
                    "transaction-state",
                    "share-group-state",
                    "cluster-metadata",
                    "raw",
                ],
            )
            .to_string(),
        ]);
    }
    if rng.chance(8) {
        args.extend(["--input".to_string(), "log".to_string()]);
    }
    if rng.chance(20) {
        c.out = Out::Jsonl;
        args = vec!["decode".into(), "-f".into(), "jsonl".into()];
    }
    args.push(name.clone());
    c.file(&name, data).args(args);
    c.what = what;
    c
}
