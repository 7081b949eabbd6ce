//! Decoding entry points: [`Decoder::decode_frame`] (size prefix, direction, headers as Kafka
//! chooses them, release-aware body, ApiVersions fallback) and [`decode_message_at`] (one
//! message-shaped body anywhere, for internal-topic records). The interpreter itself is in
//! [`super::walk`].
//!
//! Diagnostic codes (stable; severity in brackets):
//! - `truncated` [error]: fewer bytes than a field needs.
//! - `negative-length` [error]: a length or count below -1 (compact: a uvarint ≥ 2^31).
//! - `null-not-allowed` [error]: null (-1 / 0) where the version is not nullable; shown as null.
//! - `count-exceeds-remaining` [error]: an array (or tagged-field count) claims more elements
//!   than bytes remain, rejected before anything is reserved (Kafka's own guard).
//! - `string-too-long` [error]: a string longer than 32767 bytes (Kafka's reader refuses it).
//! - `invalid-utf8` [warning]: a string that is not UTF-8 (Kafka replaces, so do the printers).
//! - `invalid-bool` [warning]: a bool byte other than 0/1 (read as true, as Kafka does).
//! - `varint-overlong` [warning]: a non-minimal unsigned varint (accepted by Kafka).
//! - `varint-overflow` [error]: a varint with a 6th byte; [warning] when the 5th byte sets bits
//!   above 2^32 (Kafka drops them).
//! - `tag-order` / `tag-duplicate` [error]: tagged fields not strictly ascending.
//! - `tag-size-mismatch` [error]: a known tag's content does not fill exactly its declared size.
//! - `depth-limit` [error]: nesting beyond `limits::MAX_DEPTH`; `node-limit` [error]: more than
//!   `limits::MAX_NODES_PER_TREE` nodes.
//! - Frame level (see [`Decoder`]): `unknown-api`, `unknown-version`, `unstable-version`
//!   [warning], `trailing-bytes`, `size-mismatch`, `missing-hints`, `apiversions-fallback` [info].

use super::diag::Diagnostic;
use super::tree::Tree;
use super::walk::Walker;
use crate::schema::model::MessageSpec;

/// Decodes one message-shaped body (a KRaft metadata record, a coordinator key or value, a
/// control record value) at `version` over `[start, end)` of buffer `buf`, as a `Struct` node
/// called `name`, with diagnostics under `path`. Returns the end offset (where decoding stopped;
/// bytes left before `end` are the caller's to report). A version outside the spec's
/// `validVersions` becomes an `Error` node with `unknown-version`. Uses the process-wide plan
/// cache, so it is cheap to call per record.
#[allow(clippy::too_many_arguments)]
pub fn decode_message_at(
    tree: &mut Tree,
    spec: &'static MessageSpec,
    version: i16,
    buf: u16,
    start: u32,
    end: u32,
    name: &'static str,
    path: &str,
) -> u32 {
    // The walker reads the buffer while it pushes nodes: lend it out for the duration.
    let data = tree
        .bufs
        .get_mut(buf as usize)
        .map(std::mem::take)
        .unwrap_or_default();
    let end = (end as usize).min(data.len());
    let start = (start as usize).min(end);
    let r = if !spec.valid_versions.contains(version) {
        let d = Diagnostic::error(
            "unknown-version",
            path,
            start as u64,
            format!(
                "{} has no version {version} (valid: {})",
                spec.name, spec.valid_versions
            ),
        )
        .in_buf(buf);
        tree.error_node(name, buf, start as u32, (end - start) as u32, d);
        end
    } else {
        let plan = super::plan::shared(spec, version);
        let mut segs = Vec::new();
        let mut w = Walker::new(tree, &data, buf, path, &mut segs);
        w.message(&plan, name, start, end)
    };
    if let Some(b) = tree.bufs.get_mut(buf as usize) {
        *b = data;
    }
    r as u32
}
