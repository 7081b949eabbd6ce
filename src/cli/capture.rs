//! `kinspect capture -i IFACE [--port P]`: live capture through libpcap (cargo feature `live`),
//! decoded as it arrives and printed by the same printers as `kinspect decode` (streamed, line
//! by line), or, with `-w FILE`, written as a pcap stream instead of printed (as `tshark -w`),
//! for `kinspect decode` or Wireshark. A build without the feature keeps the subcommand and
//! says how to get it.

use super::decode::PrintArgs;
use super::io::errln;
use super::{Global, EXIT_FAILURE};
#[cfg(feature = "live")]
use {
    super::decode::exit_code,
    super::{protocol_or_report, EXIT_OK},
    kinspect::capture::live::{capture_live, LiveOptions, PcapTap},
    kinspect::capture::CaptureOptions,
    std::io::{IsTerminal, Write},
};

/// `--format` as decode's, but for `fields` (which takes `-e`) and `parquet` (tables to a
/// folder), which a live stream is not printed as.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a
    .value_parser(super::choice_of(|f| {
        !matches!(f, kinspect::output::Format::Fields | kinspect::output::Format::Parquet)
    }))
    .help("Output format (default: tree on a terminal, jsonl otherwise); each PDU is printed \
           as soon as its frame is complete")))]
pub struct Args {
    /// Interface to capture on (`lo`, `eth0`, `any`); needs root or CAP_NET_RAW.
    // Required only where capture is built in: elsewhere `kinspect capture` alone must reach
    // `run` to say how to build it.
    #[arg(short = 'i', long = "interface", value_name = "IFACE", required = cfg!(feature = "live"))]
    pub interface: Option<String>,
    /// A Kafka broker port (repeatable): only these ports are captured. Without it every TCP
    /// connection is watched and Kafka is found by its usual ports and its content.
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Stop after this many packets.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// A BPF capture filter (libpcap's syntax, as tcpdump's or tshark's -f) instead of the one
    /// derived from --port.
    #[arg(long, value_name = "BPF")]
    pub bpf: Option<String>,
    /// Write the packets as pcap to FILE (`-` = standard output) instead of printing PDUs (as
    /// `tshark -w`); the packet count still goes to standard error.
    #[arg(
        short = 'o',
        long = "output",
        visible_short_alias = 'w',
        visible_alias = "write",
        value_name = "FILE"
    )]
    pub write: Option<String>,
    #[command(flatten)]
    pub print: PrintArgs,
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
}

/// A build without the `live` feature says how to get it, as a usage failure.
#[cfg(not(feature = "live"))]
pub fn run(_args: &Args, _g: &Global) -> u8 {
    errln!(
        "kinspect capture: this kinspect was built without live capture. Build it with the cargo \
         feature `live` (needs libpcap: `apt-get install libpcap-dev`):\n  \
         cargo install --path . --features live"
    );
    EXIT_FAILURE
}

#[cfg(feature = "live")]
pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = protocol_or_report(g, "kinspect capture") else {
        return EXIT_FAILURE;
    };
    let live = LiveOptions {
        interface: args.interface.clone().unwrap_or_default(),
        packet_limit: args.count,
        filter: args.bpf.clone(),
    };
    let stdout = std::io::stdout();
    if args.write.is_some() && args.filter.filter.is_some() {
        errln!("kinspect capture: --filter selects the PDUs shown; with -o the packets are written as captured (narrow them with --bpf, or filter when decoding the file)");
        return EXIT_FAILURE;
    }
    if let Some(path) = args.write.as_deref() {
        let mut file: Box<dyn Write> = if path == "-" {
            Box::new(stdout.lock())
        } else {
            match std::fs::File::create(path) {
                Ok(f) => Box::new(std::io::BufWriter::new(f)),
                Err(e) => {
                    errln!("kinspect capture: {path}: {e}");
                    return EXIT_FAILURE;
                }
            }
        };
        let opts = CaptureOptions {
            ports: args.ports.clone(),
            protocol: Some(proto),
            ..CaptureOptions::default()
        };
        let mut tap = PcapTap::new(&mut *file as &mut dyn Write);
        return match capture_live(
            &live,
            &opts,
            Some(&mut tap),
            &mut |_: kinspect::capture::Event<'_>| {},
        ) {
            Ok(s) => {
                errln!("kinspect capture: {} packets written", s.packets);
                EXIT_OK
            }
            // `-w -` into a reader that went away: the capture ends quietly, as printing does.
            Err(kinspect::capture::CaptureError::Io(e)) if super::io::is_closed_pipe(&e) => EXIT_OK,
            Err(e) => {
                errln!("kinspect capture: {e}");
                EXIT_FAILURE
            }
        };
    }
    let mut opts = kinspect::engine::Options::new(proto);
    opts.capture.ports = args.ports.clone();
    opts.capture.show_secrets = args.print.show_secrets;
    // The display filter, as decode's; a BPF expression given to it is pointed to --bpf.
    let compiled = match args.filter.apply(proto, &mut opts.filters) {
        Ok(c) => c,
        Err(e) => {
            errln!("kinspect capture: {e}\n(a BPF capture filter is --bpf)");
            return EXIT_FAILURE;
        }
    };
    // Line-buffered: every PDU reaches the terminal or pipe as soon as it is decoded.
    let w = std::io::LineWriter::new(stdout.lock());
    let mut printer = args.print.printer(w, g, stdout.is_terminal());
    let outcome = match compiled.pairs_of(&mut printer) {
        Some(mut pairs) => kinspect::engine::run_live(&live, &opts, &mut pairs),
        None => kinspect::engine::run_live(&live, &opts, &mut printer),
    };
    if let Some(s) = outcome.inputs.first().and_then(|i| i.capture.as_ref()) {
        errln!(
            "kinspect capture: {} packets, {} Kafka frames on {} Kafka connection(s)",
            s.packets,
            s.frames,
            s.kafka_connections
        );
    }
    exit_code("kinspect capture", &outcome)
}
