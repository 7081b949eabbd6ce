//! Target `records`: bytes as record batches (v0/v1 messages, v2 batches, every codec,
//! internal-topic interpretations) through `records::decode_records` inside a PDU-shaped tree
//! that the printers then print, or through the log-file and quorum-state readers.

use super::check;
use crate::pdu::Pdu;
use crate::records::file::{decode_log_file, decode_quorum_state, FileKind};
use crate::records::{decode_records, AsType, RecordsContext};
use crate::wire::tree::Kind;

/// Control byte of a `records` input. Bits 0-2: the interpretation (0 by topic — none here —,
/// 1..=5 `AsType::NAMES[i - 1]`, else none). Bit 3: a cut-short last batch is normal. Bits 4-5:
/// the reader: 0 a records field of a frame, 1 a log segment, 2 a metadata snapshot, 3 a
/// quorum-state file.
pub const RECORDS_PARTIAL_OK: u8 = 0x08;
pub const RECORDS_SEGMENT: u8 = 0x10;
pub const RECORDS_SNAPSHOT: u8 = 0x20;
/// Control bit: batch headers and CRCs only (the summary and stats mode).
pub const RECORDS_HEADERS_ONLY: u8 = 0x40;

pub fn records(data: &[u8]) {
    let Some((&ctl, bytes)) = data.split_first() else {
        return;
    };
    let as_type = match ctl & 7 {
        i @ 1..=5 => Some(AsType::NAMES[i as usize - 1].1),
        _ => None,
    };
    let ctx = RecordsContext {
        topic: None,
        partial_tail_ok: ctl & RECORDS_PARTIAL_OK != 0,
        as_type,
        headers_only: ctl & RECORDS_HEADERS_ONLY != 0,
    };
    match (ctl >> 4) & 3 {
        0 => in_frame(bytes, &ctx),
        3 => {
            if let Ok(t) = decode_quorum_state(bytes) {
                check::tree(&t, "quorum-state");
            }
        }
        k => {
            let kind = if k == 1 {
                FileKind::Segment
            } else {
                FileKind::Snapshot
            };
            let mut last_end = 0u64;
            let sum = decode_log_file(bytes, kind, &ctx, &mut |at, t| {
                check::tree(t, "log file");
                let len = t.nodes.first().map_or(0, |n| n.len as u64);
                assert_eq!(
                    at, last_end,
                    "items must follow one another: every byte of the file in exactly one"
                );
                last_end = at + len;
                assert!(
                    last_end <= bytes.len() as u64,
                    "item {at}..{last_end} past the end of a {}-byte file",
                    bytes.len()
                );
            })
            .expect("reading from a slice cannot fail");
            assert_eq!(
                sum.bytes,
                bytes.len() as u64,
                "the log reader did not account for every byte"
            );
        }
    }
}

/// A records field as the decoder would hold it: `body.Records`, in a PDU the printers print.
fn in_frame(bytes: &[u8], ctx: &RecordsContext) {
    let Ok(len) = u32::try_from(bytes.len()) else {
        return;
    };
    let mut pdu = Pdu::default();
    let t = &mut pdu.tree;
    t.reset(bytes);
    let root = t.open("", Kind::Struct, 0, 0);
    let body = t.open("body", Kind::Struct, 0, 0);
    let recs = t.open("Records", Kind::Array, 0, 0);
    decode_records(t, 0, 0, len, ctx, "body.Records");
    t.close(recs, len);
    t.close(body, len);
    t.close(root, len);
    check::tree(&pdu.tree, "records");
    check::printers(&pdu);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sample::Rng;
    use crate::wire::tree::Value;

    /// Every records field of the bundled captures (all codecs), under every reader and
    /// interpretation, then damaged: the `records` smoke set.
    #[test]
    fn smoke_records() {
        let mut fields = Vec::new();
        let mut dec = crate::records::decoder(crate::protocol::builtin());
        // The fields' bytes themselves are the seeds: keep them undecoded here.
        dec.set_records(crate::wire::decode::RecordsOptions {
            raw: true,
            ..Default::default()
        });
        let mut pdu = Pdu::default();
        for (hints, frame) in check::capture_frames(15) {
            dec.decode_frame(&frame, &hints, &mut pdu);
            for n in &pdu.tree.nodes {
                if let (Value::Bytes(s), "Records") = (n.value, n.name) {
                    if s.len > 0 {
                        fields.push(pdu.tree.bytes(n.buf, s).to_vec());
                    }
                }
            }
        }
        assert!(fields.len() >= 10, "only {} records fields", fields.len());
        let mut rng = Rng::new(0x7265_636f);
        for (i, f) in fields.iter().enumerate() {
            let ctl = (i as u8).wrapping_mul(37);
            let mut input = vec![ctl];
            input.extend_from_slice(f);
            records(&input);
            check::mutate(&mut input, &mut rng);
            records(&input);
        }
        records(&[0x30]);
        records(b"\x30{\"leaderId\":1}");
    }
}
