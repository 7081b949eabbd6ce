//! The rule context: one spec, its JSON, the release, the diagnostics found so far, and the
//! structs of the spec laid out the way Kafka's generator visits them (with the versions each
//! struct's fields are read in), so every rule family walks the same view.

use super::Release;
use crate::schema::diag::SchemaDiag;
use crate::schema::json::{JsonKind, JsonValue, Member};
use crate::schema::model::{Field, FieldType, MessageSpec, Pos, StructSpec};
use crate::schema::versions::Versions;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What a struct is, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructKind {
    /// The message's own top-level fields.
    Top,
    /// Fields written inline under a struct-typed field (or a never-defined struct: empty).
    Inline,
    /// A `commonStructs` entry.
    Common,
}

/// One struct as Kafka's generator sees it.
pub struct StructView<'a> {
    pub kind: StructKind,
    /// The struct's type name (the spec name for the top level).
    pub name: Arc<str>,
    /// Path of the struct itself (`Topics`, `LeaderAndIsrPartitionState`; empty at the top).
    pub path: String,
    pub fields: &'a [Field],
    /// The struct's own versions: validVersions, the declaring field's versions, or the common
    /// struct's `versions`.
    pub versions: Versions,
    /// The versions the enclosing class is generated for (Kafka's `parentVersions`).
    pub parent: Versions,
    /// The declaring field (inline structs).
    pub owner: Option<&'a Field>,
    /// The common struct entry (common structs).
    pub common: Option<&'a StructSpec>,
    /// Where to point at the struct as a whole.
    pub pos: Pos,
}

impl StructView<'_> {
    /// The versions the struct's fields are read in.
    pub fn cur(&self) -> Versions {
        self.parent.intersect(self.versions)
    }
    /// The path of one member field.
    pub fn member_path(&self, f: &Field) -> String {
        if self.path.is_empty() {
            f.name.to_string()
        } else {
            format!("{}.{}", self.path, f.name)
        }
    }
}

/// The rule context for one spec file.
pub struct Cx<'a> {
    pub file: Arc<str>,
    pub spec: &'a MessageSpec,
    pub ast: Option<&'a JsonValue>,
    pub release: Release,
    pub structs: Vec<StructView<'a>>,
    /// Positions of the fields that declare an inline struct.
    pub inline_owners: HashSet<Pos>,
    /// Every JSON object by position.
    objects: HashMap<Pos, &'a [Member]>,
    pub out: Vec<SchemaDiag>,
}

impl<'a> Cx<'a> {
    pub fn new(
        file: &Arc<str>,
        spec: &'a MessageSpec,
        ast: Option<&'a JsonValue>,
        release: Release,
    ) -> Cx<'a> {
        let mut structs = Vec::new();
        let top = StructView {
            kind: StructKind::Top,
            name: spec.name.clone(),
            path: String::new(),
            fields: &spec.fields,
            versions: spec.valid_versions,
            parent: spec.valid_versions,
            owner: None,
            common: None,
            pos: spec.pos,
        };
        structs.push(top);
        collect_inline(spec, 0, &mut structs);
        for cs in &spec.common_structs {
            let start = structs.len();
            structs.push(StructView {
                kind: StructKind::Common,
                name: cs.name.clone(),
                path: cs.name.to_string(),
                fields: &cs.fields,
                versions: cs.versions,
                parent: cs.versions,
                owner: None,
                common: Some(cs),
                pos: cs.pos,
            });
            collect_inline(spec, start, &mut structs);
        }
        let inline_owners = structs
            .iter()
            .filter_map(|s| s.owner.map(|f| f.pos))
            .collect();
        let mut objects = HashMap::new();
        if let Some(ast) = ast {
            index_objects(ast, 0, &mut objects);
        }
        Cx {
            file: file.clone(),
            spec,
            ast,
            release,
            structs,
            inline_owners,
            objects,
            out: Vec::new(),
        }
    }

    /// Whether Kafka generates code for this spec at all: 4.x skips a spec with no valid
    /// versions (a removed API whose key stays reserved), so code-generation rules do not apply.
    pub fn generates_code(&self) -> bool {
        !(self.release.is_4x() && self.spec.valid_versions.is_empty())
    }

    pub fn error(
        &mut self,
        code: &'static str,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) {
        self.out
            .push(SchemaDiag::error(code, &self.file, pos, path, msg));
    }
    pub fn warning(
        &mut self,
        code: &'static str,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) {
        self.out
            .push(SchemaDiag::warning(code, &self.file, pos, path, msg));
    }
    pub fn info(
        &mut self,
        code: &'static str,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) {
        self.out
            .push(SchemaDiag::info(code, &self.file, pos, path, msg));
    }
    pub fn push(&mut self, d: SchemaDiag) {
        self.out.push(d);
    }

    /// The root object's last member named `key`.
    pub fn root_member(&self, key: &str) -> Option<&'a Member> {
        self.ast?.get(key)
    }
    /// The JSON object of a field (found by the field's position).
    pub fn field_object(&self, f: &Field) -> Option<&'a [Member]> {
        self.objects.get(&f.pos).copied()
    }
    /// Every (struct index, field) pair, structs in generator order, fields in file order.
    pub fn all_fields(&self) -> Vec<(usize, &'a Field)> {
        let mut v = Vec::new();
        for (i, s) in self.structs.iter().enumerate() {
            for f in s.fields {
                v.push((i, f));
            }
        }
        v
    }
}

/// Adds the inline structs under `structs[from]` (recursively), as Kafka's `StructRegistry`
/// registers them: a struct-typed field whose type is not a common struct declares one.
fn collect_inline<'a>(spec: &'a MessageSpec, from: usize, structs: &mut Vec<StructView<'a>>) {
    let mut queue = vec![from];
    while let Some(i) = queue.pop() {
        let (fields, cur, path) = {
            let s = &structs[i];
            (s.fields, s.cur(), s.path.clone())
        };
        for f in fields {
            if !type_ok(f) {
                continue;
            }
            let Some(name) = f.ty.struct_name() else {
                continue;
            };
            // A common-struct reference with its own `fields` is an error (S6); its fields are
            // still checked as if inline so every problem shows at once.
            if spec.common_struct(name).is_some() && f.fields.is_empty() {
                continue;
            }
            let path = if path.is_empty() {
                f.name.to_string()
            } else {
                format!("{path}.{}", f.name)
            };
            structs.push(StructView {
                kind: StructKind::Inline,
                name: name.into(),
                path,
                fields: &f.fields,
                versions: f.versions,
                parent: cur,
                owner: Some(f),
                common: None,
                pos: f.pos,
            });
            queue.push(structs.len() - 1);
        }
    }
}

/// Whether the field's `type` parsed. The loader reports a type it cannot parse and keeps the
/// field as a struct of that name, so the model stays whole; rules that depend on the type skip
/// such a field rather than pile guesses on the loader's error.
pub fn type_ok(f: &Field) -> bool {
    FieldType::parse(&f.type_text).is_ok()
}

/// Indexes every object of the JSON by its position (fields are found by theirs). Depth is
/// bounded by the parser's own depth limit.
fn index_objects<'a>(v: &'a JsonValue, depth: usize, out: &mut HashMap<Pos, &'a [Member]>) {
    if depth > crate::limits::MAX_DEPTH {
        return;
    }
    match &v.kind {
        JsonKind::Object(members) => {
            out.insert(v.pos, members);
            for m in members {
                index_objects(&m.value, depth + 1, out);
            }
        }
        JsonKind::Array(items) => {
            for i in items {
                index_objects(i, depth + 1, out);
            }
        }
        _ => {}
    }
}

/// The last member named `key` of an object's members.
pub fn member<'m>(members: &'m [Member], key: &str) -> Option<&'m Member> {
    members.iter().rev().find(|m| m.key == key)
}
