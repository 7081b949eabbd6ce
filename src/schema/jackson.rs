//! Jackson's reading of spec JSON, as Kafka configures it: which properties exist, how scalars
//! are coerced (`"true"` for a boolean, `2` for a version string, a lone value for a list), and
//! what is an error. The loader builds the model on top of these readers.

use super::diag::SchemaDiag;
use super::json::describe_char;
use super::json::{JsonKind, JsonValue, Member};
use super::model::{java_trim, Pos};
use super::suggest::closest;
use super::versions::Versions;
use std::sync::Arc;

pub(super) struct Ctx {
    pub(super) file: Arc<str>,
    pub(super) diags: Vec<SchemaDiag>,
    /// Type errors wait for the whole spec so the suggestion can name its structs.
    pub(super) pending_types: Vec<(Pos, String, String, String)>,
    /// The JSON was cut short by a syntax error: absent properties may just be unread.
    pub(super) partial: bool,
}

/// A property that was recognised: its canonical name and its (last) member.
pub(super) type Props<'a> = Vec<(&'static str, &'a Member)>;

pub(super) fn find<'a>(props: &Props<'a>, name: &str) -> Option<&'a Member> {
    props.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl Ctx {
    pub(super) fn error(
        &mut self,
        code: &'static str,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) {
        if self.partial && code == "missing-property" {
            return;
        }
        self.diags
            .push(SchemaDiag::error(code, &self.file, pos, path, msg));
    }
    pub(super) fn warn(
        &mut self,
        code: &'static str,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) {
        self.diags
            .push(SchemaDiag::warning(code, &self.file, pos, path, msg));
    }

    /// Splits an object's members into known properties (last of duplicates wins, as Jackson
    /// does) and reports unknown ones with the nearest known name.
    pub(super) fn props<'a>(
        &mut self,
        members: &'a [Member],
        allowed: &[&'static str],
        what: &str,
        path: &str,
    ) -> Props<'a> {
        let mut out: Props<'a> = Vec::new();
        for m in members {
            match allowed.iter().find(|a| **a == m.key) {
                Some(name) => {
                    out.retain(|(n, _)| n != name);
                    out.push((name, m));
                }
                None => {
                    let d = SchemaDiag::error(
                        "unknown-property",
                        &self.file,
                        m.key_pos,
                        path,
                        format!("unknown {what} property {:?}", m.key),
                    )
                    .with_suggestion(closest(&m.key, allowed));
                    self.diags.push(d);
                }
            }
        }
        out
    }

    /// A string property; Jackson turns numbers and booleans into their text. JSON null is absent.
    pub(super) fn string(&mut self, m: &Member, path: &str) -> Option<String> {
        match &m.value.kind {
            JsonKind::Str(s) => Some(s.clone()),
            JsonKind::Number(n) => Some(n.clone()),
            JsonKind::Bool(b) => Some(b.to_string()),
            JsonKind::Null => None,
            k => {
                self.error(
                    "wrong-json-type",
                    m.value.pos,
                    path,
                    format!("\"{}\" must be a string, not {}", m.key, k.describe()),
                );
                None
            }
        }
    }

    /// A property Kafka requires: absent or null is `missing-property` (`what` says whose).
    pub(super) fn required_string(
        &mut self,
        props: &Props<'_>,
        key: &str,
        at: Pos,
        path: &str,
        what: &str,
    ) -> Option<String> {
        match find(props, key) {
            Some(m) if !matches!(m.value.kind, JsonKind::Null) => self.string(m, path),
            Some(m) => {
                self.error(
                    "missing-property",
                    m.value.pos,
                    path,
                    format!("{what} \"{key}\" is null"),
                );
                None
            }
            None => {
                self.error(
                    "missing-property",
                    at,
                    path,
                    format!("{what} has no \"{key}\""),
                );
                None
            }
        }
    }

    /// A version-range property; `default` applies when absent or empty (Kafka's rule).
    pub(super) fn versions(
        &mut self,
        m: Option<&Member>,
        default: Option<Versions>,
        path: &str,
    ) -> Option<Versions> {
        let Some(m) = m else { return default };
        if matches!(m.value.kind, JsonKind::Number(_)) {
            self.warn(
                "coerced-value",
                m.value.pos,
                path,
                format!("\"{}\" is a number; Kafka reads it as the string \"{}\" but version ranges are written as strings", m.key, number_text(&m.value)),
            );
        }
        let text = self.string(m, path)?;
        // Versions::parse trims like Rust (all Unicode spaces); Kafka trims like Java, so a
        // pasted non-breaking space at either end makes the range unparseable there.
        if let Some(c) = text.chars().find(|c| !c.is_ascii() && c.is_whitespace()) {
            self.error(
                "invalid-versions",
                m.value.pos,
                path,
                format!(
                    "\"{}\": {} in version string {text:?}",
                    m.key,
                    describe_char(c)
                ),
            );
            return None;
        }
        match Versions::parse(&text, default) {
            Ok(v) => Some(v),
            Err(e) if java_trim(&text).is_empty() => {
                self.error(
                    "missing-property",
                    m.value.pos,
                    path,
                    format!("\"{}\" is empty: {}", m.key, e.0),
                );
                None
            }
            Err(e) => {
                self.error(
                    "invalid-versions",
                    m.value.pos,
                    path,
                    format!("\"{}\": {} (expected N, A-B, A+ or none)", m.key, e.0),
                );
                None
            }
        }
    }

    /// A boolean property with Jackson's coercions: numbers (0 is false) and the strings
    /// true/false in three casings. Null is false (the Java fields are primitives).
    pub(super) fn boolean(&mut self, m: Option<&Member>, path: &str) -> bool {
        let Some(m) = m else { return false };
        let coerced = |cx: &mut Ctx, v: bool| {
            cx.warn(
                "coerced-value",
                m.value.pos,
                path,
                format!(
                    "\"{}\" is {}; Kafka reads it as {v}, but write true or false",
                    m.key,
                    m.value.kind.describe()
                ),
            );
            v
        };
        match &m.value.kind {
            JsonKind::Bool(b) => *b,
            JsonKind::Null => false,
            JsonKind::Number(n) if !n.contains(['.', 'e', 'E']) => coerced(
                self,
                !n.trim_start_matches('-').trim_start_matches('0').is_empty(),
            ),
            JsonKind::Str(s) => match s.as_str() {
                "true" | "True" | "TRUE" => coerced(self, true),
                "false" | "False" | "FALSE" | "" => coerced(self, false),
                _ => {
                    self.error(
                        "wrong-json-type",
                        m.value.pos,
                        path,
                        format!("\"{}\" must be true or false, not {s:?}", m.key),
                    );
                    false
                }
            },
            k => {
                self.error(
                    "wrong-json-type",
                    m.value.pos,
                    path,
                    format!("\"{}\" must be true or false, not {}", m.key, k.describe()),
                );
                false
            }
        }
    }

    /// An integer property within `lo..=hi`; Jackson accepts a numeric string and truncates a
    /// fraction. `code` is reported when out of range.
    pub(super) fn integer(
        &mut self,
        m: Option<&Member>,
        lo: i64,
        hi: i64,
        code: &'static str,
        path: &str,
    ) -> Option<i64> {
        let m = m?;
        let (text, from_string) = match &m.value.kind {
            JsonKind::Number(n) => (n.clone(), false),
            JsonKind::Str(s) if java_trim(s).is_empty() => return None,
            JsonKind::Str(s) => (java_trim(s).to_string(), true),
            JsonKind::Null => return None,
            k => {
                self.error(
                    "wrong-json-type",
                    m.value.pos,
                    path,
                    format!("\"{}\" must be an integer, not {}", m.key, k.describe()),
                );
                return None;
            }
        };
        let n: i64 = match text.parse::<i64>() {
            Ok(n) => n,
            Err(_) => match text.parse::<f64>() {
                Ok(f) if f.is_finite() && !from_string => {
                    self.warn(
                        "coerced-value",
                        m.value.pos,
                        path,
                        format!(
                            "\"{}\" is {text}; Kafka truncates it to {}",
                            m.key,
                            f.trunc()
                        ),
                    );
                    if f.trunc() < i64::MIN as f64 || f.trunc() > i64::MAX as f64 {
                        i64::MAX
                    } else {
                        f.trunc() as i64
                    }
                }
                _ => {
                    self.error(
                        "wrong-json-type",
                        m.value.pos,
                        path,
                        format!("\"{}\" must be an integer, not {text:?}", m.key),
                    );
                    return None;
                }
            },
        };
        if from_string {
            self.warn(
                "coerced-value",
                m.value.pos,
                path,
                format!("\"{}\" is the string {text:?}; Kafka reads it as the number {n}, but write a number", m.key),
            );
        }
        if n < lo || n > hi {
            self.error(
                code,
                m.value.pos,
                path,
                format!("\"{}\" is {n}, outside {lo}..={hi}", m.key),
            );
            return None;
        }
        Some(n)
    }

    /// A value from a fixed, case-sensitive vocabulary.
    pub(super) fn enum_value(
        &mut self,
        v: &JsonValue,
        m: &Member,
        allowed: &[&'static str],
        path: &str,
    ) -> Option<&'static str> {
        let text = match &v.kind {
            JsonKind::Str(s) => s.clone(),
            JsonKind::Null => return None,
            k => {
                self.error(
                    "wrong-json-type",
                    v.pos,
                    path,
                    format!("\"{}\" must be a string, not {}", m.key, k.describe()),
                );
                return None;
            }
        };
        if let Some(a) = allowed.iter().find(|a| **a == text) {
            return Some(a);
        }
        let d = SchemaDiag::error(
            "unknown-enum-value",
            &self.file,
            v.pos,
            path,
            format!(
                "\"{}\" is {text:?}, expected one of {} (case-sensitive)",
                m.key,
                allowed.join(", ")
            ),
        )
        .with_suggestion(closest(&text, allowed));
        self.diags.push(d);
        None
    }

    /// Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY: a lone value is a one-element list (accepted,
    /// with a warning); null is empty.
    pub(super) fn list<'a>(
        &mut self,
        v: &'a JsonValue,
        key: &str,
        path: &str,
    ) -> Vec<&'a JsonValue> {
        match &v.kind {
            JsonKind::Array(items) => items.iter().collect(),
            JsonKind::Null => Vec::new(),
            k => {
                self.warn(
                    "coerced-value",
                    v.pos,
                    path,
                    format!(
                        "\"{key}\" is {}; Kafka reads it as a one-element list, but write [ … ]",
                        k.describe()
                    ),
                );
                vec![v]
            }
        }
    }
}

pub(super) fn number_text(v: &JsonValue) -> &str {
    match &v.kind {
        JsonKind::Number(n) => n,
        _ => "",
    }
}
