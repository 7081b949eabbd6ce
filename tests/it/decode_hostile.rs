//! Hostile and damaged frames: claims of huge counts and lengths, negative lengths, overlong
//! varints, every truncation of real captured frames, and seeded byte mutations of them. The
//! decoder must never panic or hang, must keep its tree tiling, and must say what is wrong.

use crate::common;

use kinspect::capture::CaptureOptions;
use kinspect::output::value::pdu_json;
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::records::encode_pdu;
use kinspect::wire::decode::Decoder;
use kinspect::wire::sample::Rng;
use std::time::{Duration, Instant};

fn with_prefix(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn dec(
    d: &mut Decoder,
    p: &mut Pdu,
    frame: &[u8],
    hints: &Hints,
) -> Vec<(&'static str, String, u64)> {
    d.decode_frame(frame, hints, p);
    if let Err(e) = p.tree.check_tiling(0) {
        panic!("tiling broken on {frame:02x?}: {e}");
    }
    p.tree
        .diags
        .iter()
        .map(|d| (d.code, d.path.clone(), d.offset))
        .collect()
}

#[test]
fn two_billion_element_array_in_ten_bytes_fails_at_once() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    // Metadata v1 request, null client id, then Topics claiming 2^31-1 elements.
    let f = with_prefix(&[0, 3, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff]);
    let t = Instant::now();
    let got = dec(&mut d, &mut p, &f, &Hints::default());
    assert!(t.elapsed() < Duration::from_millis(50));
    assert_eq!(
        got,
        [("count-exceeds-remaining", "body.Topics".to_string(), 14)]
    );
    assert!(p.tree.nodes.len() < 16, "nothing was reserved per element");
    // Compact: uvarint 0xffffffff is -2 as Kafka computes it; 0x80000000 wraps below -1 too.
    for count in [
        [0xff, 0xff, 0xff, 0xff, 0x0f],
        [0x80, 0x80, 0x80, 0x80, 0x08],
    ] {
        let mut b = vec![0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0];
        b.extend_from_slice(&count);
        let got = dec(&mut d, &mut p, &with_prefix(&b), &Hints::default());
        assert_eq!(got, [("negative-length", "body.Topics".to_string(), 15)]);
    }
    // Compact count 2^28 in a flexible request: more elements than bytes.
    let got = dec(
        &mut d,
        &mut p,
        &with_prefix(&[
            0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0, 0x81, 0x80, 0x80, 0x80, 0x01,
        ]),
        &Hints::default(),
    );
    assert_eq!(got[0].0, "count-exceeds-remaining");
}

#[test]
fn negative_lengths_and_long_varints() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    // ClientId length -2.
    let got = dec(
        &mut d,
        &mut p,
        &with_prefix(&[0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xfe]),
        &Hints::default(),
    );
    assert_eq!(
        got,
        [("negative-length", "header.ClientId".to_string(), 12)]
    );
    // A 6-byte varint as a compact string length (ApiVersions v3 body).
    let b = [
        0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
    ];
    let got = dec(&mut d, &mut p, &with_prefix(&b), &Hints::default());
    assert_eq!(
        got,
        [("varint-overflow", "body.ClientSoftwareName".to_string(), 15)]
    );
    // A 4-byte length claiming 2 GiB of bytes (SaslAuthenticate v0 AuthBytes).
    let b = [
        0, 36, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 1, 2,
    ];
    let got = dec(&mut d, &mut p, &with_prefix(&b), &Hints::default());
    assert_eq!(got[0].0, "truncated");
    assert_eq!(got[0].1, "body.AuthBytes");
}

/// Real frames from the bundled captures, with their hints.
fn real_frames() -> Vec<(Hints, Vec<u8>)> {
    common::bundled_captures()
        .iter()
        .flat_map(|cap| common::capture_frames(cap, &CaptureOptions::default()))
        .filter(|f| !f.incomplete)
        .map(|f| (f.hints, f.data))
        .collect()
}

#[test]
fn every_truncation_of_real_frames_says_truncated() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    let frames = real_frames();
    let mut cuts = 0;
    for (hints, f) in &frames {
        // Every cut of small frames; ~200 evenly spread cuts of large ones.
        let step = (f.len() / 200).max(1);
        for cut in (0..f.len()).step_by(step) {
            cuts += 1;
            let got = dec(&mut d, &mut p, &f[..cut], hints);
            assert!(
                got.iter().any(|g| g.0 == "truncated"),
                "cut {cut} of {:02x?}: {got:?}",
                &f[..f.len().min(32)]
            );
        }
    }
    eprintln!("{cuts} truncations of {} real frames", frames.len());
    assert!(cuts > 20_000);
}

#[test]
fn mutated_real_frames_never_panic_and_keep_tiling() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    let mut rng = Rng::new(0xdead_beef);
    let t = Instant::now();
    let (mut n, mut exact, mut mismatched) = (0, 0, Vec::<String>::new());
    for (hints, f) in real_frames() {
        for _ in 0..20 {
            let mut m = f.clone();
            for _ in 0..=rng.below(4) {
                let i = rng.below(m.len() as u64) as usize;
                m[i] = match rng.below(4) {
                    0 => 0xff,
                    1 => 0x00,
                    2 => 0x80,
                    _ => rng.below(256) as u8,
                };
            }
            // Half with the capture's hints, half guessing everything.
            let h = if rng.chance(2) {
                hints
            } else {
                Hints::default()
            };
            let got = dec(&mut d, &mut p, &m, &h);
            n += 1;
            // Whatever was decoded, including undecodable regions, goes back to the same bytes,
            // unless the decoder normalised something it reported (a bool of 2, invalid UTF-8,
            // a non-minimal varint, a size prefix that disagrees, the excess of a scalar tag) or
            // could not know the API (a response without hints).
            let lossy = [
                "invalid-bool",
                "null-marker",
                "invalid-utf8",
                "varint-overlong",
                "varint-overflow",
                "size-mismatch",
                "truncated",
                "tag-size-mismatch",
                "missing-hints",
                // Tags out of order or repeated cannot keep their wire order in a JSON object.
                "tag-order",
                "tag-duplicate",
                // The encoder refuses null where the schema does.
                "null-not-allowed",
            ];
            // An array cut short by an error shows fewer elements than its count said.
            let in_array = |g: &(&str, String, u64)| g.1.contains('[') && !lossy.contains(&g.0);
            if got.iter().any(|g| lossy.contains(&g.0) || in_array(g)) {
                continue;
            }
            match encode_pdu(builtin(), &pdu_json(&p)) {
                Ok(b) if b == m => exact += 1,
                Ok(b) => mismatched.push(format!("{m:02x?} → {b:02x?}: {got:?}")),
                Err(e) => mismatched.push(format!("{m:02x?}: {got:?}: {e}")),
            }
        }
    }
    eprintln!(
        "{n} mutated frames in {:?}, {exact} re-encoded byte-exactly",
        t.elapsed()
    );
    assert!(
        mismatched.is_empty(),
        "{} do not round-trip:\n{}",
        mismatched.len(),
        mismatched[..mismatched.len().min(5)].join("\n")
    );
    assert!(exact > n / 3);
}

#[test]
fn random_garbage_never_panics() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    let mut rng = Rng::new(7);
    for _ in 0..20_000 {
        let len = rng.below(64) as usize;
        let mut g: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        // Make a third of them start like a known request so the body decoders run.
        if len >= 4 && rng.chance(3) {
            g[0] = 0;
            g[1] = rng.below(75) as u8;
            g[2] = 0;
            g[3] = rng.below(14) as u8;
        }
        dec(&mut d, &mut p, &g, &Hints::default());
    }
}

#[test]
fn a_frame_larger_than_kafka_allows_is_refused_with_bounded_memory() {
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    let big = vec![0u8; kinspect::limits::MAX_FRAME_SIZE as usize + 100];
    let got = dec(&mut d, &mut p, &big, &Hints::default());
    assert_eq!(got, [("frame-too-large", String::new(), 0)]);
    assert_eq!(
        p.tree.buf(0).len(),
        kinspect::limits::MAX_FRAME_SIZE as usize + 4
    );
}
