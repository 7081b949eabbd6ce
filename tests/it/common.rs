//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled captures (always present: they are part of the repository).
pub fn captures_dir() -> PathBuf {
    repo().join("captures")
}

/// Every bundled `.pcap`, sorted by name.
pub fn bundled_captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(captures_dir())
        .expect("captures/ is part of the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    v.sort();
    v
}

/// `../shared` next to the checkout (CI has it; a fresh clone elsewhere may not). Overridden by
/// `KINSPECT_SHARED`. Tests that need it print why they were skipped when it is missing.
pub fn shared_dir() -> Option<PathBuf> {
    let p = std::env::var_os("KINSPECT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared"));
    p.join("kafka-schemas").is_dir().then_some(p)
}

/// Returns `../shared`, or prints a skip notice naming the test and returns `None`.
pub fn shared_or_skip(test: &str) -> Option<PathBuf> {
    let d = shared_dir();
    if d.is_none() {
        eprintln!("SKIPPED {test}: ../shared (Kafka spec folders) is not beside this checkout; set KINSPECT_SHARED to run it");
    }
    d
}

/// Runs the built binary as a user would, from the repository root, with `NO_COLOR` unset so
/// that color follows the flags alone.
pub fn kinspect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .current_dir(repo())
        .env_remove("NO_COLOR")
        .output()
        .expect("run kinspect")
}

/// The run's standard output (kinspect writes only UTF-8).
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

/// Every `.json` file under `dir`, recursively, sorted.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Removes `//` and `/* */` comments outside strings, so serde_json can read a spec file.
pub fn strip_comments(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let (mut out, mut i, mut in_str) = (String::new(), 0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
            continue;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// A spec file read independently of kinspect: comments stripped, then serde_json.
pub fn read_spec(p: &Path) -> serde_json::Value {
    serde_json::from_str(&strip_comments(&std::fs::read_to_string(p).unwrap())).unwrap()
}

/// A deterministic xorshift generator, so a failing mutation reproduces from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform enough in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One Kafka frame of a capture, as `read_capture` gave it.
pub struct CapturedFrame {
    pub origin: kinspect::pdu::Origin,
    pub hints: kinspect::pdu::Hints,
    pub data: Vec<u8>,
    /// A `frame-incomplete` note came just before it: the capture lost some of its bytes.
    pub incomplete: bool,
}

/// Every frame of the capture at `path`, in order.
pub fn capture_frames(path: &Path, opts: &kinspect::capture::CaptureOptions) -> Vec<CapturedFrame> {
    use kinspect::capture::{read_capture, Event};
    let mut out = Vec::new();
    let mut incomplete = false;
    let f = std::fs::File::open(path).unwrap();
    read_capture(std::io::BufReader::new(f), opts, &mut |e| match e {
        Event::Frame {
            origin,
            hints,
            data,
        } => out.push(CapturedFrame {
            origin,
            hints,
            data: data.to_vec(),
            incomplete: std::mem::take(&mut incomplete),
        }),
        Event::Note { diag, .. } => incomplete |= diag.code == "frame-incomplete",
    })
    .unwrap();
    out
}

/// The packet records of a classic little-endian pcap, walked by their 16-byte headers after the
/// 24-byte file header: (offset of the record's header, `incl_len`, `orig_len`), frame 1 first.
pub fn pcap_records(pcap: &[u8]) -> Vec<(usize, usize, usize)> {
    assert_eq!(
        &pcap[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "a little-endian pcap"
    );
    let le = |at: usize| u32::from_le_bytes(pcap[at..at + 4].try_into().unwrap()) as usize;
    let mut at = 24;
    let mut records = Vec::new();
    while at + 16 <= pcap.len() {
        let (incl, orig) = (le(at + 8), le(at + 12));
        records.push((at, incl, orig));
        at += 16 + incl;
    }
    assert_eq!(at, pcap.len(), "the records end where the file does");
    records
}

/// tshark's rows for the capture at `pcap` (`NAME.summary.tsv` beside it, header skipped), each
/// split at its tabs: frame, direction, api_key, api_name, api_version, correlation_id,
/// tcp_stream, src, dst, kafka_len, request_frame, malformed, expert.
pub fn tshark_summary(pcap: &Path) -> Vec<Vec<String>> {
    let tsv = std::fs::read_to_string(pcap.with_extension("summary.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// For each packet of the pcap at `path` (frame 1 first): whether the capture cut it (a record
/// shorter than its packet, `incl_len < orig_len`: the snap length).
pub fn cut_packets(path: &Path) -> Vec<bool> {
    pcap_records(&std::fs::read(path).unwrap())
        .iter()
        .map(|&(_, incl, orig)| incl < orig)
        .collect()
}

/// Asserts that the committed fixture at `path` holds exactly `want`, the bytes its generator in
/// the test makes (`BLESS=1` writes them there first).
pub fn generated_fixture(path: &std::path::Path, want: &[u8]) {
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, want).unwrap();
    }
    let have = std::fs::read(path).unwrap_or_default();
    assert!(
        have == want,
        "{} differs from what its test generates (BLESS=1 rewrites it)",
        path.display()
    );
}

/// A record outside any transaction and without a producer (kafka-protocol's type), with no
/// headers.
pub fn kp_record(
    offset: i64,
    timestamp: i64,
    key: Option<bytes::Bytes>,
    value: Option<bytes::Bytes>,
) -> kafka_protocol::records::Record {
    kafka_protocol::records::Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: kafka_protocol::records::TimestampType::Creation,
        offset,
        sequence: -1,
        timestamp,
        key,
        value,
        headers: Default::default(),
    }
}

/// `records` as one uncompressed v2 batch, written by kafka-protocol's `RecordBatchEncoder`
/// (an encoder independent of kinspect's).
pub fn kp_batch(records: &[kafka_protocol::records::Record]) -> Vec<u8> {
    use kafka_protocol::records::{Compression, RecordBatchEncoder, RecordEncodeOptions};
    let mut buf = bytes::BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, records, &opts).unwrap();
    buf.to_vec()
}
