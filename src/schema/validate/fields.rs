//! Field rules (F1–F16 of `reference/kafka-generator-rules.md` §4) that the loader leaves to
//! the validator: names, nullability, `fields` on non-structs, the field-level flexibleVersions
//! override, tags and tagged versions, records, zeroCopy, entityType; and lints for
//! nullableVersions outside versions (F5) and fields never on the wire (F16).

use super::walk::{member, type_ok, Cx};
use crate::schema::json::JsonKind;
use crate::schema::model::{Field, FieldType, Prim};

pub fn check(cx: &mut Cx) {
    let gen = cx.generates_code();
    let flex = cx.spec.flexible_versions;
    for (si, f) in cx.all_fields() {
        let path = cx.structs[si].member_path(f);
        let cur = cx.structs[si].cur();
        name(cx, f, &path);
        tags(cx, f, &path);
        if gen {
            tagged_flexible(cx, f, &path, flex);
        }
        if !type_ok(f) {
            continue;
        }
        nullable(cx, f, &path);
        fields_allowed(cx, f, &path);
        flexible_override(cx, f, &path, gen.then_some(flex));
        if gen {
            records(cx, f, &path);
        }
        zero_copy(cx, f, &path);
        entity_type(cx, f, &path);
        // F16: an inline struct disjoint from its parent is an error (S10), anything else a lint.
        let inline_struct = cx.inline_owners.contains(&f.pos);
        if gen && !inline_struct && !cur.is_empty() && f.versions.intersect(cur).is_empty() {
            cx.warning(
                "field-outside-valid-versions",
                f.prop_pos("versions"),
                path,
                format!(
                    "field versions \"{}\" share no version with the enclosing versions \"{cur}\": the field is never on the wire",
                    f.versions
                ),
            );
        }
    }
}

/// F1: `^[A-Za-z][A-Za-z0-9]*$`, ASCII only (Java identifiers are made from it).
fn name(cx: &mut Cx, f: &Field, path: &str) {
    let ok = f
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && f.name.chars().all(|c| c.is_ascii_alphanumeric());
    if !ok {
        cx.error(
            "invalid-field-name",
            f.prop_pos("name"),
            path,
            format!(
                "field name {:?} must be ASCII letters and digits, starting with a letter",
                &*f.name
            ),
        );
    }
}

/// F4 and the F5 lint.
fn nullable(cx: &mut Cx, f: &Field, path: &str) {
    let nv = f.nullable_versions;
    if nv.is_empty() {
        return;
    }
    if let FieldType::Prim(p) = f.ty {
        if !p.can_be_null() {
            cx.error(
                "nullable-not-allowed",
                f.prop_pos("nullableVersions"),
                path,
                format!("type {} cannot be nullable; only string, bytes, records, structs and arrays can", p.as_str()),
            );
            return;
        }
    }
    if !nv.is_subset_of(f.versions) {
        cx.warning(
            "nullable-outside-versions",
            f.prop_pos("nullableVersions"),
            path,
            format!(
                "nullableVersions \"{nv}\" goes beyond the field's versions \"{}\"",
                f.versions
            ),
        );
    }
}

/// F6: `fields` only on structs and arrays; an array of primitives ignores them (a lint).
fn fields_allowed(cx: &mut Cx, f: &Field, path: &str) {
    let written = !f.fields.is_empty()
        || cx
            .field_object(f)
            .and_then(|m| member(m, "fields"))
            .is_some_and(|m| match &m.value.kind {
                JsonKind::Array(a) => !a.is_empty(),
                JsonKind::Null => false,
                _ => true,
            });
    if !written {
        return;
    }
    match &f.ty {
        FieldType::Prim(p) => cx.error(
            "fields-on-non-struct",
            f.prop_pos("fields"),
            path,
            format!("a {} field cannot have fields; only structs and arrays of structs can", p.as_str()),
        ),
        FieldType::Array(e) if !e.is_struct() => cx.warning(
            "fields-ignored",
            f.prop_pos("fields"),
            path,
            format!("the fields of an array of {e} are ignored by Kafka; did you mean an array of structs?"),
        ),
        _ => {}
    }
}

/// F7: the field-level flexibleVersions override (string and bytes only; within the message's).
fn flexible_override(
    cx: &mut Cx,
    f: &Field,
    path: &str,
    message_flex: Option<crate::schema::versions::Versions>,
) {
    let Some(fv) = f.flexible_versions else {
        return;
    };
    let pos = f.prop_pos("flexibleVersions");
    if !matches!(f.ty, FieldType::Prim(Prim::String | Prim::Bytes)) {
        cx.error(
            "flexible-override-type",
            pos,
            path,
            format!(
                "only string and bytes fields may override flexibleVersions, not {}",
                f.ty
            ),
        );
    }
    if let Some(mf) = message_flex {
        if !fv.is_subset_of(mf) {
            cx.error(
                "flexible-override-not-subset",
                pos,
                path,
                format!("the field's flexibleVersions \"{fv}\" must lie within the message's flexibleVersions \"{mf}\""),
            );
        }
    }
}

/// F8, F9 (parse-time part), F10, in the order Kafka's `FieldSpec` checks them.
fn tags(cx: &mut Cx, f: &Field, path: &str) {
    let tv = f.tagged_versions;
    match f.tag {
        Some(tag) => {
            if f.map_key {
                cx.error(
                    "tag-with-map-key",
                    f.prop_pos("mapKey"),
                    path,
                    "a tagged field cannot be a mapKey",
                );
            }
            if tv.is_empty() {
                cx.error(
                    "tag-without-tagged-versions",
                    f.prop_pos("tag"),
                    path,
                    format!(
                        "tag {tag} is set but taggedVersions is not; a tagged field needs both"
                    ),
                );
                return;
            }
            let nt = f.nullable_versions.intersect(tv);
            if !(nt.is_empty() || nt == tv) {
                cx.error(
                    "tagged-nullable-partial",
                    f.prop_pos("nullableVersions"),
                    path,
                    format!(
                        "nullableVersions \"{}\" covers only part of taggedVersions \"{tv}\": either all tagged versions are nullable or none",
                        f.nullable_versions
                    ),
                );
            }
            if !tv.is_open_ended() {
                cx.error(
                    "tagged-versions-not-open-ended",
                    f.prop_pos("taggedVersions"),
                    path,
                    format!(
                        "taggedVersions must be open-ended like \"{}+\", not \"{tv}\"",
                        tv.lo
                    ),
                );
            }
            if !tv.is_subset_of(f.versions) {
                cx.error(
                    "tagged-outside-versions",
                    f.prop_pos("taggedVersions"),
                    path,
                    format!(
                        "taggedVersions \"{tv}\" must lie within the field's versions \"{}\"",
                        f.versions
                    ),
                );
            }
        }
        None if !tv.is_empty() => cx.error(
            "tagged-versions-without-tag",
            f.prop_pos("taggedVersions"),
            path,
            format!("taggedVersions \"{tv}\" is set but there is no tag; give the field a tag"),
        ),
        None => {}
    }
}

/// F9, code-generation part: tagged versions lie within the flexible versions (the field's
/// override if any, else the message's).
fn tagged_flexible(
    cx: &mut Cx,
    f: &Field,
    path: &str,
    message_flex: crate::schema::versions::Versions,
) {
    let tv = f.tagged_versions;
    let flex = f.flexible_versions.unwrap_or(message_flex);
    if !tv.is_empty() && tv.intersect(flex) != tv {
        cx.error(
            "tagged-not-flexible",
            f.prop_pos("taggedVersions"),
            path,
            format!("taggedVersions \"{tv}\" must lie within the flexible versions \"{flex}\": only flexible versions have a tagged section"),
        );
    }
}

/// F11: records cannot be tagged, and there are no arrays of records.
fn records(cx: &mut Cx, f: &Field, path: &str) {
    match &f.ty {
        FieldType::Prim(Prim::Records) if !f.tagged_versions.is_empty() => cx.error(
            "tagged-records",
            f.prop_pos("taggedVersions"),
            path,
            "a records field cannot be tagged",
        ),
        FieldType::Array(e) if **e == FieldType::Prim(Prim::Records) => cx.error(
            "records-array",
            f.prop_pos("type"),
            path,
            "arrays of records are not supported; a records field already holds many records",
        ),
        _ => {}
    }
}

/// F12
fn zero_copy(cx: &mut Cx, f: &Field, path: &str) {
    if f.zero_copy && f.ty != FieldType::Prim(Prim::Bytes) {
        cx.error(
            "zero-copy-type",
            f.prop_pos("zeroCopy"),
            path,
            format!("zeroCopy is only allowed on bytes fields, not {}", f.ty),
        );
    }
}

/// F13: the entity type's base type must match the field type (or its array element type).
fn entity_type(cx: &mut Cx, f: &Field, path: &str) {
    let Some(e) = &f.entity_type else { return };
    let want = match &**e {
        "transactionalId" | "groupId" | "topicName" => Prim::String,
        "producerId" => Prim::Int64,
        "brokerId" => Prim::Int32,
        // `unknown`, and values the loader already reported.
        _ => return,
    };
    if *f.ty.element() != FieldType::Prim(want) {
        cx.error(
            "entity-type-mismatch",
            f.prop_pos("entityType"),
            path,
            format!(
                "entityType {e} needs a {} field (or an array of {}), not {}",
                want.as_str(),
                want.as_str(),
                f.ty
            ),
        );
    }
}
