//! `kinspect man [SUBCOMMAND]`: the man page (roff), written by clap_mangen from the same
//! command tree as `--help`: kinspect(1), which lists every subcommand, or one subcommand's
//! page, kinspect-SUBCOMMAND(1).

use super::io::{errln, finish, write_all_to};
use super::{Cli, Global, EXIT_FAILURE, EXIT_OK};
use clap::CommandFactory;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(after_help = "Read it with `kinspect man | man -l -`.")]
pub struct Args {
    /// A subcommand's page instead of kinspect(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &Args, _g: &Global) -> u8 {
    let cmd = Cli::command().version(super::VERSION);
    let page = match &args.subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => {
                // clap names are `&'static str` (no `string` feature); one page per process.
                let full: &'static str =
                    Box::leak(format!("kinspect-{}", sub.get_name()).into_boxed_str());
                // No `.version()`: it would add a `--version` flag that `apis --version` has.
                sub.clone().name(full)
            }
            None => {
                errln!("kinspect man: no subcommand {name:?} (see `kinspect --help`)");
                return EXIT_FAILURE;
            }
        },
    };
    let mut buf = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut buf) {
        errln!("kinspect man: {e}");
        return EXIT_FAILURE;
    }
    let written = write_all_to(args.output.as_ref(), &buf);
    finish(written, "kinspect man", EXIT_OK)
}
