//! Decoding throughput on a realistic mix: every frame of the bundled real captures (requests and
//! responses of ~40 APIs from librdkafka, kafka-python, kafkajs, confluent-kafka against two
//! brokers), held in memory, decoded with `Decoder::decode_frame` and printed as JSON Lines by
//! the output printer into a reused buffer. Reports frames/s and MB/s of frame bytes for decode
//! alone and for decode + JSON Lines, with the records fields decoded into batches (the
//! default) and kept raw (`--records raw`).
//!
//! Run: `CARGO_TARGET_DIR=... cargo bench --bench decode` (a release build; `-- 5` runs ~5 s
//! per measurement instead of 2).

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::output::{Format, Options, Printer};
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::wire::decode::RecordsOptions;
use std::time::{Duration, Instant};

fn frames() -> Vec<(Hints, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("captures/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let f = std::fs::File::open(&p).expect("capture");
        let _ = read_capture(
            std::io::BufReader::new(f),
            &CaptureOptions::default(),
            &mut |e| {
                if let Event::Frame { hints, data, .. } = e {
                    out.push((hints, data.to_vec()));
                }
            },
        );
    }
    out
}

fn measure(name: &str, frames: &[(Hints, Vec<u8>)], secs: f64, mut f: impl FnMut(&Hints, &[u8])) {
    let bytes: usize = frames.iter().map(|(_, d)| d.len()).sum();
    // Warm up the plan caches and the arena.
    for (h, d) in frames {
        f(h, d);
    }
    let start = Instant::now();
    let mut rounds = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        for (h, d) in frames {
            f(h, d);
        }
        rounds += 1;
    }
    let t = start.elapsed().as_secs_f64();
    let n = rounds as f64 * frames.len() as f64;
    println!(
        "{name:<22} {:>10.0} frames/s {:>8.1} MB/s  ({rounds} rounds of {} frames, {bytes} bytes)",
        n / t,
        rounds as f64 * bytes as f64 / t / 1e6,
        frames.len()
    );
}

fn main() {
    let secs: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2.0);
    let frames = frames();
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    measure("decode", &frames, secs, |h, d| {
        dec.decode_frame(d, h, &mut pdu)
    });
    let opts = Options {
        format: Format::Jsonl,
        annotate: false,
        color: false,
        show_secrets: false,
    };
    // `records raw`: the records fields kept as bytes (the decoder before batches were decoded
    // in place), for comparison in the same run.
    for (name, annotate, raw) in [
        ("decode + jsonl", false, false),
        ("decode + jsonl annotated", true, false),
        ("records raw: decode", false, true),
        ("records raw: + jsonl", false, true),
    ] {
        dec.set_records(RecordsOptions {
            raw,
            ..Default::default()
        });
        let mut printer = Printer::new(Count(0), Options { annotate, ..opts });
        if name.ends_with("decode") {
            measure(name, &frames, secs, |h, d| dec.decode_frame(d, h, &mut pdu));
            continue;
        }
        measure(name, &frames, secs, |h, d| {
            dec.decode_frame(d, h, &mut pdu);
            let _ = printer.pdu(&pdu, None);
        });
        if let Ok(c) = printer.finish() {
            println!("{:<22} {:.1} MB of JSON written", "", c.0 as f64 / 1e6);
        }
    }
}

/// A writer that only counts: the benchmark measures formatting, not the disk.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
