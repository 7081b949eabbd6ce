//! Control records (batches with attribute bit 5): the key `Version, Type`; transaction markers'
//! value `Version, CoordinatorEpoch`; the KRaft control values (leader change, snapshot header
//! and footer, kraft version, voters).

use super::read::{Fail, R};
use super::W;
use crate::diag::{Diagnostic, FieldPath};
use crate::wire::tree::Value;

/// Control record types (`ControlRecordType`), by key `Type`.
pub const TYPES: [&str; 7] = [
    "ABORT",
    "COMMIT",
    "LEADER_CHANGE",
    "SNAPSHOT_HEADER",
    "SNAPSHOT_FOOTER",
    "KRAFT_VERSION",
    "KRAFT_VOTERS",
];

/// The control key; returns its type (or -1 when it could not be read).
pub(crate) fn key(w: &mut W, path: FieldPath<'_>) -> R<i16> {
    let Some((id, s, saved)) = w.open_prefixed("Key")? else {
        let at = w.rd.pos as u64;
        w.diag(Diagnostic::error(
            "control-record-invalid",
            format!("{path}.Key"),
            at,
            "a control record needs a key",
        ));
        return Ok(-1);
    };
    if s.len < 4 {
        w.diag(Diagnostic::error(
            "control-record-invalid",
            format!("{path}.Key"),
            s.start as u64,
            format!(
                "control key has {} bytes, expected at least 4 (version, type)",
                s.len
            ),
        ));
        w.close_prefixed(id, s, saved);
        return Ok(-1);
    }
    w.int("Version", 2)?;
    let ty = w.int("Type", 2)? as i16;
    match TYPES.get(ty as usize).filter(|_| ty >= 0) {
        Some(name) => w.derived("TypeName", Value::Label(name)),
        None => {
            w.derived("TypeName", Value::Label("UNKNOWN"));
            w.diag(Diagnostic::warning(
                "unknown-control-type",
                format!("{path}.Key.Type"),
                (s.start + 2) as u64,
                format!(
                "control record type {ty} is not one Kafka defines (0-6); ignored as Kafka does"
            ),
            ));
        }
    }
    w.close_prefixed(id, s, saved);
    Ok(ty)
}

/// The control value for a key of type `ty`.
pub(crate) fn value(w: &mut W, ty: i16, path: FieldPath<'_>) -> R<()> {
    match ty {
        0 | 1 => {
            let Some((id, s, saved)) = w.open_prefixed("Value")? else {
                return Ok(());
            };
            let r = w
                .int("Version", 2)
                .and_then(|_| w.int("CoordinatorEpoch", 4));
            if let Err(f) = r {
                let f = Fail::new(
                    "control-record-invalid",
                    f.offset,
                    format!("transaction marker value: {}", f.message),
                );
                w.fail(f, path.member("Value"), s.start + s.len);
            }
            w.close_prefixed(id, s, saved);
            Ok(())
        }
        2..=6 => super::internal::kraft_control_value(w, ty, path),
        _ => w.data("Value", true),
    }
}
