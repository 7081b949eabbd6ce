//! `kinspect check FILE...`: the conversation rules of `kinspect::check` over captures. Prints
//! one line per finding (or `--format jsonl`), then a count per rule; `--timeline` adds the
//! quorum's timeline. Exit 1 when an error-level rule fired.

use super::{protocol_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use kinspect::capture::decoded::{builtin_known_request, decode_capture, Decoded};
use kinspect::capture::CaptureOptions;
use kinspect::check::{Checker, Finding, RULES};
use kinspect::diag::Severity;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// pcap or pcapng captures; `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Also treat this port as a Kafka broker port (repeatable).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// `text` (one line per finding) or `jsonl` (one JSON object per finding).
    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,
    /// Print the quorum timeline (epochs, votes, leaders) after the findings.
    #[arg(long)]
    pub timeline: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Jsonl,
}

/// A finding as one JSON object (the stable contract of `--format jsonl`).
pub fn finding_json(file: &str, f: &Finding) -> serde_json::Value {
    json!({
        "file": file,
        "rule": f.rule.code,
        "severity": f.severity().as_str(),
        "frames": f.frames,
        "message": f.message,
        "expected": f.expected,
        "seen": f.seen,
        "api": f.api,
        "connection": f.connection.map(|c| json!({"client": c.client.to_string(), "server": c.server.to_string(), "stream": c.stream})),
    })
}

fn text_line(f: &Finding) -> String {
    let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
    let mut s = format!(
        "{:<12} {:<30} {:<7} {}",
        frames.join(","),
        f.rule.code,
        f.severity().as_str(),
        f.message
    );
    if !f.expected.is_empty() || !f.seen.is_empty() {
        s.push_str(&format!(" [expected {}; seen {}]", f.expected, f.seen));
    }
    s
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
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut errors = false;
    let mut failed = false;
    let mut write_err = None;
    for path in &args.files {
        let name = path.display().to_string();
        let mut checker = Checker::new();
        let mut on = |d: Decoded<'_>| {
            let found: Vec<Finding> = match d {
                Decoded::Pdu(p) => checker.pdu(p).collect(),
                Decoded::Note(o, n) => {
                    checker.note(o, n);
                    Vec::new()
                }
            };
            for f in found {
                *counts.entry(f.rule.code).or_default() += 1;
                errors |= f.severity() == Severity::Error;
                let r = match args.format {
                    CheckFormat::Text => writeln!(w, "{name}: {}", text_line(&f)),
                    CheckFormat::Jsonl => writeln!(w, "{}", finding_json(&name, &f)),
                };
                if let Err(e) = r {
                    write_err.get_or_insert(e);
                }
            }
        };
        let result = if name == "-" {
            decode_capture(std::io::stdin().lock(), &opts, proto, &mut on)
        } else {
            match std::fs::File::open(path) {
                Ok(f) => decode_capture(
                    std::io::BufReader::with_capacity(1 << 20, f),
                    &opts,
                    proto,
                    &mut on,
                ),
                Err(e) => {
                    eprintln!("kinspect: {name}: {e}");
                    failed = true;
                    continue;
                }
            }
        };
        if let Err(e) = result {
            eprintln!("kinspect: {name}: {e}");
            failed = true;
            continue;
        }
        if args.timeline {
            let t = checker.timeline();
            let r = match args.format {
                CheckFormat::Text => write!(w, "\n{name}: quorum timeline\n{}", if t.events.is_empty() { "  (no KRaft election traffic)\n".to_string() } else { t.render() }),
                CheckFormat::Jsonl => t.events.iter().try_for_each(|e| {
                    writeln!(w, "{}", json!({"file": name, "timeline": {"frame": e.frame, "ts_ns": e.ts_ns, "epoch": e.epoch, "event": e.text}}))
                }),
            };
            if let Err(e) = r {
                write_err.get_or_insert(e);
            }
        }
    }
    if args.format == CheckFormat::Text {
        let r = (|| {
            writeln!(w, "\nfindings per rule")?;
            if counts.is_empty() {
                writeln!(w, "  (none)")?;
            }
            for r in RULES {
                if let Some(n) = counts.get(r.code) {
                    writeln!(w, "  {:<34} {:<7} {n:>7}", r.code, r.severity.as_str())?;
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            write_err.get_or_insert(e);
        }
    }
    if let Some(e) = write_err.or_else(|| w.flush().err()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("kinspect: writing the findings: {e}");
            return EXIT_FAILURE;
        }
    }
    if failed {
        EXIT_FAILURE
    } else if errors {
        EXIT_DIAGNOSTICS
    } else {
        EXIT_OK
    }
}
