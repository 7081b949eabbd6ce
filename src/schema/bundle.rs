//! The bundle: several releases' spec folders in one file, facts only, as the built-in protocol
//! is stored (and as users can store their own).
//!
//! Layout: `{"kinspect_bundle": 1, "releases": [{"name", "specs": [index…]}…], "index":
//! [head…], "specs": [spec…]}` with releases newest first, and one head and one spec per line, so
//! a diff of the bundle reads like a diff of the protocol. A head holds what the registry looks
//! specs up by (path, name, type, apiKey and version ranges) so that loading the bundle parses
//! only the heads and each spec on first use. A spec is written with Kafka's own property names and only the properties
//! its file gave (defaults stay implicit, so the validator sees the file as written), values in
//! their canonical JSON type, `about` reduced to its presence, and an `@` array holding the
//! line:column of the object and then of each property in order. Specs whose facts are identical
//! in several releases (including where they are written) are stored once.

use super::diag::SchemaDiag;
use super::load::load_dir;
use super::model::{java_trim, Field, FieldType, MessageSpec, Pos, SpecType, StructSpec};
use super::versions::Versions;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The format number written in every bundle; a reader refuses others.
pub const FORMAT: u64 = 1;

/// A bundle in memory: releases (newest first) listing indexes into the distinct specs.
#[derive(Debug, Default)]
pub struct Bundle {
    pub releases: Vec<(String, Vec<usize>)>,
    pub specs: Vec<MessageSpec>,
}

/// What the registry indexes a spec by, readable without parsing the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecHead {
    pub path: String,
    pub name: String,
    pub spec_type: SpecType,
    pub api_key: Option<i16>,
    pub valid_versions: Versions,
    pub flexible_versions: Versions,
    pub deprecated_versions: Versions,
    pub latest_version_unstable: bool,
}

impl SpecHead {
    pub fn of(s: &MessageSpec) -> SpecHead {
        SpecHead {
            path: s.path.to_string(),
            name: s.name.to_string(),
            spec_type: s.spec_type,
            api_key: s.api_key,
            valid_versions: s.valid_versions,
            flexible_versions: s.flexible_versions,
            deprecated_versions: s.deprecated_versions,
            latest_version_unstable: s.latest_version_unstable,
        }
    }
    fn to_json(&self) -> Value {
        json!([
            self.path,
            self.name,
            self.spec_type.as_str(),
            self.api_key,
            versions_text(self.valid_versions),
            versions_text(self.flexible_versions),
            versions_text(self.deprecated_versions),
            self.latest_version_unstable
        ])
    }
    fn from_json(v: &Value) -> Result<SpecHead, String> {
        let a = v
            .as_array()
            .filter(|a| a.len() == 8)
            .ok_or("a head is an array of 8")?;
        let text = |i: usize| {
            a[i].as_str()
                .ok_or_else(|| format!("head entry {i} is not a string"))
        };
        let versions = |i: usize| -> Result<Versions, String> {
            Versions::parse(text(i)?, None).map_err(|e| e.0)
        };
        let type_text = text(2)?;
        Ok(SpecHead {
            path: text(0)?.to_string(),
            name: text(1)?.to_string(),
            spec_type: SpecType::parse(type_text)
                .ok_or_else(|| format!("unknown type {type_text:?}"))?,
            api_key: match &a[3] {
                Value::Null => None,
                k => Some(
                    k.as_i64()
                        .and_then(|k| i16::try_from(k).ok())
                        .ok_or("apiKey is not an int16")?,
                ),
            },
            valid_versions: versions(4)?,
            flexible_versions: versions(5)?,
            deprecated_versions: versions(6)?,
            latest_version_unstable: a[7]
                .as_bool()
                .ok_or("latestVersionUnstable is not a boolean")?,
        })
    }
}

/// A bundle with its specs still unparsed: heads to index by, and each spec's JSON line.
#[derive(Debug)]
pub struct LazyBundle<'t> {
    pub releases: Vec<(String, Vec<usize>)>,
    pub heads: Vec<SpecHead>,
    /// One JSON object per spec, for [`parse_spec`].
    pub lines: Vec<&'t str>,
}

/// Reads spec folders (`(release name, folder)`, newest first) and writes the bundle text.
/// Fails with every diagnostic when any file has an error: a bundle only holds loadable specs.
pub fn build(releases: &[(String, PathBuf)]) -> Result<String, Vec<SchemaDiag>> {
    let mut errors = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut heads: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut rels = Vec::new();
    for (name, dir) in releases {
        let (specs, diags) = load_dir(dir);
        errors.extend(diags.into_iter().filter(|d| d.is_error()));
        let mut ids = Vec::new();
        for spec in &specs {
            let line = facts(spec);
            let next = lines.len();
            let id = *index.entry(line.clone()).or_insert(next);
            if id == next {
                lines.push(line);
                heads.push(SpecHead::of(spec).to_json().to_string());
            }
            ids.push(id);
        }
        rels.push(json!({"name": name, "specs": ids}));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut out = format!(
        "{{\"kinspect_bundle\":{FORMAT},\n\"releases\":{},\n\"index\":[\n",
        Value::Array(rels)
    );
    out.push_str(&heads.join(",\n"));
    out.push_str(SPECS_MARK);
    out.push_str(&lines.join(",\n"));
    out.push_str("\n]}\n");
    Ok(out)
}

/// Where the spec lines start: everything before is a small JSON document of its own.
const SPECS_MARK: &str = "\n],\n\"specs\":[\n";

/// Parses a bundle's heads and splits out its spec lines, without parsing the specs.
pub fn parse_lazy(text: &str) -> Result<LazyBundle<'_>, String> {
    let at = text
        .find(SPECS_MARK)
        .ok_or("not a kinspect bundle: no specs section")?;
    let head_doc = format!("{}\n]}}", &text[..at]);
    let root: Value = head_doc
        .parse()
        .map_err(|e| format!("bundle head is not JSON: {e}"))?;
    if root.get("kinspect_bundle").and_then(Value::as_u64) != Some(FORMAT) {
        return Err(format!("not a kinspect bundle of format {FORMAT}"));
    }
    let mut heads = Vec::new();
    for (i, h) in root
        .get("index")
        .and_then(Value::as_array)
        .ok_or("bundle has no index")?
        .iter()
        .enumerate()
    {
        heads.push(SpecHead::from_json(h).map_err(|e| format!("bundle head #{i}: {e}"))?);
    }
    // Spec lines hold no raw line breaks (JSON escapes them), so each line is one spec.
    let body = text[at + SPECS_MARK.len()..]
        .trim_end()
        .strip_suffix("]}")
        .ok_or("bundle does not end with ]}")?;
    let lines: Vec<&str> = body
        .lines()
        .map(|l| l.strip_suffix(',').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() != heads.len() {
        return Err(format!(
            "bundle has {} heads but {} specs",
            heads.len(),
            lines.len()
        ));
    }
    let mut releases = Vec::new();
    for r in root
        .get("releases")
        .and_then(Value::as_array)
        .ok_or("bundle has no \"releases\" array")?
    {
        let name = r
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a bundle release has no name")?;
        let ids = r
            .get("specs")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("release {name} has no specs"))?;
        let mut v = Vec::with_capacity(ids.len());
        for id in ids {
            match id.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n < heads.len() => v.push(n),
                _ => {
                    return Err(format!(
                        "release {name}: spec index {id} is not in 0..{}",
                        heads.len()
                    ))
                }
            }
        }
        releases.push((name.to_string(), v));
    }
    Ok(LazyBundle {
        releases,
        heads,
        lines,
    })
}

/// Parses one spec line of a bundle.
pub fn parse_spec(line: &str) -> Result<MessageSpec, String> {
    let v: Value = line
        .parse()
        .map_err(|e| format!("spec line is not JSON: {e}"))?;
    spec_from_json(&v)
}

/// Parses a whole bundle. `Err` says what is wrong and where (spec index, field path).
pub fn parse(text: &str) -> Result<Bundle, String> {
    let lazy = parse_lazy(text)?;
    let mut specs = Vec::with_capacity(lazy.lines.len());
    for (i, line) in lazy.lines.iter().enumerate() {
        specs.push(parse_spec(line).map_err(|e| format!("bundle spec #{i}: {e}"))?);
    }
    Ok(Bundle {
        releases: lazy.releases,
        specs,
    })
}

/// A spec's facts as one canonical JSON line, exactly as a bundle stores it: two specs with the
/// same line are the same protocol, written at the same places.
pub fn facts(spec: &MessageSpec) -> String {
    spec_to_json(spec).to_string()
}

/// Version ranges as written: a reversed range keeps its numbers (Display would say `none`).
fn versions_text(v: Versions) -> String {
    if v.is_empty() && v != Versions::NONE {
        format!("{}-{}", v.lo, v.hi)
    } else {
        v.to_string()
    }
}

fn at(pos: Pos, props: &[(&'static str, Pos)]) -> Value {
    let mut v = vec![pos.line, pos.col];
    for (_, p) in props {
        v.extend([p.line, p.col]);
    }
    json!(v)
}

fn spec_to_json(s: &MessageSpec) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), json!(&*s.path));
    m.insert("@".into(), at(s.pos, &s.props));
    for (p, _) in &s.props {
        let v = match *p {
            "name" => json!(&*s.name),
            "type" => json!(s.spec_type.as_str()),
            "apiKey" => json!(s.api_key),
            "validVersions" => json!(versions_text(s.valid_versions)),
            "flexibleVersions" => json!(versions_text(s.flexible_versions)),
            "deprecatedVersions" => json!(versions_text(s.deprecated_versions)),
            "headerVersions" => json!(s.header_versions.map(versions_text)),
            "listeners" => json!(s.listeners.iter().map(|l| &**l).collect::<Vec<_>>()),
            "latestVersionUnstable" => json!(s.latest_version_unstable),
            "commonStructs" => Value::Array(s.common_structs.iter().map(struct_to_json).collect()),
            "fields" => fields_to_json(&s.fields),
            _ => continue,
        };
        m.insert((*p).into(), v);
    }
    Value::Object(m)
}

fn struct_to_json(s: &StructSpec) -> Value {
    let mut m = Map::new();
    m.insert("@".into(), at(s.pos, &s.props));
    for (p, _) in &s.props {
        let v = match *p {
            "name" => json!(&*s.name),
            "versions" => json!(versions_text(s.versions)),
            "deprecatedVersions" => json!(versions_text(s.deprecated_versions)),
            "fields" => fields_to_json(&s.fields),
            _ => continue,
        };
        m.insert((*p).into(), v);
    }
    Value::Object(m)
}

fn fields_to_json(fields: &[Field]) -> Value {
    Value::Array(fields.iter().map(field_to_json).collect())
}

fn field_to_json(f: &Field) -> Value {
    let mut m = Map::new();
    m.insert("@".into(), at(f.pos, &f.props));
    for (p, _) in &f.props {
        let v = match *p {
            "name" => json!(&*f.name),
            "type" => json!(&*f.type_text),
            "versions" => json!(versions_text(f.versions)),
            "nullableVersions" => json!(versions_text(f.nullable_versions)),
            "taggedVersions" => json!(versions_text(f.tagged_versions)),
            "flexibleVersions" => json!(f.flexible_versions.map(versions_text).unwrap_or_default()),
            "tag" => json!(f.tag),
            "default" => json!(f.default),
            "ignorable" => json!(f.ignorable),
            "mapKey" => json!(f.map_key),
            "zeroCopy" => json!(f.zero_copy),
            "entityType" => json!(f.entity_type.as_deref()),
            // Prose stays upstream; only whether it was given is a fact.
            "about" => json!(""),
            "fields" => fields_to_json(&f.fields),
            _ => continue,
        };
        m.insert((*p).into(), v);
    }
    Value::Object(m)
}

/// An object's position, its properties with theirs, and its members.
type Read<'a> = (Pos, Vec<(&'static str, Pos)>, &'a Map<String, Value>);

/// One object's properties in file order with their positions, from its `@` array.
fn read_props<'a>(v: &'a Value, allowed: &[&'static str]) -> Result<Read<'a>, String> {
    let m = v.as_object().ok_or("expected an object")?;
    let at: Vec<u32> = m
        .get("@")
        .and_then(Value::as_array)
        .ok_or("missing \"@\" positions")?
        .iter()
        .map(|n| {
            n.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or("bad position")
        })
        .collect::<Result<_, _>>()?;
    let pos_at = |i: usize| -> Result<Pos, String> {
        match (at.get(2 * i), at.get(2 * i + 1)) {
            (Some(&line), Some(&col)) => Ok(Pos { line, col }),
            _ => Err(format!("\"@\" has no position for entry {i}")),
        }
    };
    let mut props = Vec::new();
    for key in m.keys().filter(|k| *k != "@" && *k != "path") {
        let name = allowed
            .iter()
            .find(|a| **a == key)
            .ok_or_else(|| format!("unknown property {key:?}"))?;
        props.push((*name, pos_at(props.len() + 1)?));
    }
    Ok((pos_at(0)?, props, m))
}

fn get_versions(m: &Map<String, Value>, key: &str, default: Versions) -> Result<Versions, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => {
            let s = v.as_str().ok_or_else(|| format!("{key} is not a string"))?;
            Versions::parse(s, Some(default)).map_err(|e| format!("{key}: {}", e.0))
        }
    }
}

fn get_str<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

fn get_bool(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn spec_from_json(v: &Value) -> Result<MessageSpec, String> {
    let (pos, props, m) = read_props(v, super::load::MESSAGE_PROPS)?;
    let name = get_str(m, "name").unwrap_or_default();
    let ctx = |e: String| format!("{name}: {e}");
    let type_text = get_str(m, "type").ok_or_else(|| ctx("no type".into()))?;
    let spec_type =
        SpecType::parse(type_text).ok_or_else(|| ctx(format!("unknown type {type_text:?}")))?;
    let api_key = match m.get("apiKey").and_then(Value::as_i64) {
        Some(k) => Some(i16::try_from(k).map_err(|_| ctx(format!("apiKey {k} is not an int16")))?),
        None => None,
    };
    let mut common_structs = Vec::new();
    for s in m
        .get("commonStructs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        common_structs.push(struct_from_json(s).map_err(ctx)?);
    }
    Ok(MessageSpec {
        name: name.into(),
        spec_type,
        api_key,
        valid_versions: get_versions(m, "validVersions", Versions::NONE).map_err(ctx)?,
        flexible_versions: get_versions(m, "flexibleVersions", Versions::NONE).map_err(ctx)?,
        deprecated_versions: get_versions(m, "deprecatedVersions", Versions::NONE).map_err(ctx)?,
        listeners: m
            .get("listeners")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(Arc::from)
            .collect(),
        latest_version_unstable: get_bool(m, "latestVersionUnstable"),
        header_versions: match m.get("headerVersions") {
            Some(Value::String(s)) => Some(Versions::parse(s, None).map_err(|e| ctx(e.0))?),
            _ => None,
        },
        fields: fields_from_json(m.get("fields"), name)?,
        common_structs,
        path: get_str(m, "path").unwrap_or_default().into(),
        pos,
        props,
    })
}

fn struct_from_json(v: &Value) -> Result<StructSpec, String> {
    let (pos, props, m) = read_props(v, super::load::STRUCT_PROPS)?;
    let name = get_str(m, "name").unwrap_or_default();
    Ok(StructSpec {
        name: name.into(),
        versions: get_versions(m, "versions", Versions::NONE)
            .map_err(|e| format!("{name}: {e}"))?,
        fields: fields_from_json(m.get("fields"), name)?,
        pos,
        deprecated_versions: get_versions(m, "deprecatedVersions", Versions::NONE)
            .map_err(|e| format!("{name}: {e}"))?,
        props,
    })
}

fn fields_from_json(v: Option<&Value>, parent: &str) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    for f in v.and_then(Value::as_array).into_iter().flatten() {
        out.push(field_from_json(f, parent)?);
    }
    Ok(out)
}

fn field_from_json(v: &Value, parent: &str) -> Result<Field, String> {
    let (pos, props, m) = read_props(v, super::load::FIELD_PROPS)?;
    let name = get_str(m, "name").unwrap_or_default();
    let path = format!("{parent}.{name}");
    let ctx = |e: String| format!("{path}: {e}");
    let type_text = get_str(m, "type").unwrap_or_default();
    let ty = FieldType::parse(type_text).map_err(ctx)?;
    let tagged_versions = get_versions(m, "taggedVersions", Versions::NONE).map_err(ctx)?;
    let versions = match m.get("versions") {
        Some(_) => get_versions(m, "versions", Versions::NONE).map_err(ctx)?,
        None => tagged_versions,
    };
    Ok(Field {
        name: name.into(),
        ty,
        versions,
        nullable_versions: get_versions(m, "nullableVersions", Versions::NONE).map_err(ctx)?,
        tagged_versions,
        tag: match m.get("tag").and_then(Value::as_u64) {
            Some(t) => Some(u32::try_from(t).map_err(|_| ctx(format!("tag {t} too large")))?),
            None => None,
        },
        flexible_versions: match get_str(m, "flexibleVersions") {
            Some(s) if !java_trim(s).is_empty() => {
                Some(Versions::parse(s, None).map_err(|e| ctx(e.0))?)
            }
            _ => None,
        },
        default: get_str(m, "default").map(str::to_string),
        ignorable: get_bool(m, "ignorable"),
        map_key: get_bool(m, "mapKey"),
        entity_type: get_str(m, "entityType").map(Arc::from),
        zero_copy: get_bool(m, "zeroCopy"),
        fields: fields_from_json(m.get("fields"), &path)?,
        pos,
        type_text: java_trim(type_text).into(),
        props,
    })
}
