//! Command-line interface: one file per subcommand, each with its options struct (`Args`) and
//! its `run` function returning the exit code.

pub mod apis;
pub mod bundle;
pub mod capture;
pub mod check;
pub mod completions;
pub mod corpus;
pub mod decode;
pub mod encode;
pub mod filter_args;
pub mod fuzz;
pub mod help_json;
pub mod io;
pub mod man;
pub mod probe;
pub mod records;
pub mod report;
pub mod stats;
mod terminal;
pub mod validate_schema;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use kinspect::choice::Choice;
pub use kinspect::output::ColorChoice;
use kinspect::records::AsType;
use std::path::PathBuf;
pub(crate) use terminal::{stdout_file, threads};

/// Exit code: everything decoded or valid.
pub const EXIT_OK: u8 = 0;
/// Exit code: input read, but with error diagnostics.
pub const EXIT_DIAGNOSTICS: u8 = 1;
/// Exit code: usage or I/O failure.
pub const EXIT_FAILURE: u8 = 2;

/// The protocol that `--schemas` selects (the built-in one without it), or `None` after telling
/// the user, as `{who}: why`, that it could not be loaded (the caller exits with
/// [`EXIT_FAILURE`]).
pub(crate) fn protocol_or_report(
    g: &Global,
    who: &str,
) -> Option<&'static kinspect::protocol::Protocol> {
    match kinspect::protocol::load(g.schemas.as_deref()) {
        Ok(p) => Some(p),
        Err(e) => {
            io::errln!("{who}: {e}");
            None
        }
    }
}

/// The protocol and the loopback address `addr` for a subcommand that talks to a broker (`who`
/// names it in the error); `None` once the problem is printed.
pub(crate) fn broker_or_report(
    g: &Global,
    who: &str,
    addr: &str,
) -> Option<(&'static kinspect::protocol::Protocol, std::net::SocketAddr)> {
    let proto = protocol_or_report(g, who)?;
    match kinspect::probe::loopback_addr(addr) {
        Ok(a) => Some((proto, a)),
        Err(e) => {
            io::errln!("{who}: {e}");
            None
        }
    }
}

#[derive(Parser, Debug)]
#[command(name = "kinspect", version = crate::cli::VERSION, about = "Inspect, validate and fuzz the Apache Kafka wire protocol")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// `kinspect --version`: the crate version and the Kafka releases built in.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (Kafka protocol: Apache Kafka 4.3.1 and 3.9.0)"
);

/// Options every subcommand takes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Global {
    /// Lay a folder of message-spec JSON files (say, a KIP branch) over the built-in protocol.
    #[arg(long, global = true, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
    /// When to use color: auto (only on a terminal, and not with NO_COLOR), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto", value_parser = choice::<ColorChoice>())]
    pub color: ColorChoice,
}

/// `--port`, where captures are read: the same name, value, help and list syntax in every
/// subcommand (`kinspect capture`'s, which limits what is captured, is its own).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Ports {
    /// Also treat this TCP port as a Kafka broker's (repeatable, or comma-separated; the usual
    /// ports and content detection apply anyway).
    #[arg(long = "port", value_name = "PORT", value_delimiter = ',')]
    pub ports: Vec<u16>,
}

/// Which APIs `probe` and `fuzz` send: the same three options in both.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ApiArgs {
    /// Also send APIs that delete data or change cluster state (see docs/probe.md).
    #[arg(long)]
    pub allow_destructive: bool,
    /// Do not send this API (name or key; repeatable, or comma-separated), e.g. one that
    /// crashes the broker.
    #[arg(long, value_name = "API", value_delimiter = ',')]
    pub skip_api: Vec<String>,
    /// Send only this API (name or key; repeatable, or comma-separated).
    #[arg(long, value_name = "API", value_delimiter = ',')]
    pub api: Vec<String>,
}

impl ApiArgs {
    /// The library's selection, each name checked against the protocol: a name no release
    /// knows would otherwise select nothing (or skip nothing) without a word.
    pub fn selection(
        &self,
        proto: &kinspect::protocol::Protocol,
    ) -> Result<kinspect::probe::ApiSelection, String> {
        let names = |flag: &str, list: &[String]| -> Result<Vec<String>, String> {
            list.iter()
                .map(|n| {
                    let k = api_key(proto, n).map_err(|e| format!("--{flag}: {e}"))?;
                    let name = proto.api_name(k).ok_or_else(|| {
                        let releases = proto.releases().join(", ");
                        format!("--{flag}: no API with key {k} in {releases}")
                    })?;
                    Ok(name.to_string())
                })
                .collect()
        };
        Ok(kinspect::probe::ApiSelection {
            allow_destructive: self.allow_destructive,
            skip: names("skip-api", &self.skip_api)?,
            only: names("api", &self.api)?,
        })
    }
}

/// An API given by key or by name (any release's, any case, with or without the
/// Request/Response suffix).
pub fn api_key(proto: &kinspect::protocol::Protocol, arg: &str) -> Result<i16, String> {
    match arg.trim().parse::<i16>() {
        Ok(k) => Ok(k),
        Err(_) => proto.api_key(arg).ok_or_else(|| unknown_api(proto, arg)),
    }
}

/// Why `arg` names no API, with the closest name when it looks like a typo of one.
fn unknown_api(proto: &kinspect::protocol::Protocol, arg: &str) -> String {
    let names = proto.api_names();
    let hint = kinspect::schema::suggest::closest(arg, &names)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    format!("no API named {arg:?}{hint}; `kinspect apis` lists them all")
}

/// `--stream`, where captures are read into PDUs or records (`decode`, `records`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Streams {
    /// Captures: only these TCP connections (numbered from 0 in order of appearance, as
    /// tshark's `tcp.stream`; repeat or separate with commas).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub stream: Vec<u32>,
}

/// `--as`, where record keys and values are shown (`decode`, `records`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RecordsAs {
    /// Read record keys and values as this internal topic's (consumer-offsets,
    /// transaction-state, share-group-state, cluster-metadata) or as plain data (raw), whatever
    /// the topic name (in a frame) or the folder (of a log file) says.
    #[arg(long = "as", value_name = "TYPE", value_parser = parse_as)]
    pub as_type: Option<AsType>,
}

fn parse_as(s: &str) -> Result<AsType, String> {
    AsType::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = AsType::NAMES.iter().map(|(n, _)| *n).collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// A value parser for one of the library's named option enums: its names are the possible
/// values, with their help lines (none where the library gives an empty one).
pub fn choice<T: Choice + Clone + Send + Sync>() -> impl TypedValueParser<Value = T> {
    choice_of(|_: T| true)
}

/// [`choice`] of only the values `keep` takes: where a subcommand does only some of them, its
/// help lists those and clap refuses the others, naming the ones it takes.
pub fn choice_of<T: Choice + Clone + Send + Sync>(
    keep: fn(T) -> bool,
) -> impl TypedValueParser<Value = T> {
    let names = T::CHOICES.iter().filter(|&&(_, _, v)| keep(v));
    PossibleValuesParser::new(names.map(|&(name, help, _)| match help {
        "" => PossibleValue::new(name),
        _ => PossibleValue::new(name).help(help),
    }))
    .try_map(|s| T::from_name(&s).ok_or("not one of the possible values"))
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Decode Kafka traffic: pcap/pcapng, hex dumps, raw frames, log segments.
    Decode(decode::Args),
    /// Encode decoded JSON back into the exact bytes.
    Encode(encode::Args),
    /// Validate Kafka message-spec JSON files (Kafka's generator rules, lints, compatibility).
    ValidateSchema(validate_schema::Args),
    /// List the APIs and versions built in, or one message's fields at one version.
    Apis(apis::Args),
    /// Build a protocol bundle from spec folders (how the built-in protocol is made).
    Bundle(bundle::Args),
    /// One line (or JSON object, or Parquet row) per record of Produce, Fetch and log files.
    Records(records::Args),
    /// Statistics of a capture: PDUs per API, error codes, latencies, clients.
    Stats(stats::Args),
    /// Cut fuzz seeds (frames, record batches, streams, captures) from captures.
    Corpus(corpus::Args),
    /// Check conversation rules across a capture: sessions, leader epochs, KRaft votes.
    Check(check::Args),
    /// Probe a live broker (loopback only): every advertised API and version, findings per answer.
    Probe(probe::Args),
    /// Fuzz a live broker (loopback only; it may crash it): schema-aware mutations, minimised reproducers.
    Fuzz(fuzz::Args),
    /// Capture live from a network interface and decode as it arrives (cargo feature `live`).
    Capture(capture::Args),
    /// One self-contained HTML report: traffic over time, latencies, errors, clients, slowest requests, findings.
    Report(report::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the man page (roff): kinspect(1), or one subcommand's.
    Man(man::Args),
    /// The command tree as JSON, for tests of the flag conventions.
    #[command(hide = true)]
    HelpJson(help_json::Args),
}
