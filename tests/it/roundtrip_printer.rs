//! The printers' JSON Lines (CONTRACT.md) is the encoder's input: every complete frame of the
//! bundled captures, printed by `output::Printer` as jsonl, parsed back and encoded by
//! `encode_pdu`, must give the captured bytes again.

use crate::common;

use kinspect::capture::CaptureOptions;
use kinspect::output::{Format, Options, Printer};
use kinspect::pdu::Pdu;
use kinspect::protocol::builtin;
use kinspect::records::encode_pdu;

#[test]
fn printed_json_lines_encode_back_to_the_captured_bytes() {
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    let opts = Options {
        format: Format::Jsonl,
        annotate: false,
        color: false,
        show_secrets: true,
    };
    let (mut total, mut exact) = (0, 0);
    let mut failures = Vec::new();
    for cap in common::bundled_captures() {
        let name = cap.file_stem().unwrap().to_string_lossy().into_owned();
        for f in common::capture_frames(&cap, &CaptureOptions::default()) {
            if f.incomplete {
                continue;
            }
            dec.decode_frame(&f.data, &f.hints, &mut pdu);
            pdu.origin = f.origin;
            if pdu
                .tree
                .diags
                .iter()
                .any(|d| d.is_error() && d.code != "trailing-bytes")
            {
                continue;
            }
            total += 1;
            let mut p = Printer::new(Vec::new(), opts);
            p.pdu(&pdu, None).unwrap();
            let line = p.finish().unwrap();
            let json: serde_json::Value = serde_json::from_slice(&line).unwrap();
            match encode_pdu(builtin(), &json) {
                Ok(b) if b == f.data => exact += 1,
                Ok(_) => {
                    failures.push(format!("{name} frame {:?}: bytes differ", pdu.origin.frame))
                }
                Err(e) => failures.push(format!("{name} frame {:?}: {e}", pdu.origin.frame)),
            }
        }
    }
    eprintln!("{exact} of {total} printed frames encode back exactly");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(total > 1500);
}
