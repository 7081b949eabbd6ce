//! Bugs found by the fuzz targets, each named for its cause and holding the minimized input
//! that found it, replayed through the target body that caught it and checked directly.

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

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
