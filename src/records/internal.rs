//! Keys and values of Kafka's internal topics and the KRaft control values, decoded with the
//! built-in coordinator, metadata and control record schemas (`crate::protocol::builtin()`)
//! through the struct decoder (`crate::wire::decode::decode_message_at`).
//!
//! - Coordinator topics (`__consumer_offsets`, `__transaction_state`, `__share_group_state`):
//!   key `Key{Type int16, TypeName, Data{…}}`, value `Value{Version int16, Data{…}}`; a null
//!   value is a tombstone (`Value: null`). The key spec is found by record type in either form:
//!   4.x `coordinator-key` specs (apiKey = type, read at their only version) or 3.9 `data` key
//!   specs whose version is the type.
//! - `__cluster_metadata`: the key is null; the value is
//!   `Value{FrameVersion, ApiKey, Version, TypeName, Data{…}}` (uvarint framing).
//! - KRaft control values (leader change, snapshot header/footer, kraft version, voters): the
//!   struct itself (its first field is `Version`), read at version 0 as Kafka does.
//!
//! Codes: `internal-key-invalid`, `metadata-frame-invalid`, `metadata-key-present` (errors),
//! `unknown-record-type` (warning: no schema for that type; shown raw), `unknown-record-version`
//! (error: the type's value schema has no such version), `trailing-bytes` (error: bytes left
//! after the struct), plus the struct decoder's codes.

use super::read::R;
use super::{AsType, W};
use crate::diag::{Diagnostic, FieldPath};
use crate::protocol::{builtin, CoordinatorGroup, Resolved};
use crate::wire::decode::decode_message_at;
use crate::wire::tree::{Span, Value};

/// Largest frame version, api key or version the metadata framing accepts.
const MAX_FRAME_FIELD: u32 = 32767;

/// The KRaft control value schemas, by control type (2-6).
pub(crate) const CONTROL_SCHEMAS: [&str; 5] = [
    "LeaderChangeMessage",
    "SnapshotHeaderRecord",
    "SnapshotFooterRecord",
    "KRaftVersionRecord",
    "VotersRecord",
];

/// Decodes a record's key and value as `kind` says.
pub(crate) fn key_value(w: &mut W, kind: AsType, path: FieldPath<'_>) -> R<()> {
    let group = match kind {
        AsType::ClusterMetadata => return metadata(w, path),
        AsType::Raw => {
            w.data("Key", true)?;
            return w.data("Value", true);
        }
        AsType::ConsumerOffsets => CoordinatorGroup::Group,
        AsType::TransactionState => CoordinatorGroup::Transaction,
        AsType::ShareGroupState => CoordinatorGroup::Share,
    };
    coordinator(w, group, path)
}

/// Closes what [`W::open_prefixed`] opened. Bytes the struct did not use are kept as `Unparsed`
/// and, when `strict`, reported.
fn close(w: &mut W, id: u32, s: Span, saved: u32, path: FieldPath<'_>, strict: bool) {
    let (end, p) = (s.start + s.len, w.rd.pos);
    if strict && p < end {
        w.diag(Diagnostic::error(
            "trailing-bytes",
            path,
            p as u64,
            format!("{} bytes after the record struct", end - p),
        ));
    }
    w.close_prefixed(id, s, saved);
}

/// Decodes `r.spec` at `version` from the cursor to the end of its window as member `name`.
fn body(w: &mut W, r: Resolved, version: i16, name: &'static str, path: FieldPath<'_>) {
    let end = decode_message_at(w.t, r.spec, version, w.buf, w.rd.pos, w.rd.end, name, path);
    w.rd.pos = end.clamp(w.rd.pos, w.rd.end);
}

/// The rest of the window as raw `Data` bytes.
fn raw(w: &mut W) {
    let p = w.rd.pos;
    if p < w.rd.end {
        let n = w.rd.end - p;
        w.t.leaf("Data", Value::Bytes(Span { start: p, len: n }), w.buf, p, n);
        w.rd.pos = w.rd.end;
    }
}

fn coordinator(w: &mut W, group: CoordinatorGroup, path: FieldPath<'_>) -> R<()> {
    let kpath = path.member("Key");
    let mut record_type = None;
    match w.open_prefixed("Key")? {
        None => {
            let at = w.rd.pos as u64;
            w.diag(Diagnostic::error(
                "internal-key-invalid",
                kpath,
                at,
                "a coordinator record needs a key",
            ));
        }
        Some((id, s, saved)) => {
            match w.int("Type", 2) {
                Ok(ty) => {
                    let ty = ty as i16;
                    match builtin().coordinator_key(group, ty) {
                        Some(r) => {
                            // Only a known type gives the value a schema to look for.
                            record_type = Some(ty);
                            w.derived("TypeName", Value::Label(&r.spec.name));
                            // 3.9 key specs are versioned by the type; 4.x ones have one version.
                            let v = if r.spec.valid_versions.contains(ty) {
                                ty
                            } else {
                                r.spec.valid_versions.lo
                            };
                            body(w, r, v, "Data", kpath.member("Data"));
                        }
                        None => {
                            w.diag(Diagnostic::warning(
                                "unknown-record-type",
                                kpath,
                                s.start as u64,
                                format!(
                                    "no {} key schema for record type {ty}; shown raw",
                                    group.topic()
                                ),
                            ));
                            raw(w);
                        }
                    }
                }
                Err(f) => w.fail(f, kpath, s.start + s.len),
            }
            close(w, id, s, saved, kpath, true);
        }
    }
    // A null value is a tombstone: the key's record was deleted.
    let vpath = path.member("Value");
    if let Some((id, s, saved)) = w.open_prefixed("Value")? {
        match w.int("Version", 2) {
            Ok(v) => {
                match record_type.map(|ty| (ty, builtin().coordinator_value(group, ty, v as i16))) {
                    Some((_, Some(r))) => {
                        w.derived("TypeName", Value::Label(&r.spec.name));
                        body(w, r, v as i16, "Data", vpath.member("Data"));
                    }
                    Some((ty, None)) => {
                        w.diag(Diagnostic::error(
                            "unknown-record-version",
                            vpath,
                            s.start as u64,
                            format!(
                                "no {} value schema for record type {ty} at version {v}; shown raw",
                                group.topic()
                            ),
                        ));
                        raw(w);
                    }
                    None => raw(w),
                }
            }
            Err(f) => w.fail(f, vpath, s.start + s.len),
        }
        close(w, id, s, saved, vpath, true);
    }
    Ok(())
}

fn metadata(w: &mut W, path: FieldPath<'_>) -> R<()> {
    let (at, hdr, key) = w.len_prefixed("Key", true)?;
    let v = key.map(Value::Data).unwrap_or(Value::Null);
    let id = w.t.leaf("Key", v, w.buf, at, w.rd.pos - at);
    w.t.node_mut(id).hdr = hdr;
    if key.is_some() {
        w.diag(Diagnostic::error(
            "metadata-key-present",
            format!("{path}.Key"),
            at as u64,
            "a metadata record's key must be null",
        ));
    }
    let vpath = path.member("Value");
    let Some((id, s, saved)) = w.open_prefixed("Value")? else {
        let at = w.rd.pos as u64;
        w.diag(Diagnostic::error(
            "metadata-frame-invalid",
            vpath,
            at,
            "a metadata record's value cannot be null",
        ));
        return Ok(());
    };
    let mut frame = [0u32; 3];
    for (i, name) in ["FrameVersion", "ApiKey", "Version"]
        .into_iter()
        .enumerate()
    {
        let at = w.rd.pos;
        match w.rd.uvarint(w.t.buf(w.buf), name) {
            Ok(v) => {
                w.t.leaf(name, Value::Int(v as i64), w.buf, at, w.rd.pos - at);
                frame[i] = v;
                // Frame version 0 was the 2.8 preview; Kafka rejects it.
                if v > MAX_FRAME_FIELD || (i == 0 && v != 1) {
                    let want = if i == 0 { "1" } else { "at most 32767" };
                    w.diag(Diagnostic::error(
                        "metadata-frame-invalid",
                        format!("{vpath}.{name}"),
                        at as u64,
                        format!("{name} {v}: expected {want}"),
                    ));
                }
            }
            Err(f) => {
                w.fail(f, vpath, s.start + s.len);
                close(w, id, s, saved, vpath, false);
                return Ok(());
            }
        }
    }
    let (api_key, version) = (
        frame[1].min(MAX_FRAME_FIELD) as i16,
        frame[2].min(MAX_FRAME_FIELD) as i16,
    );
    match builtin().metadata_record(api_key, version) {
        Some(r) => {
            w.derived("TypeName", Value::Label(&r.spec.name));
            body(w, r, version, "Data", vpath.member("Data"));
        }
        None => {
            w.diag(Diagnostic::error(
                "unknown-record-version",
                vpath,
                s.start as u64,
                format!(
                "no metadata record schema for apiKey {api_key} at version {version}; shown raw"
            ),
            ));
            raw(w);
        }
    }
    close(w, id, s, saved, vpath, true);
    Ok(())
}

/// A KRaft control value (key types 2-6): the schema's own struct, read at version 0.
pub(crate) fn kraft_control_value(w: &mut W, ty: i16, path: FieldPath<'_>) -> R<()> {
    let vpath = path.member("Value");
    let (at, hdr, span) = w.len_prefixed("Value", true)?;
    let Some(s) = span else {
        let id = w.t.leaf("Value", Value::Null, w.buf, at, hdr as u32);
        w.t.node_mut(id).hdr = hdr;
        w.diag(Diagnostic::error(
            "control-record-invalid",
            vpath,
            at as u64,
            "a control record needs a value",
        ));
        return Ok(());
    };
    let schema = CONTROL_SCHEMAS
        .get((ty - 2) as usize)
        .and_then(|n| builtin().by_name(n));
    let Some(r) = schema else {
        let id = w.t.leaf("Value", Value::Data(s), w.buf, at, w.rd.pos - at);
        w.t.node_mut(id).hdr = hdr;
        return Ok(());
    };
    // The struct decoder's node starts at the content; widen it over the length prefix so the
    // value keeps its header bytes like every length-prefixed member.
    let first = w.t.nodes.len();
    let end = decode_message_at(
        w.t,
        r.spec,
        0,
        w.buf,
        s.start,
        s.start + s.len,
        "Value",
        vpath,
    );
    if let Some(n) = w.t.nodes.get_mut(first) {
        n.offset = at;
        n.len += hdr as u32;
        n.hdr = hdr;
    }
    if end < s.start + s.len {
        let p = end.max(s.start);
        w.diag(Diagnostic::error(
            "trailing-bytes",
            vpath,
            p as u64,
            format!(
                "{} bytes after the {} struct",
                s.start + s.len - p,
                r.spec.name
            ),
        ));
        // Inside the value: re-open it to hold the leftover as raw bytes.
        let n = w.t.nodes.len() as u32;
        w.t.leaf(
            "Unparsed",
            Value::Bytes(Span {
                start: p,
                len: s.start + s.len - p,
            }),
            w.buf,
            p,
            s.start + s.len - p,
        );
        if let Some(v) = w.t.nodes.get_mut(first) {
            v.end = n + 1;
            v.len = s.start + s.len - at;
        }
    }
    w.rd.pos = s.start + s.len;
    Ok(())
}
