//! Bugs found by the fuzz targets, each named for its cause and holding the minimized input
//! that found it, replayed through the target body that caught it and checked directly.

use kinspect::pdu::Pdu;
use kinspect::protocol::builtin;
use kinspect::records::file::{decode_log_file, FileKind};
use kinspect::records::RecordsContext;

/// Found by the `records` smoke set: a snapshot without a footer got a diagnostic whose offset
/// was the file offset of the end, although the item carrying it is handed out AT the end
/// (its offsets are relative to it): the printed position was twice the file's length.
#[test]
fn snapshot_footer_missing_offset_is_relative_to_its_item() {
    // Control byte 0x20: read as a metadata snapshot; then one 75-byte v2 batch (a kcat
    // produce from the bundled captures), which is no SNAPSHOT_FOOTER.
    let input = unhex(concat!(
        "20",
        "0000000000000000",
        "0000003f0000000002a72bd4dc000000000000000001a22a213a97000001a22a213a97ffffffffffffffff",
        "ffffffffffff000000011a000000010e61646d696e203100"
    ));
    kinspect::fuzzing::records(&input);
    let mut seen = Vec::new();
    decode_log_file(
        &input[1..],
        FileKind::Snapshot,
        &RecordsContext::default(),
        &mut |at, t| {
            for d in &t.diags {
                seen.push((d.code, at + d.offset));
            }
        },
    )
    .unwrap();
    assert!(
        seen.contains(&("snapshot-footer-missing", 75)),
        "footer diagnostic not at file offset 75: {seen:?}"
    );
}

/// Found by `decode` in its first minutes: a nullable-struct marker of 0xd5 (DescribeTopicPartitions
/// v0 `Cursor`) was read as null — rightly, Kafka reads the marker by its sign — but silently,
/// so a "clean" decode re-encoded to 0xff. The decoder engineer's `null-marker` warning (on the
/// capture branch, merged here) covers it: Kafka only ever writes -1 or 1.
#[test]
fn nullable_struct_marker_other_than_minus_one_or_one_is_flagged() {
    let input =
        unhex("0900000023004b00000000000a00086b702d61646d696e0002086b7061646d00000000000002d500");
    kinspect::fuzzing::decode(&input);
    let mut pdu = Pdu::default();
    let (hints, frame) = kinspect::fuzzing::decode_input(&input);
    kinspect::records::decoder(builtin()).decode_frame(frame, &hints, &mut pdu);
    let codes: Vec<_> = pdu.tree.diags.iter().map(|d| (d.code, d.offset)).collect();
    assert_eq!(codes, vec![("null-marker", 37)]);
    let cursor = pdu.tree.nodes.iter().find(|n| n.name == "Cursor").unwrap();
    assert_eq!(cursor.value, kinspect::wire::tree::Value::Null);
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
