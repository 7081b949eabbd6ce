//! Decompression throughput per codec, through `records::codec::decompress` (the path every
//! compressed batch takes, caps included), plus whole-batch decoding of a compressed batch.
//!
//! Run: `CARGO_TARGET_DIR=... cargo bench --bench codecs` (release profile). Prints MiB/s of
//! decompressed output per codec; `KINSPECT_BENCH_MIB` sets the corpus size (default 16).

use kinspect::records::codec::{decompress, output_cap, Codec};
use kinspect::records::{decode_records, RecordsContext};
use kinspect::wire::tree::{Kind, Tree};
use std::io::Write;
use std::time::{Duration, Instant};

/// Log-like text: what producers in the bundled captures send, at volume.
fn corpus(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 256);
    let mut i = 0u64;
    while out.len() < bytes {
        let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let line = format!(
            "{{\"ts\":{},\"user\":\"u{}\",\"event\":\"{}\",\"latency_ms\":{},\"path\":\"/api/v1/items/{}\"}}\n",
            1_767_225_600_000u64 + i * 7,
            x % 5000,
            ["view", "click", "purchase", "scroll"][(x >> 20) as usize % 4],
            (x >> 32) % 900,
            (x >> 40) % 100_000
        );
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out
}

fn xerial(data: &[u8]) -> Vec<u8> {
    let mut x = vec![
        0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1,
    ];
    for chunk in data.chunks(32 * 1024) {
        let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
        x.extend_from_slice(&(c.len() as i32).to_be_bytes());
        x.extend_from_slice(&c);
    }
    x
}

fn compress(codec: &str, data: &[u8]) -> Vec<u8> {
    match codec {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "snappy-raw" => snap::raw::Encoder::new().compress_vec(data).unwrap(),
        "snappy-xerial" => xerial(data),
        "lz4" => {
            let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zstd" => {
            ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
        }
        _ => unreachable!(),
    }
}

/// Runs `f` until at least `min` has passed; returns the mean time per run.
fn time(min: Duration, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < min || n < 3 {
        f();
        n += 1;
    }
    start.elapsed() / n
}

fn main() {
    let mib: usize = std::env::var("KINSPECT_BENCH_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let data = corpus(mib * 1024 * 1024);
    let min = Duration::from_millis(1500);
    println!(
        "corpus: {} MiB of JSON-ish log lines",
        data.len() / (1024 * 1024)
    );
    println!(
        "{:<14} {:>10} {:>8} {:>12}",
        "codec", "compressed", "ratio", "MiB/s out"
    );
    for (name, codec) in [
        ("gzip", Codec::Gzip),
        ("snappy-raw", Codec::Snappy),
        ("snappy-xerial", Codec::Snappy),
        ("lz4", Codec::Lz4),
        ("zstd", Codec::Zstd),
    ] {
        let z = compress(name, &data);
        let cap = output_cap(z.len(), 0);
        let out = decompress(codec, &z, 2, cap).expect("round trip");
        assert_eq!(out.data, data, "{name}");
        let t = time(min, || {
            let d = decompress(codec, &z, 2, cap).unwrap();
            std::hint::black_box(d.data.len());
        });
        let mibs = data.len() as f64 / (1024.0 * 1024.0) / t.as_secs_f64();
        println!(
            "{name:<14} {:>10} {:>7.1}x {mibs:>12.0}",
            z.len(),
            data.len() as f64 / z.len() as f64
        );
    }
    batch_decode();
}

/// A gzip v2 batch of 10,000 records decoded to a tree (decompression + record walking).
fn batch_decode() {
    let mut recs = Vec::new();
    let lines = corpus(2 * 1024 * 1024);
    let lines: Vec<&[u8]> = lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .take(10_000)
        .collect();
    for (i, v) in lines.iter().enumerate() {
        let mut body = vec![0u8, 0];
        zigzag(i as i64, &mut body);
        zigzag(-1, &mut body);
        zigzag(v.len() as i64, &mut body);
        body.extend_from_slice(v);
        body.push(0);
        zigzag(body.len() as i64, &mut recs);
        recs.extend_from_slice(&body);
    }
    let z = compress("gzip", &recs);
    let mut body = Vec::new();
    body.extend_from_slice(&1i16.to_be_bytes());
    body.extend_from_slice(&(lines.len() as i32 - 1).to_be_bytes());
    body.extend_from_slice(&[0u8; 16]);
    body.extend_from_slice(&(-1i64).to_be_bytes());
    body.extend_from_slice(&(-1i16).to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&(lines.len() as i32).to_be_bytes());
    body.extend_from_slice(&z);
    let mut batch = 0i64.to_be_bytes().to_vec();
    batch.extend_from_slice(&((body.len() + 9) as i32).to_be_bytes());
    batch.extend_from_slice(&0i32.to_be_bytes());
    batch.push(2);
    batch.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
    batch.extend_from_slice(&body);
    let mut tree = Tree::new();
    let ctx = RecordsContext::default();
    let run = |tree: &mut Tree| {
        tree.reset(&batch);
        let root = tree.open("", Kind::Array, 0, 0);
        decode_records(tree, 0, 0, batch.len() as u32, &ctx, "records");
        tree.close(root, batch.len() as u32);
    };
    run(&mut tree);
    assert!(tree.diags.is_empty(), "{:?}", tree.diags);
    let t = time(Duration::from_millis(1500), || run(&mut tree));
    let recs_per_s = lines.len() as f64 / t.as_secs_f64();
    println!(
        "batch decode (gzip, {} records, {} KiB uncompressed): {:.2} ms, {:.2} M records/s, {} nodes",
        lines.len(),
        recs.len() / 1024,
        t.as_secs_f64() * 1e3,
        recs_per_s / 1e6,
        tree.nodes.len()
    );
}

fn zigzag(v: i64, out: &mut Vec<u8>) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}
