//! `kinspect capture -i IFACE [--port P]`: live capture through libpcap (cargo feature `live`),
//! decoded as it arrives and printed by the same printers as `kinspect decode` (streamed, line
//! by line), or written as a pcap stream with `-w` for `kinspect decode` or Wireshark.

use super::{protocol_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::decoded::{builtin_known_request, DecodeLoop, Decoded};
use kinspect::capture::live::{capture_live, LiveOptions, PcapTap};
use kinspect::capture::CaptureOptions;
use kinspect::output::{use_color, Format, Options, Printer};
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
    /// Output format (default: tree on a terminal, jsonl otherwise).
    #[arg(long, short = 'f', value_name = "FORMAT", value_parser = super::choice::<Format>())]
    pub format: Option<Format>,
    /// JSON: give every field its byte offset and length.
    #[arg(long)]
    pub annotate: bool,
    /// Print SASL PLAIN passwords instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = protocol_or_report(g, "kinspect") else {
        return EXIT_FAILURE;
    };
    let opts = CaptureOptions {
        ports: args.ports.clone(),
        show_secrets: args.show_secrets,
        is_known_request: Some(builtin_known_request),
        ..CaptureOptions::default()
    };
    let live = LiveOptions {
        interface: args.interface.clone(),
        packet_limit: args.count,
        filter: args.filter.clone(),
    };
    let stdout = std::io::stdout();
    let mut errors = false;
    let result = match args.write.as_deref() {
        Some(path) => {
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
            let mut tap = PcapTap::new(&mut *file as &mut dyn Write);
            capture_live(&live, &opts, Some(&mut tap), &mut |_| {})
        }
        None => {
            let tty = stdout.is_terminal();
            let format = args
                .format
                .unwrap_or(if tty { Format::Tree } else { Format::Jsonl });
            let o = Options {
                format,
                annotate: args.annotate,
                color: use_color(g.color, tty),
                show_secrets: args.show_secrets,
            };
            // Line-buffered: every PDU reaches the terminal or pipe as soon as it is decoded.
            let mut printer = Printer::new(std::io::LineWriter::new(stdout.lock()), o);
            let mut dl = DecodeLoop::new(proto);
            let mut write_err = None;
            let r = capture_live(&live, &opts, None, &mut |ev| {
                dl.event(ev, &mut |d| {
                    let res = match d {
                        Decoded::Pdu(p) => {
                            errors |= p.tree.has_errors();
                            printer.pdu(p, None)
                        }
                        Decoded::Note(o, d) => {
                            errors |= d.is_error();
                            printer.note(o, d, None)
                        }
                    };
                    if let Err(e) = res {
                        write_err.get_or_insert(e);
                    }
                })
            });
            let finished = printer.finish().map(|_| ());
            if let Some(e) = write_err.or(finished.err()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    eprintln!("kinspect: writing: {e}");
                    return EXIT_FAILURE;
                }
            }
            r
        }
    };
    match result {
        Ok(s) => {
            eprintln!(
                "kinspect: {} packets, {} Kafka frames on {} Kafka connection(s)",
                s.packets, s.frames, s.kafka_connections
            );
            if errors {
                EXIT_DIAGNOSTICS
            } else {
                EXIT_OK
            }
        }
        Err(e) => {
            eprintln!("kinspect: {e}");
            EXIT_FAILURE
        }
    }
}
