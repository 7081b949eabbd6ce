//! `kinspect capture -i IFACE [--port P]`: live capture through libpcap (cargo feature `live`),
//! decoded as it arrives and printed as JSON Lines (one PDU or note per line, the keys of
//! CONTRACT.md), or written as a pcap stream with `-w` for `kinspect decode` or Wireshark.

use super::{Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use crate::capture::decoded::{builtin_known_request, DecodeLoop, Decoded};
use crate::capture::live::{capture_live, LiveOptions, PcapTap};
use crate::capture::CaptureOptions;
use crate::pdu::{Origin, Pdu};
use crate::wire::diag::Diagnostic;
use serde_json::{json, Map, Value};
use std::io::Write;

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
    /// Print SASL PLAIN passwords instead of masking them.
    #[arg(long)]
    pub show_secrets: bool,
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// RFC 3339 UTC with nanoseconds, as CONTRACT.md prints `ts`.
pub fn rfc3339(ts_ns: i64) -> String {
    let secs = ts_ns.div_euclid(1_000_000_000);
    let nanos = ts_ns.rem_euclid(1_000_000_000);
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

fn origin_json(m: &mut Map<String, Value>, o: &Origin) {
    m.insert("index".into(), o.index.into());
    if let Some(f) = o.frame {
        m.insert("frame".into(), f.into());
    }
    if let Some(f) = o.last_frame {
        m.insert("last_frame".into(), f.into());
    }
    if let Some(t) = o.ts_ns {
        m.insert("ts".into(), rfc3339(t).into());
    }
    if let Some(c) = o.conn {
        m.insert("connection".into(), json!({"client": c.client.to_string(), "server": c.server.to_string(), "stream": c.stream}));
    }
}

fn diag_json(d: &Diagnostic) -> Value {
    json!({"severity": d.severity.as_str(), "code": d.code, "path": d.path, "offset": d.offset, "message": d.message})
}

fn pdu_line(p: &Pdu, show_secrets: bool) -> Value {
    let mut m = Map::new();
    origin_json(&mut m, &p.origin);
    let body = crate::wire::encode::pdu_json(p);
    if let Some(d) = p.direction {
        m.insert("direction".into(), d.as_str().into());
    }
    if let Some(o) = p.origin.stream_offset {
        m.insert("stream_offset".into(), o.into());
    }
    if let Value::Object(b) = body {
        for (k, v) in b {
            if k == "token" && !show_secrets {
                m.insert(k, mask_token(&v));
            } else if k != "direction" {
                m.insert(k, v);
            }
        }
    }
    if let Some(n) = p.api_name {
        m.insert("api".into(), n.into());
    }
    if let Some(c) = p.correlation_id {
        m.insert("correlation_id".into(), c.into());
    }
    if let Some(r) = p.release {
        m.insert("release".into(), r.into());
    }
    if let Some(f) = p.request_frame {
        m.insert("request_frame".into(), f.into());
    }
    if let Some(l) = p.latency_ns {
        m.insert("latency_us".into(), json!(l as f64 / 1000.0));
    }
    m.insert(
        "diagnostics".into(),
        p.tree.diags.iter().map(diag_json).collect(),
    );
    Value::Object(m)
}

/// A SASL token printed with its PLAIN password masked (same length).
fn mask_token(v: &Value) -> Value {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let Some(raw) = v.as_str().and_then(|s| b64.decode(s).ok()) else {
        return v.clone();
    };
    match crate::capture::mask_sasl_plain(&raw) {
        Some(masked) => b64.encode(masked).into(),
        None => v.clone(),
    }
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let proto = match crate::protocol::for_global(g) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("kinspect: {e}");
            return EXIT_FAILURE;
        }
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
            let mut w = std::io::BufWriter::new(stdout.lock());
            let mut dl = DecodeLoop::new(proto);
            let mut write_err = None;
            let r = capture_live(&live, &opts, None, &mut |ev| {
                dl.event(ev, &mut |d| {
                    let line = match d {
                        Decoded::Pdu(p) => {
                            errors |= p.tree.has_errors();
                            pdu_line(p, args.show_secrets)
                        }
                        Decoded::Note(o, d) => {
                            errors |= d.is_error();
                            let mut m = Map::new();
                            origin_json(&mut m, o);
                            m.insert("note".into(), diag_json(d));
                            Value::Object(m)
                        }
                    };
                    // Streamed: each line is flushed as it is decoded.
                    let res = serde_json::to_writer(&mut w, &line)
                        .map_err(std::io::Error::from)
                        .and_then(|_| writeln!(w))
                        .and_then(|_| w.flush());
                    if let Err(e) = res {
                        write_err.get_or_insert(e);
                    }
                })
            });
            if let Some(e) = write_err {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_as_contract_says() {
        // 2024-05-01T10:00:00.123456789Z, as in CONTRACT.md's example.
        assert_eq!(
            rfc3339(1_714_557_600_123_456_789),
            "2024-05-01T10:00:00.123456789Z"
        );
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
    }
}
