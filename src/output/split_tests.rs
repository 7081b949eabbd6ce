//! Two threads print and count exactly what one does, with batches of every size (the printers
//! and the statistics as split sinks of `engine::parallel`).

use crate::engine::parallel::{Parallel, Shared, Turn, BATCH_BYTES, BATCH_FRAMES, BUDGET};
use crate::engine::{Driver, Input, Options, Split};
use crate::output::stats::{StatsFormat, StatsPrinter};
use crate::output::{Format, Printer};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn captures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    v.sort();
    assert!(v.len() >= 10, "the bundled captures are missing");
    v
}

fn printer_opts(format: Format) -> crate::output::Options {
    crate::output::Options {
        format,
        annotate: false,
        color: false,
        show_secrets: false,
    }
}

fn temp(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "kinspect-parallel-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs `inputs` into a sink made over a file, on one thread or two with the given batch sizes,
/// and gives the file's bytes and whether errors were seen.
fn output<S: Split>(
    inputs: &[PathBuf],
    batch: Option<(usize, usize)>,
    make: impl FnOnce(std::fs::File) -> S,
) -> (Vec<u8>, bool) {
    let path = temp("out");
    let mut sink = make(std::fs::File::create(&path).unwrap());
    let errors = drive(inputs, batch, &mut sink);
    drop(sink);
    let text = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (text, errors)
}

/// Runs `inputs` into `sink`, on one thread or two with the given batch sizes; gives whether
/// errors were seen.
fn drive<S: Split>(inputs: &[PathBuf], batch: Option<(usize, usize)>, sink: &mut S) -> bool {
    let opts = Options::default();
    let ins = inputs.iter().map(Input::path);
    let outcome = match batch {
        None => crate::engine::run(ins, &opts, sink),
        Some((frames, bytes)) => {
            let filters = Arc::new(opts.filters.clone());
            let Ok(mut par) =
                Parallel::new(sink, Arc::clone(&filters), opts.protocol, opts.records)
            else {
                panic!("the sink does not split");
            };
            par.batch_frames = frames;
            par.batch_bytes = bytes;
            Driver::new(&opts, par, filters).all(ins)
        }
    };
    assert!(outcome.failed.is_empty() && outcome.output_error.is_none());
    outcome.errors
}

/// Every bundled capture alone, and all of them as successive inputs (a session each), with
/// batches of 1, 2, 3 and 7 frames and of 4 KiB: two threads print (JSON Lines, tree, summary)
/// and count (stats) exactly what one does, and agree on whether anything carried an error.
#[test]
fn two_threads_print_what_one_does() {
    let caps = captures();
    let mut runs: Vec<Vec<PathBuf>> = caps.iter().map(|p| vec![p.clone()]).collect();
    runs.push(caps.clone());
    let printer = |f: Format| move |file| Printer::new(Shared::new(file), printer_opts(f));
    for inputs in &runs {
        for format in [Format::Jsonl, Format::Tree, Format::Summary] {
            let (want, want_errors) = output(inputs, None, printer(format));
            assert!(!want.is_empty());
            for batch in [
                (1, BATCH_BYTES),
                (2, BATCH_BYTES),
                (3, 4096),
                (7, 4096),
                (BATCH_FRAMES, BATCH_BYTES),
            ] {
                let (got, errors) = output(inputs, Some(batch), printer(format));
                assert!(
                    got == want,
                    "{inputs:?} {format:?} with batches of {batch:?}: output differs"
                );
                assert_eq!(errors, want_errors);
            }
        }
        let stats = |file| StatsPrinter::new(Shared::new(file), StatsFormat::Json);
        let (want, _) = output(inputs, None, stats);
        for batch in [(1, BATCH_BYTES), (7, 4096)] {
            let (got, _) = output(inputs, Some(batch), stats);
            assert!(got == want, "{inputs:?} stats with batches of {batch:?}");
        }
    }
}

/// While the worker has the output, this side's text waits within the budget; past it, this
/// side waits for the worker, then writes: the text is never held whole, and comes out after
/// the worker's.
#[test]
fn waiting_text_stays_within_the_budget() {
    let path = temp("spill");
    let file = std::fs::File::create(&path).unwrap();
    let turn = Arc::new(Turn::default());
    let mut mine = Shared::new(file.try_clone().unwrap());
    mine.set_turn(Arc::clone(&turn));
    let mut theirs = mine.worker_side().unwrap();
    turn.take();
    let worker = {
        let turn = Arc::clone(&turn);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            theirs.write_all(b"worker\n").unwrap();
            theirs.write_held().unwrap();
            turn.give_back();
        })
    };
    let mut most = 0;
    for _ in 0..(3 * BUDGET / 1024) {
        mine.write_all(&[b'x'; 1024]).unwrap();
        most = most.max(mine.held());
    }
    mine.flush().unwrap();
    worker.join().unwrap();
    let got = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(
        got.starts_with(b"worker\n"),
        "the worker's text comes first"
    );
    assert_eq!(got.len(), 7 + 3 * BUDGET);
    assert!(
        most <= BUDGET + (64 << 10),
        "{most} bytes were held while the worker wrote"
    );
}

/// Every row of both tables, in order, as the parquet crate reads them back.
#[cfg(feature = "parquet")]
fn parquet_rows(dir: &std::path::Path) -> Vec<String> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut rows = Vec::new();
    for table in ["pdus", "records"] {
        let file = std::fs::File::open(dir.join(format!("{table}.parquet"))).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        for batch in reader {
            let batch = batch.unwrap();
            for i in 0..batch.num_rows() {
                let cols: Vec<String> = batch
                    .columns()
                    .iter()
                    .map(|c| format!("{:?}", c.slice(i, 1)))
                    .collect();
                rows.push(format!("{table}: {}", cols.join(" | ")));
            }
        }
    }
    rows
}

/// The Parquet tables hold the same rows in the same order on two threads as on one, with
/// batches of 1 and 3 frames: rows the reading thread gathers while the worker has two batches
/// reach the writer between them (`Rows::carried`).
#[cfg(feature = "parquet")]
#[test]
fn two_threads_write_the_rows_one_does_in_order() {
    use crate::output::parquet::{Layout, ParquetSink, Tables};
    let tables = Tables {
        pdus: true,
        records: true,
    };
    let caps = captures();
    let run = |batch: Option<(usize, usize)>| {
        let dir = temp("parquet");
        let sink = ParquetSink::new(Layout::Folder(dir.clone()), tables);
        // One thread: the files written on the calling thread too.
        let mut sink = match batch {
            None => sink.on_one_thread(),
            Some(_) => sink,
        };
        drive(&caps, batch, &mut sink);
        drop(sink);
        let rows = parquet_rows(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        rows
    };
    let want = run(None);
    assert!(want.len() > 1000, "{} rows", want.len());
    for batch in [(1, BATCH_BYTES), (3, 4096)] {
        let got = run(Some(batch));
        assert_eq!(got.len(), want.len(), "batches of {batch:?}: row count");
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "batches of {batch:?}: row {i} differs:\n{}\n{}",
                got[i], want[i]
            );
        }
    }
}
