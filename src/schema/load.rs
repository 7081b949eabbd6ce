//! Builds the schema model from spec JSON, reporting every structural problem at once.
//!
//! The loader accepts exactly what Kafka's Jackson binding accepts, over the union of the 3.9 and
//! 4.x vocabularies (the validator applies per-release rules): unknown properties, missing
//! required properties, unparseable version strings and types, and misspelled enum values are
//! errors with a suggestion; Jackson's lenient coercions (a single value for a list, `"true"` for
//! a boolean, `2` for a version string) are accepted as Kafka accepts them.

use super::diag::{cap_per_file, SchemaDiag};
use super::files::read_inputs;
use super::jackson::{find, join, Ctx};
use super::json::{self, JsonKind, JsonValue};
use super::model::{java_trim, Field, FieldType, MessageSpec, Pos, SpecType, StructSpec};
use super::suggest::suggest_type;
use super::versions::Versions;
use crate::limits::MAX_DEPTH;
use std::path::Path;
use std::sync::Arc;

/// Properties a spec file's root object may have (Kafka's `MessageSpec` creator, plus the
/// proposed `headerVersions`).
pub const MESSAGE_PROPS: &[&str] = &[
    "name",
    "validVersions",
    "deprecatedVersions",
    "fields",
    "apiKey",
    "type",
    "commonStructs",
    "flexibleVersions",
    "listeners",
    "latestVersionUnstable",
    "headerVersions",
];
/// Properties a `commonStructs` entry may have.
pub const STRUCT_PROPS: &[&str] = &["name", "versions", "deprecatedVersions", "fields"];
/// Properties a field may have.
pub const FIELD_PROPS: &[&str] = &[
    "name",
    "versions",
    "fields",
    "type",
    "mapKey",
    "nullableVersions",
    "default",
    "ignorable",
    "entityType",
    "about",
    "taggedVersions",
    "flexibleVersions",
    "tag",
    "zeroCopy",
];
/// Spec `type` values (3.9 has the first five; the coordinator types are 4.x).
pub const SPEC_TYPES: &[&str] = &[
    "request",
    "response",
    "header",
    "metadata",
    "data",
    "coordinator-key",
    "coordinator-value",
];
/// `listeners` values (`zkBroker` is 3.9 only).
pub const LISTENERS: &[&str] = &["zkBroker", "broker", "controller"];
/// `entityType` values.
pub const ENTITY_TYPES: &[&str] = &[
    "unknown",
    "transactionalId",
    "producerId",
    "groupId",
    "topicName",
    "brokerId",
];

/// Loads one spec file. `file` names it in diagnostics and becomes the spec's `path`. The spec
/// is `None` only when there is no model to build: the text is not JSON, the root is not an
/// object, or `type` is missing or unknown. Otherwise it is built even when other properties
/// are wrong, so the validator can go on finding problems; any error diagnostic means Kafka's
/// generator would reject the file.
pub fn load_spec(file: &str, text: &str) -> (Option<MessageSpec>, Vec<SchemaDiag>) {
    let (spec, mut diags) = load_spec_uncapped(file, text);
    cap_per_file(&mut diags);
    (spec, diags)
}

/// [`load_spec`] with every diagnostic, for callers that add their own and cap them together.
pub(crate) fn load_spec_uncapped(file: &str, text: &str) -> (Option<MessageSpec>, Vec<SchemaDiag>) {
    let mut cx = Ctx {
        file: file.into(),
        diags: Vec::new(),
        pending_types: Vec::new(),
        partial: false,
    };
    let parsed = json::parse_all(text);
    for e in parsed.errors {
        cx.diags
            .push(SchemaDiag::error(e.code, &cx.file, e.pos, "", e.message));
    }
    let Some(root) = parsed.value else {
        return (None, cx.diags);
    };
    // After a syntax error only what precedes it is checked: nothing can be called missing,
    // and no model is built from half a file.
    cx.partial = !parsed.complete;
    let spec = cx.message(&root);
    if let Some(spec) = &spec {
        cx.flush_type_errors(spec);
    }
    // Stepped-over JSON mistakes and model problems, top to bottom.
    cx.diags.sort_by_key(|d| d.pos);
    (spec.filter(|_| parsed.complete), cx.diags)
}

/// Loads every `*.json` under `dir`, recursively, in path order, within the limits on files and
/// bytes of [`super::files::read_inputs`]. Each spec's `path` is relative to `dir` (with `/`
/// separators); diagnostics name the file as `dir` joined with that path. A folder that cannot be
/// read is one `io-error`.
pub fn load_dir(dir: &Path) -> (Vec<MessageSpec>, Vec<SchemaDiag>) {
    let (named, diags) = load_dir_named(dir);
    (named.into_iter().map(|(_, spec)| spec).collect(), diags)
}

/// [`load_dir`], each spec with the name its file's diagnostics use.
pub fn load_dir_named(dir: &Path) -> (Vec<(Arc<str>, MessageSpec)>, Vec<SchemaDiag>) {
    let inputs = match read_inputs(&[dir.to_path_buf()]) {
        Ok(i) => i,
        Err(msg) => {
            let shown: Arc<str> = dir.display().to_string().into();
            return (
                Vec::new(),
                vec![SchemaDiag::error(
                    "io-error",
                    &shown,
                    Pos::default(),
                    "",
                    msg,
                )],
            );
        }
    };
    let mut specs = Vec::new();
    let mut diags = inputs.diags;
    for (shown, text) in &inputs.files {
        let (spec, mut d) = load_spec(shown, text);
        if let Some(mut spec) = spec {
            let rel = Path::new(shown)
                .strip_prefix(dir)
                .unwrap_or(Path::new(shown));
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            spec.path = parts.join("/").into();
            specs.push((Arc::from(shown.as_str()), spec));
        }
        diags.append(&mut d);
    }
    (specs, diags)
}

/// A folder of specs to be used as a whole (an overlay, a baseline): its specs, each with the
/// name its diagnostics use, or `Err` with every error in it (warnings dropped), one `no-specs`
/// error when it holds no spec at all.
pub fn load_folder(dir: &Path) -> Result<Vec<(Arc<str>, MessageSpec)>, Vec<SchemaDiag>> {
    let (specs, diags) = load_dir_named(dir);
    let errors: Vec<SchemaDiag> = diags.into_iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    if specs.is_empty() {
        let file: Arc<str> = dir.display().to_string().into();
        return Err(vec![SchemaDiag::error(
            "no-specs",
            &file,
            Pos::default(),
            "",
            "no *.json spec files in this folder",
        )]);
    }
    Ok(specs)
}

/// How many of a refused folder's errors [`folder_refused`] lists.
const REFUSED_LISTED: usize = 20;

/// One message for a folder [`load_folder`] refused, as the option that named it says it:
/// `OPTION DIR: the folder has errors:` and the first errors, one per line (`OPTION DIR: no
/// *.json spec files in this folder` when that is all).
pub fn folder_refused(option: &str, dir: &Path, errors: &[SchemaDiag]) -> String {
    if let [only] = errors {
        if only.code == "no-specs" {
            return format!("{option} {}: {}", dir.display(), only.message);
        }
    }
    let mut msg = format!("{option} {}: the folder has errors:", dir.display());
    for d in errors.iter().take(REFUSED_LISTED) {
        msg.push_str(&format!("\n  {d}"));
    }
    if errors.len() > REFUSED_LISTED {
        msg.push_str(&format!("\n  … and {} more", errors.len() - REFUSED_LISTED));
    }
    msg
}

impl Ctx {
    fn message(&mut self, root: &JsonValue) -> Option<MessageSpec> {
        let Some(members) = root.as_object() else {
            self.error(
                "not-an-object",
                root.pos,
                "",
                format!(
                    "a spec file holds one JSON object, not {}",
                    root.kind.describe()
                ),
            );
            return None;
        };
        let props = self.props(members, MESSAGE_PROPS, "message", "");
        let mut spec = MessageSpec {
            pos: root.pos,
            props: props.iter().map(|(n, m)| (*n, m.key_pos)).collect(),
            path: self.file.clone(),
            ..MessageSpec::default()
        };
        if let Some(n) = self.required_string(&props, "name", root.pos, "name", "the message") {
            spec.name = n.into();
        }
        let spec_type = match find(&props, "type") {
            Some(m) if matches!(m.value.kind, JsonKind::Null) => {
                self.error(
                    "missing-property",
                    m.value.pos,
                    "type",
                    "the message \"type\" is null",
                );
                None
            }
            Some(m) => self
                .enum_value(&m.value, m, SPEC_TYPES, "type")
                .and_then(SpecType::parse),
            None => {
                self.error("missing-property", root.pos, "type", "the message has no \"type\" (request, response, header, metadata, data, coordinator-key or coordinator-value)");
                None
            }
        };
        if let Some(m) = find(&props, "apiKey") {
            spec.api_key = self
                .integer(
                    Some(m),
                    i16::MIN as i64,
                    i16::MAX as i64,
                    "api-key-range",
                    "apiKey",
                )
                .map(|n| n as i16);
        }
        match find(&props, "validVersions") {
            Some(m) => {
                spec.valid_versions = self
                    .versions(Some(m), None, "validVersions")
                    .unwrap_or(Versions::NONE)
            }
            None => self.error(
                "missing-property",
                root.pos,
                "validVersions",
                "the message has no \"validVersions\"",
            ),
        }
        spec.flexible_versions = self
            .versions(
                find(&props, "flexibleVersions"),
                Some(Versions::NONE),
                "flexibleVersions",
            )
            .unwrap_or(Versions::NONE);
        spec.deprecated_versions = self
            .versions(
                find(&props, "deprecatedVersions"),
                Some(Versions::NONE),
                "deprecatedVersions",
            )
            .unwrap_or(Versions::NONE);
        if let Some(m) = find(&props, "headerVersions") {
            spec.header_versions = self.versions(Some(m), None, "headerVersions");
        }
        spec.latest_version_unstable = self.boolean(
            find(&props, "latestVersionUnstable"),
            "latestVersionUnstable",
        );
        if let Some(m) = find(&props, "listeners") {
            for v in self.list(&m.value, "listeners", "listeners") {
                if let Some(l) = self.enum_value(v, m, LISTENERS, "listeners") {
                    spec.listeners.push(l.into());
                }
            }
        }
        if let Some(m) = find(&props, "commonStructs") {
            for v in self.list(&m.value, "commonStructs", "commonStructs") {
                if let Some(s) = self.common_struct(v) {
                    spec.common_structs.push(s);
                }
            }
        }
        if let Some(m) = find(&props, "fields") {
            spec.fields = self.fields(&m.value, "", 1);
        }
        spec.spec_type = spec_type?;
        Some(spec)
    }

    fn common_struct(&mut self, v: &JsonValue) -> Option<StructSpec> {
        let Some(members) = v.as_object() else {
            self.error(
                "wrong-json-type",
                v.pos,
                "commonStructs",
                format!(
                    "a commonStructs entry must be an object, not {}",
                    v.kind.describe()
                ),
            );
            return None;
        };
        let name = v
            .get("name")
            .and_then(|m| m.value.as_str())
            .unwrap_or("")
            .to_string();
        let path = if name.is_empty() {
            "commonStructs".to_string()
        } else {
            name.clone()
        };
        let props = self.props(members, STRUCT_PROPS, "commonStructs entry", &path);
        let name = self
            .required_string(&props, "name", v.pos, &path, "the commonStructs entry")
            .unwrap_or_default();
        let versions = match find(&props, "versions") {
            Some(m) => self
                .versions(Some(m), None, &path)
                .unwrap_or(Versions::NONE),
            None => {
                self.error(
                    "missing-property",
                    v.pos,
                    &path,
                    format!("common struct {name:?} has no \"versions\""),
                );
                Versions::NONE
            }
        };
        let deprecated_versions = self
            .versions(
                find(&props, "deprecatedVersions"),
                Some(Versions::NONE),
                &path,
            )
            .unwrap_or(Versions::NONE);
        let fields = match find(&props, "fields") {
            Some(m) => self.fields(&m.value, &path, 1),
            None => Vec::new(),
        };
        Some(StructSpec {
            name: name.into(),
            versions,
            fields,
            pos: v.pos,
            deprecated_versions,
            props: props.iter().map(|(n, m)| (*n, m.key_pos)).collect(),
        })
    }

    fn fields(&mut self, v: &JsonValue, path: &str, depth: usize) -> Vec<Field> {
        let mut out = Vec::new();
        if depth > MAX_DEPTH {
            self.error(
                "too-deep",
                v.pos,
                path,
                format!("structs nested deeper than {MAX_DEPTH} levels"),
            );
            return out;
        }
        for (i, item) in self.list(v, "fields", path).into_iter().enumerate() {
            if let Some(f) = self.field(item, path, i, depth) {
                out.push(f);
            }
        }
        out
    }

    fn field(&mut self, v: &JsonValue, parent: &str, index: usize, depth: usize) -> Option<Field> {
        let Some(members) = v.as_object() else {
            self.error(
                "wrong-json-type",
                v.pos,
                parent,
                format!("a field must be an object, not {}", v.kind.describe()),
            );
            return None;
        };
        let raw_name = v
            .get("name")
            .and_then(|m| m.value.as_str())
            .filter(|n| !n.is_empty());
        let path = match raw_name {
            Some(n) => join(parent, n),
            None => join(parent, &format!("fields[{index}]")),
        };
        let props = self.props(members, FIELD_PROPS, "field", &path);
        let mut f = Field {
            pos: v.pos,
            props: props.iter().map(|(n, m)| (*n, m.key_pos)).collect(),
            ..Field::default()
        };
        if let Some(n) = self.required_string(&props, "name", v.pos, &path, "the field") {
            f.name = n.into();
        }
        let type_pos = find(&props, "type").map_or(v.pos, |m| m.value.pos);
        if let Some(t) = self.required_string(&props, "type", v.pos, &path, "the field") {
            {
                let t = java_trim(&t).to_string();
                match FieldType::parse(&t) {
                    Ok(ty) => f.ty = ty,
                    Err(msg) => {
                        self.pending_types
                            .push((type_pos, path.clone(), t.clone(), msg));
                        f.ty = FieldType::Struct(t.as_str().into());
                    }
                }
                f.type_text = t.into();
            }
        } else {
            f.type_text = "".into();
        }
        f.tagged_versions = self
            .versions(find(&props, "taggedVersions"), Some(Versions::NONE), &path)
            .unwrap_or(Versions::NONE);
        // Kafka falls back to taggedVersions whenever it is given, even as "none".
        let versions_default = find(&props, "taggedVersions").map(|_| f.tagged_versions);
        match find(&props, "versions") {
            Some(m) => {
                f.versions = self
                    .versions(Some(m), versions_default, &path)
                    .unwrap_or(Versions::NONE)
            }
            None => match versions_default {
                Some(t) => f.versions = t,
                None => self.error(
                    "missing-property",
                    v.pos,
                    &path,
                    "the field has no \"versions\" (required unless \"taggedVersions\" is given)",
                ),
            },
        }
        f.nullable_versions = self
            .versions(
                find(&props, "nullableVersions"),
                Some(Versions::NONE),
                &path,
            )
            .unwrap_or(Versions::NONE);
        if let Some(m) = find(&props, "flexibleVersions") {
            // An empty string counts as absent, as in Kafka.
            if m.value.as_str().is_some_and(|s| java_trim(s).is_empty())
                || matches!(m.value.kind, JsonKind::Null)
            {
            } else {
                f.flexible_versions = self.versions(Some(m), None, &path);
            }
        }
        if let Some(m) = find(&props, "tag") {
            f.tag = self
                .integer(Some(m), 0, i32::MAX as i64, "invalid-tag", &path)
                .map(|n| n as u32);
        }
        if let Some(m) = find(&props, "default") {
            f.default = self.string(m, &path);
        }
        f.ignorable = self.boolean(find(&props, "ignorable"), &path);
        f.map_key = self.boolean(find(&props, "mapKey"), &path);
        f.zero_copy = self.boolean(find(&props, "zeroCopy"), &path);
        if let Some(m) = find(&props, "entityType") {
            f.entity_type = self
                .enum_value(&m.value, m, ENTITY_TYPES, &path)
                .map(Arc::from);
        }
        if let Some(m) = find(&props, "about") {
            self.string(m, &path);
        }
        if let Some(m) = find(&props, "fields") {
            f.fields = self.fields(&m.value, &path, depth + 1);
        }
        Some(f)
    }

    fn flush_type_errors(&mut self, spec: &MessageSpec) {
        let mut names: Vec<&str> = spec.common_structs.iter().map(|s| &*s.name).collect();
        collect_inline_structs(&spec.fields, &mut names);
        for s in &spec.common_structs {
            collect_inline_structs(&s.fields, &mut names);
        }
        for (pos, path, text, msg) in std::mem::take(&mut self.pending_types) {
            let d = SchemaDiag::error("invalid-type", &self.file, pos, path, msg)
                .with_suggestion(suggest_type(&text, &names));
            self.diags.push(d);
        }
    }
}

fn collect_inline_structs<'a>(fields: &'a [Field], out: &mut Vec<&'a str>) {
    for f in fields {
        if !f.fields.is_empty() {
            if let Some(n) = f.ty.struct_name() {
                out.push(n);
            }
            collect_inline_structs(&f.fields, out);
        }
    }
}
