//! `kinspect help-json` (hidden): the command tree as JSON — each subcommand's options with
//! their short and long names, aliases, value names and whether they take a path — so that
//! tests/it/cli_flags.rs can hold every subcommand to the same flag conventions (`-f/--format`,
//! `-o/--output`) without parsing `--help` text.

use super::{Cli, Global, EXIT_OK};
use clap::{Command, CommandFactory, ValueHint};
use serde_json::{json, Value};

#[derive(clap::Args, Debug)]
pub struct Args {}

fn tree(cmd: &Command) -> Value {
    let args: Vec<Value> = cmd
        .get_arguments()
        .map(|a| {
            let path = matches!(
                a.get_value_hint(),
                ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath
            );
            json!({
                "id": a.get_id().as_str(),
                "short": a.get_short().map(String::from),
                "long": a.get_long(),
                "short_aliases": a.get_all_short_aliases().unwrap_or_default().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                "aliases": a.get_all_aliases().unwrap_or_default(),
                "value_names": a.get_value_names().map(|v| v.iter().map(|s| s.as_str()).collect::<Vec<_>>()).unwrap_or_default(),
                "positional": a.is_positional(),
                "takes_value": a.get_action().takes_values(),
                "path": path,
                "global": a.is_global_set(),
                "hidden": a.is_hide_set(),
                "help": a.get_help().or(a.get_long_help()).map(|h| h.to_string()),
            })
        })
        .collect();
    let subs: Vec<Value> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(tree)
        .collect();
    json!({"name": cmd.get_name(), "hidden": cmd.is_hide_set(), "args": args, "subcommands": subs})
}

pub fn run(_args: &Args, _g: &Global) -> u8 {
    println!("{:#}", tree(&Cli::command()));
    EXIT_OK
}
