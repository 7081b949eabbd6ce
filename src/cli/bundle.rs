//! `kinspect bundle`: reads Kafka spec folders, one per release, and writes one bundle file
//! with the facts only (how the built-in protocol in src/protocol/builtin.json is made).

use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::schema::bundle;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A release and its spec folder, as NAME=DIR; repeat, newest release first.
    #[arg(long = "release", value_name = "NAME=DIR", required = true, value_parser = parse_release)]
    pub releases: Vec<(String, PathBuf)>,
    /// Where to write the bundle (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn parse_release(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, dir)) if !name.is_empty() && !dir.is_empty() => {
            Ok((name.to_string(), PathBuf::from(dir)))
        }
        _ => Err(format!(
            "expected NAME=DIR (e.g. 4.3.1=kafka/clients), got {s:?}"
        )),
    }
}

pub fn run(args: &Args, _g: &Global) -> u8 {
    for (name, dir) in &args.releases {
        if !dir.is_dir() {
            eprintln!(
                "kinspect bundle: release {name}: {} is not a directory",
                dir.display()
            );
            return EXIT_FAILURE;
        }
    }
    if let Some(dup) = args
        .releases
        .iter()
        .enumerate()
        .find(|(i, (n, _))| args.releases[..*i].iter().any(|(m, _)| m == n))
    {
        eprintln!("kinspect bundle: release {} is given twice", dup.1 .0);
        return EXIT_FAILURE;
    }
    let text = match bundle::build(&args.releases) {
        Ok(t) => t,
        Err(diags) => {
            for d in &diags {
                eprintln!("{d}");
            }
            eprintln!(
                "kinspect bundle: {} error(s); no bundle written",
                diags.len()
            );
            return EXIT_DIAGNOSTICS;
        }
    };
    let written = match &args.output {
        Some(path) => std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| format!("standard output: {e}"))
        }
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("kinspect bundle: cannot write {e}");
            EXIT_FAILURE
        }
    }
}
