//! `kinspect records`: one line or JSON object per record, checked against independent sources:
//! tshark's decode of the same frames (tests/fixtures/records/tshark-records.tsv) for the
//! bundled captures, and, for log folders, segments whose batches kafka-protocol's
//! `RecordBatchEncoder` wrote (with kinspect's own encoder for a second segment) and whose
//! indexes the test writes by Kafka's rules.

use crate::common::{self, kinspect, stdout};
use base64::Engine as _;
use indexmap::IndexMap;
use kafka_protocol::records::{Record, TimestampType};
use serde_json::Value as J;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn jsonl(args: &[&str]) -> (Vec<J>, String, i32) {
    let o = kinspect(args);
    let out = stdout(&o);
    let rows = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (
        rows,
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

/// A key or value in the fixture's form: lowercase hex, empty for null (tshark shows null as
/// empty).
fn hex_of(v: &J) -> String {
    let bytes = match v {
        J::Null => Vec::new(),
        J::Object(o) => match (o.get("text"), o.get("base64")) {
            (Some(J::String(t)), _) => t.as_bytes().to_vec(),
            (_, Some(J::String(b))) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
            _ => panic!("{v}"),
        },
        _ => panic!("{v}"),
    };
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn fixture_hex(s: &str) -> String {
    if s == "-" {
        String::new()
    } else {
        s.to_string()
    }
}

#[test]
fn records_of_the_bundled_captures_are_the_ones_tshark_decoded() {
    let oracle =
        std::fs::read_to_string(common::repo().join("tests/fixtures/records/tshark-records.tsv"))
            .unwrap();
    // (capture, frame) → [(offset, key, value, headers)] as tshark decoded them.
    let mut want: BTreeMap<(String, u64), Vec<[String; 4]>> = BTreeMap::new();
    for line in oracle.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let base: i64 = f[2].parse().unwrap();
        let off: i64 = f[5].parse().unwrap();
        want.entry((f[0].to_string(), f[1].parse().unwrap()))
            .or_default()
            .push([
                (off - base).to_string(),
                fixture_hex(f[6]),
                fixture_hex(f[7]),
                f.get(8).unwrap_or(&"").to_string(),
            ]);
    }
    let captures: std::collections::BTreeSet<&String> = want.keys().map(|(c, _)| c).collect();
    let mut compared = 0;
    for cap in captures {
        let path = format!("captures/{cap}.pcap");
        let (rows, err, code) = jsonl(&["records", "-f", "jsonl", &path]);
        assert_eq!(code, 0, "{cap}: {err}");
        let mut got: BTreeMap<u64, Vec<[String; 4]>> = BTreeMap::new();
        for r in &rows {
            assert_eq!(r["crc_ok"], J::Bool(true), "{cap}: {r}");
            // A Produce request's records have no offset yet: only their delta.
            match r["direction"].as_str() {
                Some("request") => assert_eq!(r["offset"], J::Null, "{r}"),
                _ => assert!(r["offset"].is_i64(), "{r}"),
            }
            let heads: Vec<String> = r["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| format!("{}={}", h["key"].as_str().unwrap(), hex_of(&h["value"])))
                .collect();
            got.entry(r["frame"].as_u64().unwrap()).or_default().push([
                r["offset_delta"].to_string(),
                hex_of(&r["key"]),
                hex_of(&r["value"]),
                heads.join(";"),
            ]);
        }
        for ((c, frame), rows) in want.iter().filter(|((c, _), _)| c == cap) {
            let mine = got.get(frame).cloned().unwrap_or_default();
            // The fixture's offsets are absolute; a fetched batch's delta is offset - base.
            assert_eq!(&mine, rows, "{c} frame {frame}");
            compared += rows.len();
        }
    }
    assert_eq!(compared, oracle.lines().count() - 1);
}

#[test]
fn a_template_prints_kcat_style_lines() {
    let (rows, _, _) = jsonl(&["records", "-f", "jsonl", "captures/mock-kcat-none.pcap"]);
    let o = kinspect(&[
        "records",
        "--template",
        "%t|%p|%o|%O|%k|%s|%K|%S|%T|%d|%z|%C\\n",
        "captures/mock-kcat-none.pcap",
    ]);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), rows.len());
    assert!(!rows.is_empty());
    for (l, r) in lines.iter().zip(&rows) {
        let f: Vec<&str> = l.split('|').collect();
        assert_eq!(f[0], r["topic"].as_str().unwrap(), "{l}");
        assert_eq!(f[1], r["partition"].to_string(), "{l}");
        match &r["offset"] {
            J::Null => assert_eq!(f[2], "?"),
            o => assert_eq!(f[2], o.to_string()),
        }
        assert_eq!(f[3], r["offset_delta"].to_string());
        let text_of = |v: &J| match v {
            J::Null => "NULL".to_string(),
            v => v["text"].as_str().unwrap().to_string(),
        };
        assert_eq!(f[4], text_of(&r["key"]));
        assert_eq!(f[5], text_of(&r["value"]));
        assert_eq!(f[8], r["timestamp"].to_string());
        assert_eq!(f[9], r["direction"].as_str().unwrap());
        assert_eq!(f[11], "ok");
    }
    let bad = kinspect(&["records", "--template", "%t %w", "x"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("column 4: %w"));
}

fn rec(offset: i64, key: &str, value: &str) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 3,
        producer_id: 7000,
        producer_epoch: 2,
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: offset as i32,
        timestamp: 1_767_225_600_000 + offset * 10,
        key: Some(bytes::Bytes::copy_from_slice(key.as_bytes())),
        value: Some(bytes::Bytes::copy_from_slice(value.as_bytes())),
        headers: IndexMap::new(),
    }
}

/// A batch written by kafka-protocol (an independent encoder).
fn kp_batch(records: &[Record]) -> Vec<u8> {
    crate::common::kp_batch(records)
}

/// A batch written by kinspect's encoder from its JSON form (lengths and CRC computed).
fn our_batch(base: i64, keys: &[&str]) -> Vec<u8> {
    let records: Vec<J> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            serde_json::json!({"Attributes": 0, "TimestampDelta": i as i64 * 10, "OffsetDelta": i,
                "Key": {"text": k}, "Value": {"text": format!("value of {k}")},
                "Headers": [{"Key": "h", "Value": {"text": "1"}}]})
        })
        .collect();
    let n = keys.len() as i64;
    let batch = serde_json::json!({"BaseOffset": base, "PartitionLeaderEpoch": 3, "Magic": 2,
        "Attributes": {"Compression": "none", "TimestampType": "CreateTime", "IsTransactional": false,
                       "IsControlBatch": false, "HasDeleteHorizonMs": false},
        "LastOffsetDelta": n - 1, "BaseTimestamp": 1_767_225_600_000i64 + base * 10,
        "MaxTimestamp": 1_767_225_600_000i64 + (base + n - 1) * 10,
        "ProducerId": -1, "ProducerEpoch": -1, "BaseSequence": -1, "Records": records});
    let mut out = Vec::new();
    kinspect::records::encode::encode_records(&[batch], &mut out, "batches").unwrap();
    out
}

/// Writes a segment of `batches` (with their first offsets) and its indexes by Kafka's rules:
/// an offset-index entry (last offset, position) and a time-index entry (max timestamp, last
/// offset) per batch.
fn segment(dir: &Path, base: i64, batches: &[(i64, i64, i64, Vec<u8>)]) -> PathBuf {
    let seg = dir.join(format!("{base:020}.log"));
    let (mut log, mut idx, mut tix) = (Vec::new(), Vec::new(), Vec::new());
    for (_, last, max_ts, b) in batches {
        idx.extend_from_slice(&((last - base) as i32).to_be_bytes());
        idx.extend_from_slice(&(log.len() as i32).to_be_bytes());
        tix.extend_from_slice(&max_ts.to_be_bytes());
        tix.extend_from_slice(&((last - base) as i32).to_be_bytes());
        log.extend_from_slice(b);
    }
    // The active segment's indexes are preallocated with zeros.
    idx.extend_from_slice(&[0; 16]);
    std::fs::write(&seg, log).unwrap();
    std::fs::write(seg.with_extension("index"), idx).unwrap();
    std::fs::write(seg.with_extension("timeindex"), tix).unwrap();
    seg
}

fn partition_folder(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("kinspect-records-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("orders-3");
    std::fs::create_dir_all(&dir).unwrap();
    let ts = |o: i64| 1_767_225_600_000 + o * 10;
    let b0: Vec<Record> = (0..3).map(|o| rec(o, &format!("k{o}"), "v")).collect();
    let b1: Vec<Record> = (3..5).map(|o| rec(o, &format!("k{o}"), "v")).collect();
    segment(
        &dir,
        0,
        &[(0, 2, ts(2), kp_batch(&b0)), (3, 4, ts(4), kp_batch(&b1))],
    );
    segment(
        &dir,
        5,
        &[
            (5, 6, ts(6), our_batch(5, &["k5", "k6"])),
            (7, 9, ts(9), our_batch(7, &["k7", "k8", "k9"])),
        ],
    );
    dir
}

#[test]
fn a_partition_folder_reads_in_offset_order_with_its_indexes_checked() {
    let dir = partition_folder("ok");
    let d = dir.to_str().unwrap();
    let (rows, err, code) = jsonl(&["records", "-f", "jsonl", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let offsets: Vec<i64> = rows.iter().map(|r| r["offset"].as_i64().unwrap()).collect();
    assert_eq!(offsets, (0..10).collect::<Vec<_>>());
    let keys: Vec<String> = rows
        .iter()
        .map(|r| r["key"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, (0..10).map(|o| format!("k{o}")).collect::<Vec<_>>());
    for r in &rows {
        assert_eq!(r["topic"], "orders");
        assert_eq!(r["partition"], 3);
        assert_eq!(r["crc_ok"], true);
        assert_eq!(r["direction"], J::Null);
        assert!(r["input"].as_str().unwrap().ends_with(".log"), "{r}");
    }
    // kafka-protocol's batches carry the producer's id and sequence.
    assert_eq!(rows[1]["producer_id"], 7000);
    assert_eq!(rows[1]["sequence"], 1);
    assert_eq!(rows[5]["headers"][0]["key"], "h");
    // The second segment's first batch is at file offset 0 of its own file.
    assert_eq!(rows[5]["file_offset"], 0);
    assert!(rows[5]["input"]
        .as_str()
        .unwrap()
        .ends_with("00000000000000000005.log"));
    let o = kinspect(&["records", "--template", "%f %o %k", d]);
    let text = stdout(&o);
    assert!(
        text.starts_with("00000000000000000000.log:0 0 k0\n"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// Kafka names a segment by its base offset in 20 digits; a broker's own logs (`server.log`,
/// `controller.log`) and other `.log` files are not segments, and reading them as such gave
/// pages of `corrupt-region` errors.
#[test]
fn only_files_named_by_a_base_offset_are_a_folders_segments() {
    let dir = partition_folder("strays");
    std::fs::write(
        dir.join("server.log"),
        "[2026-12-07 03:00:00,000] INFO started\n",
    )
    .unwrap();
    std::fs::write(dir.join("123.log"), b"\0\0\0\0").unwrap();
    let d = dir.to_str().unwrap();
    let (rows, err, code) = jsonl(&["records", "-f", "jsonl", d]);
    assert_eq!(code, 0, "{err}");
    let offsets: Vec<i64> = rows.iter().map(|r| r["offset"].as_i64().unwrap()).collect();
    assert_eq!(offsets, (0..10).collect::<Vec<_>>(), "{err}");
    assert!(
        err.contains("not-a-segment") && err.contains("123.log, server.log"),
        "{err}"
    );
    assert!(!err.contains("corrupt"), "{err}");

    // A broker's logs/ folder: nothing to read, and the files are named.
    let logs = dir.parent().unwrap().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for f in [
        "server.log",
        "controller.log",
        "state-change.log",
        "log-cleaner.log",
    ] {
        std::fs::write(logs.join(f), "INFO\n").unwrap();
    }
    let o = kinspect(&["stats", logs.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("kinspect stats: ")
            && err.contains("no Kafka log segment")
            && err.contains("controller.log, log-cleaner.log, server.log, … (4 in all)"),
        "{err}"
    );

    // A log directory (log.dirs): its partition folders are named.
    let root = dir.parent().unwrap();
    let o = kinspect(&["records", root.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("give one of them (orders-3/)"), "{err}");
    let _ = std::fs::remove_dir_all(root);

    // A folder of captures: they are named, to be given as files (the first three in byte
    // order, counted here from the folder itself).
    let caps = common::captures_dir();
    let mut names: Vec<String> = std::fs::read_dir(&caps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pcap"))
        .collect();
    names.sort();
    let want = format!(
        "; it holds captures, give them by name ({}, {}, {}, … ({} in all))",
        names[0],
        names[1],
        names[2],
        names.len()
    );
    let o = kinspect(&["stats", caps.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&want), "{want}\n{err}");
    assert!(!err.contains("give a partition folder"), "{err}");
}

#[test]
fn wrong_index_entries_are_reported_at_their_file_offset() {
    let dir = partition_folder("bad");
    let seg = dir.join("00000000000000000000.log");
    // Entry 1 of the offset index: a position inside the first batch.
    let mut idx = std::fs::read(seg.with_extension("index")).unwrap();
    idx[12..16].copy_from_slice(&10i32.to_be_bytes());
    std::fs::write(seg.with_extension("index"), idx).unwrap();
    // Entry 0 of the time index: a timestamp the batch does not have.
    let mut tix = std::fs::read(seg.with_extension("timeindex")).unwrap();
    tix[..8].copy_from_slice(&42i64.to_be_bytes());
    std::fs::write(seg.with_extension("timeindex"), tix).unwrap();
    let d = dir.to_str().unwrap();
    let (_, err, code) = jsonl(&["records", "-f", "jsonl", d]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("00000000000000000000.index:8: entry 1 (offset 4) points at position 10"),
        "{err}"
    );
    assert!(
        err.contains("[timeindex-timestamp-mismatch] 00000000000000000000.timeindex:0: entry 0 says timestamp 42"),
        "{err}"
    );
    // decode shows them as notes placed in the index file.
    let (rows, _, code) = jsonl(&["decode", "-f", "jsonl", d]);
    assert_eq!(code, 1);
    let notes: Vec<(&str, u64)> = rows
        .iter()
        .filter_map(|r| Some((r["note"].as_str()?, r["stream_offset"].as_u64()?)))
        .collect();
    assert_eq!(
        notes,
        [
            ("timeindex-timestamp-mismatch", 0),
            ("index-not-at-batch", 8)
        ]
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn display_filters_choose_the_pdus_records_come_from() {
    let cap = "captures/mock-confluent-group.pcap";
    let (all, _, _) = jsonl(&["records", "-f", "jsonl", cap]);
    let (fetched, err, code) = jsonl(&["records", "-f", "jsonl", "-Y", "api == Fetch", cap]);
    assert_eq!(code, 0, "{err}");
    let want: Vec<&J> = all
        .iter()
        .filter(|r| r["direction"] == "response")
        .collect();
    assert!(!want.is_empty());
    assert_eq!(fetched.iter().collect::<Vec<_>>(), want);
    let bad = kinspect(&["records", "-Y", "api ==", cap]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A capture whose packets were cut at 128 bytes: its Produce requests and Fetch responses hold
/// records that never reached the file. `records` prints none, exits 1, and says on stderr, for
/// each such PDU, where it is and why, in every format and on one thread or two. The expected
/// frames come from tshark's rows beside the capture (a Fetch response by the request its
/// correlation id answers) and the pcap's record headers (a record shorter than its packet).
#[test]
fn records_say_which_pdus_holding_records_did_not_decode() {
    let src = common::captures_dir().join("mock-kcat-snaplen128.pcap");
    let cut = common::cut_packets(&src);
    let rows = common::tshark_summary(&src);
    // (stream, correlation id) of each request: its API and version.
    let requests: BTreeMap<(&str, &str), (&str, &str)> = rows
        .iter()
        .filter(|r| r[1] == "request")
        .map(|r| ((&*r[6], &*r[5]), (&*r[3], &*r[4])))
        .collect();
    let mut want = BTreeMap::new();
    let mut whole = 0;
    for r in &rows {
        let frame: usize = r[0].parse().unwrap();
        let holds = match (&*r[1], requests.get(&(&*r[6], &*r[5]))) {
            ("request", Some(&(api, v))) if api == "Produce" => Some(format!("{api} v{v} request")),
            ("response", Some(&(api, v))) if api == "Fetch" => Some(format!("{api} v{v} response")),
            _ => None,
        };
        if let Some(what) = holds {
            if cut[frame - 1] {
                want.insert(frame, what);
            } else {
                whole += 1;
            }
        }
    }
    assert!(want.len() >= 10 && whole == 0, "{want:?}, {whole} whole");

    let path = src.to_str().unwrap();
    let run = |args: &[&str], one_thread: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kinspect"));
        c.args(args).current_dir(common::repo());
        if one_thread {
            c.env("KINSPECT_THREADS", "1");
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        (o.stdout, err, o.status.code())
    };
    let (out, err, code) = run(&["records", path], false);
    assert_eq!((out.len(), code), (0, Some(1)), "{err}");
    let mut got = BTreeMap::new();
    for l in err.lines() {
        let Some((at, rest)) = l.split_once(": error [") else {
            continue;
        };
        let frame: usize = at.rsplit(' ').next().unwrap().parse().unwrap();
        let (_, rest) = rest.split_once("] ").unwrap();
        let what = rest.split(':').next().unwrap().to_string();
        assert!(rest.contains("frame truncated"), "{l}");
        assert!(got.insert(frame, what).is_none(), "{l}");
    }
    assert_eq!(got, want, "{err}");
    // Lines in frame order, notes and PDUs together.
    let frames: Vec<usize> = err
        .lines()
        .filter_map(|l| l.split(" frame ").nth(1)?.split(':').next()?.parse().ok())
        .collect();
    assert!(frames.windows(2).all(|w| w[0] <= w[1]), "{err}");
    // The same said whatever the output and however many threads.
    let jsonl = run(&["records", "-f", "jsonl", path], false);
    assert_eq!((jsonl.0.len(), &jsonl.1, jsonl.2), (0, &err, Some(1)));
    let one = run(&["records", path], true);
    assert_eq!((&one.1, one.2), (&err, Some(1)));
    let dir = std::env::temp_dir().join(format!("kinspect-records-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let table = dir.join("records.parquet");
    let pq = run(
        &[
            "records",
            "-f",
            "parquet",
            "-o",
            table.to_str().unwrap(),
            path,
        ],
        false,
    );
    assert_eq!((&pq.1, pq.2), (&err, Some(1)));

    // `decode -f parquet` keeps each PDU's errors in the `diagnostics` column and counts them
    // here: the PDUs whose packet was cut and the two tshark calls malformed (the mock's
    // ApiVersions v3 answers).
    let errored = rows
        .iter()
        .filter(|r| cut[r[0].parse::<usize>().unwrap() - 1] || r[11] == "yes")
        .count();
    let tables = dir.join("tables");
    let d = run(
        &[
            "decode",
            "-f",
            "parquet",
            "-o",
            tables.to_str().unwrap(),
            path,
        ],
        false,
    );
    assert_eq!(d.2, Some(1), "{}", d.1);
    assert!(
        d.1.lines().any(|l| l
            == format!(
                "kinspect decode: {errored} PDUs with error diagnostics: see the pdus table's \
                 `diagnostics` column"
            )),
        "{}",
        d.1
    );
    assert!(d.1.contains("warning [frame-incomplete]"), "{}", d.1);
    std::fs::remove_dir_all(&dir).unwrap();

    // A batch that does not decompress: the field path to it, and the codec's reason.
    let (out, err, code) = run(
        &[
            "records",
            "tests/fixtures/records/lz4-kafka-checksum-magic2.hex",
        ],
        false,
    );
    assert_eq!((out.len(), code), (0, Some(1)), "{err}");
    assert!(
        err.contains(
            "error [decompress-failed] Produce v7 request at \
             body.TopicData[0].PartitionData[0].Records[0].Records: lz4:"
        ),
        "{err}"
    );
}
