//! The report page: one HTML file with its style, plots (inline SVG) and a few lines of script
//! (table sorting) inlined. A Content-Security-Policy forbids every fetch (`default-src 'none'`)
//! and runs only the page's own script (a per-page nonce), so the page works offline and a
//! string from the capture that escaped [`esc`] still could neither run nor load anything.
//! Every string from the capture (client ids, topic names, trees) goes through [`esc`].

use super::svg::{self, Axis, Stack};
use super::timeline::Series;
use super::{Report, ReportOptions};
use crate::capture::stats::Stats;
use crate::diag::Severity;
use crate::output::time::rfc3339_nanos;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;

/// Text made safe for HTML element content and attribute values (quoted either way).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in HTML text.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(o, "\\u{{{:x}}}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 40px;color:#222;background:#fff}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:3px}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer;user-select:none}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.kv td:first-child{font-weight:600;background:#fafafa}
.muted{color:#777}.error{color:#b00020;font-weight:600}.warning{color:#a66900}
.plot{display:block;max-width:1000px;margin:4px 0 12px}.tick{font-size:11px;fill:#555}.legend{font-size:12px;fill:#333}
details{margin:4px 0}summary{cursor:pointer}pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:6px;overflow:auto;max-height:480px;font-size:12px}
nav a{margin-right:12px}
"#;

/// Sorts a table by the clicked column (numbers as numbers), and marks the page as ready, so a
/// headless browser can tell the script ran to its end.
const SCRIPT: &str = r#"
(function () {
  function key(td) {
    var t = td ? td.getAttribute('data-v') || td.textContent : '';
    var n = parseFloat(t.replace(/,/g, ''));
    return isNaN(n) ? t.toLowerCase() : n;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, col) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
        th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          return (x < y ? -1 : x > y ? 1 : 0) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.documentElement.setAttribute('data-report-ready', '1');
})();
"#;

/// A nonce for the page's one script: random per page (std's hasher keys are random).
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut s = String::new();
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        let _ = write!(s, "{:016x}", h.finish());
    }
    s
}

/// A count; axis ticks between whole numbers (a plot whose top is 1) keep two decimals.
fn count(v: f64) -> String {
    format!("{}", (v * 100.0).round() / 100.0)
}

/// Bytes with a binary unit.
pub fn bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn ms(ns: Option<i64>) -> String {
    ns.map(|v| format!("{:.3}", v as f64 / 1e6))
        .unwrap_or_else(|| "-".into())
}

fn api_label(stats: &Stats, key: Option<i16>) -> String {
    match key {
        None => "other".into(),
        Some(k) => match stats.api_names.get(&k) {
            Some(n) => n.to_string(),
            None => format!("API {k}"),
        },
    }
}

fn error_label(code: Option<i16>) -> String {
    match code {
        None => "other".into(),
        Some(c) => format!("{} ({c})", Stats::error_label(c)),
    }
}

/// The nine largest series by total, then everything else as "other".
fn top_series(series: &Series, label: impl Fn(Option<i16>) -> String) -> Vec<(String, Vec<u64>)> {
    let mut v: Vec<(Option<i16>, u64)> = series.iter().map(|(k, s)| (*k, s.iter().sum())).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let keep = svg::COLORS.len() - 1;
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    let mut other: Option<Vec<u64>> = None;
    for (i, (k, _)) in v.iter().enumerate() {
        let s = &series[k];
        if i < keep && k.is_some() {
            out.push((label(*k), s.clone()));
        } else {
            let o = other.get_or_insert_with(|| vec![0; s.len()]);
            o.iter_mut().zip(s).for_each(|(a, b)| *a += b);
        }
    }
    if let Some(o) = other {
        out.push(("other".into(), o));
    }
    out
}

fn plot_over_time<W: Write>(
    r: &Report<W>,
    series: &Series,
    label: impl Fn(Option<i16>) -> String,
    fmt: fn(f64) -> String,
) -> String {
    let Some((start, width)) = r.timeline.geometry() else {
        return "<p class=\"muted\">(no timestamps: nothing to plot over time)</p>".into();
    };
    if series.is_empty() {
        return "<p class=\"muted\">(none)</p>".into();
    }
    let top = top_series(series, label);
    let stacks: Vec<Stack<'_>> = top
        .iter()
        .map(|(l, v)| Stack {
            label: l.clone(),
            values: v,
        })
        .collect();
    svg::stacked_bars(
        &stacks,
        Axis {
            start_ns: start,
            width_ns: width,
            buckets: r.timeline.used(),
        },
        fmt,
    )
}

struct Table<'a> {
    s: &'a mut String,
}

impl Table<'_> {
    fn open<'s>(s: &'s mut String, class: &str, head: &[&str]) -> Table<'s> {
        let _ = write!(s, "<table class=\"{class}\"><thead><tr>");
        for h in head {
            let (n, h) = match h.strip_prefix('#') {
                Some(h) => (" class=\"n\"", h),
                None => ("", *h),
            };
            let _ = write!(s, "<th{n}>{}</th>", esc(h));
        }
        s.push_str("</tr></thead><tbody>");
        Table { s }
    }

    /// One row: cells starting with `#` are numbers (right-aligned); the rest are text, escaped.
    fn row(&mut self, cells: &[String]) {
        self.s.push_str("<tr>");
        for c in cells {
            match c.strip_prefix('#') {
                Some(n) => {
                    let _ = write!(self.s, "<td class=\"n\">{}</td>", esc(n));
                }
                None => {
                    let _ = write!(self.s, "<td>{}</td>", esc(c));
                }
            }
        }
        self.s.push_str("</tr>");
    }

    fn close(self) {
        self.s.push_str("</tbody></table>");
    }
}

fn kv(s: &mut String, rows: &[(&str, String)]) {
    s.push_str("<table class=\"kv\" id=\"overview\"><tbody>");
    for (k, v) in rows {
        let _ = write!(s, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</tbody></table>");
}

fn client_label(id: &Option<String>) -> String {
    match id {
        Some(s) => format!("{s:?}"),
        None => "null".into(),
    }
}

/// The whole page.
pub fn page<W: Write>(r: &Report<W>, o: &ReportOptions) -> String {
    let st = &r.stats;
    let nonce = nonce();
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; img-src data:; base-uri 'none'; form-action 'none'\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        esc(&o.title)
    );
    let _ = write!(
        s,
        "<h1>{}</h1><p class=\"muted\">kinspect {} · {} input{}</p>",
        esc(&o.title),
        env!("CARGO_PKG_VERSION"),
        r.inputs.len(),
        if r.inputs.len() == 1 { "" } else { "s" }
    );
    s.push_str("<nav><a href=\"#s-overview\">Overview</a><a href=\"#s-apis\">APIs</a><a href=\"#s-latency\">Latency</a><a href=\"#s-errors\">Errors</a><a href=\"#s-topics\">Topics</a><a href=\"#s-clients\">Clients</a><a href=\"#s-slowest\">Slowest</a><a href=\"#s-check\">Check</a><a href=\"#s-diagnostics\">Diagnostics</a></nav>");

    // Overview.
    s.push_str("<h2 id=\"s-overview\">Overview</h2>");
    let errors: u64 = st
        .diagnostics
        .iter()
        .filter(|((_, sev), _)| *sev == Severity::Error)
        .map(|(_, n)| n)
        .sum();
    let warnings: u64 = st
        .diagnostics
        .iter()
        .filter(|((_, sev), _)| *sev == Severity::Warning)
        .map(|(_, n)| n)
        .sum();
    let span = match r.span {
        Some((lo, hi)) => format!(
            "{} to {} ({:.3} s)",
            rfc3339_nanos(lo),
            rfc3339_nanos(hi),
            (i128::from(hi) - i128::from(lo)) as f64 / 1e9
        ),
        None => "(no timestamps)".into(),
    };
    let findings: u64 = r.finding_counts.values().map(|(_, n)| n).sum();
    let mut pdus_line = format!(
        "{} ({} requests, {} responses",
        st.requests + st.responses,
        st.requests,
        st.responses
    );
    if st.sasl_tokens > 0 {
        let _ = write!(pdus_line, ", {} SASL tokens", st.sasl_tokens);
    }
    if st.unknown > 0 {
        let _ = write!(pdus_line, ", {} unidentified", st.unknown);
    }
    pdus_line.push(')');
    kv(
        &mut s,
        &[
            ("Packets", st.packets.to_string()),
            (
                "TCP connections",
                format!(
                    "{} ({} Kafka, {} not recognised as Kafka)",
                    st.connections, st.kafka_connections, st.not_kafka_connections
                ),
            ),
            ("PDUs", pdus_line),
            (
                "Bytes",
                format!(
                    "{} requests, {} responses",
                    st.request_bytes, st.response_bytes
                ),
            ),
            ("Time span", span),
            ("Decode errors", format!("{errors} ({warnings} warnings)")),
            ("Check findings", findings.to_string()),
        ],
    );
    let mut t = Table::open(
        &mut s,
        "sortable",
        &[
            "input",
            "kind",
            "#packets",
            "#file bytes",
            "#PDUs",
            "status",
        ],
    );
    for i in &r.inputs {
        t.row(&[
            i.name.clone(),
            i.kind.to_string(),
            format!("#{}", i.packets.map(|n| n.to_string()).unwrap_or_default()),
            format!(
                "#{}",
                i.file_bytes.map(|n| n.to_string()).unwrap_or_default()
            ),
            format!("#{}", i.pdus),
            i.failed.clone().unwrap_or_else(|| "read".into()),
        ]);
    }
    t.close();

    // APIs.
    s.push_str("<h2 id=\"s-apis\">PDUs and bytes per API</h2><h3>PDUs over time</h3>");
    s.push_str(&plot_over_time(
        r,
        &r.timeline.pdus,
        |k| api_label(st, k),
        count,
    ));
    s.push_str("<h3>Bytes over time</h3>");
    s.push_str(&plot_over_time(
        r,
        &r.timeline.bytes,
        |k| api_label(st, k),
        bytes,
    ));
    let mut t = Table::open(
        &mut s,
        "sortable",
        &[
            "API",
            "#key",
            "#version",
            "#requests",
            "#responses",
            "#request bytes",
            "#response bytes",
        ],
    );
    for (&(k, v), c) in &st.apis {
        t.row(&[
            api_label(st, Some(k)),
            format!("#{k}"),
            format!("#{v}"),
            format!("#{}", c.requests),
            format!("#{}", c.responses),
            format!("#{}", c.request_bytes),
            format!("#{}", c.response_bytes),
        ]);
    }
    let c = &st.other_apis;
    if c.requests + c.responses > 0 {
        t.row(&[
            crate::capture::stats::other_apis_label(),
            String::new(),
            String::new(),
            format!("#{}", c.requests),
            format!("#{}", c.responses),
            format!("#{}", c.request_bytes),
            format!("#{}", c.response_bytes),
        ]);
    }
    t.close();

    // Latency.
    s.push_str("<h2 id=\"s-latency\">Latency per API</h2>");
    if st.latency.is_empty() {
        s.push_str("<p class=\"muted\">(no request with its response)</p>");
    } else {
        let q = |v: Option<i64>| v.unwrap_or(0) as f64 / 1e6;
        let rows: Vec<(String, [f64; 4])> = st
            .latency
            .iter()
            .map(|(&k, h)| {
                (
                    api_label(st, Some(k)),
                    [
                        q(h.quantile(0.5)),
                        q(h.quantile(0.9)),
                        q(h.quantile(0.99)),
                        q(Some(h.max_ns)),
                    ],
                )
            })
            .collect();
        s.push_str(&svg::latency(&rows));
        let mut t = Table::open(
            &mut s,
            "sortable",
            &[
                "API", "#count", "#p50 ms", "#p90 ms", "#p99 ms", "#max ms", "#mean ms",
            ],
        );
        for (&k, h) in &st.latency {
            let mean = i64::try_from(h.sum_ns / i128::from(h.count.max(1))).ok();
            t.row(&[
                api_label(st, Some(k)),
                format!("#{}", h.count),
                format!("#{}", ms(h.quantile(0.5))),
                format!("#{}", ms(h.quantile(0.9))),
                format!("#{}", ms(h.quantile(0.99))),
                format!("#{}", ms(Some(h.max_ns))),
                format!("#{}", ms(mean)),
            ]);
        }
        t.close();
        if st.latency.values().any(|h| !h.is_exact()) {
            let _ = write!(
                s,
                "<p class=\"muted\">{}.</p>",
                esc(&crate::capture::stats::bucketed_note())
            );
        }
    }

    // Errors.
    s.push_str("<h2 id=\"s-errors\">Error codes in responses</h2>");
    if st.errors.is_empty() {
        s.push_str("<p class=\"muted\">(none)</p>");
    } else {
        s.push_str(&plot_over_time(r, &r.timeline.errors, error_label, count));
        let mut t = Table::open(&mut s, "sortable", &["API", "error", "#code", "#count"]);
        for (&(k, code), n) in &st.errors {
            t.row(&[
                api_label(st, Some(k)),
                Stats::error_label(code),
                format!("#{code}"),
                format!("#{n}"),
            ]);
        }
        t.close();
    }

    topics(&mut s, r);
    clients(&mut s, r);
    slowest(&mut s, r);
    check(&mut s, r);

    s.push_str("<h2 id=\"s-diagnostics\">Diagnostics</h2>");
    if st.diagnostics.is_empty() {
        s.push_str("<p class=\"muted\">(none)</p>");
    } else {
        let mut t = Table::open(&mut s, "sortable", &["severity", "code", "#count"]);
        for (&(code, sev), n) in &st.diagnostics {
            t.row(&[sev.as_str().into(), code.into(), format!("#{n}")]);
        }
        t.close();
    }
    let _ = writeln!(
        s,
        "<script nonce=\"{nonce}\">{SCRIPT}</script></body></html>"
    );
    s
}

fn topics<W: Write>(s: &mut String, r: &Report<W>) {
    s.push_str("<h2 id=\"s-topics\">Topics</h2>");
    if r.topics.is_empty() {
        s.push_str("<p class=\"muted\">(no PDU names a topic)</p>");
        return;
    }
    s.push_str(
        "<p class=\"muted\">PDUs naming each topic (a PDU naming several counts for each).</p>",
    );
    let mut t = Table::open(
        s,
        "sortable",
        &[
            "topic",
            "#requests",
            "#responses",
            "#bytes",
            "#responses with errors",
        ],
    );
    let other = (r.other_topics.requests + r.other_topics.responses > 0)
        .then(|| ("(other)".to_string(), &r.other_topics));
    for (name, c) in r
        .topics
        .iter()
        .map(|(n, c)| (format!("{n:?}"), c))
        .chain(other)
    {
        t.row(&[
            name,
            format!("#{}", c.requests),
            format!("#{}", c.responses),
            format!("#{}", c.bytes),
            format!("#{}", c.error_responses),
        ]);
    }
    t.close();
}

fn clients<W: Write>(s: &mut String, r: &Report<W>) {
    let st = &r.stats;
    s.push_str("<h2 id=\"s-clients\">Clients and connections</h2><h3>Clients by client id</h3>");
    // Software per client id, from the connections' ApiVersions requests.
    let mut software: BTreeMap<&Option<String>, BTreeSet<&str>> = BTreeMap::new();
    for c in r.conns.values() {
        if let (Some(id), Some(sw)) = (&c.client_id, &c.software) {
            software.entry(id).or_default().insert(sw);
        }
    }
    let mut t = Table::open(
        s,
        "sortable",
        &["client id", "software", "#requests", "#request bytes"],
    );
    for (id, c) in &st.clients {
        let sw: Vec<&str> = software
            .get(id)
            .map(|v| v.iter().copied().collect())
            .unwrap_or_default();
        t.row(&[
            client_label(id),
            sw.join(", "),
            format!("#{}", c.requests),
            format!("#{}", c.request_bytes),
        ]);
    }
    if st.other_clients.requests > 0 {
        t.row(&[
            "(other)".into(),
            String::new(),
            format!("#{}", st.other_clients.requests),
            format!("#{}", st.other_clients.request_bytes),
        ]);
    }
    t.close();
    s.push_str("<h3>Connections</h3>");
    let t0 = r.span.map(|(lo, _)| lo);
    let rel = |ts: Option<i64>| match (ts, t0) {
        (Some(ts), Some(t0)) => format!("#{:.3}", (i128::from(ts) - i128::from(t0)) as f64 / 1e9),
        _ => "#".into(),
    };
    let several = r.inputs.len() > 1;
    let mut t = Table::open(
        s,
        "sortable",
        &[
            "input",
            "#stream",
            "client",
            "server",
            "client id",
            "software",
            "#requests",
            "#responses",
            "#bytes",
            "#first s",
            "#last s",
        ],
    );
    let rows = r
        .conns
        .values()
        .chain((r.other_conns.requests + r.other_conns.responses > 0).then_some(&r.other_conns));
    for c in rows {
        let input = match r.inputs.get(c.input) {
            Some(i) if several => i.name.clone(),
            Some(_) => String::new(),
            None => "(other)".into(),
        };
        t.row(&[
            input,
            format!("#{}", c.stream.map(|n| n.to_string()).unwrap_or_default()),
            c.client.clone(),
            c.server.clone(),
            c.client_id.as_ref().map(client_label).unwrap_or_default(),
            c.software.clone().unwrap_or_default(),
            format!("#{}", c.requests),
            format!("#{}", c.responses),
            format!("#{}", c.bytes),
            rel(c.first_ts),
            rel(c.last_ts),
        ]);
    }
    t.close();
}

fn slowest<W: Write>(s: &mut String, r: &Report<W>) {
    let slow = r.slowest();
    let _ = write!(
        s,
        "<h2 id=\"s-slowest\">Slowest requests</h2><p class=\"muted\">The {} slowest responses (latency from request to response), each with its decoded tree as <code>kinspect decode -f tree</code> prints it.</p>",
        slow.len()
    );
    if slow.is_empty() {
        s.push_str("<p class=\"muted\">(none)</p>");
        return;
    }
    let several = r.inputs.len() > 1;
    for (i, x) in slow.iter().enumerate() {
        let mut head = format!("{:.3} ms · {}", x.latency_ns as f64 / 1e6, x.api);
        if let Some(v) = x.version {
            let _ = write!(head, " v{v}");
        }
        if let Some(f) = x.request_frame {
            let _ = write!(head, " · request frame {f}");
        }
        if let Some(f) = x.frame {
            let _ = write!(head, " · response frame {f}");
        }
        if let Some((c, sv)) = &x.conn {
            let _ = write!(head, " · {c} → {sv}");
        }
        if several {
            if let Some(inp) = r.inputs.get(x.input) {
                let _ = write!(head, " · {}", inp.name);
            }
        }
        let _ = write!(
            s,
            "<details class=\"slow\"{}><summary>{}</summary><pre>{}{}</pre></details>",
            if i == 0 { " open" } else { "" },
            esc(&head),
            esc(&x.tree),
            if x.truncated {
                "\n… (cut at the report's limit)"
            } else {
                ""
            }
        );
    }
}

fn check<W: Write>(s: &mut String, r: &Report<W>) {
    s.push_str("<h2 id=\"s-check\">Check findings</h2>");
    findings(s, r);
    // Whether the rules had anything to judge: a family that followed nothing is silent, not
    // passed.
    s.push_str("<p>What the rules followed:</p>");
    let mut t = Table::open(s, "sortable", &["state", "rule family", "#count"]);
    t.row(&[
        "PDUs".into(),
        String::new(),
        format!("#{}", r.coverage.pdus),
    ]);
    for f in &r.coverage.followed {
        t.row(&[f.what.into(), f.family.into(), format!("#{}", f.count)]);
    }
    t.close();
    if !r.coverage.missed.is_empty() {
        s.push_str("<p>What the rules could not see:</p>");
        let mut t = Table::open(s, "sortable", &["what", "severity", "#count"]);
        for m in &r.coverage.missed {
            t.row(&[
                m.what.into(),
                m.severity.as_str().into(),
                format!("#{}", m.count),
            ]);
        }
        t.close();
    }
}

fn findings<W: Write>(s: &mut String, r: &Report<W>) {
    if r.finding_counts.is_empty() {
        s.push_str("<p class=\"muted\">(none: no conversation rule fired)</p>");
        return;
    }
    let mut t = Table::open(s, "sortable", &["rule", "severity", "#findings"]);
    for (rule, (sev, n)) in &r.finding_counts {
        t.row(&[rule.to_string(), sev.as_str().into(), format!("#{n}")]);
    }
    t.close();
    let total: u64 = r.finding_counts.values().map(|(_, n)| n).sum();
    if total > r.findings.len() as u64 {
        let _ = write!(
            s,
            "<p class=\"muted\">The first {} of {total} findings:</p>",
            r.findings.len()
        );
    }
    let several = r.inputs.len() > 1;
    let mut t = Table::open(s, "sortable", &["input", "severity", "rule", "finding"]);
    for f in &r.findings {
        let input = match r.inputs.get(f.input) {
            Some(i) if several => i.name.clone(),
            _ => String::new(),
        };
        t.row(&[
            input,
            f.severity.as_str().into(),
            f.rule.into(),
            f.text.clone(),
        ]);
    }
    t.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_controls() {
        assert_eq!(
            esc("<script>alert('x')</script>&\"\u{1b}"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;\\u{1b}"
        );
    }

    /// As `stats` does, the report says when percentiles come from buckets, and only then.
    #[test]
    fn bucketed_percentiles_are_said_to_be() {
        let mut r = Report::new(Vec::new(), ReportOptions::default());
        r.stats.api_names.insert(1, "Fetch");
        let h = r.stats.latency.entry(1).or_default();
        h.record(1_000_000);
        let note = crate::capture::stats::bucketed_note();
        assert!(!page(&r, &ReportOptions::default()).contains(&note));
        for i in 0..crate::limits::MAX_EXACT_LATENCIES as i64 {
            r.stats.latency.get_mut(&1).unwrap().record(2_000_000 + i);
        }
        let p = page(&r, &ReportOptions::default());
        assert!(
            p.contains(&format!("<p class=\"muted\">{note}.</p>")),
            "{p}"
        );
    }

    #[test]
    fn an_empty_report_is_a_whole_page() {
        let r = Report::new(Vec::new(), ReportOptions::default());
        let p = page(&r, &ReportOptions::default());
        assert!(p.starts_with("<!DOCTYPE html>") && p.ends_with("</html>\n"));
        assert!(p.contains("default-src 'none'"));
        // The only URL is SVG's namespace name, which is never fetched.
        assert_eq!(
            p.matches("://").count(),
            p.matches("http://www.w3.org/2000/svg").count()
        );
    }
}
