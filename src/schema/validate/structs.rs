//! Struct rules (S1–S10 of `reference/kafka-generator-rules.md` §3): tags unique and
//! contiguous, field names unique (4.x), inline struct names defined once, common structs not
//! redefined, `mapKey` not at the top level, nested versions overlapping their parent's, plus
//! lints for a struct referenced but defined nowhere and a common struct nobody uses.

use super::walk::{type_ok, Cx, StructKind};
use crate::schema::model::Field;
use crate::schema::suggest;
use std::collections::HashMap;

pub fn check(cx: &mut Cx) {
    let gen = cx.generates_code();
    for i in 0..cx.structs.len() {
        tags(cx, i);
        names(cx, i);
        if gen {
            nested_versions(cx, i);
        }
    }
    if gen {
        registry(cx);
        top_level_map_key(cx);
    }
}

fn what(cx: &Cx, i: usize) -> String {
    let s = &cx.structs[i];
    match s.kind {
        StructKind::Top => format!("message {}", s.name),
        StructKind::Inline => format!("struct {}", s.name),
        StructKind::Common => format!("common struct {}", s.name),
    }
}

/// S1, S2: within one struct, tags are unique and run 0, 1, 2… without gaps.
fn tags(cx: &mut Cx, i: usize) {
    let fields = cx.structs[i].fields;
    let mut seen: HashMap<u32, &Field> = HashMap::new();
    let mut dups = Vec::new();
    for f in fields {
        let Some(t) = f.tag else { continue };
        match seen.get(&t) {
            Some(first) => dups.push((f, t, first.name.clone())),
            None => {
                seen.insert(t, f);
            }
        }
    }
    let owner = what(cx, i);
    for (f, t, first) in dups {
        let path = cx.structs[i].member_path(f);
        cx.error(
            "duplicate-tag",
            f.prop_pos("tag"),
            path,
            format!("tag {t} is already used by field {first} in {owner}; tags must be unique within a struct"),
        );
    }
    if seen.is_empty() {
        return;
    }
    let n = seen.len() as u64;
    let missing: Vec<u64> = (0..n)
        .filter(|t| !seen.contains_key(&(*t as u32)))
        .collect();
    if missing.is_empty() {
        return;
    }
    // Point at the smallest tag that lies beyond a gap.
    let first_gap = missing[0];
    let Some((t, f)) = seen
        .iter()
        .filter(|(t, _)| u64::from(**t) > first_gap)
        .min_by_key(|(t, _)| **t)
    else {
        return;
    };
    let list = missing
        .iter()
        .take(8)
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let more = if missing.len() > 8 { ", …" } else { "" };
    let path = cx.structs[i].member_path(f);
    cx.error(
        "tag-gap",
        f.prop_pos("tag"),
        path,
        format!("tag {t} leaves a gap: tags in {owner} must run 0, 1, 2… without gaps, but {list}{more} {} unused", if missing.len() == 1 { "is" } else { "are" }),
    );
}

/// S3: field names unique within a struct (4.x rejects duplicates; 3.9 accepted them). Two
/// names differing only in case pass both, but their Java members collide: a lint.
fn names(cx: &mut Cx, i: usize) {
    let fields = cx.structs[i].fields;
    let owner = what(cx, i);
    let mut seen: HashMap<&str, &Field> = HashMap::new();
    let mut folded: HashMap<String, &Field> = HashMap::new();
    for f in fields {
        let path = cx.structs[i].member_path(f);
        if let Some(first) = seen.get(&*f.name) {
            let line = first.pos.line;
            if cx.release.is_4x() {
                cx.error(
                    "duplicate-field-name",
                    f.prop_pos("name"),
                    path,
                    format!("field {} is already defined in {owner} (line {line}); field names must be unique", f.name),
                );
            } else {
                cx.warning(
                    "duplicate-field-name",
                    f.prop_pos("name"),
                    path,
                    format!("field {} is already defined in {owner} (line {line}); 3.9 accepts this but 4.x rejects it", f.name),
                );
            }
            continue;
        }
        seen.insert(&f.name, f);
        let low = f.name.to_lowercase();
        if let Some(first) = folded.get(&low) {
            cx.warning(
                "field-name-case-collision",
                f.prop_pos("name"),
                path,
                format!(
                    "field {} differs from field {} (line {}) only in case; their generated Java members collide",
                    f.name, first.name, first.pos.line
                ),
            );
        } else {
            folded.insert(low, f);
        }
    }
}

/// S10: the generator refuses a struct whose versions share nothing with the versions its
/// enclosing class is generated for ("Version ranges A and B have no versions in common").
fn nested_versions(cx: &mut Cx, i: usize) {
    let s = &cx.structs[i];
    if !s.cur().is_empty() {
        return;
    }
    let (versions, parent, kind, pos, path) = (s.versions, s.parent, s.kind, s.pos, s.path.clone());
    match kind {
        // An empty message is reported by the message rules.
        StructKind::Top => {}
        StructKind::Inline => {
            // An empty enclosing struct is reported itself; its descendants are empty because of it.
            if parent.is_empty() {
                return;
            }
            let f = s.owner;
            cx.error(
                "struct-versions-disjoint",
                f.map_or(pos, |f| f.prop_pos("versions")),
                path,
                format!("struct versions \"{versions}\" have no version in common with the enclosing versions \"{parent}\", so its class cannot be generated"),
            );
        }
        StructKind::Common => {
            let p = s.common.map_or(pos, |c| c.prop_pos("versions"));
            cx.error(
                "struct-versions-disjoint",
                p,
                path,
                format!("common struct versions \"{versions}\" are empty, so its class cannot be generated"),
            );
        }
    }
}

/// S5, S6, S8 (common struct names) and the S7 lint: Kafka's `StructRegistry`.
fn registry(cx: &mut Cx) {
    let spec = cx.spec;
    let mut common: HashMap<&str, usize> = HashMap::new();
    for cs in &spec.common_structs {
        let pos = cs.prop_pos("name");
        if !cs.name.chars().next().is_some_and(|c| c.is_uppercase()) {
            cx.error(
                "struct-name-case",
                pos,
                &*cs.name,
                format!(
                    "common struct name \"{}\" must start with an upper-case letter",
                    cs.name
                ),
            );
        }
        if let Some(line) = common.get(&*cs.name) {
            cx.error(
                "duplicate-common-struct",
                pos,
                &*cs.name,
                format!(
                    "common struct {} is already declared (line {line})",
                    cs.name
                ),
            );
        } else {
            common.insert(&cs.name, cs.pos.line as usize);
        }
    }
    let names: Vec<&str> = spec.common_structs.iter().map(|c| &*c.name).collect();
    let mut used: HashMap<&str, bool> = names.iter().map(|n| (*n, false)).collect();
    let mut inline: HashMap<String, u32> = HashMap::new();
    let mut typed = cx.all_fields();
    // The registry meets fields in file order; the later of two declarations is the mistake.
    typed.sort_by_key(|(_, f)| f.pos);
    for (si, f) in typed {
        if !type_ok(f) {
            continue;
        }
        let Some(tn) = f.ty.struct_name() else {
            continue;
        };
        let path = cx.structs[si].member_path(f);
        let tpos = f.prop_pos("type");
        if let Some(u) = used.get_mut(tn) {
            *u = true;
            if !f.fields.is_empty() {
                cx.error(
                    "common-struct-inline-fields",
                    f.prop_pos("fields"),
                    path,
                    format!("{tn} is a common struct; it cannot be re-specified inline with its own fields"),
                );
            }
            continue;
        }
        if let Some(line) = inline.get(tn) {
            cx.error(
                "duplicate-struct",
                tpos,
                path,
                format!(
                    "struct {tn} is already declared by the field on line {line}; an inline struct name may be declared once per message (use a common struct to share it)"
                ),
            );
            continue;
        }
        inline.insert(tn.to_string(), f.pos.line);
        if f.fields.is_empty() {
            let hint = suggest::closest(tn, &names).map(str::to_string);
            let d = crate::schema::diag::SchemaDiag::warning(
                "unknown-struct",
                &cx.file,
                tpos,
                path,
                format!("struct {tn} has no fields here and is not a common struct: Kafka silently makes it an empty struct"),
            )
            .with_suggestion(hint);
            cx.push(d);
        }
    }
    for cs in &spec.common_structs {
        if used.get(&*cs.name) == Some(&false) {
            cx.warning(
                "unused-common-struct",
                cs.prop_pos("name"),
                &*cs.name,
                format!("common struct {} is never used by a field", cs.name),
            );
        }
    }
}

/// S9: `mapKey` turns a struct into a keyed set element; the message itself cannot be one.
fn top_level_map_key(cx: &mut Cx) {
    let fields = cx.structs[0].fields;
    for f in fields.iter().filter(|f| f.map_key) {
        cx.error(
            "top-level-map-key",
            f.prop_pos("mapKey"),
            f.name.to_string(),
            "mapKey cannot be set on a top-level field (only on fields of an array element struct)",
        );
    }
}
