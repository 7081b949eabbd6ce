//! Decoding throughput, kinspect against the `kafka-protocol` crate's generated decoders, on the
//! SAME frames in the same run:
//!
//! - **mix**: every request and response of the bundled real captures (~40 APIs from
//!   librdkafka, kafka-python, kafkajs, confluent-kafka against two brokers) plus one generated
//!   message (kinspect's `wire::sample::varied`) per API, version and direction both know, each
//!   framed with its header;
//! - **record-heavy**: the mix's frames whose `records` fields are not empty (Produce requests,
//!   Fetch responses, every codec).
//!
//! Decode only. kinspect builds its tree with record batches decoded (the default
//! `RecordsOptions`: decompressed, records decoded, CRCs checked) or kept raw (`--records raw`);
//! kafka-protocol decodes `RequestHeader`/`ResponseHeader` + the body (`RequestKind::decode` /
//! `ResponseKind::decode`, its dispatch over api keys) from a `Bytes` (cloned per decode: a
//! reference count, as a server reading from the socket has it), with its `records` fields kept
//! as `Bytes` (raw) or decoded by `RecordBatchDecoder` (decompressed through the same codec
//! code kinspect uses, so that the codecs are not what is compared). Only frames that both
//! decode completely are measured (the counts of the others are printed).
//!
//! Printed: frames/s and MB/s of frame bytes per decoder and class, and the ratio
//! kinspect / kafka-protocol (medians over interleaved rounds). Then decode + JSON Lines.
//!
//! Run: `cargo bench --bench decode` (`-- 5`: about 5 s per measurement instead of 2).
//! Instruction counts (what decisions are made on, on a shared machine):
//! `valgrind --tool=callgrind --dump-instr=no target/release/deps/decode-HASH --calls kinspect mix 20`
//! runs one decoder on one class for N rounds and nothing else (`kinspect`, `kinspect-raw`,
//! `kp`, `kp-raw`; `mix`, `records`).

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use kafka_protocol::records::{Compression, RecordBatchDecoder};
use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::output::{Format, Options, Printer};
use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::records::codec::{decompress, Codec};
use kinspect::wire::decode::{Decoder, RecordsOptions};
use kinspect::wire::encode::encode_message;
use kinspect::wire::plan::Plan;
use kinspect::wire::sample::{varied, Rng};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One frame as both decoders get it.
struct Frame {
    hints: Hints,
    /// The frame as kinspect reads it (with its size prefix when it had one).
    data: Vec<u8>,
    /// The frame after its size prefix, for kafka-protocol.
    body: Bytes,
    key: ApiKey,
    version: i16,
    request: bool,
    /// Has a non-empty `records` field.
    records: bool,
}

fn capture_frames() -> Vec<(Hints, Vec<u8>)> {
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

/// One generated message per (api, version, direction) both decoders know, framed with a
/// header and a size prefix.
fn generated_frames() -> Vec<(Hints, Vec<u8>)> {
    let mut out = Vec::new();
    for key in ApiKey::iter() {
        let range = key.valid_versions();
        for v in range.min..=range.max {
            for req in [true, false] {
                let dir = if req {
                    Direction::Request
                } else {
                    Direction::Response
                };
                let Some(spec) = builtin().message(key as i16, v, dir).map(|r| r.spec) else {
                    continue;
                };
                let plan = Plan::compile(spec, v);
                let mut rng =
                    Rng::new(0xbe7c ^ ((key as u64) << 20) ^ ((v as u64) << 4) ^ req as u64);
                let mut body = Vec::new();
                if encode_message(&plan, &varied(&plan, &mut rng), &mut body, "body").is_err() {
                    continue;
                }
                let mut head = BytesMut::new();
                let encoded = if req {
                    RequestHeader::default()
                        .with_request_api_key(key as i16)
                        .with_request_api_version(v)
                        .with_correlation_id(7)
                        .with_client_id(Some(StrBytes::from_static_str("bench")))
                        .encode(&mut head, key.request_header_version(v))
                } else {
                    ResponseHeader::default()
                        .with_correlation_id(7)
                        .encode(&mut head, key.response_header_version(v))
                };
                if encoded.is_err() {
                    continue;
                }
                let mut frame = ((head.len() + body.len()) as u32).to_be_bytes().to_vec();
                frame.extend_from_slice(&head);
                frame.extend_from_slice(&body);
                let hints = Hints {
                    direction: Some(dir),
                    api_key: (!req).then_some(key as i16),
                    api_version: (!req).then_some(v),
                    has_size_prefix: Some(true),
                    ..Hints::default()
                };
                out.push((hints, frame));
            }
        }
    }
    out
}

/// The codec of kafka-protocol's batch, as kinspect names it (`None`: uncompressed).
fn codec(c: Compression) -> Option<Codec> {
    match c {
        Compression::None => None,
        Compression::Gzip => Some(Codec::Gzip),
        Compression::Snappy => Some(Codec::Snappy),
        Compression::Lz4 => Some(Codec::Lz4),
        Compression::Zstd => Some(Codec::Zstd),
    }
}

/// An error of kafka-protocol's, as text.
fn e(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Decodes every batch of a `records` field with `RecordBatchDecoder`, decompressing with the
/// same codec code as kinspect's (uncompressed batches are handed on without a copy; a codec
/// failure hands on nothing, which fails the batch). Returns the records decoded.
fn kp_record_sets(mut r: Bytes) -> Result<usize, String> {
    let mut n = 0;
    while !r.is_empty() {
        let set = RecordBatchDecoder::decode_with_custom_compression(
            &mut r,
            Some(|b: &mut Bytes, c: Compression| {
                Ok(match codec(c) {
                    None => b.clone(),
                    Some(codec) => decompress(codec, b, 2, (64 << 20, "bench"))
                        .map(|d| Bytes::from(d.data))
                        .unwrap_or_default(),
                })
            }),
        )
        .map_err(e)?;
        n += set.records.len();
        black_box(set);
    }
    Ok(n)
}

/// kafka-protocol decodes header and body (and the record batches when `records`); returns the
/// records decoded and the bytes left over.
fn kp_decode(f: &Frame, records: bool) -> Result<(usize, usize), String> {
    let mut b = f.body.clone();
    let mut n = 0;
    if f.request {
        let h =
            RequestHeader::decode(&mut b, f.key.request_header_version(f.version)).map_err(e)?;
        let m = RequestKind::decode(f.key, &mut b, f.version).map_err(e)?;
        if records {
            if let RequestKind::Produce(p) = &m {
                for t in &p.topic_data {
                    for p in &t.partition_data {
                        if let Some(r) = &p.records {
                            n += kp_record_sets(r.clone())?;
                        }
                    }
                }
            }
        }
        black_box((h, m));
    } else {
        let h =
            ResponseHeader::decode(&mut b, f.key.response_header_version(f.version)).map_err(e)?;
        let m = ResponseKind::decode(f.key, &mut b, f.version).map_err(e)?;
        if records {
            match &m {
                ResponseKind::Fetch(r) => {
                    for t in &r.responses {
                        for p in &t.partitions {
                            if let Some(r) = &p.records {
                                n += kp_record_sets(r.clone())?;
                            }
                        }
                    }
                }
                ResponseKind::ShareFetch(r) => {
                    for t in &r.responses {
                        for p in &t.partitions {
                            if let Some(r) = &p.records {
                                n += kp_record_sets(r.clone())?;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        black_box((h, m));
    }
    Ok((n, b.len()))
}

/// Both decoders on every candidate frame; keeps those both decode completely.
fn agreed(cands: Vec<(Hints, Vec<u8>)>, skipped: &mut Vec<String>) -> Vec<Frame> {
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    let mut out = Vec::new();
    for (hints, data) in cands {
        dec.decode_frame(&data, &hints, &mut pdu);
        let name = pdu.api_name.unwrap_or("?");
        let (Some(dir), Some(k), Some(v)) = (pdu.direction, pdu.api_key, pdu.api_version) else {
            skipped.push("kinspect: no api".into());
            continue;
        };
        if pdu.tree.has_errors() {
            skipped.push(format!("kinspect errors: {name} v{v}"));
            continue;
        }
        let Ok(key) = ApiKey::try_from(k) else {
            skipped.push(format!("kafka-protocol: no api {name}"));
            continue;
        };
        let prefix = data.len() >= 4
            && u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize == data.len() - 4;
        let body = Bytes::copy_from_slice(&data[if prefix { 4 } else { 0 }..]);
        let records = has_records(&pdu);
        let f = Frame {
            hints,
            data,
            body,
            key,
            version: v,
            request: dir == Direction::Request,
            records,
        };
        match kp_decode(&f, true) {
            Ok((_, 0)) => out.push(f),
            Ok((_, left)) => skipped.push(format!("kafka-protocol left {left} bytes: {name} v{v}")),
            Err(e) => skipped.push(format!(
                "kafka-protocol: {name} v{v}: {}",
                e.lines().next().unwrap_or("")
            )),
        }
    }
    out
}

/// Whether the decoded frame holds a non-empty `records` field (its node has children).
fn has_records(pdu: &Pdu) -> bool {
    let t = &pdu.tree;
    t.nodes.iter().enumerate().any(|(i, n)| {
        matches!(n.name, "Records" | "records") && n.len > 4 && n.end as usize > i + 1
    })
}

/// One decoder, as a closure over a frame.
type Run<'a> = Box<dyn FnMut(&Frame) + 'a>;

fn kinspect_run(raw: bool) -> Run<'static> {
    let mut dec: Decoder = kinspect::records::decoder(builtin());
    dec.set_records(RecordsOptions {
        raw,
        ..Default::default()
    });
    let mut pdu = Pdu::default();
    Box::new(move |f: &Frame| {
        dec.decode_frame(&f.data, &f.hints, &mut pdu);
        black_box(&pdu);
    })
}

fn kp_run(records: bool) -> Run<'static> {
    Box::new(move |f: &Frame| {
        let _ = black_box(kp_decode(f, records));
    })
}

/// Rounds over `frames` for about `secs`: frames per second.
fn rate(frames: &[&Frame], secs: f64, run: &mut Run) -> f64 {
    for f in frames {
        run(f);
    }
    let start = Instant::now();
    let mut rounds = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        for f in frames {
            run(f);
        }
        rounds += 1;
    }
    rounds as f64 * frames.len() as f64 / start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// kinspect and kafka-protocol interleaved, `reps` times each: medians of frames/s and of the
/// per-round ratio.
fn compare(label: &str, frames: &[&Frame], secs: f64, mut ks: Run, mut kp: Run) {
    let bytes: usize = frames.iter().map(|f| f.data.len()).sum();
    let reps = 5;
    let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let x = rate(frames, secs / reps as f64, &mut ks);
        let y = rate(frames, secs / reps as f64, &mut kp);
        a.push(x);
        b.push(y);
        r.push(x / y);
    }
    let mb = |fps: f64| fps * bytes as f64 / frames.len() as f64 / 1e6;
    let (a, b, r) = (median(a), median(b), median(r));
    println!(
        "{label:<34} kinspect {:>9.0} frames/s {:>7.1} MB/s | kafka-protocol {:>9.0} frames/s {:>7.1} MB/s | ratio {r:.2}x",
        a,
        mb(a),
        b,
        mb(b),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut skipped = Vec::new();
    let from_captures = capture_frames();
    let n_captured = from_captures.len();
    let mut cands = from_captures;
    let generated = generated_frames();
    let n_generated = generated.len();
    cands.extend(generated);
    let frames = agreed(cands, &mut skipped);
    let mix: Vec<&Frame> = frames.iter().collect();
    let heavy: Vec<&Frame> = frames.iter().filter(|f| f.records).collect();
    if let Some(i) = args.iter().position(|a| a == "--calls") {
        // One decoder, one class, N rounds: for callgrind.
        let who = args.get(i + 1).map_or("kinspect", |s| s.as_str());
        let class = if args.get(i + 2).is_some_and(|s| s == "records") {
            &heavy
        } else {
            &mix
        };
        let n: u64 = args.get(i + 3).and_then(|s| s.parse().ok()).unwrap_or(20);
        let mut run = match who {
            "kinspect-raw" => kinspect_run(true),
            "kp" => kp_run(true),
            "kp-raw" => kp_run(false),
            _ => kinspect_run(false),
        };
        for _ in 0..n {
            for f in class.iter() {
                run(f);
            }
        }
        let bytes: usize = class.iter().map(|f| f.data.len()).sum();
        println!(
            "{who}: {n} rounds of {} frames ({bytes} bytes)",
            class.len()
        );
        return;
    }
    let secs: f64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(2.0);
    let bytes = |c: &[&Frame]| c.iter().map(|f| f.data.len()).sum::<usize>();
    println!(
        "frames: {n_captured} from captures/*.pcap + {n_generated} generated; {} decoded completely by both ({} bytes), {} of them record-heavy ({} bytes); {} left out",
        mix.len(),
        bytes(&mix),
        heavy.len(),
        bytes(&heavy),
        skipped.len()
    );
    let mut why: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &skipped {
        *why.entry(s.split(':').next().unwrap_or("")).or_default() += 1;
    }
    println!("left out: {why:?}");
    for (class, set) in [("mix", &mix), ("record-heavy", &heavy)] {
        compare(
            &format!("{class}, records decoded"),
            set,
            secs,
            kinspect_run(false),
            kp_run(true),
        );
        compare(
            &format!("{class}, records raw"),
            set,
            secs,
            kinspect_run(true),
            kp_run(false),
        );
    }
    println!();
    printing(&mix, secs);
}

/// kinspect alone: decode + JSON Lines (plain and annotated), records decoded and raw.
fn printing(frames: &[&Frame], secs: f64) {
    let bytes: usize = frames.iter().map(|f| f.data.len()).sum();
    let opts = Options {
        format: Format::Jsonl,
        annotate: false,
        color: false,
        show_secrets: false,
    };
    for (name, annotate, raw) in [
        ("decode + jsonl", false, false),
        ("decode + jsonl annotated", true, false),
        ("records raw: + jsonl", false, true),
    ] {
        let mut dec = kinspect::records::decoder(builtin());
        dec.set_records(RecordsOptions {
            raw,
            ..Default::default()
        });
        let mut pdu = Pdu::default();
        let mut printer = Printer::new(Count(0), Options { annotate, ..opts });
        let mut run: Run = Box::new(|f: &Frame| {
            dec.decode_frame(&f.data, &f.hints, &mut pdu);
            let _ = printer.pdu(&pdu, None);
        });
        let fps = rate(frames, secs, &mut run);
        drop(run);
        let written = printer.finish().map_or(0, |c| c.0);
        println!(
            "{name:<34} kinspect {fps:>9.0} frames/s {:>7.1} MB/s of frames ({:.1} MB of JSON written)",
            fps * bytes as f64 / frames.len() as f64 / 1e6,
            written as f64 / 1e6
        );
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
