//! `kinspect apis`: every API key with its name and versions per release, or one API's request
//! and response fields at one version.

use super::io::{self, errln};
use super::{protocol_or_report, Global, EXIT_FAILURE, EXIT_OK};
use kinspect::pdu::Direction;
use kinspect::protocol::{ApiRelease, Protocol, Resolved};
use kinspect::schema::{Field, MessageSpec};
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// An API by name (`Produce`, `FetchRequest`, case-insensitive) or key (`0`).
    #[arg(value_name = "NAME|KEY")]
    pub api: Option<String>,
    /// Show the request and response fields at this version.
    #[arg(long, value_name = "V")]
    pub version: Option<i16>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "text")]
    pub format: Format,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(p) = protocol_or_report(g, "kinspect apis") else {
        return EXIT_FAILURE;
    };
    let out = match (&args.api, args.version) {
        (None, None) => Ok(list(p, args.format)),
        (None, Some(_)) => {
            Err("--version needs an API: kinspect apis NAME|KEY --version V".to_string())
        }
        (Some(a), v) => find_api(p, a).and_then(|key| match v {
            None => Ok(one_api(p, key, args.format)),
            Some(v) => fields_at(p, key, v, args.format),
        }),
    };
    match out {
        Ok(text) => io::finish(
            io::write_all_to(args.output.as_ref(), text.as_bytes()),
            "kinspect apis",
            EXIT_OK,
        ),
        Err(e) => {
            errln!("kinspect apis: {e}");
            EXIT_FAILURE
        }
    }
}

/// Resolves `NAME|KEY`: a key, or an API name in any release (with or without the
/// Request/Response suffix, any case).
fn find_api(p: &Protocol, arg: &str) -> Result<i16, String> {
    let keys = p.api_keys();
    if let Ok(k) = arg.trim().parse::<i16>() {
        return if keys.contains(&k) {
            Ok(k)
        } else {
            Err(format!(
                "no API with key {k} in {}",
                p.releases().join(", ")
            ))
        };
    }
    super::api_key(p, arg)
}

fn versions_cell(r: Option<&ApiRelease>) -> String {
    match r {
        None => "-".into(),
        Some(r) if r.valid.is_empty() => "none".into(),
        Some(r) if r.latest_version_unstable => format!("{}*", r.valid),
        Some(r) => r.valid.to_string(),
    }
}

/// What a reader should know about an API across releases.
fn notes(p: &Protocol, rs: &[ApiRelease]) -> Vec<String> {
    let mut n = Vec::new();
    let newest = rs.first();
    if let Some(r) = newest.filter(|r| r.latest_version_unstable && !r.valid.is_empty()) {
        n.push(format!("v{} unstable in {}", r.valid.hi, r.release));
    }
    if let Some(first) = newest {
        if first.release != p.releases().last().copied().unwrap_or_default() && rs.len() == 1 {
            n.push(format!("new in {}", first.release));
        }
    }
    if let (Some(new), Some(_)) = (newest, rs.get(1)) {
        if new.valid.is_empty() && rs[1..].iter().any(|r| !r.valid.is_empty()) {
            n.push(format!("removed in {}", new.release));
        } else {
            for old in &rs[1..] {
                let only: Vec<i16> = old
                    .valid
                    .iter()
                    .filter(|v| !new.valid.contains(*v))
                    .collect();
                if let (Some(lo), Some(hi)) = (only.first(), only.last()) {
                    let span = if lo == hi {
                        format!("v{lo}")
                    } else {
                        format!("v{lo}-{hi}")
                    };
                    n.push(format!("{span} only in {}", old.release));
                }
            }
        }
        for old in &rs[1..] {
            if old.name != new.name {
                n.push(format!("named {} in {}", old.name, old.release));
            }
        }
    }
    n
}

fn release_json(r: &ApiRelease) -> Value {
    json!({
        "release": r.release,
        "name": r.name,
        "valid_versions": r.valid.to_string(),
        "flexible_versions": r.flexible.to_string(),
        "deprecated_versions": r.deprecated.to_string(),
        "latest_version_unstable": r.latest_version_unstable,
    })
}

fn list(p: &Protocol, format: Format) -> String {
    let keys = p.api_keys();
    if format == Format::Json {
        let apis: Vec<Value> = keys
            .iter()
            .map(|&k| {
                let rs = p.api_versions(k);
                json!({
                    "api_key": k,
                    "name": p.api_name(k),
                    "releases": rs.iter().map(release_json).collect::<Vec<_>>(),
                    "notes": notes(p, &rs),
                })
            })
            .collect();
        return format!("{}\n", json!({ "releases": p.releases(), "apis": apis }));
    }
    let rels = p.releases();
    let mut out = format!("{:>4}  {:<36}", "KEY", "NAME");
    for r in rels {
        out.push_str(&format!("  {r:<8}"));
    }
    out.push_str("  NOTES\n");
    for &k in &keys {
        let rs = p.api_versions(k);
        let mut line = format!("{k:>4}  {:<36}", p.api_name(k).unwrap_or("?"));
        for r in rels {
            line.push_str(&format!(
                "  {:<8}",
                versions_cell(rs.iter().find(|x| x.release == *r))
            ));
        }
        line.push_str(&format!("  {}", notes(p, &rs).join("; ")));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} APIs. Versions per release; * marks an unstable latest version, - an API the release lacks.\n",
        keys.len()
    ));
    out
}

fn one_api(p: &Protocol, key: i16, format: Format) -> String {
    let rs = p.api_versions(key);
    if format == Format::Json {
        return format!(
            "{}\n",
            json!({
                "api_key": key,
                "name": p.api_name(key),
                "releases": rs.iter().map(release_json).collect::<Vec<_>>(),
                "notes": notes(p, &rs),
            })
        );
    }
    let mut out = format!("{} (key {key})\n", p.api_name(key).unwrap_or("?"));
    for r in &rs {
        out.push_str(&format!(
            "  {:<8} {:<36} valid {:<8} flexible {:<6} deprecated {}{}\n",
            r.release,
            r.name,
            r.valid.to_string(),
            r.flexible.to_string(),
            r.deprecated,
            if r.latest_version_unstable {
                "  (latest version unstable)"
            } else {
                ""
            }
        ));
    }
    for n in notes(p, &rs) {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

fn fields_at(p: &Protocol, key: i16, version: i16, format: Format) -> Result<String, String> {
    let req = p.message(key, version, Direction::Request);
    let resp = p.message(key, version, Direction::Response);
    if req.is_none() && resp.is_none() {
        let have: Vec<String> = p
            .api_versions(key)
            .iter()
            .map(|r| format!("{} {}", r.release, r.valid))
            .collect();
        return Err(format!(
            "{} has no version {version} (valid versions: {})",
            p.api_name(key).unwrap_or("?"),
            have.join(", ")
        ));
    }
    let unstable = p.is_unstable(key, version);
    if format == Format::Json {
        let side = |r: Option<Resolved>| {
            r.map(|r| {
                json!({
                    "spec": &*r.spec.name,
                    "release": r.release,
                    "flexible": r.spec.is_flexible(version),
                    "fields": fields_json(r.spec, &r.spec.fields, version, &mut Vec::new()),
                })
            })
        };
        return Ok(format!(
            "{}\n",
            json!({
                "api_key": key,
                "name": p.api_name(key),
                "version": version,
                "unstable": unstable,
                "request": side(req),
                "response": side(resp),
            })
        ));
    }
    let mut out = String::new();
    for r in [req, resp].into_iter().flatten() {
        out.push_str(&format!(
            "{} v{version} ({}{}{})\n",
            r.spec.name,
            r.release,
            if r.spec.is_flexible(version) {
                ", flexible"
            } else {
                ""
            },
            if unstable { ", unstable" } else { "" }
        ));
        out.push_str(&format!(
            "  {:<44} {:<32} {:<8} {:<7} {}\n",
            "FIELD", "TYPE", "NULLABLE", "TAGGED", "DEFAULT"
        ));
        let mut rows = Vec::new();
        field_rows(r.spec, &r.spec.fields, version, &mut Vec::new(), &mut rows);
        if rows.is_empty() {
            out.push_str("  (no fields)\n");
        }
        for row in rows {
            out.push_str(&row);
        }
        out.push('\n');
    }
    Ok(out)
}

fn present(f: &Field, v: i16) -> bool {
    f.versions.contains(v)
}

fn default_text(f: &Field) -> String {
    match f.default.as_deref() {
        Some("") | None => String::new(),
        Some(d) => d.to_string(),
    }
}

/// The fields of `f`'s struct, unless that is a common struct already being expanded above
/// (a user's spec can make a struct contain itself; listing it would never end).
fn sub_fields<'a>(
    spec: &'a MessageSpec,
    f: &'a Field,
    open: &mut Vec<&'a str>,
) -> Option<(&'a [Field], Option<&'a str>)> {
    let sub = spec.struct_fields(f);
    if sub.is_empty() || open.len() > kinspect::limits::MAX_DEPTH {
        return None;
    }
    // Inline structs are finite JSON; only references to common structs can loop.
    let shared = if f.fields.is_empty() {
        f.ty.struct_name()
    } else {
        None
    };
    if let Some(n) = shared {
        if open.contains(&n) {
            return None;
        }
    }
    Some((sub, shared))
}

fn field_rows<'a>(
    spec: &'a MessageSpec,
    fields: &'a [Field],
    v: i16,
    open: &mut Vec<&'a str>,
    out: &mut Vec<String>,
) {
    for f in fields.iter().filter(|f| present(f, v)) {
        let name = format!("{}{}", "  ".repeat(open.len()), f.name);
        let tagged = match (f.is_tagged_in(v), f.tag) {
            (true, Some(t)) => format!("tag {t}"),
            (true, None) => "tag ?".into(),
            _ => String::new(),
        };
        let row = format!(
            "  {name:<44} {:<32} {:<8} {tagged:<7} {}",
            f.ty.to_string(),
            if f.is_nullable_in(v) { "yes" } else { "" },
            default_text(f)
        );
        out.push(format!("{}\n", row.trim_end()));
        if let Some((sub, shared)) = sub_fields(spec, f, open) {
            open.push(shared.unwrap_or(""));
            field_rows(spec, sub, v, open, out);
            open.pop();
        }
    }
}

fn fields_json<'a>(
    spec: &'a MessageSpec,
    fields: &'a [Field],
    v: i16,
    open: &mut Vec<&'a str>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for f in fields.iter().filter(|f| present(f, v)) {
        let mut o = json!({
            "name": &*f.name,
            "type": f.ty.to_string(),
            "nullable": f.is_nullable_in(v),
            "tag": if f.is_tagged_in(v) { json!(f.tag) } else { Value::Null },
            "default": f.default.as_deref(),
        });
        if let Some((sub, shared)) = sub_fields(spec, f, open) {
            open.push(shared.unwrap_or(""));
            o["fields"] = json!(fields_json(spec, sub, v, open));
            open.pop();
        }
        out.push(o);
    }
    out
}
