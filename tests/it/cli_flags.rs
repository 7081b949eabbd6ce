//! The same flag means the same thing in every subcommand: `--format` is always `-f/--format`,
//! an output file or folder is always `-o/--output`, and `-f`/`-o` mean nothing else. The
//! command tree comes from clap itself (`kinspect help-json`, hidden), so every subcommand,
//! present and future, is walked.
//!
//! Path-valued options must be classified below (input or output) so a new one cannot slip by.

use crate::common;
use serde_json::Value;

/// Options that take a path but read it (an input), by subcommand and long name.
const INPUT_PATHS: &[(&str, &str)] = &[("kinspect", "schemas"), ("fuzz", "replay")];

/// Outputs besides the subcommand's main output (which stays on standard output), with why.
const SIDE_OUTPUTS: &[(&str, &str, &str)] = &[(
    "probe",
    "write-pcap",
    "the findings table stays on standard output; the pcap is a by-product",
)];

fn walk<'a>(cmd: &'a Value, path: &mut Vec<&'a str>, out: &mut Vec<(String, &'a Value)>) {
    path.push(cmd["name"].as_str().unwrap());
    for a in cmd["args"].as_array().unwrap() {
        out.push((path.last().unwrap().to_string(), a));
    }
    for s in cmd["subcommands"].as_array().unwrap() {
        if !s["hidden"].as_bool().unwrap() {
            walk(s, path, out);
        }
    }
    path.pop();
}

fn problems(tree: &Value) -> Vec<String> {
    let mut args = Vec::new();
    walk(tree, &mut Vec::new(), &mut args);
    let mut bad = Vec::new();
    for (sub, a) in &args {
        let long = a["long"].as_str().unwrap_or("");
        let short = a["short"].as_str().unwrap_or("");
        let id = a["id"].as_str().unwrap();
        // `--help` shows every option with what it does (`--seed` and `--max-requests` of
        // probe, among others, once stood there bare).
        let hidden = a["hidden"].as_bool().unwrap_or(false);
        if !hidden && a["help"].as_str().is_none_or(|h| h.trim().is_empty()) {
            let name = if long.is_empty() { id } else { long };
            bad.push(format!("{sub}: {name} has no help text"));
        }
        if a["positional"].as_bool().unwrap() {
            continue;
        }
        // A value shown as clap's default, the id in capitals (`<MAX_PCAP_BYTES>`), where every
        // other option names its value briefly (`<N>`, `<BYTES>`, `<FILE>`).
        let names = a["value_names"].as_array().unwrap();
        if a["takes_value"].as_bool().unwrap_or(true)
            && names
                .iter()
                .any(|n| n.as_str().is_some_and(|n| n.contains('_')))
        {
            bad.push(format!(
                "{sub}: --{long} shows its value as clap's default name"
            ));
        }
        if long == "format" && short != "f" {
            bad.push(format!("{sub}: --format without -f"));
        }
        if short == "f" && long != "format" {
            bad.push(format!("{sub}: -f is --{long}, not --format"));
        }
        if short == "o" && long != "output" {
            bad.push(format!("{sub}: -o is --{long}, not --output"));
        }
        if long == "output" && short != "o" {
            bad.push(format!("{sub}: --output without -o"));
        }
        let path_named = names
            .iter()
            .any(|n| matches!(n.as_str(), Some("FILE" | "DIR" | "PATH")));
        if !(a["path"].as_bool().unwrap() || path_named) {
            continue;
        }
        if INPUT_PATHS.contains(&(sub.as_str(), long))
            || SIDE_OUTPUTS
                .iter()
                .any(|s| (s.0, s.1) == (sub.as_str(), long))
        {
            continue;
        }
        if long != "output" {
            bad.push(format!(
                "{sub}: --{long} ({id}) takes a path: name an output -o/--output, or list it in INPUT_PATHS"
            ));
        }
    }
    bad
}

fn tree() -> Value {
    let o = common::kinspect(&["help-json"]);
    assert!(o.status.success());
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn format_and_output_mean_the_same_in_every_subcommand() {
    let t = tree();
    let bad = problems(&t);
    assert!(
        bad.is_empty(),
        "flag conventions broken:\n  {}",
        bad.join("\n  ")
    );
    // The walk saw the subcommands (a help-json that lost them would pass vacuously).
    let subs: Vec<&str> = t["subcommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for s in [
        "decode", "stats", "check", "report", "corpus", "encode", "capture",
    ] {
        assert!(subs.contains(&s), "{s} missing from {subs:?}");
    }
}

#[test]
fn the_rule_catches_a_format_without_f_and_an_oddly_named_output() {
    let t = serde_json::json!({"name": "kinspect", "hidden": false, "args": [], "subcommands": [
        {"name": "x", "hidden": false, "subcommands": [], "args": [
            {"id": "format", "long": "format", "short": null, "value_names": ["FORMAT"], "positional": false, "path": false, "help": "Output format."},
            {"id": "out", "long": "out", "short": "o", "value_names": ["DIR"], "positional": false, "path": true, "help": "Where."},
            {"id": "dump", "long": "dump", "short": null, "value_names": ["FILE"], "positional": false, "path": false, "help": "A dump."},
            {"id": "seed", "long": "seed", "short": null, "value_names": ["N"], "positional": false, "path": false, "help": null},
            {"id": "max_bytes", "long": "max-bytes", "short": null, "value_names": ["MAX_BYTES"], "positional": false, "path": false, "help": "At most.", "takes_value": true},
            {"id": "secret", "long": "secret", "short": null, "value_names": [], "positional": false, "path": false, "help": null, "hidden": true}
        ]}
    ]});
    let bad = problems(&t);
    assert_eq!(bad.len(), 6, "{bad:#?}");
    assert!(
        bad.contains(&"x: seed has no help text".to_string()),
        "{bad:#?}"
    );
}

#[test]
fn old_spellings_still_work() {
    // `--out` (corpus, fuzz) and `-w/--write` (capture) stay as aliases.
    for (sub, flag) in [
        ("corpus", "--out"),
        ("fuzz", "--out"),
        ("capture", "-w"),
        ("capture", "--write"),
    ] {
        let o = common::kinspect(&[sub, flag, "x", "--help"]);
        assert!(
            o.status.success(),
            "{sub} {flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `--port` means one thing wherever captures are read: the same help, value name and list
/// syntax (decode and records took `<P>` and commas, the others `<PORT>` and repeats only, each
/// with its own help line). `kinspect capture`'s limits what is captured, and is its own.
#[test]
fn port_is_the_same_option_wherever_captures_are_read() {
    let t = tree();
    let mut args = Vec::new();
    walk(&t, &mut Vec::new(), &mut args);
    let ports: Vec<(&str, &Value)> = args
        .iter()
        .filter(|(sub, a)| a["long"] == "port" && sub != "capture")
        .map(|(sub, a)| (sub.as_str(), *a))
        .collect();
    let subs: Vec<&str> = ports.iter().map(|p| p.0).collect();
    for s in ["decode", "records", "stats", "check", "report", "corpus"] {
        assert!(subs.contains(&s), "{s} has no --port: {subs:?}");
    }
    for (sub, a) in &ports {
        assert_eq!(a["help"], ports[0].1["help"], "{sub} --port");
        assert_eq!(
            a["value_names"],
            serde_json::json!(["PORT"]),
            "{sub} --port"
        );
    }
    // Two ports, comma-separated, taken by every one of them.
    let cap = common::captures_dir().join("mock-kcat-none.pcap");
    let cap = cap.to_str().unwrap();
    for sub in ["decode", "records", "stats", "check", "report"] {
        let out = std::env::temp_dir().join(format!("kinspect-port-{sub}-{}", std::process::id()));
        let out = out.to_str().unwrap();
        let o = common::kinspect(&[sub, "--port", "19092,19093", cap, "-o", out]);
        let _ = std::fs::remove_file(out);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{sub}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `decode` and `records` read the same inputs: an option they share says the same in both,
/// but for those whose meaning differs with what is shown (PDUs or records), listed here.
/// (`--as` and `--stream` had a shorter help in `records`, `--port` another value name.)
#[test]
fn decode_and_records_describe_their_common_options_alike() {
    const DIFFER: &[&str] = &["format", "output", "errors-only"];
    let t = tree();
    let sub = |name: &str| {
        t["subcommands"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["args"]
            .as_array()
            .unwrap()
            .clone()
    };
    let (decode, records) = (sub("decode"), sub("records"));
    let mut shared = 0;
    for a in &decode {
        let Some(long) = a["long"].as_str() else {
            continue;
        };
        let Some(b) = records.iter().find(|b| b["long"] == long) else {
            continue;
        };
        shared += 1;
        if DIFFER.contains(&long) {
            continue;
        }
        assert_eq!(a["help"], b["help"], "--{long}");
        assert_eq!(a["value_names"], b["value_names"], "--{long}");
    }
    assert!(shared >= 9, "only {shared} options shared");
}

/// `capture` prints with the PDU printer (`output::Printer`), so it lists and takes exactly
/// the formats that printer prints as themselves. Asked for Parquet, that printer writes JSON
/// Lines (the tables need `ParquetSink` and a folder), and for fields nothing of its own (they
/// need `-e` and `FieldsPrinter`): `capture -f parquet` used to print JSON Lines without a
/// word. The formats are the library's own list; each is put through the printer here.
#[test]
fn capture_takes_only_the_formats_its_printer_prints() {
    use kinspect::choice::Choice;
    use kinspect::output::{Format, Options, Printer};
    let cap = common::captures_dir().join("mock-kcat-none.pcap");
    let frame = common::capture_frames(&cap, &Default::default())
        .into_iter()
        .next()
        .unwrap();
    let mut pdu = kinspect::engine::decode_frame(&frame.data, &frame.hints);
    pdu.origin = frame.origin;
    let print = |format: Format| {
        let opts = Options {
            format,
            annotate: false,
            color: false,
            show_secrets: false,
        };
        let mut p = Printer::new(Vec::new(), opts);
        p.pdu(&pdu, None).unwrap();
        p.finish().unwrap()
    };
    let jsonl = print(Format::Jsonl);
    let mut printed = Vec::new();
    for &(name, _, format) in Format::CHOICES {
        let own = match format {
            Format::Jsonl => true,
            Format::Fields => false,
            _ => print(format) != jsonl,
        };
        // An interface that cannot exist: the run stops at it (or at the missing `live`
        // feature) after clap has taken or refused the format.
        let out = common::kinspect(&["capture", "-i", "no-such-if0", "-f", name]);
        let refused = out.status.code() == Some(2)
            && String::from_utf8_lossy(&out.stderr).contains("invalid value");
        assert_eq!(
            refused,
            !own,
            "capture -f {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if own {
            printed.push(name);
        }
    }
    assert_eq!(printed.len(), 4, "{printed:?}");
}
