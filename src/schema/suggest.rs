//! "Did you mean …?": the closest known name for a misspelled property, type or enum value.
//!
//! Three tries, in order: a case-insensitive exact match (`validversions`), a table of words
//! people bring from other languages (`boolean`, `int`, `long`), then the smallest edit distance
//! (Damerau: a swap of two neighbours counts once) within a third of the word, and last a known
//! name hidden inside a longer word (`booleanbool` → `bool`).

use super::model::Prim;

/// Words from Java, JSON Schema or SQL that mean a Kafka primitive.
const TYPE_ALIASES: &[(&str, &str)] = &[
    ("boolean", "bool"),
    ("booleanbool", "bool"),
    ("byte", "int8"),
    ("short", "int16"),
    ("int", "int32"),
    ("integer", "int32"),
    ("long", "int64"),
    ("uint", "uint32"),
    ("ushort", "uint16"),
    ("float", "float64"),
    ("double", "float64"),
    ("float32", "float64"),
    ("str", "string"),
    ("text", "string"),
    ("varchar", "string"),
    ("nullable_string", "string"),
    ("compact_string", "string"),
    ("byte[]", "bytes"),
    ("bytearray", "bytes"),
    ("binary", "bytes"),
    ("blob", "bytes"),
    ("record", "records"),
    ("recordbatch", "records"),
    ("guid", "uuid"),
    ("varint", "int32"),
    ("varlong", "int64"),
];

/// The closest of `candidates` to `input`, if any is close enough to be a likely typo.
pub fn closest<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if input.is_empty() {
        return None;
    }
    let low = input.to_ascii_lowercase();
    if let Some(c) = candidates.iter().find(|c| c.to_ascii_lowercase() == low) {
        return Some(c);
    }
    let budget = (input.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let d = distance(&low, &c.to_ascii_lowercase());
        if d <= budget && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    if let Some((_, c)) = best {
        return Some(c);
    }
    // A known name inside a longer word (a paste that doubled a word), longest first.
    candidates
        .iter()
        .filter(|c| c.len() >= 3 && low.contains(&c.to_ascii_lowercase()))
        .max_by_key(|c| c.len())
        .copied()
}

/// A suggestion for an unparseable or unknown `type` string: a primitive, an array of one, or a
/// struct the spec defines (`struct_names`). Returns the full corrected type text.
pub fn suggest_type(input: &str, struct_names: &[&str]) -> Option<String> {
    let t = input.trim();
    if let Some(inner) = t.strip_prefix("[]") {
        // `[][]T` cannot be fixed to mean the same thing; `[]T` is the nearest legal spelling.
        let inner = inner.trim_start_matches("[]");
        if inner.is_empty() {
            return None;
        }
        if Prim::parse(inner).is_some() || struct_names.contains(&inner) {
            return Some(format!("[]{inner}"));
        }
        return suggest_type(inner, struct_names).map(|s| format!("[]{s}"));
    }
    // Other languages' array spellings: `int32[]`, `Array<T>`, `list<T>`.
    if let Some(inner) = t
        .strip_suffix("[]")
        .filter(|i| !i.is_empty() && *i != "byte")
    {
        let fixed = if Prim::parse(inner).is_some() || struct_names.contains(&inner) {
            inner.to_string()
        } else {
            suggest_type(inner, struct_names)?
        };
        return Some(format!("[]{fixed}"));
    }
    let low = t.to_ascii_lowercase();
    if let Some((_, to)) = TYPE_ALIASES.iter().find(|(from, _)| *from == low) {
        return Some((*to).to_string());
    }
    let prims: Vec<&str> = Prim::ALL.iter().map(|p| p.as_str()).collect();
    let mut all = prims.clone();
    all.extend_from_slice(struct_names);
    if let Some(s) = closest(t, &all) {
        if s != t {
            return Some(s.to_string());
        }
    }
    // A lower-case struct name (`item`) is not a struct; the capitalized one may be meant.
    let mut cs = t.chars();
    let first = cs.next()?;
    if first.is_lowercase() {
        let cap: String = first.to_uppercase().chain(cs).collect();
        if struct_names.contains(&cap.as_str())
            || !struct_names.is_empty() && closest(&cap, struct_names).is_some()
        {
            return closest(&cap, struct_names).map(str::to_string);
        }
        if struct_names.is_empty() && cap.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Some(cap);
        }
    }
    None
}

/// Optimal string alignment distance over chars (insert, delete, substitute, swap neighbours).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Names are short; refuse quadratic work on a pathological multi-kilobyte key.
    if a.len() > 256 || b.len() > 256 {
        return usize::MAX;
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    // The loader's own list: suggestions are tested against what the loader accepts.
    use crate::schema::load::{FIELD_PROPS, MESSAGE_PROPS as MSG_PROPS};

    #[test]
    fn property_typos() {
        assert_eq!(closest("ignoreable", FIELD_PROPS), Some("ignorable"));
        assert_eq!(closest("validversion", MSG_PROPS), Some("validVersions"));
        assert_eq!(
            closest("nullableversions", FIELD_PROPS),
            Some("nullableVersions")
        );
        assert_eq!(
            closest("taggedVersion", FIELD_PROPS),
            Some("taggedVersions")
        );
        assert_eq!(closest("entitytype", FIELD_PROPS), Some("entityType"));
        assert_eq!(
            closest("flexibleVersoins", MSG_PROPS),
            Some("flexibleVersions")
        );
        assert_eq!(closest("comment", FIELD_PROPS), None);
        assert_eq!(closest("x", FIELD_PROPS), None);
    }

    #[test]
    fn type_typos() {
        assert_eq!(suggest_type("booleanbool", &[]).as_deref(), Some("bool"));
        assert_eq!(suggest_type("boolean", &[]).as_deref(), Some("bool"));
        assert_eq!(suggest_type("int", &[]).as_deref(), Some("int32"));
        assert_eq!(suggest_type("long", &[]).as_deref(), Some("int64"));
        assert_eq!(suggest_type("[]int", &[]).as_deref(), Some("[]int32"));
        assert_eq!(suggest_type("[]strng", &[]).as_deref(), Some("[]string"));
        assert_eq!(
            suggest_type("[]Strng", &["Topic"]).as_deref(),
            Some("[]string")
        );
        assert_eq!(suggest_type("int23", &[]).as_deref(), Some("int32"));
        assert_eq!(suggest_type("[][]int32", &[]).as_deref(), Some("[]int32"));
        assert_eq!(suggest_type("int32[]", &[]).as_deref(), Some("[]int32"));
        assert_eq!(
            suggest_type("[]topic", &["Topic", "Partition"]).as_deref(),
            Some("[]Topic")
        );
        assert_eq!(suggest_type("uuuid", &[]).as_deref(), Some("uuid"));
        assert_eq!(suggest_type("[]", &[]), None);
    }

    #[test]
    fn distance_counts_swaps_once() {
        assert_eq!(distance("ab", "ba"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance(&"a".repeat(1000), "a"), usize::MAX);
    }
}
