//! Records through the whole pipeline: the capture reader finds the frames, the schema-driven
//! decoder finds every `records` field (Produce `Records`, Fetch `Records`), and each field's
//! bytes decode as batches with the topic the message names. Cross-checked against the batches
//! the checksum scan finds in the same frames (tests/records_captures.rs), so neither misses one.

use crate::common;
use crate::support;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::diag::Severity;
use kinspect::pdu::{Direction, Pdu};
use kinspect::records::RecordsContext;
use kinspect::wire::decode::RecordsOptions;
use kinspect::wire::tree::{NodeId, Tree, Value};
use std::collections::BTreeSet;
use support::*;

/// Every `Records` field in `t` below `id`, with the topic named by the nearest enclosing struct
/// (`Name` in Produce, `Topic` in Fetch before v13).
fn records_fields(
    t: &Tree,
    id: NodeId,
    topic: Option<String>,
    out: &mut Vec<(NodeId, Option<String>)>,
) {
    let mut topic = topic;
    for name in ["Name", "Topic"] {
        if let Some(Value::Str(s)) = t.child(id, name).map(|c| t.node(c).value) {
            topic = Some(String::from_utf8_lossy(t.bytes(0, s)).into_owned());
        }
    }
    for c in t.children(id) {
        if t.node(c).name == "Records" {
            out.push((c, topic.clone()));
        } else {
            records_fields(t, c, topic.clone(), out);
        }
    }
}

#[test]
fn every_records_field_the_decoder_finds_decodes_and_matches_the_checksum_scan() {
    let mut fields = 0;
    let mut batches_seen = 0;
    for cap in common::bundled_captures() {
        let name = cap.file_stem().unwrap().to_string_lossy().into_owned();
        let mut decoder = kinspect::records::decoder(kinspect::protocol::builtin());
        // This pipeline hands the fields' bytes to the record layer itself (the walker decoding
        // them in place: tests/records_in_frames.rs).
        decoder.set_records(RecordsOptions {
            raw: true,
            as_type: None,
            ..Default::default()
        });
        let mut pdu = Pdu::default();
        let mut by_decoder: BTreeSet<Vec<u8>> = BTreeSet::new();
        let mut by_scan: BTreeSet<Vec<u8>> = BTreeSet::new();
        let file = std::fs::File::open(&cap).unwrap();
        read_capture(file, &CaptureOptions::default(), &mut |ev| {
            let Event::Frame { hints, data, .. } = ev else {
                return;
            };
            for (s, l) in scan_v2_batches(data) {
                by_scan.insert(data[s..s + l].to_vec());
            }
            decoder.decode_frame(data, &hints, &mut pdu);
            let t = &pdu.tree;
            let mut found = Vec::new();
            records_fields(t, 0, None, &mut found);
            for (id, topic) in found {
                let n = t.node(id);
                let Value::Bytes(span) = n.value else {
                    continue;
                };
                fields += 1;
                let bytes = t.bytes(n.buf, span).to_vec();
                let fetch = hints.direction == Some(Direction::Response);
                let ctx = RecordsContext {
                    topic: topic.as_deref(),
                    partial_tail_ok: fetch,
                    ..Default::default()
                };
                let rt = decode(&bytes, &ctx);
                let bad: Vec<_> = rt
                    .diags
                    .iter()
                    .filter(|d| d.severity != Severity::Info)
                    .collect();
                assert!(bad.is_empty(), "{name}: {topic:?}: {bad:?}");
                rt.check_tiling(0).unwrap();
                for b in batches(&rt) {
                    let bn = rt.node(b);
                    if rt.child(b, "Partial").is_none() {
                        by_decoder.insert(
                            rt.bytes(
                                0,
                                kinspect::wire::tree::Span {
                                    start: bn.offset,
                                    len: bn.len,
                                },
                            )
                            .to_vec(),
                        );
                        batches_seen += 1;
                    }
                }
            }
        })
        .unwrap();
        // snaplen128 cuts every frame: the scan finds nothing whole there, nor does the decoder.
        assert_eq!(
            by_decoder, by_scan,
            "{name}: batches by field vs by checksum scan"
        );
    }
    assert!(fields >= 200, "{fields} records fields");
    assert!(batches_seen >= 120, "{batches_seen} batches");
}
