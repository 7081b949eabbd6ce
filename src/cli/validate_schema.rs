//! `kinspect validate-schema [PATH...] [--release 4.3|3.9] [--format text|json]
//! [--baseline DIR|builtin]`: Kafka's generator rules for one release, lints, and wire
//! compatibility against a baseline, all findings at once.
//!
//! Exit 0 when there is no error (warnings and information allowed), 1 when any error, 2 on a
//! usage or I/O failure. Text goes to stdout as `file:line:col: severity[code] path: message`
//! with a `help:` line for suggestions, colored only on a terminal (`--color`, `NO_COLOR`).

use super::io::{self, errln};
use super::{ColorChoice, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::protocol::registry::builtin;
use kinspect::schema::compat::{self, BaselineSpec};
use kinspect::schema::diag::{RunCap, SchemaDiag, Severity};
use kinspect::schema::model::MessageSpec;
use kinspect::schema::validate::files::read_inputs;
use kinspect::schema::validate::{check_files, count, not_listed, validate_specs, Release};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Spec files or folders (searched recursively for *.json). None: the `--schemas` folder if
    /// given, else the built-in protocol of the chosen release.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Whose generator rules apply: 4.3 (4.3.1) or 3.9 (3.9.0).
    #[arg(long, value_name = "RELEASE", default_value = "4.3", value_parser = parse_release)]
    pub release: Release,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "text")]
    pub format: Format,
    /// Compare the specs with a baseline for wire compatibility: a folder of specs, or
    /// `builtin` (Kafka 4.3.1, then 3.9.0).
    #[arg(long, value_name = "DIR|builtin")]
    pub baseline: Option<String>,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

fn parse_release(s: &str) -> Result<Release, String> {
    s.parse()
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let with_schemas;
    let args = match (&g.schemas, args.paths.is_empty()) {
        (Some(dir), true) => {
            with_schemas = Args {
                paths: vec![dir.clone()],
                baseline: args.baseline.clone(),
                output: args.output.clone(),
                ..*args
            };
            &with_schemas
        }
        _ => args,
    };
    match execute(args) {
        Ok(report) => {
            let out = match args.format {
                Format::Text => render_text(&report, use_color(g, args)),
                Format::Json => render_json(&report),
            };
            let code = if report.diags.iter().any(SchemaDiag::is_error) {
                EXIT_DIAGNOSTICS
            } else {
                EXIT_OK
            };
            // A closed pipe ends quietly with 0, like every subcommand's closed output.
            let written = io::write_all_to(args.output.as_ref(), out.as_bytes());
            io::finish(written, "kinspect validate-schema", code)
        }
        Err(msg) => {
            errln!("kinspect validate-schema: {msg}");
            EXIT_FAILURE
        }
    }
}

/// What was checked and what was found.
pub struct Report {
    pub release: Release,
    pub files: usize,
    pub baseline: Option<String>,
    pub diags: Vec<SchemaDiag>,
}

/// Reads, validates and (with a baseline) compares. `Err` is an I/O or usage failure.
pub fn execute(args: &Args) -> Result<Report, String> {
    let release = args.release;
    let mut report = Report {
        release,
        files: 0,
        baseline: args.baseline.clone(),
        diags: Vec::new(),
    };
    // The changed specs: the files given, or the built-in release itself.
    let owned: Vec<(Arc<str>, MessageSpec)>;
    let builtin_specs: Vec<(Arc<str>, &MessageSpec)>;
    let changed: Vec<(Arc<str>, &MessageSpec)> = if args.paths.is_empty() {
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
        let inputs = read_inputs(&args.paths)?;
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
    if let Some(b) = &args.baseline {
        let (base_specs, origin_of): (Vec<&MessageSpec>, Vec<String>) = load_baseline(b)?;
        let baseline: Vec<BaselineSpec> = base_specs
            .iter()
            .zip(&origin_of)
            .map(|(spec, origin)| BaselineSpec { origin, spec })
            .collect();
        report.diags.extend(compat::check(&changed, &baseline));
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

/// The baseline specs, newest first, each with where it comes from.
fn load_baseline(b: &str) -> Result<(Vec<&'static MessageSpec>, Vec<String>), String> {
    if b == "builtin" {
        let (specs, origins) = builtin().specs().map(|(r, s)| (s, r.to_string())).unzip();
        return Ok((specs, origins));
    }
    let dir = PathBuf::from(b);
    if !dir.is_dir() {
        return Err(format!(
            "--baseline {b}: not a folder (use a folder of specs, or `builtin`)"
        ));
    }
    let inputs = read_inputs(std::slice::from_ref(&dir))?;
    let mut specs = Vec::new();
    let mut origins = Vec::new();
    for (path, text) in &inputs.files {
        let (spec, diags) = kinspect::schema::load::load_spec(path, text);
        if diags.iter().any(SchemaDiag::is_error) {
            return Err(format!(
                "--baseline {b}: {path} does not load: {}",
                diags
                    .iter()
                    .find(|d| d.is_error())
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ));
        }
        if let Some(spec) = spec {
            // One short-lived process: the baseline lives as long as the run.
            specs.push(&*Box::leak(Box::new(spec)));
            origins.push(path.clone());
        }
    }
    if specs.is_empty() {
        return Err(format!(
            "--baseline {b}: no *.json spec files in this folder"
        ));
    }
    Ok((specs, origins))
}

fn use_color(g: &Global, args: &Args) -> bool {
    match g.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && io::output_is_terminal(args.output.as_ref())
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

pub fn render_text(r: &Report, color: bool) -> String {
    let mut out = String::new();
    for d in &r.diags {
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
    let (e, w, i) = count(&r.diags);
    let what = match &r.baseline {
        Some(b) => format!(" (baseline {b})"),
        None => String::new(),
    };
    let hidden = match not_listed(&r.diags) {
        0 => String::new(),
        n => format!(" ({n} of them not listed)"),
    };
    out.push_str(&format!(
        "{} file{} checked under Kafka {}{what}: {e} error{}, {w} warning{}, {i} info{hidden}\n",
        r.files,
        plural(r.files),
        r.release,
        plural(e),
        plural(w)
    ));
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn render_json(r: &Report) -> String {
    let (e, w, i) = count(&r.diags);
    let diags: Vec<Value> = r
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
        "release": r.release.as_str(),
        "files": r.files,
        "baseline": r.baseline,
        "errors": e,
        "warnings": w,
        "infos": i,
        "not_listed": not_listed(&r.diags),
        "diagnostics": diags,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}
