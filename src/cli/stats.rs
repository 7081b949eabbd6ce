//! `kinspect stats FILE`: what a capture holds — PDUs per API and version, error codes by name,
//! latency percentiles per API, clients by client id, bytes per direction, diagnostics.

use super::{protocol_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::decoded::{builtin_known_request, decode_capture_with, Decoded};
use kinspect::wire::decode::RecordsOptions;

/// Statistics show no record contents: batch headers with their CRC checked are enough.
const RECORDS: RecordsOptions = RecordsOptions {
    raw: false,
    as_type: None,
    headers_only: true,
};
use kinspect::capture::stats::{Histogram, Stats};
use kinspect::capture::{CaptureOptions, CaptureSummary};
use kinspect::diag::Severity;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A pcap or pcapng capture; `-` reads standard input.
    pub file: PathBuf,
    /// Also treat this port as a Kafka broker port (repeatable; the usual ports and content
    /// detection apply anyway).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// `text` tables or one `json` object.
    #[arg(long, value_enum, default_value = "text")]
    pub format: StatsFormat,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsFormat {
    Text,
    Json,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = protocol_or_report(g, "kinspect") else {
        return EXIT_FAILURE;
    };
    let opts = CaptureOptions {
        ports: args.ports.clone(),
        is_known_request: Some(builtin_known_request),
        ..CaptureOptions::default()
    };
    let mut stats = Stats::new();
    let mut on = |d: Decoded<'_>| match d {
        Decoded::Pdu(p) => stats.pdu(p),
        Decoded::Note(o, d) => stats.note(o, d),
    };
    let name = args.file.display().to_string();
    let result = if name == "-" {
        decode_capture_with(std::io::stdin().lock(), &opts, proto, RECORDS, &mut on)
    } else {
        match std::fs::File::open(&args.file) {
            Ok(f) => decode_capture_with(
                std::io::BufReader::with_capacity(1 << 20, f),
                &opts,
                proto,
                RECORDS,
                &mut on,
            ),
            Err(e) => {
                eprintln!("kinspect: {name}: {e}");
                return EXIT_FAILURE;
            }
        }
    };
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kinspect: {name}: {e}");
            return EXIT_FAILURE;
        }
    };
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    let written = match args.format {
        StatsFormat::Json => {
            serde_json::to_writer_pretty(&mut w, &to_json(&name, &summary, &stats))
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(w))
        }
        StatsFormat::Text => write_text(&mut w, &name, &summary, &stats),
    };
    if let Err(e) = written.and_then(|_| w.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("kinspect: writing the statistics: {e}");
            return EXIT_FAILURE;
        }
    }
    let errors = stats
        .diagnostics
        .iter()
        .any(|((_, s), _)| *s == Severity::Error);
    if errors {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}

fn api_label(stats: &Stats, key: i16) -> String {
    match stats.api_names.get(&key) {
        Some(n) => format!("{n} ({key})"),
        None => format!("API {key}"),
    }
}

fn ms(ns: Option<i64>) -> Value {
    ns.map(|v| json!((v as f64 / 1e3).round() / 1e3))
        .unwrap_or(Value::Null)
}

fn latency_json(h: &Histogram) -> Value {
    json!({
        "count": h.count,
        "min_ms": ms(Some(h.min_ns)),
        "p50_ms": ms(h.quantile(0.5)),
        "p90_ms": ms(h.quantile(0.9)),
        "p99_ms": ms(h.quantile(0.99)),
        "max_ms": ms(Some(h.max_ns)),
        "mean_ms": ms(i64::try_from(h.sum_ns / i128::from(h.count.max(1))).ok()),
    })
}

/// The statistics as one JSON object (stable keys, documented by the text view's headings).
pub fn to_json(file: &str, summary: &CaptureSummary, stats: &Stats) -> Value {
    let apis: Vec<Value> = stats
        .apis
        .iter()
        .map(|(&(k, v), c)| {
            json!({"api_key": k, "api": stats.api_names.get(&k), "api_version": v, "requests": c.requests,
                   "responses": c.responses, "request_bytes": c.request_bytes, "response_bytes": c.response_bytes})
        })
        .collect();
    let errors: Vec<Value> = stats
        .errors
        .iter()
        .map(|(&(k, code), &n)| json!({"api_key": k, "api": stats.api_names.get(&k), "error_code": code, "error": Stats::error_label(code), "count": n}))
        .collect();
    let mut latency = Map::new();
    for (k, h) in &stats.latency {
        let mut l = latency_json(h);
        l["api_key"] = json!(k);
        latency.insert(
            stats
                .api_names
                .get(k)
                .map(|s| s.to_string())
                .unwrap_or_else(|| k.to_string()),
            l,
        );
    }
    let mut clients: Vec<Value> = stats.clients.iter().map(|(id, c)| json!({"client_id": id, "requests": c.requests, "request_bytes": c.request_bytes})).collect();
    if stats.other_clients.requests > 0 {
        clients.push(json!({"client_id": "(other)", "requests": stats.other_clients.requests, "request_bytes": stats.other_clients.request_bytes}));
    }
    let diagnostics: Vec<Value> = stats
        .diagnostics
        .iter()
        .map(|(&(code, sev), &n)| json!({"code": code, "severity": sev.as_str(), "count": n}))
        .collect();
    json!({
        "file": file,
        "packets": summary.packets,
        "tcp_connections": summary.connections,
        "kafka_connections": summary.kafka_connections,
        "pdus": stats.requests + stats.responses,
        "requests": stats.requests,
        "responses": stats.responses,
        "sasl_tokens": stats.sasl_tokens,
        "unidentified": stats.unknown,
        "bytes": {"request": stats.request_bytes, "response": stats.response_bytes},
        "apis": apis,
        "errors": errors,
        "latency": Value::Object(latency),
        "clients": clients,
        "diagnostics": diagnostics,
    })
}

fn write_text(
    w: &mut dyn Write,
    file: &str,
    s: &CaptureSummary,
    st: &Stats,
) -> std::io::Result<()> {
    writeln!(
        w,
        "{file}: {} packets, {} TCP connections ({} Kafka)",
        s.packets, s.connections, s.kafka_connections
    )?;
    writeln!(
        w,
        "{} PDUs: {} requests ({} bytes), {} responses ({} bytes){}{}",
        st.requests + st.responses,
        st.requests,
        st.request_bytes,
        st.responses,
        st.response_bytes,
        if st.sasl_tokens > 0 {
            format!(", {} SASL tokens", st.sasl_tokens)
        } else {
            String::new()
        },
        if st.unknown > 0 {
            format!(", {} unidentified", st.unknown)
        } else {
            String::new()
        },
    )?;
    writeln!(w, "\nPDUs per API and version")?;
    writeln!(
        w,
        "  {:<34} {:>4} {:>9} {:>9} {:>12} {:>12}",
        "API", "ver", "requests", "responses", "req bytes", "resp bytes"
    )?;
    for (&(k, v), c) in &st.apis {
        writeln!(
            w,
            "  {:<34} {:>4} {:>9} {:>9} {:>12} {:>12}",
            api_label(st, k),
            v,
            c.requests,
            c.responses,
            c.request_bytes,
            c.response_bytes
        )?;
    }
    writeln!(w, "\nLatency per API (ms, request to response)")?;
    writeln!(
        w,
        "  {:<34} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "API", "count", "p50", "p90", "p99", "max"
    )?;
    let f = |v: Option<i64>| {
        v.map(|ns| format!("{:.3}", ns as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    };
    for (&k, h) in &st.latency {
        writeln!(
            w,
            "  {:<34} {:>7} {:>9} {:>9} {:>9} {:>9}",
            api_label(st, k),
            h.count,
            f(h.quantile(0.5)),
            f(h.quantile(0.9)),
            f(h.quantile(0.99)),
            f(Some(h.max_ns))
        )?;
    }
    writeln!(w, "\nError codes in responses")?;
    if st.errors.is_empty() {
        writeln!(w, "  (none)")?;
    }
    for (&(k, code), n) in &st.errors {
        writeln!(
            w,
            "  {:<34} {:<40} {:>7}",
            api_label(st, k),
            format!("{} ({code})", Stats::error_label(code)),
            n
        )?;
    }
    writeln!(w, "\nClients by client id")?;
    for (id, c) in &st.clients {
        let id = id
            .as_deref()
            .map(|s| format!("{s:?}"))
            .unwrap_or_else(|| "null".into());
        writeln!(
            w,
            "  {:<40} {:>7} requests {:>12} bytes",
            id, c.requests, c.request_bytes
        )?;
    }
    if st.other_clients.requests > 0 {
        writeln!(
            w,
            "  {:<40} {:>7} requests {:>12} bytes",
            "(other)", st.other_clients.requests, st.other_clients.request_bytes
        )?;
    }
    writeln!(w, "\nDiagnostics")?;
    if st.diagnostics.is_empty() {
        writeln!(w, "  (none)")?;
    }
    for (&(code, sev), n) in &st.diagnostics {
        writeln!(w, "  {:<8} {:<32} {:>7}", sev.as_str(), code, n)?;
    }
    Ok(())
}
