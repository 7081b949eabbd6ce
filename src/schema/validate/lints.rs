//! Lints read from the JSON itself, before any model: a key written twice in one object
//! (Kafka's Jackson silently keeps the last) and a reversed version range such as `"2-1"`
//! (Kafka reads it as "none", which is almost never what was meant).

use crate::limits::MAX_DEPTH;
use crate::schema::diag::SchemaDiag;
use crate::schema::json::{JsonKind, JsonValue};
use std::sync::Arc;

/// The properties that hold a version range.
const VERSION_KEYS: &[&str] = &[
    "validVersions",
    "flexibleVersions",
    "deprecatedVersions",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "headerVersions",
];

pub fn check_json(file: &Arc<str>, ast: &JsonValue, out: &mut Vec<SchemaDiag>) {
    walk(file, ast, "", 0, out);
}

fn walk(file: &Arc<str>, v: &JsonValue, path: &str, depth: usize, out: &mut Vec<SchemaDiag>) {
    if depth > MAX_DEPTH {
        return;
    }
    match &v.kind {
        JsonKind::Object(members) => {
            // Paths name fields by their `name` so lints read like the rules' diagnostics.
            let here = match members
                .iter()
                .rev()
                .find(|m| m.key == "name")
                .and_then(|m| m.value.as_str())
            {
                Some(n) if depth > 0 && path.is_empty() => n.to_string(),
                Some(n) if depth > 0 => format!("{path}.{n}"),
                _ => path.to_string(),
            };
            for (i, m) in members.iter().enumerate() {
                if let Some(first) = members[..i].iter().find(|p| p.key == m.key) {
                    out.push(SchemaDiag::warning(
                        "duplicate-key",
                        file,
                        m.key_pos,
                        &here,
                        format!(
                            "key \"{}\" is written twice in this object (first at line {}, column {}); Kafka silently keeps this last one",
                            m.key, first.key_pos.line, first.key_pos.col
                        ),
                    ));
                }
                if VERSION_KEYS.contains(&m.key.as_str()) {
                    if let Some(s) = m.value.as_str() {
                        reversed(file, s, m.value.pos, &here, &m.key, out);
                    }
                }
            }
            for m in members {
                // Array members (`fields`, `commonStructs`) hold the named children.
                walk(file, &m.value, &here, depth + 1, out);
            }
        }
        JsonKind::Array(items) => {
            for i in items {
                walk(file, i, path, depth + 1, out);
            }
        }
        _ => {}
    }
}

fn reversed(
    file: &Arc<str>,
    s: &str,
    pos: crate::schema::model::Pos,
    path: &str,
    key: &str,
    out: &mut Vec<SchemaDiag>,
) {
    let t = s.trim();
    let Some((a, b)) = t.split_once('-') else {
        return;
    };
    let (Ok(lo), Ok(hi)) = (
        a.trim_start_matches('+').parse::<u16>(),
        b.trim_start_matches('+').parse::<u16>(),
    ) else {
        return;
    };
    if lo > hi {
        let p = if path.is_empty() {
            key.to_string()
        } else {
            path.to_string()
        };
        out.push(SchemaDiag::warning(
            "reversed-range",
            file,
            pos,
            p,
            format!("{key} \"{t}\" is a reversed range, which Kafka reads as \"none\"; did you mean \"{hi}-{lo}\"?"),
        ));
    }
}
