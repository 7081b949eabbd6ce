//! Tables for DuckDB, pandas, Polars and Spark: the PDUs of a run (`pdus`) and their records
//! (`records`) as Parquet files (cargo feature `parquet`), written row group by row group as the
//! input streams, so memory stays bounded however large the capture.
//!
//! Rows gather on both decoding threads (the sink splits) and go to the writer [`BATCH_ROWS`] at
//! a time (or sooner, when their data reaches [`BATCH_BYTES`]), in input order; the writer, on a
//! thread of its own, closes a row group once it holds [`ROW_GROUP_ROWS`] rows, or when what it
//! holds reaches [`ROW_GROUP_BYTES`]. The `records` table's columns are encoded and compressed
//! into Parquet pages by the decoding threads themselves ([`pages`]), and the writer only lays
//! those out as column chunks; the `pdus` table (a row per PDU, not per record) gathers in Arrow
//! builders and is encoded by the parquet crate on the writer's thread.
//! Data pages v2, PLAIN, snappy compression, no dictionaries; statistics for the columns one
//! filters on ([`has_statistics`]). A file already at the path (the last run's, when a run is
//! repeated) is written over and then cut to its new length, not truncated first
//! ([`open_in_place`]).
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
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

mod pages;
mod rows;
use pages::ColumnChunk;
use rows::{from_parquet, other, take, Batch};
pub use rows::{pdus_schema, records_schema, PduRows, RecordRows, Rows};

/// Rows gathered before they go to the writer.
pub const BATCH_ROWS: usize = 8192;
/// ... or once their keys, values and strings reach this many bytes.
pub const BATCH_BYTES: usize = 8 << 20;
/// Rows in a row group.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;
/// A row group is closed early once the writer holds this much of it. At 32 MiB the row group
/// being gathered was most of what a run held beyond what JSON Lines does; at 8 MiB the peak RSS
/// on the benchmark capture is about a quarter lower and the run no slower (README, Performance).
pub const ROW_GROUP_BYTES: usize = 8 << 20;

/// The columns that hold payload bytes (paths in the Parquet schema): without statistics (see
/// [`Table::create`]).
const PAYLOAD_COLUMNS: &[&[&str]] = &[&["key"], &["value"], &["headers", "list", "item", "value"]];

/// Columns of a few short labels each (or addresses): no statistics, which would compare every
/// value to prune nothing (every row group holds both directions, most clients and codecs).
const LABEL_COLUMNS: &[&str] = &["direction", "client", "server", "timestamp_type", "codec"];

/// Whether the column at `path` (in the Parquet schema) has statistics: min, max and null count
/// per column chunk (and per page where the parquet crate writes it). Not for payload bytes,
/// whose min/max prunes nothing, nor for labels and addresses, which every row group holds all
/// of.
pub(super) fn has_statistics(path: &[&str]) -> bool {
    !PAYLOAD_COLUMNS.contains(&path) && !matches!(path, [one] if LABEL_COLUMNS.contains(one))
}

/// Bytes gathered before each write to a table's file.
const WRITE_BUFFER: usize = 1 << 20;

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
    /// The layout `-o PATH` means for `inputs` inputs writing `tables`: a `.parquet` path, or one
    /// that exists and is not a folder (a file, `/dev/null`, a named pipe), is a file when one
    /// table is written from one input; anything else is a folder.
    /// `-` is standard output, as for every other format.
    pub fn for_output(path: &Path, inputs: usize, tables: Tables) -> Result<Layout, String> {
        let path = match path == Path::new("-") {
            true => Path::new("/dev/stdout"),
            false => path,
        };
        let is_file = path.extension().is_some_and(|e| e == "parquet")
            || path.metadata().is_ok_and(|m| !m.is_dir());
        match (is_file, inputs > 1, tables.pdus && tables.records) {
            (true, false, false) => Ok(Layout::File(path.to_path_buf())),
            (true, true, _) => Err(format!(
                "{}: several inputs make one file per input: give a folder",
                path.display()
            )),
            (true, false, true) => Err(format!(
                "{}: two tables (pdus, records) need a folder (`kinspect records -f parquet` \
                 writes the records table alone, to one file)",
                path.display()
            )),
            (false, true, _) => Ok(Layout::PerInput(path.to_path_buf())),
            (false, false, _) => Ok(Layout::Folder(path.to_path_buf())),
        }
    }
}

/// One open Parquet file: the parquet crate's column writers for the columns that come as
/// Arrow arrays, and the chunks of those that come as pages (most of `records`', see
/// [`pages`]), which this module lays out itself.
struct Table {
    file: SerializedFileWriter<BufWriter<std::fs::File>>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The row group being written: a writer per leaf column (those of paged leaves unused).
    writers: Option<Vec<ArrowColumnWriter>>,
    /// How many leaf columns each field has, by field.
    leaves_of: Vec<usize>,
    /// The row group's paged column chunks, by leaf.
    chunks: Vec<Option<ColumnChunk>>,
    rows: usize,
    groups: usize,
}

impl Table {
    fn create(path: &Path, schema: SchemaRef) -> io::Result<Table> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                let what = format!(
                    "{}: cannot make this folder for the tables: {e}",
                    dir.display()
                );
                io::Error::new(e.kind(), what)
            })?;
        }
        let file = open_in_place(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        // Data pages v2: the crate compresses a v2 page's values straight from its encoder's
        // buffer, where a v1 page is first copied whole into a buffer of its own. No
        // dictionaries: snappy finds the repeats of a column (a PDU's records share its input,
        // client and topic) at a fraction of the cost of hashing every value into a dictionary,
        // which for the columns of nearly unique numbers (frames, offsets, times) would grow as
        // large as the column; the files come out about 1% larger. PLAIN encoding (a v2 file's
        // default for numbers is a delta encoding, slower to write).
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::PLAIN)
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(format!("kinspect {}", env!("CARGO_PKG_VERSION")));
        // Statistics (min/max per page and column chunk) for the columns one filters on: numbers,
        // names, ids ([`has_statistics`]).
        for col in PAYLOAD_COLUMNS
            .iter()
            .copied()
            .chain(LABEL_COLUMNS.chunks(1))
        {
            let path = ColumnPath::from(col.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            props = props.set_column_statistics_enabled(path, EnabledStatistics::None);
        }
        let props = props.build();
        // Column chunks are copied out 8 KiB at a time: gathered here into large writes.
        let file = BufWriter::with_capacity(WRITE_BUFFER, file);
        let (file, factory) = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(from_parquet)?;
        let leaves = file.schema_descr().columns();
        let leaves_of = schema
            .fields()
            .iter()
            .map(|f| {
                leaves
                    .iter()
                    .filter(|c| c.path().parts().first() == Some(f.name()))
                    .count()
            })
            .collect();
        let chunks = leaves.iter().map(|_| None).collect();
        Ok(Table {
            file,
            factory,
            schema,
            writers: None,
            leaves_of,
            chunks,
            rows: 0,
            groups: 0,
        })
    }

    fn write(&mut self, batch: Batch) -> io::Result<()> {
        if batch.rows == 0 {
            return Ok(());
        }
        let writers = match &mut self.writers {
            Some(w) => w,
            None => self.writers.insert(
                self.factory
                    .create_column_writers(self.groups)
                    .map_err(from_parquet)?,
            ),
        };
        let (mut leaf, mut arrays) = (0, batch.columns.iter());
        for (i, field) in self.schema.fields().iter().enumerate() {
            // A field whose leaves come as pages (all of them: a batch pages a field whole).
            if batch
                .paged
                .iter()
                .any(|(p, _)| p.first() == Some(&field.name().as_str()))
            {
                leaf += self.leaves_of.get(i).copied().unwrap_or(1);
                continue;
            }
            let array = arrays
                .next()
                .ok_or_else(|| other(format!("a batch without its {} column", field.name())))?;
            for column in compute_leaves(field, array).map_err(from_parquet)? {
                let w = writers
                    .get_mut(leaf)
                    .ok_or_else(|| other("more leaf columns than the schema has"))?;
                w.write(&column).map_err(from_parquet)?;
                leaf += 1;
            }
        }
        for (path, paged) in batch.paged {
            let leaves = self.file.schema_descr().columns();
            let chunk = leaves
                .iter()
                .position(|c| c.path().parts() == path)
                .and_then(|leaf| self.chunks.get_mut(leaf))
                .ok_or_else(|| {
                    other(format!("pages for {}, which is not a leaf", path.join(".")))
                })?;
            match chunk {
                Some(c) => c.extend(paged),
                None => *chunk = Some(ColumnChunk::new(paged)),
            }
        }
        self.rows += batch.rows;
        let held = writers
            .iter()
            .map(ArrowColumnWriter::memory_size)
            .sum::<usize>()
            + self
                .chunks
                .iter()
                .flatten()
                .map(ColumnChunk::bytes)
                .sum::<usize>();
        if self.rows >= ROW_GROUP_ROWS || held >= ROW_GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Closes the row group being written, if it has rows.
    fn flush(&mut self) -> io::Result<()> {
        let Some(writers) = self.writers.take().filter(|_| self.rows > 0) else {
            return Ok(());
        };
        let leaves = self.file.schema_descr().columns().to_vec();
        let mut group = self.file.next_row_group().map_err(from_parquet)?;
        for (leaf, w) in writers.into_iter().enumerate() {
            match self
                .chunks
                .get_mut(leaf)
                .and_then(Option::take)
                .zip(leaves.get(leaf))
            {
                Some((c, descr)) => c.append_to(Arc::clone(descr), &mut group)?,
                None => w
                    .close()
                    .and_then(|c| c.append_to_row_group(&mut group))
                    .map_err(from_parquet)?,
            }
        }
        group.close().map_err(from_parquet)?;
        self.groups += 1;
        self.rows = 0;
        Ok(())
    }

    fn close(mut self) -> io::Result<()> {
        self.flush()?;
        // `finish` writes the footer and flushes through every buffer to the file.
        self.file.finish().map_err(from_parquet)?;
        let len = self.file.bytes_written() as u64;
        cut_to(self.file.inner_mut().get_ref(), len)
    }
}

/// Opens `path` to be written from its start, creating it if needed but not truncating it (see
/// [`cut_to`], which sets its length once it is written). Truncating a large file (the last
/// run's table, as a re-run finds it) makes the file system free its blocks, and ext4 then
/// forces the new data to disk as it is written (`auto_da_alloc`): about a quarter of the time
/// of a run over the benchmark capture. Written over, the file keeps its blocks and its pages
/// in the cache. An existing file's last 8 bytes (a Parquet footer's length and magic) are
/// zeroed first, so that a run that stops early leaves a file no reader takes for a table.
fn open_in_place(path: &Path) -> io::Result<std::fs::File> {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() >= 8 {
        file.seek(SeekFrom::Start(meta.len() - 8))?;
        file.write_all(&[0; 8])?;
        file.seek(SeekFrom::Start(0))?;
    }
    Ok(file)
}

/// Cuts a file written by [`open_in_place`] to the `len` bytes written (not a pipe or device).
fn cut_to(file: &std::fs::File, len: u64) -> io::Result<()> {
    if file.metadata()?.is_file() {
        file.set_len(len)?;
    }
    Ok(())
}

/// The open files of one input (or of the run).
#[derive(Default)]
struct Files {
    pdus: Option<Table>,
    records: Option<Table>,
}

/// Rows finished into Arrow batches, not written yet.
pub(crate) type Pending = (Option<Batch>, Option<Batch>);

impl Files {
    fn write(&mut self, (p, r): Pending) -> io::Result<()> {
        if let (Some(t), Some(b)) = (&mut self.pdus, p) {
            t.write(b)?;
        }
        if let (Some(t), Some(b)) = (&mut self.records, r) {
            t.write(b)?;
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

/// What the writer is asked to do, in input order. Files are named by a run-local id: the
/// number of the input they belong to (0 for the one folder or file of a run that is not laid
/// out per input), never by the input's name, which two inputs may share (`a.pcap a.pcap`).
enum Job {
    Open(usize, Box<Files>),
    Write(usize, Pending),
    Close(usize),
    /// Close every file and stop (the worker's half may still hold a sender).
    End,
}

/// The open files, by id.
#[derive(Default)]
struct Store {
    files: Vec<(usize, Files)>,
}

impl Store {
    fn apply(&mut self, job: Job) -> io::Result<()> {
        match job {
            Job::Open(id, f) => self.files.push((id, *f)),
            Job::Write(id, pending) => match self.files.iter_mut().find(|(i, _)| *i == id) {
                Some((_, f)) => f.write(pending)?,
                None => {
                    return Err(other(format!(
                        "rows for input {id}, whose files are closed"
                    )))
                }
            },
            Job::Close(id) => {
                if let Some(i) = self.files.iter().position(|(n, _)| *n == id) {
                    self.files.remove(i).1.close()?;
                }
            }
            Job::End => self.close_all()?,
        }
        Ok(())
    }

    fn close_all(&mut self) -> io::Result<()> {
        let mut r = Ok(());
        for (_, mut f) in self.files.drain(..) {
            let c = f.close();
            if r.is_ok() {
                r = c;
            }
        }
        r
    }
}

/// Jobs the writer thread may have waiting: with [`BATCH_BYTES`] a batch, what the rows being
/// encoded hold stays a few batches whatever the input's size.
const QUEUED: usize = 2;

/// Where rows go to the writer's thread, from either decoding thread. When the thread has
/// stopped on an error, a send fails with that error (its kind kept: a reader that closed the
/// pipe is `BrokenPipe`, which ends the run quietly), not with "the writer stopped".
#[derive(Clone)]
struct ToWriter {
    jobs: SyncSender<Job>,
    stopped: Arc<OnceLock<(io::ErrorKind, String)>>,
}

impl ToWriter {
    fn send(&self, job: Job) -> io::Result<()> {
        self.jobs.send(job).map_err(|_| match self.stopped.get() {
            Some((kind, what)) => io::Error::new(*kind, what.clone()),
            None => other("the writer stopped"),
        })
    }
}

/// Encodes and writes the files: on a thread of its own (Parquet encoding and compression is
/// about half the work of a run, and the reading thread's is the other half), or here.
enum Writer {
    Thread {
        jobs: Option<ToWriter>,
        thread: Option<JoinHandle<io::Result<()>>>,
    },
    Here(Store),
}

impl Writer {
    fn new(thread: bool) -> Writer {
        if !thread {
            return Writer::Here(Store::default());
        }
        let (tx, rx) = mpsc::sync_channel::<Job>(QUEUED);
        let to = ToWriter {
            jobs: tx,
            stopped: Arc::new(OnceLock::new()),
        };
        let stopped = Arc::clone(&to.stopped);
        let spawned = std::thread::Builder::new()
            .name("kinspect-parquet".into())
            .spawn(move || {
                let mut store = Store::default();
                for job in rx {
                    let end = matches!(job, Job::End);
                    if let Err(e) = store.apply(job) {
                        let _ = store.close_all();
                        let _ = stopped.set((e.kind(), e.to_string()));
                        return Err(e);
                    }
                    if end {
                        break;
                    }
                }
                store.close_all()
            });
        match spawned {
            Ok(t) => Writer::Thread {
                jobs: Some(to),
                thread: Some(t),
            },
            Err(_) => Writer::Here(Store::default()),
        }
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        match self {
            Writer::Here(store) => store.apply(job),
            Writer::Thread { jobs, .. } => match jobs {
                Some(to) => to.send(job),
                None => Err(other("the writer stopped")),
            },
        }
    }

    /// Where another thread hands its rows (when the files are written on a thread of their own).
    fn sender(&self) -> Option<ToWriter> {
        match self {
            Writer::Thread { jobs, .. } => jobs.clone(),
            Writer::Here(_) => None,
        }
    }

    /// Closes every file (and waits for the thread to have written them).
    fn join(&mut self) -> io::Result<()> {
        match self {
            Writer::Here(store) => store.close_all(),
            Writer::Thread { jobs, thread } => {
                if let Some(j) = jobs.take() {
                    let _ = j.send(Job::End);
                }
                match thread.take().map(JoinHandle::join) {
                    Some(Ok(r)) => r,
                    Some(Err(_)) => Err(other("the writer thread panicked")),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Writes the `pdus` and `records` tables of a run; a sink that splits over two threads (the
/// worker's half gathers rows of its batches, this side hands them to the writer in input
/// order), and encodes on a third (see [`ParquetSink::on_one_thread`]).
///
/// With a file per input, rows go to the files of the input they were read from, by the input's
/// number in the run. An input's files close once no rows of it can come any more: when a later
/// input begins and no batch of it is at the worker, or when the worker's batch comes back.
pub struct ParquetSink {
    layout: Layout,
    tables: Tables,
    rows: Rows,
    writer: Writer,
    /// The number of the input being read (counted from 0; stays 0 unless `PerInput`).
    current: usize,
    /// Inputs began so far.
    begun: usize,
    /// The inputs whose files are open, oldest first.
    open: Vec<usize>,
    /// The inputs of the batches at the worker, oldest first.
    at_worker: Vec<usize>,
    /// When the worker has the output (its half hands rows to the writer in its turn).
    turn: Option<Arc<Turn>>,
    /// Names given to per-input files so far.
    names: Vec<String>,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
}

impl ParquetSink {
    pub fn new(layout: Layout, tables: Tables) -> ParquetSink {
        ParquetSink {
            layout,
            tables,
            rows: Rows::new(tables),
            writer: Writer::new(true),
            current: 0,
            begun: 0,
            open: Vec::new(),
            at_worker: Vec::new(),
            turn: None,
            names: Vec::new(),
            written: Vec::new(),
        }
    }

    /// What the tables have no place for, to say beside them (see [`Rows::notes`]).
    pub fn notes(&mut self) -> &mut crate::output::notes::Notes {
        &mut self.rows.notes
    }

    /// Encodes on the calling thread, not on a thread of its own.
    pub fn on_one_thread(mut self) -> ParquetSink {
        let _ = self.writer.join();
        self.writer = Writer::new(false);
        self
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
        self.open.push(self.current);
        self.writer.send(Job::Open(self.current, Box::new(files)))
    }

    /// Hands what this side gathered to the writer, after the worker's batch if the worker has
    /// the output (this side's rows come after the batch's).
    fn write_rows(&mut self) -> io::Result<()> {
        let pending = take(&mut self.rows)?;
        if pending.0.is_none() && pending.1.is_none() {
            return Ok(());
        }
        if let Some(t) = self.turn.as_ref().filter(|t| t.busy()) {
            t.wait_idle();
        }
        self.writer.send(Job::Write(self.current, pending))
    }

    /// Closes the files of inputs no more rows can come for: those before the current one but
    /// the worker's.
    fn close_done(&mut self) -> io::Result<()> {
        let current = self.current;
        let done: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&i| i < current && !self.at_worker.contains(&i))
            .collect();
        self.open.retain(|i| !done.contains(i));
        for id in done {
            self.writer.send(Job::Close(id))?;
        }
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        let per_input = matches!(self.layout, Layout::PerInput(_));
        if self.begun == 0 || per_input {
            self.write_rows()?;
            if per_input {
                self.current = self.begun;
            }
            self.open(input.name)?;
            self.close_done()?;
        }
        self.begun += 1;
        input.name.clone_into(&mut self.rows.input);
        self.rows.notes.begin_input(input.name);
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.rows.push(pdu, input);
        if self.rows.full() {
            self.write_rows()?;
        }
        Ok(())
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.rows.notes.note(origin, d, input);
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
        self.open.clear();
        self.writer.join()
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        let _ = self.writer.join();
    }
}

impl Split for ParquetSink {
    type Half = Rows;

    /// The worker's half hands its rows to the writer itself, so there is a half only when the
    /// files are written on a thread of their own.
    fn fork(&mut self, turn: &Arc<Turn>) -> Option<Rows> {
        let to = self.writer.sender()?;
        self.turn = Some(Arc::clone(turn));
        let mut half = Rows::new(self.tables);
        half.to = Some(to);
        half.notes = self.rows.notes.half();
        Some(half)
    }

    /// Rows gathered here come before the batch: they go to the writer first, or, while the
    /// worker has a batch, with this one, which hands them to the writer before its own. The
    /// batch is of the current input (the engine hands a batch over before the next input
    /// begins).
    fn hand_over(&mut self, half: &mut Rows) -> io::Result<()> {
        half.input.clone_from(&self.rows.input);
        half.notes.sync(&self.rows.notes);
        half.id = self.current;
        if self.turn.as_ref().is_some_and(|t| t.busy()) && half.carried.is_none() {
            let pending = take(&mut self.rows)?;
            if pending.0.is_some() || pending.1.is_some() {
                half.carried = Some((self.current, pending));
            }
        } else {
            self.write_rows()?;
        }
        self.at_worker.push(self.current);
        Ok(())
    }

    /// Two batches may be at the worker: the rows this side gathers meanwhile go with the next.
    fn queues(&self) -> bool {
        true
    }

    /// The half has handed the batch's rows to the writer in its turn. Inputs before the
    /// current one get no more rows: their files close.
    fn take_back(&mut self, half: &mut Rows) -> io::Result<()> {
        self.rows.notes.merge(&mut half.notes);
        if !self.at_worker.is_empty() {
            self.at_worker.remove(0);
        }
        self.close_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::SerializedFileReader;

    /// A run that stops before [`cut_to`] leaves no file a Parquet reader takes for a table,
    /// even where the last run left one: its footer is gone as soon as the file is opened.
    #[test]
    fn a_table_opened_to_be_written_over_no_longer_reads_as_the_old_one() {
        let dir = std::env::temp_dir().join(format!("kinspect-inplace-{}", std::process::id()));
        let path = dir.join("t.parquet");
        let _ = std::fs::remove_dir_all(&dir);
        let mut rows = Rows::new(Tables {
            pdus: true,
            records: false,
        });
        let mut t = Table::create(&path, pdus_schema()).unwrap();
        rows.push(&crate::output::json::tests::apiversions_pdu(), Some("x"));
        t.write(take(&mut rows).unwrap().0.unwrap()).unwrap();
        t.close().unwrap();
        let read = |p: &Path| SerializedFileReader::new(std::fs::File::open(p).unwrap());
        assert!(read(&path).is_ok(), "the table written reads back");
        let len = std::fs::metadata(&path).unwrap().len();
        drop(open_in_place(&path).unwrap());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
        assert!(read(&path).is_err(), "the old footer still reads");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
