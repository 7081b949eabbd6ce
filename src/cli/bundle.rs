//! `kinspect bundle`: reads Kafka spec folders, one per release, and writes one bundle file
//! with the facts only (how the built-in protocol in src/protocol/builtin.json is made).

use super::io::{self, errln};
use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::schema::bundle;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A release and its spec folder, as NAME=DIR; repeat, newest release first.
    #[arg(long = "release", value_name = "NAME=DIR", required = true, value_parser = parse_release)]
    pub releases: Vec<(String, PathBuf)>,
    /// Where to write the bundle (default, and `-`: standard output).
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
            errln!(
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
        errln!("kinspect bundle: release {} is given twice", dup.1 .0);
        return EXIT_FAILURE;
    }
    let text = match bundle::build(&args.releases) {
        Ok(t) => t,
        Err(diags) => {
            for d in &diags {
                errln!("{d}");
            }
            errln!(
                "kinspect bundle: {} error(s); no bundle written",
                diags.len()
            );
            return EXIT_DIAGNOSTICS;
        }
    };
    let written = io::write_all_to(args.output.as_ref(), text.as_bytes());
    io::finish(written, "kinspect bundle", EXIT_OK)
}
