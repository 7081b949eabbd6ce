//! The properties the fuzz targets assert on what kinspect produced, and the seeded helpers
//! their smoke tests share. Every check panics with what was expected and where, so a fuzzer
//! crash report reads as a bug report.

use crate::engine::{InputEnd, InputInfo, Sink};
use crate::input::InputKind;
use crate::output::value::pdu_json;
use crate::output::{self, json::JsonOptions, Format};
use crate::pdu::Pdu;
use crate::protocol::Protocol;
use crate::records::encode_pdu;
use crate::wire::sample::Rng;
use crate::wire::tree::{Kind, Tree, Value};

/// Spans tile (`Tree::check_tiling`), every node, value span and diagnostic lies inside its
/// buffer, and every diagnostic says what went wrong.
pub fn tree(t: &Tree, what: &str) {
    if t.nodes.is_empty() {
        return;
    }
    if let Err(e) = t.check_tiling(0) {
        panic!("{what}: spans do not tile: {e}");
    }
    let buf_len = |b: u16| ((b as usize) < t.buf_count()).then(|| t.buf(b).len());
    for (i, n) in t.nodes.iter().enumerate() {
        let Some(len) = buf_len(n.buf) else {
            panic!(
                "{what}: node {i} ({:?}) names buffer {} of {}",
                n.name,
                n.buf,
                t.buf_count()
            );
        };
        let end = n.offset as u64 + n.len as u64;
        assert!(
            end <= len as u64 && n.hdr as u32 <= n.len,
            "{what}: node {i} ({:?}) spans {}..{end} (header {}) in a buffer of {len} bytes",
            n.name,
            n.offset,
            n.hdr
        );
        if let Value::Str(s) | Value::Bytes(s) | Value::Data(s) = n.value {
            let vend = s.start as u64 + s.len as u64;
            assert!(
                s.start >= n.offset && vend <= end,
                "{what}: node {i} ({:?}) holds a value at {}..{vend} outside its span {}..{end}",
                n.name,
                s.start,
                n.offset
            );
        }
        if let Value::Diag(d) = n.value {
            assert!(
                (d as usize) < t.diags.len(),
                "{what}: node {i} names diagnostic {d}"
            );
        }
    }
    for d in &t.diags {
        let len = buf_len(d.buf).unwrap_or(0) as u64;
        assert!(
            d.offset <= len && !d.message.is_empty() && !d.code.is_empty(),
            "{what}: diagnostic {d:?} is outside its buffer of {len} bytes or says nothing"
        );
    }
}

/// Stricter than tiling, for messages decoded without any diagnostic: inside each container
/// the children follow the header with no gap, up to the container's last byte, and a string
/// or bytes value fills its node after the length prefix. Every byte is accounted for once.
pub fn exact_cover(t: &Tree) {
    for (i, n) in t.nodes.iter().enumerate() {
        let start = n.offset + n.hdr as u32;
        let end = n.offset + n.len;
        match n.kind {
            Kind::Struct | Kind::Array | Kind::TaggedSection => {
                let mut at = start;
                let mut elsewhere = false;
                for c in t.children(i as u32) {
                    let cn = t.node(c);
                    if cn.buf != n.buf {
                        elsewhere = true;
                        continue;
                    }
                    assert_eq!(
                        cn.offset, at,
                        "node {c} ({:?}) starts at {} but its predecessor in {i} ({:?}) ended at {at}",
                        cn.name, cn.offset, n.name
                    );
                    at = cn.offset + cn.len;
                }
                // Children decoded from another buffer (decompressed records) leave the
                // container's own bytes — the compressed payload — to the container itself.
                if elsewhere {
                    assert!(
                        at <= end,
                        "node {i} ({:?}): children end at {at}, past {end}",
                        n.name
                    );
                } else {
                    assert_eq!(
                        at, end,
                        "node {i} ({:?}): children end at {at}, node at {end}",
                        n.name
                    );
                }
            }
            Kind::Scalar | Kind::UnknownTag => {
                if let Value::Str(s) | Value::Bytes(s) = n.value {
                    assert!(
                        s.start == start && s.start + s.len == end,
                        "node {i} ({:?}): value {}..{} does not fill {start}..{end}",
                        n.name,
                        s.start,
                        s.start + s.len
                    );
                }
            }
            Kind::Error => {}
        }
    }
}

/// Every printer accepts the PDU; the JSON ones, plain and annotated, emit valid JSON.
pub fn printers(pdu: &Pdu) {
    for annotate in [false, true] {
        let mut out = Vec::new();
        let o = JsonOptions {
            annotate,
            show_secrets: false,
        };
        output::json::write_pdu(&mut out, pdu, Some("fuzz"), &o).expect("writing to a Vec");
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&out) {
            panic!(
                "the JSON printer (annotate={annotate}) wrote invalid JSON: {e}\n{}",
                String::from_utf8_lossy(&out)
            );
        }
    }
    for format in [Format::Tree, Format::Summary] {
        let o = output::Options {
            format,
            annotate: false,
            color: true,
            show_secrets: false,
        };
        let mut out = Vec::new();
        match format {
            Format::Tree => output::tree::write_pdu(&mut out, pdu, None, &o),
            _ => output::summary::State::default().write_pdu(&mut out, pdu, &o),
        }
        .expect("writing to a Vec");
    }
}

/// A frame decoded without any diagnostic encodes back to exactly its bytes (CONTRACT.md),
/// except inside float64 NaNs: JSON has one "NaN", the wire has 2^53 - 1 of them.
pub fn reencodes(proto: &'static Protocol, pdu: &Pdu, frame: &[u8]) {
    let json = pdu_json(pdu);
    let nan = |i: usize| {
        pdu.tree.nodes.iter().any(|n| {
            matches!(n.value, Value::Float(f) if f.is_nan())
                && n.buf == 0
                && (n.offset as usize..(n.offset + n.len) as usize).contains(&i)
        })
    };
    match encode_pdu(proto, &json) {
        Ok(bytes) => assert!(
            bytes.len() == frame.len()
                && (0..bytes.len()).all(|i| bytes[i] == frame[i] || nan(i)),
            "decoded cleanly but encodes to different bytes\n frame   {}\n encoded {}\n json {json}",
            hex(frame),
            hex(&bytes)
        ),
        Err(e) => panic!("decoded cleanly but does not encode: {e}\n json {json}"),
    }
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Damages `b` the way a fuzzer's first mutations would: flips bytes, cuts the tail, or sets a
/// length-looking word to an extreme.
pub fn mutate(b: &mut Vec<u8>, rng: &mut Rng) {
    if b.is_empty() {
        return;
    }
    match rng.below(4) {
        0 => {
            for _ in 0..=rng.below(4) {
                let i = rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
        }
        1 => b.truncate(rng.below(b.len() as u64) as usize),
        2 => {
            let i = rng.below(b.len() as u64) as usize;
            let v = [0xff, 0x7f, 0x80, 0x00][rng.below(4) as usize];
            for x in b.iter_mut().skip(i).take(4) {
                *x = v;
            }
        }
        _ => {
            let i = rng.below(b.len() as u64) as usize;
            let j = rng.below(b.len() as u64) as usize;
            b.insert(i, b[j]);
        }
    }
}

/// The bundled captures (from the crate's `captures/` folder), smallest first.
#[cfg(test)]
pub(crate) fn captures(n: usize) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("captures/ is in the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    files
        .iter()
        .take(n)
        .map(|p| std::fs::read(p).expect("readable capture"))
        .collect()
}

/// Every frame of the `n` smallest bundled captures, with the hints the capture reader gave it.
#[cfg(test)]
pub(crate) fn capture_frames(n: usize) -> Vec<(crate::pdu::Hints, Vec<u8>)> {
    let opts = crate::capture::CaptureOptions {
        protocol: Some(crate::protocol::builtin()),
        ..Default::default()
    };
    let mut frames = Vec::new();
    for cap in captures(n) {
        crate::capture::read_capture(&cap[..], &opts, &mut |ev| {
            if let crate::capture::Event::Frame { hints, data, .. } = ev {
                frames.push((hints, data.to_vec()));
            }
        })
        .expect("bundled captures read");
    }
    frames
}

/// Display filters evaluated on every PDU a capture target delivers: every kind of field (named,
/// entity, error by name, body paths through arrays and into records), every operator.
const QUERIES: &[&str] = &[
    "api in {Produce, Fetch, Metadata} and version >= 3 or not direction == response",
    "error == NOT_LEADER_OR_FOLLOWER or error_code != 0 or latency_us > 1000",
    "topic contains \"a\" or partition <= 2 or group matches \"^g.*[0-9]$\" or producer_id >= 0",
    "transactional_id != \"\" and client_id matches \"rd\" or request_frame < 10",
    "body.Topics[].Partitions[].Records[].Records[].Key contains \"k\" or body.Topics[0].Name == \"orders\"",
    "body.Responses[].PartitionResponses[].ErrorCode in {0, 6} and size > 100 and time >= 0",
    "src contains \"127\" or dst == \"10.0.0.2:9092\" or stream == 0 or last_frame > 1",
];

/// Fields printed for every PDU, as `-f fields -e …` would.
const FIELDS: &[&str] = &[
    "topic",
    "partition",
    "error",
    "producer_id",
    "body.Topics[].Partitions[].PartitionIndex",
    "body.Topics[].Partitions[].Records[].Records[].Value",
];

/// The sinks of `kinspect check -f jsonl`, `records` (JSON Lines, and a line template of every
/// code), `decode -f fields` and `stats`, driven over one input's PDUs and notes as the engine
/// drives them, with every query of [`QUERIES`] evaluated on each PDU. None may panic; each
/// finding names only frames delivered so far and prints as one JSON object, no PDU lists more
/// findings than `limits::MAX_CHECK_FINDINGS_PER_PDU` (plus the one that counts the rest), every
/// record prints as one JSON object, and the statistics print as one.
pub struct Conversation {
    check: output::check::CheckPrinter<Vec<u8>>,
    records: output::records::RecordPrinter<Vec<u8>>,
    lines: output::records::RecordPrinter<Vec<u8>>,
    fields: output::fields::FieldsPrinter<Vec<u8>>,
    stats: crate::capture::stats::Stats,
    queries: &'static [crate::query::Query],
    /// The highest frame (or input index) delivered so far.
    last: u64,
}

impl Default for Conversation {
    fn default() -> Self {
        Self::new()
    }
}

/// Every code of the records line template.
const TEMPLATE: &str = "%t %p %o %O %k %s %K %S %T %y %h %f %d %c %a %i %e %q %x %z %C %m %%\\n";

impl Conversation {
    pub fn new() -> Self {
        static QUERIES_COMPILED: std::sync::OnceLock<Vec<crate::query::Query>> =
            std::sync::OnceLock::new();
        let queries = QUERIES_COMPILED.get_or_init(|| {
            let proto = crate::protocol::builtin();
            QUERIES
                .iter()
                .map(|q| {
                    crate::query::Query::compile(q, proto)
                        .unwrap_or_else(|e| panic!("{}", e.pointed(q)))
                })
                .collect()
        });
        use output::records::{RecordOptions, RecordPrinter, RecordsFormat, Template};
        let template = Template::parse(TEMPLATE).unwrap_or_else(|e| panic!("{TEMPLATE}: {e}"));
        let fields = output::fields::FieldsOptions::parse(FIELDS)
            .unwrap_or_else(|e| panic!("{FIELDS:?}: {e}"));
        let mut c = Conversation {
            check: output::check::CheckPrinter::new(
                Vec::new(),
                output::check::CheckFormat::Jsonl,
                true,
            ),
            records: RecordPrinter::new(
                Vec::new(),
                RecordOptions {
                    format: RecordsFormat::Jsonl,
                    template: None,
                },
            ),
            lines: RecordPrinter::new(
                Vec::new(),
                RecordOptions {
                    format: RecordsFormat::Line,
                    template: Some(template),
                },
            ),
            fields: output::fields::FieldsPrinter::new(Vec::new(), fields)
                .expect("writing to a Vec"),
            stats: crate::capture::stats::Stats::new(),
            queries,
            last: 0,
        };
        let info = InputInfo {
            name: "fuzz",
            kind: InputKind::Pcap,
        };
        for s in c.sinks() {
            s.begin_input(&info).expect("writing to a Vec");
        }
        c
    }

    fn sinks(&mut self) -> [&mut dyn Sink; 5] {
        [
            &mut self.check,
            &mut self.records,
            &mut self.lines,
            &mut self.fields,
            &mut self.stats,
        ]
    }

    /// One PDU, in capture order.
    pub fn pdu(&mut self, pdu: &Pdu) {
        self.last = self.last.max(crate::check::frame_of(&pdu.origin));
        for q in self.queries {
            q.matches(pdu);
        }
        for s in self.sinks() {
            s.pdu(pdu, Some("fuzz")).expect("writing to a Vec");
        }
        let last = self.last;
        let mut listed = 0usize;
        for line in json_lines(self.check.get_mut(), "a check finding") {
            // The state caps are reported once each per run, past the per-PDU cap.
            listed += usize::from(line["rule"] != "check-state-capped");
            let frames = line["frames"].as_array().map_or(&[][..], Vec::as_slice);
            assert!(
                !frames.is_empty() && frames.iter().all(|f| f.as_u64().is_some_and(|f| f <= last)),
                "a finding names frames {frames:?}, but only up to {last} were delivered: {line}"
            );
            assert!(
                line["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{line}"
            );
        }
        assert!(
            listed <= crate::limits::MAX_CHECK_FINDINGS_PER_PDU + 1,
            "one PDU (frame {last}) listed {listed} findings, more than the cap and the one counting the rest"
        );
        json_lines(self.records.get_mut(), "a record");
        self.lines.get_mut().clear();
        self.fields.get_mut().clear();
    }

    /// One capture note, in capture order.
    pub fn note(&mut self, origin: &crate::pdu::Origin, diag: &crate::diag::Diagnostic) {
        if let Some(f) = origin.frame {
            self.last = self.last.max(f);
        }
        for s in self.sinks() {
            s.note(origin, diag, Some("fuzz"))
                .expect("writing to a Vec");
        }
    }

    /// The input ended (`summary`: a capture read to its end or to the damage that stopped it).
    pub fn end(mut self, summary: Option<&crate::capture::CaptureSummary>) {
        let end = InputEnd {
            name: "fuzz",
            summary,
            failed: None,
        };
        for s in self.sinks() {
            s.end_input(&end).expect("writing to a Vec");
            s.finish().expect("writing to a Vec");
        }
        json_lines(self.check.get_mut(), "a timeline event");
        // What `records` says on stderr: capped, each line at the input and a frame delivered.
        let last = self.last;
        let (notes, _) = self.records.notes.take();
        assert!(
            notes.len() <= crate::limits::MAX_NOTES,
            "{} notes",
            notes.len()
        );
        for n in &notes {
            let frame = n
                .strip_prefix("fuzz frame ")
                .and_then(|r| r.split(':').next()?.parse::<u64>().ok());
            assert!(
                n.starts_with("fuzz") && frame.is_none_or(|f| f <= last),
                "a records note past frame {last}, or of no input: {n}"
            );
        }
        let stats = output::stats::to_json("fuzz", &self.stats);
        let text = stats.to_string();
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
            panic!("the statistics printed as invalid JSON: {e}: {text}");
        }
        output::stats::write_text(&mut Vec::new(), "fuzz", &self.stats).expect("writing to a Vec");
    }
}

/// The JSON objects a sink wrote (one per line), checked and taken out of `buf`.
fn json_lines(buf: &mut Vec<u8>, what: &str) -> Vec<serde_json::Value> {
    let text = std::mem::take(buf);
    text.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| match serde_json::from_slice::<serde_json::Value>(l) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            other => panic!(
                "{what} printed as {other:?}: {}",
                String::from_utf8_lossy(l)
            ),
        })
        .collect()
}
