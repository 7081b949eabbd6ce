//! One `validate-schema` run as a library call: read the spec files (or take a built-in
//! release), check them under one release's generator rules, compare them with a baseline for
//! wire compatibility, and cap what the report lists ([`RunCap`]). The command line only parses
//! its arguments, picks the colours and writes [`Report::to_text`] or [`Report::to_json`].

use super::registry::builtin;
use crate::schema::compat::{self, BaselineSpec};
use crate::schema::diag::{RunCap, SchemaDiag, Severity};
use crate::schema::load::{folder_refused, load_folder};
use crate::schema::model::MessageSpec;
use crate::schema::validate::files::read_inputs;
use crate::schema::validate::{check_files, count, not_listed, validate_specs, Release};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What was checked and what was found.
pub struct Report {
    /// The release whose rules applied.
    pub release: Release,
    /// Files checked: read, or refused by the run's limits.
    pub files: usize,
    /// The baseline as given (`builtin` or a folder).
    pub baseline: Option<String>,
    /// What the report lists, by place, within the run's cap.
    pub diags: Vec<SchemaDiag>,
}

/// Reads `paths` (none: the built-in specs of `release`), validates them under `release` and,
/// with a `baseline` (`builtin` or a folder of specs), compares them with it. `Err` is an I/O or
/// usage failure, said in one message.
pub fn run(paths: &[PathBuf], release: Release, baseline: Option<&str>) -> Result<Report, String> {
    let mut report = Report {
        release,
        files: 0,
        baseline: baseline.map(str::to_string),
        diags: Vec::new(),
    };
    // The changed specs: the files given, or the built-in release itself.
    let owned: Vec<(Arc<str>, MessageSpec)>;
    let builtin_specs: Vec<(Arc<str>, &MessageSpec)>;
    let changed: Vec<(Arc<str>, &MessageSpec)> = if paths.is_empty() {
        builtin_specs = builtin()
            .specs()
            .filter(|(r, _)| *r == release.as_str())
            .map(|(_, s)| (Arc::from(format!("{}/{}", release.as_str(), s.path)), s))
            .collect();
        if builtin_specs.is_empty() {
            return Err(format!(
                "the built-in protocol has no Kafka {release} specs"
            ));
        }
        report.files = builtin_specs.len();
        report.diags = validate_specs(&builtin_specs, release);
        builtin_specs.clone()
    } else {
        let inputs = read_inputs(paths)?;
        if inputs.files.is_empty() && inputs.diags.is_empty() {
            return Err("no *.json spec files found in the given paths".into());
        }
        report.files = inputs.files.len() + inputs.refused;
        let (checked, mut diags) = check_files(&inputs.files, release);
        diags.extend(inputs.diags);
        report.diags = diags;
        owned = checked
            .into_iter()
            .filter_map(|c| c.spec.map(|s| (c.file, s)))
            .collect();
        owned.iter().map(|(f, s)| (f.clone(), s)).collect()
    };
    if let Some(b) = baseline {
        let base = Baseline::load(b)?;
        report.diags.extend(compat::check(&changed, &base.specs()));
    }
    let by_place =
        |a: &SchemaDiag, b: &SchemaDiag| (&*a.file, a.pos, a.code).cmp(&(&*b.file, b.pos, b.code));
    report.diags.sort_by(by_place);
    // The comparison with a baseline adds its findings to those the run already capped: the
    // report as a whole lists at most as many, and counts the rest.
    let mut cap = RunCap::default();
    cap.push(std::mem::take(&mut report.diags));
    report.diags = cap.finish();
    report.diags.sort_by(by_place);
    Ok(report)
}

/// The specs a run is compared with, newest first, each with where it comes from.
enum Baseline {
    Builtin,
    Folder(Vec<(Arc<str>, MessageSpec)>),
}

impl Baseline {
    /// `builtin` (Kafka 4.3.1, then 3.9.0) or a folder of specs, which must load without error.
    fn load(b: &str) -> Result<Baseline, String> {
        if b == "builtin" {
            return Ok(Baseline::Builtin);
        }
        let dir = Path::new(b);
        if !dir.is_dir() {
            return Err(format!(
                "--baseline {b}: not a folder (use a folder of specs, or `builtin`)"
            ));
        }
        load_folder(dir)
            .map(Baseline::Folder)
            .map_err(|errors| folder_refused("--baseline", dir, &errors))
    }

    fn specs(&self) -> Vec<BaselineSpec<'_>> {
        match self {
            Baseline::Builtin => builtin()
                .specs()
                .map(|(origin, spec)| BaselineSpec { origin, spec })
                .collect(),
            Baseline::Folder(specs) => specs
                .iter()
                .map(|(origin, spec)| BaselineSpec { origin, spec })
                .collect(),
        }
    }
}

fn paint(s: &str, sgr: &str, on: bool) -> String {
    if on {
        format!("\x1b[{sgr}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

impl Report {
    /// `file:line:col: severity[code] path: message` per diagnostic, a `help:` line for each
    /// suggestion, and a summary line; ANSI colours when `color`.
    pub fn to_text(&self, color: bool) -> String {
        let mut out = String::new();
        for d in &self.diags {
            let (label, sgr) = match d.severity {
                Severity::Error => ("error", "1;31"),
                Severity::Warning => ("warning", "1;33"),
                Severity::Info => ("info", "1;36"),
            };
            let place = format!("{}:{}:{}:", d.file, d.pos.line, d.pos.col);
            out.push_str(&paint(&place, "1", color));
            out.push(' ');
            out.push_str(&paint(&format!("{label}[{}]", d.code), sgr, color));
            if !d.path.is_empty() {
                out.push(' ');
                out.push_str(&d.path);
            }
            out.push_str(": ");
            out.push_str(&d.message);
            out.push('\n');
            if let Some(s) = &d.suggestion {
                out.push_str(&format!(
                    "  {}: did you mean `{s}`?\n",
                    paint("help", "1;32", color)
                ));
            }
        }
        let (e, w, i) = count(&self.diags);
        let what = match &self.baseline {
            Some(b) => format!(" (baseline {b})"),
            None => String::new(),
        };
        let hidden = match not_listed(&self.diags) {
            0 => String::new(),
            n => format!(" ({n} of them not listed)"),
        };
        let (files, release) = (self.files, self.release);
        let (fs, es, ws) = (plural(files), plural(e), plural(w));
        out.push_str(&format!(
            "{files} file{fs} checked under Kafka {release}{what}: \
             {e} error{es}, {w} warning{ws}, {i} info{hidden}\n"
        ));
        out
    }

    /// The report as one pretty-printed JSON object (README, *The JSON contract*).
    pub fn to_json(&self) -> String {
        let (e, w, i) = count(&self.diags);
        let diags: Vec<Value> = self
            .diags
            .iter()
            .map(|d| {
                json!({
                    "severity": d.severity.as_str(),
                    "code": d.code,
                    "file": &*d.file,
                    "line": d.pos.line,
                    "column": d.pos.col,
                    "path": d.path,
                    "message": d.message,
                    "suggestion": d.suggestion,
                })
            })
            .collect();
        let v = json!({
            "release": self.release.as_str(),
            "files": self.files,
            "baseline": self.baseline,
            "errors": e,
            "warnings": w,
            "infos": i,
            "not_listed": not_listed(&self.diags),
            "diagnostics": diags,
        });
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
