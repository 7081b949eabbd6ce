//! Fuzz target bodies, as library functions: each takes the fuzzer's bytes and asserts what must
//! hold for any input (no panic, diagnostics instead of crashes, spans that tile, printers that
//! emit valid JSON, encode/decode agreement). The cargo-fuzz binaries in `fuzz/` are one-line
//! wrappers; the `smoke` tests run every body on a few hundred seeded inputs so plain
//! `cargo test` exercises them, and `tests/fuzz_replay.rs` replays the seed corpora.
//!
//! A failed property panics here on purpose: that is how libFuzzer learns of a bug. The code
//! under test never panics on input; these bodies are its referees.
//!
//! Input layouts (what the seed files in `fuzz/seeds/<target>/` hold):
//! - `decode`: a control byte, optional hints, then one frame (see [`decode_input`]).
//! - `stream`: a control byte, then the bytes of one TCP direction (see [`traffic::stream`]).
//! - `pcap`: a capture file as is.
//! - `records`: a control byte, then record batches (see [`records::records`]).
//! - `schema`: a spec file's text.
//! - `roundtrip`: choices for the structure-aware generator (see [`roundtrip::roundtrip`]).

pub mod check;
pub mod records;
pub mod roundtrip;
pub mod schema;
pub mod traffic;

pub use records::records;
pub use roundtrip::roundtrip;
pub use schema::schema;
pub use traffic::{pcap, stream};

use crate::pdu::{Direction, Hints, Pdu};
use crate::wire::decode::Decoder;
use std::cell::RefCell;

/// A fuzz target body.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, in the order `fuzz/run-all.sh` runs them.
pub const TARGETS: [(&str, Target); 6] = [
    ("decode", decode),
    ("stream", stream),
    ("pcap", pcap),
    ("records", records),
    ("schema", schema),
    ("roundtrip", roundtrip),
];

/// Control byte of a `decode` input: bits 0-1 direction hint (0 none, 1 request, 2 response,
/// 3 none), bit 2 API hints follow (big-endian i16 key, i16 version), bits 3-4 size-prefix hint
/// (0 detect, 1 present, 2 absent, 3 detect), bit 5 raw SASL token.
pub const DECODE_REQUEST: u8 = 0x01;
pub const DECODE_RESPONSE: u8 = 0x02;
pub const DECODE_API_HINTS: u8 = 0x04;
pub const DECODE_PREFIXED: u8 = 0x08;
pub const DECODE_SASL: u8 = 0x20;

/// Splits a `decode` input into its hints and its frame.
pub fn decode_input(data: &[u8]) -> (Hints, &[u8]) {
    let Some((&ctl, mut rest)) = data.split_first() else {
        return (Hints::default(), data);
    };
    let mut hints = Hints {
        direction: match ctl & 3 {
            1 => Some(Direction::Request),
            2 => Some(Direction::Response),
            _ => None,
        },
        has_size_prefix: match (ctl >> 3) & 3 {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        },
        sasl_token: ctl & DECODE_SASL != 0,
        ..Hints::default()
    };
    if ctl & DECODE_API_HINTS != 0 {
        if let Some((h, r)) = rest.split_first_chunk::<4>() {
            hints.api_key = Some(i16::from_be_bytes([h[0], h[1]]));
            hints.api_version = Some(i16::from_be_bytes([h[2], h[3]]));
            rest = r;
        }
    }
    (hints, rest)
}

/// The `decode` input that carries `frame` with `hints` (the inverse of [`decode_input`]).
pub fn decode_seed(hints: &Hints, frame: &[u8]) -> Vec<u8> {
    let mut ctl = match hints.direction {
        Some(Direction::Request) => DECODE_REQUEST,
        Some(Direction::Response) => DECODE_RESPONSE,
        None => 0,
    };
    ctl |= match hints.has_size_prefix {
        Some(true) => DECODE_PREFIXED,
        Some(false) => DECODE_PREFIXED << 1,
        None => 0,
    };
    if hints.sasl_token {
        ctl |= DECODE_SASL;
    }
    let mut out = vec![ctl];
    if let (Some(k), Some(v)) = (hints.api_key, hints.api_version) {
        out[0] |= DECODE_API_HINTS;
        out.extend_from_slice(&k.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(frame);
    out
}

thread_local! {
    // One decoder per thread keeps its plan cache warm across fuzz iterations, as one input's
    // decode loop does.
    static DECODER: RefCell<(Decoder, Pdu)> =
        RefCell::new((crate::records::decoder(crate::protocol::builtin()), Pdu::default()));
}

/// Target `decode`: one frame with fuzzer-chosen hints. The tree must tile, stay inside its
/// buffers and print as valid JSON; a frame decoded without any diagnostic must encode back to
/// exactly its bytes.
pub fn decode(data: &[u8]) {
    let (hints, frame) = decode_input(data);
    DECODER.with(|d| {
        let (dec, pdu) = &mut *d.borrow_mut();
        dec.decode_frame(frame, &hints, pdu);
        let root = pdu.tree.nodes.first().copied();
        assert!(
            root.is_some_and(|r| r.buf == 0 && r.offset == 0 && r.len as usize == frame.len()),
            "the root must span the whole frame ({} bytes): {root:?}",
            frame.len()
        );
        check::tree(&pdu.tree, "decode");
        check::printers(pdu);
        if pdu.tree.diags.is_empty() {
            check::exact_cover(&pdu.tree);
            check::reencodes(dec.protocol(), pdu, frame);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sample::Rng;

    #[test]
    fn decode_input_and_seed_are_inverse() {
        let hints = Hints {
            direction: Some(Direction::Response),
            api_key: Some(18),
            api_version: Some(3),
            has_size_prefix: Some(false),
            sasl_token: true,
            ..Hints::default()
        };
        let seed = decode_seed(&hints, &[1, 2, 3]);
        assert_eq!(decode_input(&seed), (hints, &[1u8, 2, 3][..]));
    }

    /// Frames from the bundled captures with hints as the capture reader gives them, then the
    /// same frames damaged (cut, bytes flipped) — the smoke set of the `decode` target.
    #[test]
    fn smoke_decode() {
        let frames = check::capture_frames(6);
        assert!(frames.len() > 50, "only {} frames", frames.len());
        let mut rng = Rng::new(0x6465_636f);
        for (hints, frame) in &frames {
            decode(&decode_seed(hints, frame));
            let mut bad = frame.clone();
            check::mutate(&mut bad, &mut rng);
            decode(&decode_seed(hints, &bad));
            let blind = Hints {
                has_size_prefix: None,
                ..Hints::default()
            };
            decode(&decode_seed(&blind, &bad));
        }
        for n in 0..64u64 {
            let len = rng.below(40) as usize;
            let junk: Vec<u8> = (0..len).map(|_| (rng.next_u64() >> 8) as u8).collect();
            decode(&junk);
            let _ = n;
        }
    }
}
