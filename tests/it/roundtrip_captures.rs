//! Every frame of the bundled real captures: extracted by the capture reader (with its
//! request/response matching as hints), decoded, checked against tshark's summary (api key,
//! version, correlation id), encoded back from its JSON and compared byte for byte; every
//! truncation of a real frame decodes without panicking and says `truncated`.

use crate::common;

use kinspect::capture::CaptureOptions;
use kinspect::output::value::pdu_json;
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::records::encode_pdu;
use std::collections::HashMap;

/// Frames kinspect finds malformed where tshark cannot judge (it knows Metadata only up to v9),
/// with the error expected and why. Both were checked by hand against the 4.3.1 specs, and
/// kafka-protocol reads the same layouts (tests/differential.rs).
const KNOWN_MALFORMED: &[(&str, u64, &str)] = &[
    // librdkafka 2.16's Metadata v12 request carries 3 bytes after its (4-byte) v12 body.
    ("tansu-confluent-admin", 27, "trailing-bytes"),
    // tansu 0.6.0's Metadata v13 response ends without the top-level ErrorCode added in v13.
    ("tansu-kafkapython3-admin-sweep", 161, "truncated"),
];

struct Frame {
    frame: u64,
    hints: Hints,
    data: Vec<u8>,
    incomplete: bool,
}

fn frames(path: &std::path::Path) -> Vec<Frame> {
    let opts = CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    common::capture_frames(path, &opts)
        .into_iter()
        .map(|c| Frame {
            frame: c.origin.last_frame.or(c.origin.frame).unwrap_or(0),
            hints: c.hints,
            data: c.data,
            incomplete: c.incomplete,
        })
        .collect()
}

/// tshark's view: frame → (api_key, api_version, correlation_id, what it found malformed).
fn tshark(path: &std::path::Path) -> HashMap<u64, (i16, i16, i32, String)> {
    let text = std::fs::read_to_string(path.with_extension("summary.tsv")).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let key = (
                c.get(2)?.parse().ok()?,
                c.get(4)?.parse().ok()?,
                c.get(5)?.parse().ok()?,
                c.get(12).unwrap_or(&"").to_string(),
            );
            Some((c.first()?.parse().ok()?, key))
        })
        .collect()
}

#[test]
fn every_captured_frame_decodes_cleanly_and_encodes_back_to_the_same_bytes() {
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    let (mut total, mut exact, mut checked_vs_tshark, mut trailing, mut known_malformed) =
        (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for cap in common::bundled_captures() {
        let name = cap.file_stem().unwrap().to_string_lossy().into_owned();
        let oracle = tshark(&cap);
        for f in frames(&cap) {
            if f.incomplete {
                continue;
            }
            total += 1;
            dec.decode_frame(&f.data, &f.hints, &mut pdu);
            let ctx = format!("{name} frame {}", f.frame);
            if let Err(e) = pdu.tree.check_tiling(0) {
                failures.push(format!("{ctx}: tiling: {e}"));
            }
            // The mock broker writes a few responses with bytes after the body; tshark flags the
            // same frames ("does not end at the pdu length offset"). Any other error is a failure.
            let tshark_trailing = oracle
                .get(&f.frame)
                .is_some_and(|o| o.3.contains("does not end at the pdu length"));
            let known = KNOWN_MALFORMED
                .iter()
                .find(|k| k.0 == name && k.1 == f.frame)
                .map(|k| k.2);
            let codes: Vec<&str> = pdu.tree.errors().map(|d| d.code).collect();
            if let Some(code) = known {
                if codes != [code] {
                    failures.push(format!("{ctx}: expected exactly {code}, got {codes:?}"));
                }
                known_malformed += 1;
            } else {
                let errors: Vec<String> = pdu
                    .tree
                    .diags
                    .iter()
                    .filter(|d| d.is_error() && !(tshark_trailing && d.code == "trailing-bytes"))
                    .map(|d| d.to_string())
                    .collect();
                if !errors.is_empty() {
                    failures.push(format!("{ctx}: {}", errors.join("; ")));
                    continue;
                }
            }
            trailing += pdu
                .tree
                .diags
                .iter()
                .filter(|d| d.code == "trailing-bytes")
                .count();
            if let Some((k, v, c, _)) = oracle.get(&f.frame).cloned() {
                checked_vs_tshark += 1;
                // tshark shows the request's version on a v0-fallback ApiVersions response.
                let fallback = pdu
                    .tree
                    .diags
                    .iter()
                    .any(|d| d.code == "apiversions-fallback");
                let got = (
                    pdu.api_key,
                    if fallback {
                        f.hints.api_version
                    } else {
                        pdu.api_version
                    },
                    pdu.correlation_id,
                );
                if got != (Some(k), Some(v), Some(c)) {
                    failures.push(format!(
                        "{ctx}: decoded {got:?}, tshark says ({k}, {v}, {c})"
                    ));
                }
            }
            match encode_pdu(builtin(), &pdu_json(&pdu)) {
                Ok(b) if b == f.data => exact += 1,
                Ok(b) => failures.push(format!(
                    "{ctx}: re-encoded {} bytes differ from the {} captured",
                    b.len(),
                    f.data.len()
                )),
                Err(e) => failures.push(format!("{ctx}: encode: {e}")),
            }
        }
    }
    eprintln!("{total} complete frames, {exact} byte-exact round trips, {checked_vs_tshark} checked against tshark, {trailing} with trailing bytes, {known_malformed} known malformed");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    assert_eq!(known_malformed, KNOWN_MALFORMED.len());
    // Malformed frames too: undecodable regions travel as `{"_error","_data"}`.
    assert!(total > 1500 && exact == total, "{exact} of {total}");
}
