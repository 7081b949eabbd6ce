//! Keys and values of Kafka's internal topics and the KRaft control values.
//!
//! - Coordinator topics (`__consumer_offsets`, `__transaction_state`, `__share_group_state`):
//!   key `Key{Type int16, Data}`, value `Value{Version int16, Data}`; a null value is a tombstone.
//! - `__cluster_metadata`: the key is null; the value is
//!   `Value{FrameVersion uvarint, ApiKey uvarint, Version uvarint, Data}`.
//! - KRaft control values (leader change, snapshot header/footer, kraft version, voters).
//!
//! `Data` holds the struct body. Codes: `internal-key-invalid`, `internal-value-invalid`,
//! `metadata-frame-invalid`, `metadata-key-present`.

use super::read::R;
use super::{AsType, W};
use crate::wire::diag::Diagnostic;
use crate::wire::tree::{Kind, Span, Value};

/// Largest frame version, api key or version the metadata framing accepts.
const MAX_FRAME_FIELD: u32 = 32767;

/// Decodes a record's key and value as `kind` says.
pub(crate) fn key_value(w: &mut W, kind: AsType, path: &str) -> R<()> {
    match kind {
        AsType::ClusterMetadata => metadata(w, path),
        AsType::Raw => {
            w.data("Key", true)?;
            w.data("Value", true)
        }
        _ => coordinator(w, path),
    }
}

/// Opens `name` over a varint-length-prefixed field and limits the cursor to its content.
/// Returns `None` (after pushing a `Null` member) for a null field.
fn open(w: &mut W, name: &'static str) -> R<Option<(u32, Span, u32)>> {
    let (at, hdr, span) = w.len_prefixed(name, true)?;
    let Some(s) = span else {
        let id = w.t.leaf(name, Value::Null, w.buf, at, hdr as u32);
        w.t.node_mut(id).hdr = hdr;
        return Ok(None);
    };
    let id = w.t.open(name, Kind::Struct, w.buf, at);
    w.t.node_mut(id).hdr = hdr;
    let saved = w.rd.end;
    w.rd.pos = s.start;
    w.rd.end = s.start + s.len;
    Ok(Some((id, s, saved)))
}

/// The struct body from the cursor to the end of the field, then closes the field.
fn body_and_close(w: &mut W, id: u32, s: Span, saved: u32) {
    let end = s.start + s.len;
    let p = w.rd.pos;
    if p < end {
        w.t.leaf(
            "Data",
            Value::Bytes(Span {
                start: p,
                len: end - p,
            }),
            w.buf,
            p,
            end - p,
        );
    }
    w.t.close(id, end);
    w.rd.pos = end;
    w.rd.end = saved;
}

fn coordinator(w: &mut W, path: &str) -> R<()> {
    match open(w, "Key")? {
        None => {
            let at = w.rd.pos as u64;
            w.diag(Diagnostic::error(
                "internal-key-invalid",
                format!("{path}.Key"),
                at,
                "a coordinator record needs a key",
            ));
        }
        Some((id, s, saved)) => {
            if let Err(f) = w.int("Type", 2) {
                w.fail(f, &format!("{path}.Key"), s.start + s.len);
            }
            body_and_close(w, id, s, saved);
        }
    }
    // A null value is a tombstone: the key's record was deleted.
    if let Some((id, s, saved)) = open(w, "Value")? {
        if let Err(f) = w.int("Version", 2) {
            w.fail(f, &format!("{path}.Value"), s.start + s.len);
        }
        body_and_close(w, id, s, saved);
    }
    Ok(())
}

fn metadata(w: &mut W, path: &str) -> R<()> {
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
    let Some((id, s, saved)) = open(w, "Value")? else {
        let at = w.rd.pos as u64;
        w.diag(Diagnostic::error(
            "metadata-frame-invalid",
            format!("{path}.Value"),
            at,
            "a metadata record's value cannot be null",
        ));
        return Ok(());
    };
    let vpath = format!("{path}.Value");
    for name in ["FrameVersion", "ApiKey", "Version"] {
        let at = w.rd.pos;
        match w.rd.uvarint(w.t.buf(w.buf), name) {
            Ok(v) => {
                w.t.leaf(name, Value::Int(v as i64), w.buf, at, w.rd.pos - at);
                if v > MAX_FRAME_FIELD || (name == "FrameVersion" && v != 1) {
                    w.diag(Diagnostic::error(
                        "metadata-frame-invalid",
                        format!("{vpath}.{name}"),
                        at as u64,
                        format!(
                            "{name} {v}: expected {}",
                            if name == "FrameVersion" {
                                "1"
                            } else {
                                "at most 32767"
                            }
                        ),
                    ));
                }
            }
            Err(f) => {
                w.fail(f, &vpath, s.start + s.len);
                break;
            }
        }
    }
    body_and_close(w, id, s, saved);
    Ok(())
}

/// A KRaft control value (key types 2-6): a flexible struct whose first field is `Version`.
pub(crate) fn kraft_control_value(w: &mut W, _ty: i16, path: &str) -> R<()> {
    if let Some((id, s, saved)) = open(w, "Value")? {
        if let Err(f) = w.int("Version", 2) {
            w.fail(f, &format!("{path}.Value"), s.start + s.len);
        }
        body_and_close(w, id, s, saved);
    }
    Ok(())
}
