//! `kinspect capture -i IFACE [--port P]`: live capture through libpcap (cargo feature `live`),
//! decoded as it arrives and printed by the same printers as `kinspect decode` (streamed, line
//! by line), or written as a pcap stream with `-w` for `kinspect decode` or Wireshark.

use super::decode::{exit_code, PrintArgs};
use super::{protocol_or_report, Global, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::live::{capture_live, LiveOptions, PcapTap};
use kinspect::capture::CaptureOptions;
use kinspect::output::Printer;
use std::io::{IsTerminal, Write};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interface to capture on (`lo`, `eth0`, `any`); needs root or CAP_NET_RAW.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: String,
    /// A Kafka broker port (repeatable): only these ports are captured. Without it every TCP
    /// connection is watched and Kafka is found by its usual ports and its content.
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Stop after this many packets.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// A BPF filter instead of the one derived from --port.
    #[arg(long, value_name = "BPF")]
    pub filter: Option<String>,
    /// Write the packets as pcap to FILE (`-` = standard output) instead of printing PDUs.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub write: Option<String>,
    #[command(flatten)]
    pub print: PrintArgs,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = protocol_or_report(g, "kinspect") else {
        return EXIT_FAILURE;
    };
    let live = LiveOptions {
        interface: args.interface.clone(),
        packet_limit: args.count,
        filter: args.filter.clone(),
    };
    let stdout = std::io::stdout();
    if let Some(path) = args.write.as_deref() {
        let mut file: Box<dyn Write> = if path == "-" {
            Box::new(stdout.lock())
        } else {
            match std::fs::File::create(path) {
                Ok(f) => Box::new(std::io::BufWriter::new(f)),
                Err(e) => {
                    eprintln!("kinspect: {path}: {e}");
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
        return match capture_live(&live, &opts, Some(&mut tap), &mut |_| {}) {
            Ok(s) => {
                eprintln!("kinspect: {} packets written", s.packets);
                EXIT_OK
            }
            Err(e) => {
                eprintln!("kinspect: {e}");
                EXIT_FAILURE
            }
        };
    }
    let mut opts = kinspect::engine::Options::new(proto);
    opts.capture.ports = args.ports.clone();
    opts.capture.show_secrets = args.print.show_secrets;
    let popts = args.print.options(g, stdout.is_terminal());
    // Line-buffered: every PDU reaches the terminal or pipe as soon as it is decoded.
    let mut printer = Printer::new(std::io::LineWriter::new(stdout.lock()), popts);
    let outcome = kinspect::engine::run_live(&live, &opts, &mut printer);
    if let Some(s) = outcome.inputs.first().and_then(|i| i.capture.as_ref()) {
        eprintln!(
            "kinspect: {} packets, {} Kafka frames on {} Kafka connection(s)",
            s.packets, s.frames, s.kafka_connections
        );
    }
    exit_code("kinspect", &outcome)
}
