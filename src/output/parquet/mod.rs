//! Tables for DuckDB, pandas, Polars and Spark: the PDUs of a run (`pdus`) and their records
//! (`records`) as Parquet files (cargo feature `parquet`), written row group by row group as the
//! input streams, so memory stays flat however large the capture.
//!
//! Rows gather in Arrow builders and go to the file [`BATCH_ROWS`] at a time (or sooner, when
//! their data reaches [`BATCH_BYTES`]); the writer closes a row group every [`ROW_GROUP_ROWS`]
//! rows, or when what it holds reaches [`ROW_GROUP_BYTES`]. Snappy compression.
//!
//! Where the files go ([`Layout`]): `-o out/` with one input writes `out/pdus.parquet` and
//! `out/records.parquet`; with several inputs one file per input per table,
//! `out/pdus/NAME.parquet` and `out/records/NAME.parquet` (NAME: the input's file stem), a folder
//! each engine reads as one dataset (`read_parquet('out/pdus/*.parquet')` in DuckDB,
//! `spark.read.parquet("out/pdus")`, `pl.scan_parquet("out/pdus/*.parquet")`); every row names
//! its input. `-o FILE.parquet` writes the one table a command makes to that file.
//!
//! `pdus` columns: `input`, `frame` (capture frame number), `index` (frame or batch number in
//! the input), `time` (timestamp, UTC, ns), `stream` (TCP connection number), `client`,
//! `server` (addresses), `direction`, `api`, `api_key`, `api_version`, `correlation_id`,
//! `request_frame` and `latency_us` (responses), `size` (frame bytes with the size prefix; a
//! log batch's bytes), `client_id`, `topics` (list: the topic names the message mentions, by
//! schema entity and session-resolved topic ids: the `topic` field of `--filter`), `errors`
//! (list: every non-zero error code in the message, by name, as `--filter`'s `error`;
//! `UNKNOWN_CODE_N` for codes Kafka does not name) and `error_codes`
//! (the same as numbers), `diagnostics` (list: the codes of the decoder's error diagnostics).
//!
//! `records` columns: those of `kinspect records -f jsonl`: `input`, `frame`, `file_offset`,
//! `direction`, `client`, `client_id`, `topic`, `partition`, `offset` (null in a Produce
//! request), `offset_delta`, `timestamp` (UTC, ms), `timestamp_type`, `key`, `value` (binary;
//! `decode(value)` in DuckDB for text), `headers` (list of `{key, value}`), `producer_id`,
//! `producer_epoch`, `sequence`, `transactional`, `control`, `codec`, `magic`, `crc_ok`.

use crate::diag::Diagnostic;
use crate::engine::parallel::Turn;
use crate::engine::{InputEnd, InputInfo, Sink, Split};
use crate::pdu::{Origin, Pdu};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod rows;
use rows::{other, take};
pub use rows::{pdus_schema, records_schema, PduRows, RecordRows, Rows};

/// Rows gathered before they go to the writer.
pub const BATCH_ROWS: usize = 8192;
/// ... or once their keys, values and strings reach this many bytes.
pub const BATCH_BYTES: usize = 8 << 20;
/// Rows in a row group.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;
/// A row group is closed early once the writer holds this much of it.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// Which tables a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tables {
    pub pdus: bool,
    pub records: bool,
}

/// Where the files go (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `DIR/pdus.parquet`, `DIR/records.parquet`.
    Folder(PathBuf),
    /// `DIR/pdus/NAME.parquet`, `DIR/records/NAME.parquet`: one file per input.
    PerInput(PathBuf),
    /// One table to one file.
    File(PathBuf),
}

impl Layout {
    /// The layout `-o PATH` means for `inputs` inputs writing `tables`: a `.parquet` path is a
    /// file when one table is written from one input; anything else is a folder.
    pub fn for_output(path: &Path, inputs: usize, tables: Tables) -> Result<Layout, String> {
        let is_file = path.extension().is_some_and(|e| e == "parquet");
        match (is_file, inputs > 1, tables.pdus && tables.records) {
            (true, false, false) => Ok(Layout::File(path.to_path_buf())),
            (true, true, _) => Err(format!(
                "{}: several inputs make one file per input: give a folder",
                path.display()
            )),
            (true, false, true) => Err(format!(
                "{}: two tables (pdus, records) need a folder",
                path.display()
            )),
            (false, true, _) => Ok(Layout::PerInput(path.to_path_buf())),
            (false, false, _) => Ok(Layout::Folder(path.to_path_buf())),
        }
    }
}

/// One open Parquet file.
struct Table {
    writer: ArrowWriter<std::fs::File>,
}

impl Table {
    fn create(path: &Path, schema: SchemaRef) -> io::Result<Table> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(format!("kinspect {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(other)?;
        Ok(Table { writer })
    }

    fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.writer.write(batch).map_err(other)?;
        if self.writer.in_progress_size() >= ROW_GROUP_BYTES {
            self.writer.flush().map_err(other)?;
        }
        Ok(())
    }

    fn close(self) -> io::Result<()> {
        self.writer.close().map(|_| ()).map_err(other)
    }
}

/// The open files of one input (or of the run).
#[derive(Default)]
struct Files {
    pdus: Option<Table>,
    records: Option<Table>,
}

/// Rows finished into Arrow batches, not written yet.
pub(crate) type Pending = (Option<RecordBatch>, Option<RecordBatch>);

impl Files {
    fn write(&mut self, (p, r): Pending) -> io::Result<()> {
        if let (Some(t), Some(b)) = (&mut self.pdus, p) {
            t.write(&b)?;
        }
        if let (Some(t), Some(b)) = (&mut self.records, r) {
            t.write(&b)?;
        }
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(t) = self.pdus.take() {
            t.close()?;
        }
        if let Some(t) = self.records.take() {
            t.close()?;
        }
        Ok(())
    }
}

/// Writes the `pdus` and `records` tables of a run; a sink (that splits over two threads: the
/// worker's half gathers rows, this side writes them in input order).
///
/// With a file per input, rows go to the files of the input they name, and an input's files
/// stay open until a later input's batch comes back from the worker (the worker may still hold,
/// or be about to get, a batch of the input before), or until [`KEEP_OPEN`] newer inputs began.
pub struct ParquetSink {
    layout: Layout,
    tables: Tables,
    rows: Rows,
    /// Open files by input name, oldest first (one entry unless `PerInput`).
    files: Vec<(String, Files)>,
    /// Names given to per-input files so far.
    names: Vec<String>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

/// Inputs whose files are kept open at most.
const KEEP_OPEN: usize = 3;

impl ParquetSink {
    pub fn new(layout: Layout, tables: Tables) -> ParquetSink {
        ParquetSink {
            layout,
            tables,
            rows: Rows::new(tables),
            files: Vec::new(),
            names: Vec::new(),
            written: Vec::new(),
        }
    }

    fn open(&mut self, input: &str) -> io::Result<()> {
        let (p, r) = match &self.layout {
            Layout::File(f) => (f.clone(), f.clone()),
            Layout::Folder(d) => (d.join("pdus.parquet"), d.join("records.parquet")),
            Layout::PerInput(d) => {
                let stem = Path::new(input)
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .filter(|s| !s.is_empty())
                    .unwrap_or("stdin");
                let mut name = stem.to_string();
                let mut n = 1;
                while self.names.contains(&name) {
                    n += 1;
                    name = format!("{stem}-{n}");
                }
                self.names.push(name.clone());
                let file = format!("{name}.parquet");
                (d.join("pdus").join(&file), d.join("records").join(file))
            }
        };
        let mut files = Files::default();
        if self.tables.pdus {
            files.pdus = Some(Table::create(&p, pdus_schema())?);
            self.written.push(p);
        }
        if self.tables.records {
            files.records = Some(Table::create(&r, records_schema())?);
            self.written.push(r);
        }
        self.files.push((input.to_string(), files));
        Ok(())
    }

    /// Writes rows to the files of their input (the newest files when those are closed).
    fn route(&mut self, input: &str, pending: Pending) -> io::Result<()> {
        let i = self
            .files
            .iter()
            .rposition(|(n, _)| n == input)
            .or(self.files.len().checked_sub(1));
        match i {
            Some(i) => self.files[i].1.write(pending),
            None => Ok(()),
        }
    }

    /// Writes what this side gathered.
    fn write_rows(&mut self) -> io::Result<()> {
        let pending = take(&mut self.rows)?;
        let input = self.rows.input.clone();
        self.route(&input, pending)
    }

    /// Closes the files of the inputs before `input`'s.
    fn close_before(&mut self, input: &str) -> io::Result<()> {
        if let Some(i) = self.files.iter().rposition(|(n, _)| n == input) {
            for (_, mut f) in self.files.drain(..i) {
                f.close()?;
            }
        }
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        if self.files.is_empty() || matches!(self.layout, Layout::PerInput(_)) {
            self.write_rows()?;
            input.name.clone_into(&mut self.rows.input);
            self.open(input.name)?;
            while self.files.len() > KEEP_OPEN {
                let (_, mut f) = self.files.remove(0);
                f.close()?;
            }
        }
        input.name.clone_into(&mut self.rows.input);
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        // Rows of one input only in a batch: another input's rows go to other files.
        if input.is_some_and(|i| i != self.rows.input) {
            self.write_rows()?;
        }
        self.rows.push(pdu, input);
        if self.rows.full() {
            self.write_rows()?;
        }
        Ok(())
    }

    fn note(&mut self, _: &Origin, _: &Diagnostic, _: Option<&str>) -> io::Result<()> {
        Ok(())
    }

    fn end_input(&mut self, _end: &InputEnd<'_>) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.written.is_empty() {
            // Nothing was read (no input opened): still leave the tables, empty.
            self.open("stdin")?;
        }
        self.write_rows()?;
        for (_, mut f) in self.files.drain(..) {
            f.close()?;
        }
        Ok(())
    }
}

impl Split for ParquetSink {
    type Half = Rows;

    fn fork(&mut self, _turn: &Arc<Turn>) -> Option<Rows> {
        Some(Rows::new(self.tables))
    }

    /// Rows gathered here come before the batch: they go to the file first.
    fn hand_over(&mut self, half: &mut Rows) -> io::Result<()> {
        half.input.clone_from(&self.rows.input);
        self.write_rows()
    }

    /// The batch's rows, in input order; rows gathered here meanwhile come after them. Earlier
    /// inputs get no more rows: their files close.
    fn take_back(&mut self, half: &mut Rows) -> io::Result<()> {
        let pending = take(half)?;
        let input = half.input.clone();
        self.route(&input, pending)?;
        if matches!(self.layout, Layout::PerInput(_)) && self.rows.input == input {
            self.close_before(&input)?;
        }
        Ok(())
    }
}
