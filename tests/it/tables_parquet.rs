//! The Parquet tables (`-f parquet -o PATH`), read back by DuckDB (an independent Parquet
//! reader and SQL engine, `pip install duckdb`) and compared with `kinspect stats --format json`
//! on the same capture (PDUs and bytes per API and version, error codes, latency percentiles
//! within the histogram's precision) and, for records, with tshark's decode of the same frames
//! (tests/fixtures/records/tshark-records.tsv). Without python3 and duckdb these tests are
//! listed as ignored, naming what is missing.

use crate::common::{self, kinspect, stdout};
use serde_json::Value as J;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs `sql` in DuckDB and returns its rows as JSON arrays (values DuckDB can print as JSON).
fn duckdb(sql: &str) -> Vec<Vec<J>> {
    let script = "import duckdb, json, sys\n\
        rows = duckdb.sql(sys.argv[1]).fetchall()\n\
        print(json.dumps([[v if isinstance(v, (int, float, str, type(None), list)) else str(v) for v in r] for r in rows]))";
    let o = std::process::Command::new("python3")
        .args(["-c", script, sql])
        .output()
        .expect("python3 (with duckdb) runs");
    assert!(
        o.status.success(),
        "duckdb failed on {sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The rows of the table in `a` and of the one in `b` are the same rows (a multiset), and there
/// are some: what `except all` leaves both ways is nothing. `read_parquet`, since DuckDB picks
/// a reader by the file's ending otherwise.
fn same_rows(a: &Path, b: &Path) {
    let count = |p: &Path| {
        duckdb(&format!(
            "select count(*) from read_parquet('{}')",
            p.display()
        ))
    };
    let not_in = |x: &Path, y: &Path| {
        duckdb(&format!(
            "select count(*) from (select * from read_parquet('{}') \
             except all select * from read_parquet('{}'))",
            x.display(),
            y.display()
        ))
    };
    let none = vec![vec![J::from(0)]];
    assert_eq!(count(a), count(b), "{} and {}", a.display(), b.display());
    assert_ne!(count(a), none, "{} holds rows", a.display());
    assert_eq!(
        not_in(a, b),
        none,
        "{} rows not in {}",
        a.display(),
        b.display()
    );
    assert_eq!(
        not_in(b, a),
        none,
        "{} rows not in {}",
        b.display(),
        a.display()
    );
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kinspect-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn stats(cap: &str) -> J {
    let o = kinspect(&["stats", "--format", "json", cap]);
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn decode_parquet(cap: &str, out: &Path) {
    let o = kinspect(&["decode", "-f", "parquet", "-o", out.to_str().unwrap(), cap]);
    assert!(
        o.status.code().is_some_and(|c| c < 2),
        "{cap}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `kinspect records -f parquet -o FILE INPUT`, which must succeed with nothing to report.
fn records_parquet(file: &Path, input: &str) {
    let o = kinspect(&[
        "records",
        "-f",
        "parquet",
        "-o",
        file.to_str().unwrap(),
        input,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{input}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

const CAPTURES: &[&str] = &[
    "captures/mock-kcat-gzip.pcap",
    "captures/mock-confluent-txn.pcap",
    "captures/tansu-kafkapython3-admin-sweep.pcap",
    "captures/tansu-kcat-apiversions-fail.pcap",
    "captures/mock-kafkajs.pcap",
    // 49 Fetch latencies within 2% of each other: percentiles from 3% buckets were all the max.
    "captures/tansu-confluent-group.pcap",
];

#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn the_pdus_table_counts_what_stats_counts() {
    for cap in CAPTURES {
        let dir = tmp("pdus");
        decode_parquet(cap, &dir);
        let pdus = dir.join("pdus.parquet");
        let p = pdus.to_str().unwrap();
        let s = stats(cap);
        // PDUs and bytes per (API, version).
        let rows = duckdb(&format!(
            "select api_key, api_version, count(*) filter (direction = 'request'),
                    count(*) filter (direction = 'response'),
                    coalesce(sum(size) filter (direction = 'request'), 0),
                    coalesce(sum(size) filter (direction = 'response'), 0)
             from '{p}' where api_key is not null group by all order by all"
        ));
        let want: Vec<Vec<J>> = s["apis"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                [
                    "api_key",
                    "api_version",
                    "requests",
                    "responses",
                    "request_bytes",
                    "response_bytes",
                ]
                .iter()
                .map(|k| a[*k].clone())
                .collect()
            })
            .collect();
        assert_eq!(rows, want, "{cap}: PDUs per API");
        assert!(!rows.is_empty(), "{cap}");
        // Error codes of responses, by API and name.
        let rows = duckdb(&format!(
            "select api_key, e, count(*) from (select api_key, unnest(errors) as e from '{p}'
             where direction = 'response') group by all order by all"
        ));
        let mut want: Vec<Vec<J>> = s["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| vec![e["api_key"].clone(), e["error"].clone(), e["count"].clone()])
            .collect();
        want.sort_by_key(|r| (r[0].as_i64(), r[1].as_str().map(String::from)));
        assert_eq!(rows, want, "{cap}: errors");
        // Latency percentiles: DuckDB's and stats' are the same nearest-rank ones, exactly
        // (an API's latencies are kept one by one up to 4096, far more than these captures
        // hold), stats' in milliseconds rounded to the microsecond.
        let rows = duckdb(&format!(
            "select api, count(latency_us), min(latency_us), quantile_disc(latency_us, 0.5),
                    quantile_disc(latency_us, 0.9), quantile_disc(latency_us, 0.99),
                    max(latency_us)
             from '{p}' where latency_us is not null group by all order by all"
        ));
        for r in &rows {
            let api = r[0].as_str().unwrap();
            let l = &s["latency"][api];
            assert_eq!(r[1], l["count"], "{cap} {api}");
            assert_eq!(l["exact"], true, "{cap} {api}");
            for (i, k) in [
                (2, "min_ms"),
                (3, "p50_ms"),
                (4, "p90_ms"),
                (5, "p99_ms"),
                (6, "max_ms"),
            ] {
                let exact = r[i].as_f64().unwrap().round() / 1e3;
                let shown = l[k].as_f64().unwrap();
                assert_eq!(
                    exact, shown,
                    "{cap} {api} {k}: DuckDB {exact} ms, stats {shown} ms"
                );
            }
        }
        assert_eq!(
            rows.len(),
            s["latency"].as_object().unwrap().len(),
            "{cap}: APIs with latencies"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn the_records_table_holds_the_records_tshark_decoded() {
    let oracle =
        std::fs::read_to_string(common::repo().join("tests/fixtures/records/tshark-records.tsv"))
            .unwrap();
    let mut want: BTreeMap<(String, i64), Vec<J>> = BTreeMap::new();
    for line in oracle.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let value = if f[7] == "-" { "" } else { f[7] };
        want.entry((f[0].to_string(), f[1].parse().unwrap()))
            .or_default()
            .push(J::String(value.to_string()));
    }
    for cap in [
        "mock-kcat-snappy",
        "mock-kafkapython2-codecs",
        "mock-confluent-txn",
    ] {
        let file = tmp("records").join("records.parquet");
        records_parquet(&file, &format!("captures/{cap}.pcap"));
        let rows = duckdb(&format!(
            "select frame, list(lower(coalesce(hex(value), '')) order by frame, offset_delta)
             from '{}' group by frame order by frame",
            file.display()
        ));
        let got: BTreeMap<(String, i64), Vec<J>> = rows
            .into_iter()
            .map(|r| {
                (
                    (cap.to_string(), r[0].as_i64().unwrap()),
                    r[1].as_array().unwrap().clone(),
                )
            })
            .collect();
        let want: BTreeMap<_, _> = want
            .iter()
            .filter(|((c, _), _)| c == cap)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert!(!want.is_empty());
        for (k, v) in &want {
            assert_eq!(got.get(k), Some(v), "{k:?}");
        }
        let _ = std::fs::remove_dir_all(file.parent().unwrap());
    }
}

/// A re-run writes over the last run's table rather than truncating it (see
/// `output::parquet::open_in_place`): a table written over a larger one is cut to its own
/// length and reads back, in DuckDB, exactly as the same table written to a new file.
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn a_table_written_over_a_larger_one_reads_as_one_written_anew() {
    let dir = tmp("over");
    std::fs::create_dir_all(&dir).unwrap();
    let (over, anew) = (dir.join("over.parquet"), dir.join("anew.parquet"));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    // The last run's table, made larger than any this capture gives (a table's size varies
    // with how the rows fell to the two decoding threads).
    records_parquet(&over, "captures/tansu-kafkapython3-codecs.pcap");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&over)
        .unwrap();
    std::io::Write::write_all(&mut f, &[0xab; 1 << 20]).unwrap();
    drop(f);
    let larger = size(&over);
    records_parquet(&over, "captures/mock-kcat-zstd.pcap");
    records_parquet(&anew, "captures/mock-kcat-zstd.pcap");
    assert!(size(&over) < larger, "{} of {larger} bytes", size(&over));
    same_rows(&over, &anew);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn several_captures_make_one_dataset_of_a_file_each() {
    let dir = tmp("dataset");
    let mut args = vec!["decode", "-f", "parquet", "-o", dir.to_str().unwrap()];
    args.extend(&CAPTURES[..3]);
    let o = kinspect(&args);
    assert!(
        o.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for cap in &CAPTURES[..3] {
        let stem = Path::new(cap).file_stem().unwrap().to_str().unwrap();
        assert!(
            dir.join("pdus").join(format!("{stem}.parquet")).is_file(),
            "{stem}"
        );
        assert!(
            dir.join("records")
                .join(format!("{stem}.parquet"))
                .is_file(),
            "{stem}"
        );
    }
    let rows = duckdb(&format!(
        "select input, count(*) filter (api_key is not null) from read_parquet('{}/pdus/*.parquet') group by all order by all",
        dir.display()
    ));
    let mut want: Vec<Vec<J>> = CAPTURES[..3]
        .iter()
        .map(|c| {
            let s = stats(c);
            let n = s["requests"].as_i64().unwrap() + s["responses"].as_i64().unwrap()
                - s["sasl_tokens"].as_i64().unwrap()
                - s["unidentified"].as_i64().unwrap();
            vec![J::String(c.to_string()), J::from(n)]
        })
        .collect();
    want.sort_by_key(|r| r[0].as_str().map(String::from));
    assert_eq!(rows, want);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o PATH` that exists and is not a folder (`/dev/null`, a file without the `.parquet`
/// ending, a named pipe) takes the one table `records` writes; `decode`'s two tables refuse it
/// with a message that names the path, and a folder that cannot be made is named too (it was
/// `writing the output: File exists (os error 17)`).
#[test]
fn a_path_that_is_not_a_folder_takes_one_table_and_names_itself_when_refused() {
    let cap = "captures/mock-kafkajs.pcap";
    let o = kinspect(&["records", "-f", "parquet", "-o", "/dev/null", cap]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = kinspect(&["decode", "-f", "parquet", "-o", "/dev/null", cap]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("kinspect decode: /dev/null: two tables (pdus, records) need a folder"),
        "{err}"
    );

    let dir = tmp("not-a-folder");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let under = file.join("tables");
    let o = kinspect(&[
        "decode",
        "-f",
        "parquet",
        "-o",
        under.to_str().unwrap(),
        cap,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}: cannot make this folder for the tables: ",
            under.display()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o -` with standard output on a terminal is refused: a table is binary. The terminal is a
/// pseudo-terminal made by `script` (util-linux).
#[test]
fn a_table_is_not_written_to_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_kinspect");
    let cmd = format!("{bin} records -f parquet -o - captures/mock-kafkajs.pcap");
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(common::repo())
        .output()
        .expect(
            "`script` (util-linux) makes the terminal for this test: apt-get install util-linux",
        );
    let seen = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{seen}");
    assert!(
        seen.contains("a Parquet table is binary and standard output is a terminal"),
        "{seen}"
    );
    assert!(!seen.contains("PAR1"), "no table on the terminal: {seen}");
}

/// The table written into a named pipe (no seeking, no cutting to length), to standard output
/// (`-o -`, as for every format) and into an existing file without the `.parquet` ending reads in
/// DuckDB as the table written to `FILE.parquet`.
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn a_table_written_into_a_pipe_to_stdout_or_a_plain_file_reads_back_whole() {
    let cap = "captures/mock-kcat-zstd.pcap";
    let dir = tmp("pipe");
    std::fs::create_dir_all(&dir).unwrap();
    let (fifo, from_fifo) = (dir.join("fifo"), dir.join("from-fifo.parquet"));
    let (plain, reference) = (dir.join("table.out"), dir.join("reference.parquet"));
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read the pipe"))
    };
    records_parquet(&fifo, cap);
    let bytes = reader.join().unwrap();
    std::fs::write(&from_fifo, &bytes).unwrap();
    std::fs::write(&plain, b"the last run's text output").unwrap();
    records_parquet(&plain, cap);
    records_parquet(&reference, cap);
    let to_stdout = dir.join("stdout.parquet");
    let o = kinspect(&["records", "-f", "parquet", "-o", "-", cap]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(&to_stdout, &o.stdout).unwrap();
    for p in [&from_fifo, &plain, &to_stdout] {
        same_rows(p, &reference);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parquet_needs_an_output_path() {
    let o = kinspect(&["decode", "-f", "parquet", "captures/mock-kcat-none.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give their folder with -o DIR"));
    // One table may go to standard output, but only when asked (`-o -`): never by default.
    let o = kinspect(&["records", "-f", "parquet", "captures/mock-kcat-none.pcap"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("with -o PATH"));
}

/// Rows are routed to files by the input's number in the run, not by its path: given the same
/// capture three times, each of the three files holds that capture's PDUs and records once (when
/// rows were routed by path, a batch of the first input that came back from the worker after the
/// second began went to the second's file).
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn rows_are_routed_by_input_number_not_path_when_a_capture_is_given_twice() {
    let cap = "captures/mock-kcat-gzip.pcap";
    let dir = tmp("twice");
    let d = dir.to_str().unwrap();
    let o = kinspect(&["decode", "-f", "parquet", "-o", d, cap, cap, cap]);
    assert!(
        o.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = stats(cap);
    let pdus = s["requests"].as_i64().unwrap() + s["responses"].as_i64().unwrap()
        - s["sasl_tokens"].as_i64().unwrap()
        - s["unidentified"].as_i64().unwrap();
    let records = {
        let o = kinspect(&["records", "-f", "jsonl", cap]);
        stdout(&o).lines().count() as i64
    };
    assert!(records > 0, "{cap} has records");
    let files = [
        "mock-kcat-gzip-2.parquet",
        "mock-kcat-gzip-3.parquet",
        "mock-kcat-gzip.parquet",
    ];
    for (table, count, want) in [
        ("pdus", "count(*) filter (api_key is not null)", pdus),
        ("records", "count(*)", records),
    ] {
        let rows = duckdb(&format!(
            "select parse_filename(filename), {count} \
             from read_parquet('{d}/{table}/*.parquet', filename = true) group by all order by all"
        ));
        let want: Vec<Vec<J>> = files
            .iter()
            .map(|f| vec![J::from(*f), J::from(want)])
            .collect();
        assert_eq!(rows, want, "{table}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Record values, which kinspect encodes into Parquet pages itself (not through the parquet
/// crate's column writer), read back by DuckDB exactly as they were written: null, empty and
/// short values, and values larger than a page, over many batches and pages. The records are
/// the test's own, encoded into a log segment by kafka-protocol (an independent encoder).
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn record_values_read_back_exactly_null_empty_and_larger_than_a_page() {
    let value = |i: i64| -> Option<Vec<u8>> {
        match i {
            i if i % 7 == 0 => None,
            i if i % 11 == 0 => Some(Vec::new()),
            // Every 2,500th: 100 kB, more than a page (64 KiB), of bytes that do not repeat.
            i if i % 2_500 == 1 => Some(
                (0..100_000u32)
                    .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
                    .collect(),
            ),
            i => Some(
                format!("value {i} ")
                    .repeat(i as usize % 13 + 1)
                    .into_bytes(),
            ),
        }
    };
    let dir = tmp("values");
    let part = dir.join("payments-0");
    std::fs::create_dir_all(&part).unwrap();
    let mut log = Vec::new();
    let total = 20_000i64;
    for base in (0..total).step_by(500) {
        let records: Vec<_> = (base..base + 500)
            .map(|o| common::kp_record(o, 1_767_225_600_000 + o, None, value(o).map(Into::into)))
            .collect();
        log.extend(common::kp_batch(&records));
    }
    std::fs::write(part.join("00000000000000000000.log"), log).unwrap();
    let file = dir.join("records.parquet");
    records_parquet(&file, part.to_str().unwrap());
    let rows = duckdb(&format!(
        "select \"offset\", value is null, lower(hex(value)) from '{}' order by \"offset\"",
        file.display()
    ));
    assert_eq!(rows.len(), total as usize);
    for (i, r) in rows.iter().enumerate() {
        let want = value(i as i64);
        let hex: Option<String> = want
            .as_ref()
            .map(|v| v.iter().map(|b| format!("{b:02x}")).collect());
        assert_eq!(r[0], J::from(i as i64), "row {i}");
        assert_eq!(r[1], J::Bool(want.is_none()), "offset {i}: null");
        if let Some(h) = hex {
            assert_eq!(r[2].as_str(), Some(h.as_str()), "offset {i}: value");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn row_groups_close_once_the_writer_holds_row_group_bytes() {
    use kinspect::output::parquet::{BATCH_BYTES, ROW_GROUP_BYTES, ROW_GROUP_ROWS};
    // Records of 100 kB that snappy cannot shrink, more than two of the largest row groups the
    // limit allows hold (one batch past it, and a record) and far fewer rows than
    // ROW_GROUP_ROWS, so only the byte limit can cut the table into row groups.
    let value = |i: u32| -> Vec<u8> {
        // xorshift64: bytes with no repeats for snappy to find.
        let mut x = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    };
    let most = (ROW_GROUP_BYTES + BATCH_BYTES + 100_000) as u64;
    let total = (2 * most / 100_000 + 10) as u32 / 10 * 10;
    assert!((total as usize) < ROW_GROUP_ROWS);
    let dir = tmp("row-groups");
    let part = dir.join("payments-0");
    std::fs::create_dir_all(&part).unwrap();
    let mut log = Vec::new();
    for base in (0..total).step_by(10) {
        let records: Vec<_> = (base..base + 10)
            .map(|o| {
                let o = i64::from(o);
                common::kp_record(o, 1_767_225_600_000 + o, None, Some(value(o as u32).into()))
            })
            .collect();
        log.extend(common::kp_batch(&records));
    }
    std::fs::write(part.join("00000000000000000000.log"), log).unwrap();
    let file = dir.join("records.parquet");
    records_parquet(&file, part.to_str().unwrap());
    let groups = duckdb(&format!(
        "select row_group_id, any_value(row_group_num_rows), sum(total_compressed_size)          from parquet_metadata('{}') group by row_group_id order by row_group_id",
        file.display()
    ));
    let sizes: Vec<u64> = groups.iter().map(|g| g[2].as_u64().unwrap()).collect();
    let rows: u64 = groups.iter().map(|g| g[1].as_u64().unwrap()).sum();
    assert_eq!(rows, u64::from(total), "{groups:?}");
    // The values did not shrink: more than two of the largest row groups' worth of pages.
    assert!(sizes.iter().sum::<u64>() > 2 * most, "{sizes:?}");
    // At most one batch past the limit (it closes on the batch that reaches it), and a record.
    assert!(
        sizes.len() >= 2 && sizes.iter().all(|&s| s <= most),
        "row groups of {sizes:?} bytes, each should be at most {most}"
    );
    let back = duckdb(&format!(
        "select count(*), count(distinct md5(value)), min(\"offset\"), max(\"offset\"),          bool_and(octet_length(value) = 100000) from '{}'",
        file.display()
    ));
    assert_eq!(
        back,
        vec![vec![
            J::from(total),
            J::from(total),
            J::from(0),
            J::from(total - 1),
            J::Bool(true)
        ]]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn every_records_column_and_its_statistics_read_back_from_a_segment_kafka_protocol_wrote() {
    use kafka_protocol::protocol::StrBytes;
    // What each record is, decided here: kafka-protocol encodes it, DuckDB reads kinspect's
    // table back, and every column must say what the test put in.
    struct Want {
        offset: i64,
        delta: i64,
        key: Option<String>,
        header: Option<String>,
        producer_id: i64,
        producer_epoch: i64,
        sequence: i64,
        transactional: bool,
        file_offset: usize,
    }
    let dir = tmp("columns");
    let part = dir.join("orders-3");
    std::fs::create_dir_all(&part).unwrap();
    let (mut log, mut want) = (Vec::new(), Vec::new());
    let per_batch = 300i64;
    for b in 0..40i64 {
        let base = b * per_batch;
        let at = log.len();
        let records: Vec<_> = (base..base + per_batch)
            .map(|o| {
                let key = (o % 3 != 0).then(|| format!("key-{o}"));
                let mut r = common::kp_record(
                    o,
                    1_767_225_600_000 + 7 * o,
                    key.clone().map(Into::into),
                    Some(format!("value {o}").into_bytes().into()),
                );
                // Producers of ids above i32 (and one with the largest id), a few epochs.
                r.producer_id = if b == 39 {
                    i64::MAX
                } else {
                    5_000_000_000 + b % 4
                };
                r.producer_epoch = (b % 5) as i16;
                r.sequence = (b * 1000 + (o - base)) as i32;
                r.transactional = b % 2 == 1;
                let header = (o % 4 == 0).then(|| format!("h{o}"));
                if let Some(h) = &header {
                    r.headers.insert(
                        StrBytes::from_static_str("trace"),
                        Some(h.clone().into_bytes().into()),
                    );
                }
                want.push(Want {
                    offset: o,
                    delta: o - base,
                    key,
                    header,
                    producer_id: r.producer_id,
                    producer_epoch: r.producer_epoch.into(),
                    sequence: r.sequence.into(),
                    transactional: r.transactional,
                    file_offset: at,
                });
                r
            })
            .collect();
        log.extend(common::kp_batch(&records));
    }
    std::fs::write(part.join("00000000000000000000.log"), log).unwrap();
    let file = dir.join("records.parquet");
    records_parquet(&file, part.to_str().unwrap());
    let f = file.display();
    let rows = duckdb(&format!(
        "select \"offset\", offset_delta, epoch_ms(\"timestamp\"), timestamp_type, decode(key),
                headers[1].key, decode(headers[1].value), len(headers), producer_id,
                producer_epoch, sequence, transactional, control, codec, magic, crc_ok, topic,
                partition, file_offset, frame is null, direction is null, client is null,
                client_id is null, decode(value)
         from '{f}' order by \"offset\""
    ));
    assert_eq!(rows.len(), want.len());
    for (r, w) in rows.iter().zip(&want) {
        let o = w.offset;
        let expect = serde_json::json!([
            o,
            w.delta,
            1_767_225_600_000 + 7 * o,
            "CreateTime",
            w.key,
            w.header.as_ref().map(|_| "trace"),
            w.header,
            u8::from(w.header.is_some()),
            w.producer_id,
            w.producer_epoch,
            w.sequence,
            w.transactional,
            false,
            "none",
            2,
            true,
            "orders",
            3,
            w.file_offset,
            true,
            true,
            true,
            true,
            format!("value {o}"),
        ]);
        assert_eq!(J::Array(r.clone()), expect, "offset {o}");
    }
    // Statistics: every column chunk that has a min and max has those of its values as DuckDB
    // computes them from the rows, and its null count; the columns without statistics (payloads,
    // labels) have none.
    let stats = duckdb(&format!(
        "select path_in_schema, stats_min_value, stats_max_value, stats_null_count
         from parquet_metadata('{f}') where path_in_schema not like 'headers%'
         order by column_id"
    ));
    let none = [
        "direction",
        "client",
        "timestamp_type",
        "key",
        "value",
        "codec",
    ];
    assert_eq!(stats.len(), 22);
    for s in &stats {
        let col = s[0].as_str().unwrap();
        if none.contains(&col) {
            assert_eq!(s[1..], [J::Null, J::Null, J::Null], "{col} has statistics");
            continue;
        }
        let computed = duckdb(&format!(
            "select min(\"{col}\")::varchar, max(\"{col}\")::varchar, count(*) - count(\"{col}\")
             from '{f}'"
        ));
        let (min, max, nulls) = (&computed[0][0], &computed[0][1], &computed[0][2]);
        assert_eq!(&s[3], nulls, "{col}: null count");
        if min.is_null() {
            assert_eq!(
                s[1..3],
                [J::Null, J::Null],
                "{col}: all null, yet a min/max"
            );
        } else if min.as_str().is_some_and(|m| m.len() > 64) {
            // (The input's path here.) Cut to 64 bytes as the parquet crate cuts: the min to a
            // prefix, the max raised above every value.
            let (lo, hi) = (s[1].as_str().unwrap(), s[2].as_str().unwrap());
            assert!(
                lo.len() <= 64 && min.as_str().unwrap().starts_with(lo),
                "{col}: {lo}"
            );
            assert!(hi.len() <= 64 && hi > max.as_str().unwrap(), "{col}: {hi}");
        } else {
            assert_eq!((&s[1], &s[2]), (min, max), "{col}: min, max");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One Produce request whose partitions each hold two batches of different producers (ids,
/// epochs, transactional or not, a header in one): every record's row has its own batch's
/// columns, not its neighbour's. kafka-protocol encodes the request; DuckDB reads the table. The
/// records a batch shares are written as runs, so this is what would show a run carried across
/// a batch.
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb)"
)]
fn each_record_has_its_own_batchs_columns_when_a_pdu_has_several_batches() {
    use crate::check_support::{request, Net};
    use kafka_protocol::messages::{produce_request as pr, ProduceRequest, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let mut want = Vec::new();
    let mut topics = Vec::new();
    for (t, topic) in ["orders", "payments"].into_iter().enumerate() {
        let mut parts = Vec::new();
        for p in 0..2i32 {
            let mut records = Vec::new();
            for b in 0..2i64 {
                let pid = 7000 + 100 * t as i64 + 10 * i64::from(p) + b;
                let batch: Vec<_> = (0..3i64)
                    .map(|i| {
                        let key = format!("{topic}-{p}-{b}-{i}");
                        let mut r = common::kp_record(
                            i,
                            1_767_225_600_000 + i,
                            Some(key.clone().into_bytes().into()),
                            Some(b"v".to_vec().into()),
                        );
                        r.producer_id = pid;
                        r.producer_epoch = (b + 1) as i16;
                        r.sequence = (10 * b + i) as i32;
                        r.transactional = b == 1;
                        if b == 0 {
                            r.headers.insert(
                                StrBytes::from_static_str("h"),
                                Some(key.clone().into_bytes().into()),
                            );
                        }
                        want.push(serde_json::json!([
                            key,
                            topic,
                            p,
                            pid,
                            b + 1,
                            10 * b + i,
                            b == 1,
                            u8::from(b == 0),
                        ]));
                        r
                    })
                    .collect();
                records.extend(common::kp_batch(&batch));
            }
            parts.push(
                pr::PartitionProduceData::default()
                    .with_index(p)
                    .with_records(Some(records.into())),
            );
        }
        topics.push(
            pr::TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_static_str(topic)))
                .with_partition_data(parts),
        );
    }
    let q = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30000)
        .with_topic_data(topics);
    let mut net = Net::new();
    let (c, s) = (
        "10.0.1.1:50000".parse().unwrap(),
        "10.0.0.1:9092".parse().unwrap(),
    );
    net.send(c, s, true, &request(0, 9, 1, &q));
    let dir = tmp("batches");
    std::fs::create_dir_all(&dir).unwrap();
    let cap = dir.join("produce.pcap");
    std::fs::write(&cap, net.pcap()).unwrap();
    let out = dir.join("tables");
    decode_parquet(cap.to_str().unwrap(), &out);
    let rows = duckdb(&format!(
        "select decode(key), topic, partition, producer_id, producer_epoch, sequence,
                transactional, len(headers)
         from '{}' order by topic, partition, producer_id, sequence",
        out.join("records.parquet").display()
    ));
    assert_eq!(rows.len(), want.len());
    for (r, w) in rows.iter().zip(&want) {
        assert_eq!(&J::Array(r.clone()), w);
    }
}
