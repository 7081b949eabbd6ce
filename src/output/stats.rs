//! `kinspect stats` output: the statistics of a run ([`Stats`]) as text tables or one JSON
//! object, and [`StatsPrinter`], the sink that counts and prints them at the end. Counting
//! splits over two threads: the worker's half counts its batches, this side merges the counts.

use crate::capture::stats::{Histogram, Stats};
use crate::diag::Diagnostic;
use crate::engine::parallel::Turn;
use crate::engine::{Half, InputEnd, Sink, Split};
use crate::pdu::{Origin, Pdu};
use serde_json::{json, Map, Value};
use std::io::{self, Write};
use std::sync::Arc;

/// Text tables or one JSON object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsFormat {
    Text,
    Json,
}

impl crate::choice::Choice for StatsFormat {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("text", "", StatsFormat::Text),
        ("json", "", StatsFormat::Json),
    ];
}

/// Counts what it is handed, and prints the statistics when the run finishes.
pub struct StatsPrinter<W: Write> {
    w: W,
    format: StatsFormat,
    /// The inputs read, in order (the report names the first and counts the others).
    names: Vec<String>,
    /// An input was read: there are statistics to print.
    read: bool,
    pub stats: Stats,
}

impl<W: Write> StatsPrinter<W> {
    pub fn new(w: W, format: StatsFormat) -> Self {
        StatsPrinter {
            w,
            format,
            names: Vec::new(),
            read: false,
            stats: Stats::new(),
        }
    }
}

impl<W: Write> StatsPrinter<W> {
    /// `a.pcap`, or `a.pcap and 2 more` when several inputs were counted together.
    fn label(&self) -> String {
        match &self.names[..] {
            [] => String::new(),
            [one] => one.clone(),
            [first, rest @ ..] => format!("{first} and {} more", rest.len()),
        }
    }
}

impl<W: Write> Sink for StatsPrinter<W> {
    fn pdu(&mut self, pdu: &Pdu, _input: Option<&str>) -> io::Result<()> {
        self.stats.pdu(pdu);
        Ok(())
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, _input: Option<&str>) -> io::Result<()> {
        self.stats.note(origin, d);
        Ok(())
    }

    fn end_input(&mut self, end: &InputEnd<'_>) -> io::Result<()> {
        if end.failed.is_some() {
            return Ok(());
        }
        self.read = true;
        self.names.push(end.name.to_string());
        if let Some(s) = end.summary {
            self.stats.capture(s);
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.read {
            return Ok(());
        }
        let label = self.label();
        match self.format {
            StatsFormat::Json => {
                let mut j = to_json(&label, &self.stats);
                if self.names.len() > 1 {
                    j["files"] = self.names.clone().into();
                }
                serde_json::to_writer_pretty(&mut self.w, &j).map_err(io::Error::from)?;
                writeln!(self.w)?;
            }
            StatsFormat::Text => write_text(&mut self.w, &label, &self.stats)?,
        }
        self.w.flush()
    }
}

impl Sink for Stats {
    fn pdu(&mut self, pdu: &Pdu, _input: Option<&str>) -> io::Result<()> {
        Stats::pdu(self, pdu);
        Ok(())
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, _input: Option<&str>) -> io::Result<()> {
        Stats::note(self, origin, d);
        Ok(())
    }
}

impl Half for Stats {
    fn end_batch(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Split for StatsPrinter<W> {
    type Half = Stats;

    fn fork(&mut self, _turn: &Arc<Turn>) -> Option<Stats> {
        Some(Stats::new())
    }

    fn hand_over(&mut self, _half: &mut Stats) -> io::Result<()> {
        Ok(())
    }

    /// Counts merge in input order, whichever half made them.
    fn queues(&self) -> bool {
        true
    }

    fn take_back(&mut self, half: &mut Stats) -> io::Result<()> {
        self.stats.merge(std::mem::take(half));
        Ok(())
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
        // Whether p50, p90 and p99 are exact (false past limits::MAX_EXACT_LATENCIES: within
        // 0.4%, from buckets).
        "exact": h.is_exact(),
    })
}

/// The statistics as one JSON object (stable keys, documented by the text view's headings).
pub fn to_json(file: &str, stats: &Stats) -> Value {
    let apis: Vec<Value> = stats
        .apis
        .iter()
        .map(|(&(k, v), c)| {
            json!({"api_key": k, "api": stats.api_names.get(&k), "api_version": v, "requests": c.requests,
                   "responses": c.responses, "request_bytes": c.request_bytes, "response_bytes": c.response_bytes})
        })
        .collect();
    let other = &stats.other_apis;
    let other_apis = (other.requests + other.responses > 0).then(|| {
        json!({"requests": other.requests, "responses": other.responses,
               "request_bytes": other.request_bytes, "response_bytes": other.response_bytes})
    });
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
        "packets": stats.packets,
        "tcp_connections": stats.connections,
        "kafka_connections": stats.kafka_connections,
        "not_kafka_connections": stats.not_kafka_connections,
        "not_kafka_bytes": stats.not_kafka_bytes,
        "pdus": stats.requests + stats.responses,
        "requests": stats.requests,
        "responses": stats.responses,
        "sasl_tokens": stats.sasl_tokens,
        "unidentified": stats.unknown,
        "bytes": {"request": stats.request_bytes, "response": stats.response_bytes},
        "apis": apis,
        // PDUs of (API, version) pairs past limits::MAX_STATS_APIS, when there were any.
        "other_apis": other_apis,
        "errors": errors,
        "latency": Value::Object(latency),
        "clients": clients,
        "diagnostics": diagnostics,
    })
}

pub fn write_text(w: &mut dyn Write, file: &str, st: &Stats) -> std::io::Result<()> {
    write!(
        w,
        "{file}: {} packets, {} TCP connections ({} Kafka",
        st.packets, st.connections, st.kafka_connections
    )?;
    if st.not_kafka_connections > 0 {
        write!(
            w,
            "; {} not recognised as Kafka, {} bytes: try --port",
            st.not_kafka_connections, st.not_kafka_bytes
        )?;
    }
    writeln!(w, ")")?;
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
    let c = &st.other_apis;
    if c.requests + c.responses > 0 {
        writeln!(
            w,
            "  {:<34} {:>4} {:>9} {:>9} {:>12} {:>12}",
            crate::capture::stats::other_apis_label(),
            "-",
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
    if st.latency.values().any(|h| !h.is_exact()) {
        writeln!(w, "  ({})", crate::capture::stats::bucketed_note())?;
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
    if st.clients.is_empty() && st.other_clients.requests == 0 {
        writeln!(w, "  (none)")?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Percentiles past the kept latencies are said to be approximate, in JSON and text; exact
    /// ones say nothing in text.
    #[test]
    fn bucketed_percentiles_are_marked() {
        let mut st = Stats::new();
        st.api_names.insert(1, "Fetch");
        st.api_names.insert(3, "Metadata");
        let n = crate::limits::MAX_EXACT_LATENCIES as i64;
        for i in 0..=n {
            st.latency.entry(1).or_default().record(1_000_000 + i);
        }
        st.latency.entry(3).or_default().record(2_000_000);
        let j = to_json("f", &st);
        assert_eq!(j["latency"]["Fetch"]["exact"], false, "{j}");
        assert_eq!(j["latency"]["Metadata"]["exact"], true, "{j}");
        let mut text = Vec::new();
        write_text(&mut text, "f", &st).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("more than 4096 latencies come from buckets"),
            "{text}"
        );
        st.latency.remove(&1);
        let mut text = Vec::new();
        write_text(&mut text, "f", &st).unwrap();
        assert!(!String::from_utf8(text).unwrap().contains("buckets"));
    }

    /// The PDUs of pairs past the limit get one row in text and an object in JSON; none
    /// without them.
    #[test]
    fn pairs_past_the_limit_have_their_row() {
        let mut st = Stats::new();
        let j = to_json("f", &st);
        assert_eq!(j["other_apis"], Value::Null);
        st.other_apis.requests = 3;
        st.other_apis.response_bytes = 70;
        let j = to_json("f", &st);
        assert_eq!(j["other_apis"]["requests"], 3, "{j}");
        assert_eq!(j["other_apis"]["response_bytes"], 70, "{j}");
        let mut text = Vec::new();
        write_text(&mut text, "f", &st).unwrap();
        let text = String::from_utf8(text).unwrap();
        let row = text
            .lines()
            .find(|l| l.contains("(past 4096 API versions)"))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>()[4..],
            ["-", "3", "0", "0", "70"]
        );
    }
}
