//! Categories `frames` (every API key and version of the built-in protocol, requests and
//! responses from the schema-driven generator, then damaged, with versions and keys no release
//! defines) and `hex` (the same frames as hex dumps of every style, damaged text, the
//! `hexdump -C` repeat line with a far end offset, and text that is no hex dump at all).

use crate::mutate::{self, pick};
use crate::run::{Case, Out};
use kinspect::fuzzing::roundtrip::combos;
use kinspect::pdu::Direction;
use kinspect::protocol::{builtin, headers};
use kinspect::records::encode_pdu;
use kinspect::wire::plan::shared;
use kinspect::wire::sample::{minimal, varied, Rng};
use serde_json::json;

/// A generated frame with its size prefix, and what it is.
pub struct Frame {
    pub key: i16,
    pub version: i16,
    pub dir: Direction,
    pub bytes: Vec<u8>,
    /// The decoded-PDU JSON it was encoded from (what `kinspect encode` reads).
    pub json: serde_json::Value,
}

/// A valid frame of combination `i` (mod the list) with correlation id `corr`.
pub fn frame(i: usize, corr: i32, rng: &mut Rng) -> Frame {
    let all = combos();
    let (key, v, dir) = all[i % all.len()];
    let proto = builtin();
    let hv = headers::header_version(proto, dir, key, v).expect("listed combination");
    let h = proto.header(dir, hv).expect("header");
    let r = proto.message(key, v, dir).expect("message");
    let small = rng.chance(4);
    let gen = |spec, ver, rng: &mut Rng| {
        let plan = shared(spec, ver);
        if small {
            minimal(&plan)
        } else {
            varied(&plan, rng)
        }
    };
    let mut header = gen(h.spec, hv, rng);
    let body = gen(r.spec, v, rng);
    header["CorrelationId"] = corr.into();
    if dir == Direction::Request {
        header["RequestApiKey"] = key.into();
        header["RequestApiVersion"] = v.into();
    }
    let j = json!({"direction": dir.as_str(), "api_key": key, "api_version": v,
        "length": 0, "header": header, "body": body});
    let bytes = encode_pdu(proto, &j).unwrap_or_else(|_| {
        // The generator's messages encode (the roundtrip target checks it); keep going anyway.
        let mut b = vec![0, 0, 0, 8];
        b.extend_from_slice(&key.to_be_bytes());
        b.extend_from_slice(&v.to_be_bytes());
        b.extend_from_slice(&corr.to_be_bytes());
        b
    });
    Frame {
        key,
        version: v,
        dir,
        bytes,
        json: j,
    }
}

/// A request and its response for the same API, version and correlation id.
pub fn exchange(rng: &mut Rng, corr: i32) -> (Vec<u8>, Vec<u8>) {
    let all = combos();
    let mut i = rng.below(all.len() as u64) as usize;
    // Requests sit at even positions when both directions exist; find one.
    while all[i].2 != Direction::Request {
        i = (i + 1) % all.len();
    }
    let req = frame(i, corr, rng);
    let resp_i = (i + 1) % all.len();
    let resp = if all[resp_i].0 == req.key && all[resp_i].1 == req.version {
        frame(resp_i, corr, rng).bytes
    } else {
        Vec::new()
    };
    (req.bytes, resp)
}

/// Sets the request header's API version (bytes 6..8 of a prefixed frame).
fn set_version(b: &mut [u8], v: i16) {
    if b.len() >= 8 {
        b[6..8].copy_from_slice(&v.to_be_bytes());
    }
}

pub fn frames_case(i: u64, rng: &mut Rng) -> Case {
    let all = combos();
    // Walk the combinations in order so that every (api, version, direction) comes up.
    let f = frame(i as usize, rng.next_u64() as i32, rng);
    let mut b = f.bytes;
    let mut what = format!(
        "{} v{} {}",
        builtin().api_name(f.key).unwrap_or("?"),
        f.version,
        f.dir.as_str()
    );
    let mut version = f.version;
    let mut key = f.key;
    match rng.below(10) {
        0..=2 => {}
        3 => {
            // A version past any release, or negative: the decoder must say so, not guess.
            version = *pick(rng, &[-1, i16::MAX, i16::MIN, f.version + 1, 99]);
            if f.dir == Direction::Request {
                set_version(&mut b, version);
            }
            what += &format!(" as v{version}");
        }
        4 => {
            key = *pick(rng, &[-1, 999, i16::MAX, 75, 200]);
            if f.dir == Direction::Request && b.len() >= 6 {
                b[4..6].copy_from_slice(&key.to_be_bytes());
            }
            what += &format!(" as key {key}");
        }
        _ => {
            mutate::bytes(&mut b, rng, 6);
            what += " mutated";
        }
    }
    let _ = all;
    let mut c = Case::new(what);
    let mut args: Vec<String> = vec!["decode".into(), "--input".into(), "raw".into()];
    let mut data = b;
    if rng.chance(5) && data.len() >= 4 {
        data.drain(..4);
        args.push("--no-size-prefix".into());
    } else if rng.chance(4) {
        // Several frames in one file, as a raw stream.
        let n = 1 + rng.below(20);
        for k in 0..n {
            let g = frame(rng.below(all.len() as u64) as usize, k as i32, rng);
            if g.dir == Direction::Request {
                data.extend_from_slice(&g.bytes);
            }
        }
    }
    if f.dir == Direction::Response || rng.chance(8) {
        args.extend(["--api".to_string(), key.to_string()]);
        args.extend(["--api-version".to_string(), version.to_string()]);
        args.push(
            if f.dir == Direction::Response {
                "--response"
            } else {
                "--request"
            }
            .into(),
        );
    }
    decode_output(&mut c, &mut args, rng);
    args.push("frame.bin".into());
    c.file("frame.bin", data).args(args);
    c
}

/// Picks the output format of a `decode` case (mostly JSON Lines, which is checked).
pub fn decode_output(c: &mut Case, args: &mut Vec<String>, rng: &mut Rng) {
    let (fmt, out) = *pick(
        rng,
        &[
            ("jsonl", Out::Jsonl),
            ("jsonl", Out::Jsonl),
            ("jsonl", Out::Jsonl),
            ("jsonl", Out::Jsonl),
            ("json", Out::JsonDoc),
            ("tree", Out::Any),
            ("summary", Out::Any),
        ],
    );
    args.extend(["-f".to_string(), fmt.to_string()]);
    c.out = out;
    if rng.chance(6) {
        args.push("--annotate".into());
    }
    if rng.chance(5) {
        args.extend([
            "--records".to_string(),
            pick(rng, &["batches", "checked", "raw"]).to_string(),
        ]);
    }
    if rng.chance(5) {
        c.env.push(("KINSPECT_THREADS", "1".into()));
    }
    if rng.chance(12) {
        args.push("--errors-only".into());
    }
}

/// Hex dump styles, as the decoder's hex reader accepts them.
fn dump(b: &[u8], style: u64, rng: &mut Rng) -> String {
    let mut s = String::new();
    match style {
        0 => b.iter().for_each(|x| s += &format!("{x:02x}")),
        1 => {
            for (i, x) in b.iter().enumerate() {
                s += &format!("{x:02x}{}", if i % 16 == 15 { "\n" } else { " " });
            }
        }
        2 => {
            for (n, line) in b.chunks(16).enumerate() {
                s += &format!("{:04x}  ", n * 16);
                line.iter().for_each(|x| s += &format!("{x:02x} "));
                s += "\n";
            }
        }
        3 => {
            // xxd
            for (n, line) in b.chunks(16).enumerate() {
                s += &format!("{:08x}: ", n * 16);
                for pair in line.chunks(2) {
                    pair.iter().for_each(|x| s += &format!("{x:02x}"));
                    s += " ";
                }
                s += " ";
                line.iter()
                    .for_each(|&x| s.push(if x.is_ascii_graphic() { x as char } else { '.' }));
                s += "\n";
            }
        }
        4 => s = hexdump_c(b, None),
        5 => {
            // A C array.
            s += "unsigned char frame[] = {\n";
            b.iter().for_each(|x| s += &format!("0x{x:02x}, "));
            s += "\n};\n";
        }
        _ => {
            // hexdump -C with a `*` repeat line and a far end offset.
            let end = *pick(
                rng,
                &[
                    0x0640_0000u64,
                    0x7fff_ffff,
                    0xffff_ffff,
                    0x0010_0000,
                    0x0000_0400,
                    0xffff_ffff_ffff,
                ],
            );
            s = hexdump_c(b, Some(end));
        }
    }
    s
}

/// `hexdump -C`; with `end`, a zero line, `*`, then the end offset (as in a dump of a file that
/// is mostly zeros).
fn hexdump_c(b: &[u8], end: Option<u64>) -> String {
    let mut s = String::new();
    // Before a repeat line, whole lines only (as in a dump of a file that goes on).
    let mut padded = b.to_vec();
    if end.is_some() {
        padded.resize(b.len().div_ceil(16) * 16, 0);
    }
    let b = &padded[..];
    let line = |s: &mut String, off: usize, l: &[u8]| {
        *s += &format!("{off:08x}  ");
        for (i, x) in l.iter().enumerate() {
            *s += &format!("{x:02x} {}", if i == 7 { " " } else { "" });
        }
        *s += " |";
        l.iter()
            .for_each(|&x| s.push(if x.is_ascii_graphic() { x as char } else { '.' }));
        *s += "|\n";
    };
    let mut off = 0;
    for l in b.chunks(16) {
        line(&mut s, off, l);
        off += l.len();
    }
    match end {
        Some(e) => {
            let off = off.div_ceil(16) * 16;
            line(&mut s, off, &[0; 16]);
            s += "*\n";
            s += &format!("{e:08x}\n");
        }
        None => s += &format!("{off:08x}\n"),
    }
    s
}

pub fn hex_case(_i: u64, rng: &mut Rng) -> Case {
    let all = combos();
    let f = frame(
        rng.below(all.len() as u64) as usize,
        rng.next_u64() as i32,
        rng,
    );
    let style = rng.below(8);
    let mut what = format!("style {style}");
    let mut text = match rng.below(12) {
        0 => {
            // The issue's shape: two blocks, each a frame start, a zero line, `*`, a far end.
            what = "hexdump -C, two blocks with * and end 06400000".into();
            let mut t = String::new();
            for _ in 0..2 {
                let head = [
                    0x06, 0x40, 0x00, 0x00, 0, 0, 0, 9, 0, 0, 0, 1, 0, 3, b'c', b'l', b'i',
                ];
                t += &hexdump_c(&head, Some(0x0640_0000));
                t += "\n";
            }
            t.into_bytes()
        }
        1 => {
            // Text that is not a hex dump: a log, Markdown, a C file, random printable bytes.
            what = "not a hex dump".into();
            let samples = [
                "[2024-05-01 12:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n",
                "# kinspect\n\nAn inspector for the Kafka wire protocol.\n\n```console\n$ kinspect decode x\n```\n",
                "int main(void) { return 0; }\n",
                "deadbeef cafebabe zz 00 11 22 33 gg\n",
            ];
            let mut t = pick(rng, &samples)
                .repeat(1 + rng.below(2000) as usize)
                .into_bytes();
            if rng.chance(2) {
                mutate::bytes(&mut t, rng, 4);
            }
            t
        }
        _ => dump(&f.bytes, style, rng).into_bytes(),
    };
    if rng.chance(3) {
        mutate::bytes(&mut text, rng, 5);
        what += " mutated";
    }
    if rng.chance(10) {
        // A very long line.
        text.extend(std::iter::repeat_n(b'0', 1 + rng.below(1 << 20) as usize));
        what += " long line";
    }
    let mut c = Case::new(what);
    let mut args: Vec<String> = vec!["decode".into()];
    if rng.chance(2) {
        args.extend(["--input".to_string(), "hex".to_string()]);
    }
    if f.dir == Direction::Response {
        args.extend([
            "--api".to_string(),
            f.key.to_string(),
            "--api-version".into(),
            f.version.to_string(),
            "--response".into(),
        ]);
    }
    decode_output(&mut c, &mut args, rng);
    let name = *pick(rng, &["frame.hex", "frame.txt", "dump", "server.log"]);
    if rng.chance(6) {
        args.push("-".into());
        c.stdin = Some(name.to_string());
    } else {
        args.push(name.into());
    }
    c.file(name, text).args(args);
    c
}

/// The other ways in to the same decoding (`records`, `check`, `report`, Parquet tables, fields,
/// display filters and request/response pairs), in place of `decode_output`'s plain `decode`:
/// pushes the subcommand and its options (the caller adds the input). `for_captures` adds the
/// ones that read only captures (`check`, `report`, `decode --check`).
pub fn other_command(c: &mut Case, args: &mut Vec<String>, rng: &mut Rng, for_captures: bool) {
    const FILTERS: &[&str] = &[
        "api == Produce",
        "error",
        "topic contains \"o\" and partition >= 0",
        "latency_us > 100 or !(direction == response)",
        "client_id matches \"^rd.*(kafka)?$\"",
        "body.Topics[].Name in {\"orders\", \"events\"}",
        "api_key in {0..3, 18} && version >= 0",
        "producer_id > 0 || transactional_id || group",
    ];
    let mut push = |a: &[&str]| args.extend(a.iter().map(|s| s.to_string()));
    let pick_filter = |rng: &mut Rng| *pick(rng, FILTERS);
    match rng.below(if for_captures { 9 } else { 6 }) {
        0 => {
            push(&["records", "-f", "jsonl"]);
            c.out = Out::Jsonl;
        }
        1 => {
            push(&["records", "--template", "%t %p %o %k %s %T %h\\n"]);
            c.out = Out::Any;
        }
        2 => {
            push(&["records", "-f", "parquet", "-o", "records.parquet"]);
            c.out = Out::Any;
        }
        3 => {
            push(&["decode", "-f", "parquet", "-o", "tables"]);
            c.out = Out::Any;
        }
        4 => {
            let f = pick_filter(rng);
            push(&["decode", "-f", "jsonl", "-Y", f]);
            c.out = Out::Jsonl;
        }
        5 => {
            push(&[
                "decode", "-f", "fields", "-e", "frame", "-e", "api", "-e", "topic", "-e", "error",
            ]);
            c.out = Out::Any;
        }
        6 => {
            push(&["check", "-f", "jsonl"]);
            c.out = Out::Jsonl;
        }
        7 => {
            push(&["report", "-o", "report.html"]);
            c.out = Out::Any;
        }
        _ => {
            push(&["decode", "-f", "jsonl", "--check", "--pairs"]);
            c.out = Out::Any;
        }
    }
    if rng.chance(4) {
        let f = pick_filter(rng);
        args.extend(["-Y".to_string(), f.to_string()]);
    }
    if rng.chance(5) {
        c.env.push(("KINSPECT_THREADS", "1".into()));
    }
}
