//! `kinspect encode [FILE|-]`: decoded JSON (a JSON array or JSON Lines of PDU objects, as
//! `kinspect decode --format json|jsonl` prints them, without `--annotate`) back to the exact
//! frame bytes, as hex (one frame per line, Wireshark's hex-stream style) or raw binary.
//!
//! Capture notes (objects with a `"note"` member) carry no frame and are skipped. A PDU that
//! cannot be encoded is reported with its index and JSON path, and the others are still
//! written; the exit code is then 1.

use super::io::{errln, finish, output_is_terminal, writer};
use super::{protocol_or_report, Global, EXIT_DIAGNOSTICS, EXIT_FAILURE, EXIT_OK};
use serde_json::Value;
use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// One line of hex digits per frame.
    Hex,
    /// The frames' bytes, one after another.
    Raw,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON input (array or JSON Lines); `-` or nothing for stdin.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// How to write the bytes (default: hex on a terminal, raw otherwise).
    #[arg(long, short = 'f', value_enum, value_name = "FORMAT")]
    pub format: Option<OutputKind>,
    /// Write to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &Args, g: &Global) -> u8 {
    let Some(proto) = protocol_or_report(g, "kinspect encode") else {
        return EXIT_FAILURE;
    };
    let name = args
        .file
        .as_ref()
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or_else(|| "-".into());
    let reader: Box<dyn Read> = if name == "-" {
        Box::new(io::stdin().lock())
    } else {
        match std::fs::File::open(&name) {
            Ok(f) => Box::new(f),
            Err(e) => {
                errln!("kinspect encode: {name}: {e}");
                return EXIT_FAILURE;
            }
        }
    };
    let kind = args
        .format
        .unwrap_or(if output_is_terminal(args.output.as_ref()) {
            OutputKind::Hex
        } else {
            OutputKind::Raw
        });
    let mut out = match writer(args.output.as_ref()) {
        Ok(w) => w,
        Err(e) => {
            errln!("kinspect encode: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut bad = false;
    let mut index = 0u64;
    let mut emit = |v: &Value, out: &mut dyn Write| -> io::Result<()> {
        let i = index;
        index += 1;
        if v.get("note").is_some() {
            return Ok(());
        }
        if let Some(why) = annotated(v) {
            errln!("kinspect encode: {name}: PDU #{i}: {why}");
            bad = true;
            return Ok(());
        }
        match kinspect::records::encode_pdu(proto, v) {
            Ok(bytes) => match kind {
                OutputKind::Raw => out.write_all(&bytes),
                OutputKind::Hex => {
                    for b in &bytes {
                        write!(out, "{b:02x}")?;
                    }
                    out.write_all(b"\n")
                }
            },
            Err(e) => {
                errln!("kinspect encode: {name}: PDU #{i}: {e}");
                bad = true;
                Ok(())
            }
        }
    };
    let stream = serde_json::Deserializer::from_reader(BufReader::new(reader)).into_iter::<Value>();
    for item in stream {
        let v = match item {
            Ok(v) => v,
            Err(e) => {
                errln!(
                    "kinspect encode: {name}:{}:{}: invalid JSON: {}",
                    e.line(),
                    e.column(),
                    kinspect::diag::json_error_message(&e)
                );
                let _ = out.flush();
                return EXIT_FAILURE;
            }
        };
        let r = match &v {
            Value::Array(items) => items.iter().try_for_each(|p| emit(p, &mut out)),
            Value::Object(_) => emit(&v, &mut out),
            other => {
                errln!(
                    "kinspect encode: {name}: expected a PDU object or an array of them, found {}",
                    kind_of(other)
                );
                let _ = out.flush();
                return EXIT_FAILURE;
            }
        };
        if r.is_err() {
            return finish(r, "kinspect encode", EXIT_OK);
        }
    }
    let code = if bad { EXIT_DIAGNOSTICS } else { EXIT_OK };
    finish(out.flush(), "kinspect encode", code)
}

/// Annotated output (`--annotate`) wraps every value; say so rather than fail on a field.
fn annotated(v: &Value) -> Option<&'static str> {
    let header = v.get("header")?;
    (header.get("offset").is_some() && header.get("value").is_some()).then_some(
        "this is --annotate output; encode takes the plain JSON (decode without --annotate)",
    )
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
