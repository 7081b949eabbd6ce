//! (subcommand under construction: owned by one helper, replaced wholesale)

use super::{Global, EXIT_FAILURE};

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: &Args, _g: &Global) -> u8 {
    eprintln!("kinspect: not built yet");
    EXIT_FAILURE
}
