//! `kinspect validate-schema [PATH...] [--release 4.3|3.9] [--format text|json]
//! [--baseline DIR|builtin]`: Kafka's generator rules for one release, lints, and wire
//! compatibility against a baseline, all findings at once.
//!
//! Exit 0 when there is no error (warnings and information allowed), 1 when any error, 2 on a
//! usage or I/O failure. Text goes to stdout as `file:line:col: severity[code] path: message`
//! with a `help:` line for suggestions, colored only on a terminal (`--color`, `NO_COLOR`).

use super::io::{self, errln};
use super::{ColorChoice, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::protocol::validation;
use kinspect::schema::diag::SchemaDiag;
use kinspect::schema::validate::Release;
use std::path::PathBuf;

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
    match validation::run(&args.paths, args.release, args.baseline.as_deref()) {
        Ok(report) => {
            let out = match args.format {
                Format::Text => report.to_text(use_color(g, args)),
                Format::Json => report.to_json(),
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
