//! `kinspect completions SHELL`: the shell completion script for bash, zsh, fish (elvish,
//! PowerShell too), written by clap_complete from the same command tree as `--help`.

use super::io::{finish, write_all_to};
use super::{Cli, Global, EXIT_OK};
use clap::CommandFactory;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Load it in bash with `source <(kinspect completions bash)`; for zsh, \
write it as `_kinspect` into a folder of $fpath; for fish, into \
~/.config/fish/completions/kinspect.fish."
)]
pub struct Args {
    /// The shell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &Args, _g: &Global) -> u8 {
    let mut cmd = Cli::command();
    // Into a buffer first: clap_complete panics when its writer fails (`| head`).
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "kinspect", &mut buf);
    let written = write_all_to(args.output.as_ref(), &buf);
    finish(written, "kinspect completions", EXIT_OK)
}
