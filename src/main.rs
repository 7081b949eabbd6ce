//! The `kinspect` binary: parse arguments, dispatch to a subcommand, map the outcome to an exit
//! code (0 clean, 1 input read but with error diagnostics, 2 usage or I/O failure).

use clap::Parser;
mod cli;

use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    // A closed pipe ends the run quietly, never in a "failed printing" panic.
    cli::io::quiet_on_closed_pipes();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // clap exits 0 for --help/--version and 2 for usage errors; keep that contract.
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let g = &cli.global;
    let code = match &cli.command {
        Command::Decode(a) => cli::decode::run(a, g),
        Command::Records(a) => cli::records::run(a, g),
        Command::Encode(a) => cli::encode::run(a, g),
        Command::ValidateSchema(a) => cli::validate_schema::run(a, g),
        Command::Apis(a) => cli::apis::run(a, g),
        Command::Bundle(a) => cli::bundle::run(a, g),
        Command::Stats(a) => cli::stats::run(a, g),
        Command::Corpus(a) => cli::corpus::run(a, g),
        Command::Check(a) => cli::check::run(a, g),
        Command::Probe(a) => cli::probe::run(a, g),
        Command::Fuzz(a) => cli::fuzz::run(a, g),
        Command::Capture(a) => cli::capture::run(a, g),
        Command::Report(a) => cli::report::run(a, g),
        Command::Completions(a) => cli::completions::run(a, g),
        Command::Man(a) => cli::man::run(a, g),
        Command::HelpJson(a) => cli::help_json::run(a, g),
    };
    ExitCode::from(code)
}
