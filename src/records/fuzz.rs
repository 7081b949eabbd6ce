//! The records fuzz target's body (library code, so `cargo test` runs it as a smoke test and a
//! cargo-fuzz binary stays a thin wrapper): arbitrary bytes decoded as a records field under
//! every interpretation, and as a streamed log segment.

use super::file::{decode_log_file, FileKind};
use super::{decode_records, AsType, RecordsContext};
use crate::wire::tree::{Kind, Tree};

/// Decodes `data` every way kinspect can. Hostile data may only ever produce diagnostics; this
/// panics solely when a decoded tree breaks the every-byte-once tiling, which is a bug.
pub fn fuzz_records(data: &[u8]) {
    let mut t = Tree::new();
    let interpretations = [
        None,
        Some(AsType::ConsumerOffsets),
        Some(AsType::TransactionState),
        Some(AsType::ShareGroupState),
        Some(AsType::ClusterMetadata),
    ];
    for as_type in interpretations {
        for partial_tail_ok in [false, true] {
            let ctx = RecordsContext {
                topic: None,
                partial_tail_ok,
                as_type,
                ..Default::default()
            };
            t.reset(data);
            let len = t.buf(0).len() as u32;
            let root = t.open("", Kind::Array, 0, 0);
            decode_records(&mut t, 0, 0, len, &ctx, "records");
            t.close(root, len);
            if let Err(e) = t.check_tiling(0) {
                panic!("tiling broken ({as_type:?}, partial_tail_ok {partial_tail_ok}): {e}");
            }
        }
    }
    let ctx = RecordsContext::default();
    let mut check = |_: u64, t: &mut Tree| {
        if let Err(e) = t.check_tiling(0) {
            panic!("tiling broken in a log segment item: {e}");
        }
    };
    // Reading from a slice cannot fail.
    let _ = decode_log_file(data, FileKind::Segment, &ctx, &mut check);
}
