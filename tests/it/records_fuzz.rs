//! Smoke run of the records fuzz target (`records::fuzz::fuzz_records`) over mutations of real
//! batches from the bundled captures and of records written per the internal-topic schemas:
//! random byte flips, interesting 32-bit values over length fields, cuts and splices. A
//! deterministic generator keeps failures reproducible.

use crate::common;
use crate::support;

use kinspect::records::fuzz::fuzz_records;
use support::*;

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for cap in [
        "mock-kafkapython2-codecs",
        "mock-kcat-snappy",
        "mock-kafkajs",
        "tansu-kafkapython3-codecs",
    ] {
        for p in pdus(&common::captures_dir().join(format!("{cap}.pcap"))) {
            for (s, l) in scan_v2_batches(&p.bytes) {
                let b = p.bytes[s..s + l].to_vec();
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
    }
    for f in ["v0-gzip.bin", "v1-lz4.bin", "v1-none.bin"] {
        out.push(
            std::fs::read(common::repo().join("tests/fixtures/records/legacy").join(f)).unwrap(),
        );
    }
    out
}

#[test]
fn fuzz_records_survives_mutated_real_batches() {
    let seeds = seeds();
    assert!(seeds.len() >= 20, "{}", seeds.len());
    let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15);
    let interesting: [i32; 8] = [0, -1, 1, 7, 61, i32::MAX, i32::MIN, 0x7fff];
    for round in 0..1500 {
        let mut d = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            match rng.below(5) {
                0 => {
                    let i = rng.below(d.len());
                    d[i] ^= 1 << rng.below(8);
                }
                1 if d.len() >= 4 => {
                    let i = rng.below(d.len() - 3);
                    let v = interesting[rng.below(interesting.len())];
                    d[i..i + 4].copy_from_slice(&v.to_be_bytes());
                }
                2 => {
                    let i = rng.below(d.len() + 1);
                    d.truncate(i);
                }
                3 => {
                    let other = &seeds[rng.below(seeds.len())];
                    let i = rng.below(other.len());
                    d.extend_from_slice(&other[i..]);
                }
                _ => {
                    let i = rng.below(d.len());
                    d[i] = rng.next() as u8;
                }
            }
            if d.is_empty() {
                break;
            }
        }
        let r = std::panic::catch_unwind(|| fuzz_records(&d));
        assert!(r.is_ok(), "round {round}: input {}", hex(&d));
    }
}
