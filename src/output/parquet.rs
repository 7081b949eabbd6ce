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

use super::records::{each_record, log_place, Record};
use crate::capture::stats::Stats;
use crate::diag::{Diagnostic, Severity};
use crate::engine::parallel::Turn;
use crate::engine::{Half, InputEnd, InputInfo, Sink, Split};
use crate::pdu::{Origin, Pdu};
use crate::query::{Field as Fact, Value as QValue};
use crate::wire::tree::Value;
use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Float64Builder, Int16Builder, Int32Builder,
    Int64Builder, Int8Builder, ListBuilder, StringBuilder, StructBuilder,
    TimestampMillisecondBuilder, TimestampNanosecondBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("parquet: {e}"))
}

fn list_of(t: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", t, true)))
}

fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, true),
        Field::new("value", DataType::Binary, true),
    ])
}

/// The `pdus` table's schema.
pub fn pdus_schema() -> SchemaRef {
    let utc = Some(Arc::from("UTC"));
    Arc::new(Schema::new(vec![
        Field::new("input", DataType::Utf8, false),
        Field::new("frame", DataType::UInt64, true),
        Field::new("index", DataType::UInt64, false),
        Field::new("time", DataType::Timestamp(TimeUnit::Nanosecond, utc), true),
        Field::new("stream", DataType::UInt32, true),
        Field::new("client", DataType::Utf8, true),
        Field::new("server", DataType::Utf8, true),
        Field::new("direction", DataType::Utf8, true),
        Field::new("api", DataType::Utf8, true),
        Field::new("api_key", DataType::Int16, true),
        Field::new("api_version", DataType::Int16, true),
        Field::new("correlation_id", DataType::Int32, true),
        Field::new("request_frame", DataType::UInt64, true),
        Field::new("latency_us", DataType::Float64, true),
        Field::new("size", DataType::UInt32, false),
        Field::new("client_id", DataType::Utf8, true),
        Field::new("topics", list_of(DataType::Utf8), false),
        Field::new("errors", list_of(DataType::Utf8), false),
        Field::new("error_codes", list_of(DataType::Int16), false),
        Field::new("diagnostics", list_of(DataType::Utf8), false),
    ]))
}

/// The `records` table's schema.
pub fn records_schema() -> SchemaRef {
    let utc = Some(Arc::from("UTC"));
    Arc::new(Schema::new(vec![
        Field::new("input", DataType::Utf8, false),
        Field::new("frame", DataType::UInt64, true),
        Field::new("file_offset", DataType::UInt64, true),
        Field::new("direction", DataType::Utf8, true),
        Field::new("client", DataType::Utf8, true),
        Field::new("client_id", DataType::Utf8, true),
        Field::new("topic", DataType::Utf8, true),
        Field::new("partition", DataType::Int32, true),
        Field::new("offset", DataType::Int64, true),
        Field::new("offset_delta", DataType::Int64, false),
        Field::new(
            "timestamp",
            DataType::Timestamp(TimeUnit::Millisecond, utc),
            true,
        ),
        Field::new("timestamp_type", DataType::Utf8, false),
        Field::new("key", DataType::Binary, true),
        Field::new("value", DataType::Binary, true),
        Field::new("headers", list_of(DataType::Struct(header_fields())), false),
        Field::new("producer_id", DataType::Int64, true),
        Field::new("producer_epoch", DataType::Int16, true),
        Field::new("sequence", DataType::Int32, true),
        Field::new("transactional", DataType::Boolean, false),
        Field::new("control", DataType::Boolean, false),
        Field::new("codec", DataType::Utf8, false),
        Field::new("magic", DataType::Int8, false),
        Field::new("crc_ok", DataType::Boolean, true),
    ]))
}

/// The client id: of the request header, or the one the capture gave a response (its
/// request's).
fn client_id(pdu: &Pdu) -> Option<&str> {
    if let Some(c) = &pdu.origin.client_id {
        return Some(c);
    }
    let t = &pdu.tree;
    let h = t.nodes.first().and_then(|_| t.child(0, "header"))?;
    let n = t.node(t.child(h, "ClientId")?);
    match n.value {
        Value::Str(s) => std::str::from_utf8(t.bytes(n.buf, s)).ok(),
        _ => None,
    }
}

/// Rows of the `pdus` table being gathered.
pub struct PduRows {
    input: StringBuilder,
    frame: UInt64Builder,
    index: UInt64Builder,
    time: TimestampNanosecondBuilder,
    stream: UInt32Builder,
    client: StringBuilder,
    server: StringBuilder,
    direction: StringBuilder,
    api: StringBuilder,
    api_key: Int16Builder,
    api_version: Int16Builder,
    correlation_id: Int32Builder,
    request_frame: UInt64Builder,
    latency_us: Float64Builder,
    size: UInt32Builder,
    client_id: StringBuilder,
    topics: ListBuilder<StringBuilder>,
    errors: ListBuilder<StringBuilder>,
    error_codes: ListBuilder<Int16Builder>,
    diagnostics: ListBuilder<StringBuilder>,
    rows: usize,
    bytes: usize,
}

impl Default for PduRows {
    fn default() -> Self {
        PduRows {
            input: StringBuilder::new(),
            frame: UInt64Builder::new(),
            index: UInt64Builder::new(),
            time: TimestampNanosecondBuilder::new().with_timezone("UTC"),
            stream: UInt32Builder::new(),
            client: StringBuilder::new(),
            server: StringBuilder::new(),
            direction: StringBuilder::new(),
            api: StringBuilder::new(),
            api_key: Int16Builder::new(),
            api_version: Int16Builder::new(),
            correlation_id: Int32Builder::new(),
            request_frame: UInt64Builder::new(),
            latency_us: Float64Builder::new(),
            size: UInt32Builder::new(),
            client_id: StringBuilder::new(),
            topics: ListBuilder::new(StringBuilder::new()),
            errors: ListBuilder::new(StringBuilder::new()),
            error_codes: ListBuilder::new(Int16Builder::new()),
            diagnostics: ListBuilder::new(StringBuilder::new()),
            rows: 0,
            bytes: 0,
        }
    }
}

impl PduRows {
    pub fn push(&mut self, pdu: &Pdu, input: &str) {
        let o = &pdu.origin;
        self.input.append_value(input);
        self.frame.append_option(o.frame);
        self.index.append_value(o.index);
        self.time.append_option(o.ts_ns);
        self.stream.append_option(o.conn.as_ref().map(|c| c.stream));
        match &o.conn {
            Some(c) => {
                let _ = write!(self.client, "{}", c.client);
                self.client.append_value("");
                let _ = write!(self.server, "{}", c.server);
                self.server.append_value("");
            }
            None => {
                self.client.append_null();
                self.server.append_null();
            }
        }
        self.direction
            .append_option(pdu.direction.map(|d| d.as_str()));
        self.api.append_option(pdu.api_name);
        self.api_key.append_option(pdu.api_key);
        self.api_version.append_option(pdu.api_version);
        self.correlation_id.append_option(pdu.correlation_id);
        self.request_frame.append_option(pdu.request_frame);
        self.latency_us
            .append_option(pdu.latency_ns.map(|ns| ns as f64 / 1e3));
        let size = pdu.tree.buf(0).len();
        self.size.append_value(size as u32);
        self.client_id.append_option(client_id(pdu));
        self.facts(pdu);
        for d in pdu.tree.diags.iter() {
            if d.severity == Severity::Error {
                self.diagnostics.values().append_value(d.code);
            }
        }
        self.diagnostics.append(true);
        self.rows += 1;
        self.bytes += 128 + input.len();
    }

    /// Topics and error codes: the `topic` and `error` fields of the display filters
    /// (`crate::query`), so that a table and `--filter` agree by construction. Topics once each,
    /// in order; every non-zero error code (as `stats` counts them).
    fn facts(&mut self, pdu: &Pdu) {
        let mut seen: Vec<&[u8]> = Vec::new();
        let (topics, bytes) = (&mut self.topics, &mut self.bytes);
        Fact::Topic.values(pdu, |v| {
            let name: &[u8] = match v {
                QValue::Str(s) => s,
                QValue::Text(t) => t.as_bytes(),
                QValue::Uuid(_) => {
                    // An id the session could not name: shown as Kafka prints ids.
                    let id = v.to_string();
                    topics.values().append_value(&id);
                    return;
                }
                _ => return,
            };
            if !seen.contains(&name) {
                seen.push(name);
                topics.values().append_value(String::from_utf8_lossy(name));
                *bytes += name.len();
            }
        });
        self.topics.append(true);
        let (errors, codes) = (&mut self.errors, &mut self.error_codes);
        Fact::ErrorCode.values(pdu, |v| {
            let code = match v {
                QValue::Error(c) => c,
                QValue::Int(c) => i16::try_from(c).unwrap_or(i16::MIN),
                _ => return,
            };
            match super::summary::error_name(code) {
                Some(name) => errors.values().append_value(name),
                None => errors.values().append_value(Stats::error_label(code)),
            }
            codes.values().append_value(code);
        });
        self.errors.append(true);
        self.error_codes.append(true);
    }

    fn finish(&mut self) -> io::Result<RecordBatch> {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.input.finish()),
            Arc::new(self.frame.finish()),
            Arc::new(self.index.finish()),
            Arc::new(self.time.finish()),
            Arc::new(self.stream.finish()),
            Arc::new(self.client.finish()),
            Arc::new(self.server.finish()),
            Arc::new(self.direction.finish()),
            Arc::new(self.api.finish()),
            Arc::new(self.api_key.finish()),
            Arc::new(self.api_version.finish()),
            Arc::new(self.correlation_id.finish()),
            Arc::new(self.request_frame.finish()),
            Arc::new(self.latency_us.finish()),
            Arc::new(self.size.finish()),
            Arc::new(self.client_id.finish()),
            Arc::new(self.topics.finish()),
            Arc::new(self.errors.finish()),
            Arc::new(self.error_codes.finish()),
            Arc::new(self.diagnostics.finish()),
        ];
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(pdus_schema(), cols).map_err(other)
    }
}

/// Rows of the `records` table being gathered.
pub struct RecordRows {
    input: StringBuilder,
    frame: UInt64Builder,
    file_offset: UInt64Builder,
    direction: StringBuilder,
    client: StringBuilder,
    client_id: StringBuilder,
    topic: StringBuilder,
    partition: Int32Builder,
    offset: Int64Builder,
    offset_delta: Int64Builder,
    timestamp: TimestampMillisecondBuilder,
    timestamp_type: StringBuilder,
    key: BinaryBuilder,
    value: BinaryBuilder,
    headers: ListBuilder<StructBuilder>,
    producer_id: Int64Builder,
    producer_epoch: Int16Builder,
    sequence: Int32Builder,
    transactional: BooleanBuilder,
    control: BooleanBuilder,
    codec: StringBuilder,
    magic: Int8Builder,
    crc_ok: BooleanBuilder,
    rows: usize,
    bytes: usize,
}

impl Default for RecordRows {
    fn default() -> Self {
        let header = StructBuilder::new(
            header_fields(),
            vec![
                Box::new(StringBuilder::new()) as Box<dyn ArrayBuilder>,
                Box::new(BinaryBuilder::new()),
            ],
        );
        RecordRows {
            input: StringBuilder::new(),
            frame: UInt64Builder::new(),
            file_offset: UInt64Builder::new(),
            direction: StringBuilder::new(),
            client: StringBuilder::new(),
            client_id: StringBuilder::new(),
            topic: StringBuilder::new(),
            partition: Int32Builder::new(),
            offset: Int64Builder::new(),
            offset_delta: Int64Builder::new(),
            timestamp: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            timestamp_type: StringBuilder::new(),
            key: BinaryBuilder::new(),
            value: BinaryBuilder::new(),
            headers: ListBuilder::new(header),
            producer_id: Int64Builder::new(),
            producer_epoch: Int16Builder::new(),
            sequence: Int32Builder::new(),
            transactional: BooleanBuilder::new(),
            control: BooleanBuilder::new(),
            codec: StringBuilder::new(),
            magic: Int8Builder::new(),
            crc_ok: BooleanBuilder::new(),
            rows: 0,
            bytes: 0,
        }
    }
}

impl RecordRows {
    /// Every record of `pdu`.
    pub fn push_pdu(&mut self, pdu: &Pdu, input: &str) {
        let _ = each_record(pdu, log_place(input), &mut |r| {
            self.push(pdu, input, r);
            Ok(())
        });
    }

    fn push(&mut self, pdu: &Pdu, input: &str, r: &Record<'_>) {
        let o = &pdu.origin;
        let log = pdu.api_key.is_none() && o.frame.is_none();
        self.input.append_value(input);
        self.frame.append_option(o.frame);
        self.file_offset.append_option(
            o.stream_offset
                .filter(|_| log)
                .map(|s| s + r.batch_at as u64),
        );
        self.direction
            .append_option(pdu.direction.map(|d| d.as_str()));
        match &o.conn {
            Some(c) => {
                let _ = write!(self.client, "{}", c.client);
                self.client.append_value("");
            }
            None => self.client.append_null(),
        }
        self.client_id.append_option(client_id(pdu));
        self.topic.append_option(r.topic);
        self.partition
            .append_option(r.partition.and_then(|p| i32::try_from(p).ok()));
        self.offset.append_option(r.offset);
        self.offset_delta.append_value(r.offset_delta);
        self.timestamp.append_option(r.timestamp);
        self.timestamp_type.append_value(r.timestamp_type);
        self.key.append_option(r.key);
        self.value.append_option(r.value);
        let hs = self.headers.values();
        for (k, v) in r.headers() {
            if let Some(b) = hs.field_builder::<StringBuilder>(0) {
                b.append_value(String::from_utf8_lossy(k));
            }
            if let Some(b) = hs.field_builder::<BinaryBuilder>(1) {
                b.append_option(v);
            }
            hs.append(true);
            self.bytes += k.len() + v.map_or(0, <[u8]>::len);
        }
        self.headers.append(true);
        self.producer_id.append_option(r.producer_id);
        self.producer_epoch
            .append_option(r.producer_epoch.and_then(|e| i16::try_from(e).ok()));
        self.sequence
            .append_option(r.sequence.and_then(|s| i32::try_from(s).ok()));
        self.transactional.append_value(r.transactional);
        self.control.append_value(r.control);
        self.codec.append_value(r.codec);
        self.magic.append_value(r.magic);
        self.crc_ok.append_option(r.crc_ok);
        self.rows += 1;
        self.bytes +=
            96 + input.len() + r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
    }

    fn finish(&mut self) -> io::Result<RecordBatch> {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(self.input.finish()),
            Arc::new(self.frame.finish()),
            Arc::new(self.file_offset.finish()),
            Arc::new(self.direction.finish()),
            Arc::new(self.client.finish()),
            Arc::new(self.client_id.finish()),
            Arc::new(self.topic.finish()),
            Arc::new(self.partition.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.offset_delta.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.timestamp_type.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.value.finish()),
            Arc::new(self.headers.finish()),
            Arc::new(self.producer_id.finish()),
            Arc::new(self.producer_epoch.finish()),
            Arc::new(self.sequence.finish()),
            Arc::new(self.transactional.finish()),
            Arc::new(self.control.finish()),
            Arc::new(self.codec.finish()),
            Arc::new(self.magic.finish()),
            Arc::new(self.crc_ok.finish()),
        ];
        self.rows = 0;
        self.bytes = 0;
        RecordBatch::try_new(records_schema(), cols).map_err(other)
    }
}

/// The rows one side gathers: both tables' (those written).
#[derive(Default)]
pub struct Rows {
    pdus: Option<Box<PduRows>>,
    records: Option<Box<RecordRows>>,
    /// The input being read (named in every row).
    input: String,
}

impl Rows {
    fn new(tables: Tables) -> Rows {
        Rows {
            pdus: tables.pdus.then(Box::default),
            records: tables.records.then(Box::default),
            input: String::new(),
        }
    }

    fn push(&mut self, pdu: &Pdu, input: Option<&str>) {
        if let Some(i) = input.filter(|i| *i != self.input) {
            i.clone_into(&mut self.input);
        }
        if let Some(p) = &mut self.pdus {
            p.push(pdu, &self.input);
        }
        if let Some(r) = &mut self.records {
            r.push_pdu(pdu, &self.input);
        }
    }

    fn full(&self) -> bool {
        let p = self
            .pdus
            .as_ref()
            .is_some_and(|p| p.rows >= BATCH_ROWS || p.bytes >= BATCH_BYTES);
        let r = self
            .records
            .as_ref()
            .is_some_and(|r| r.rows >= BATCH_ROWS || r.bytes >= BATCH_BYTES);
        p || r
    }
}

impl Sink for Rows {
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.push(pdu, input);
        Ok(())
    }

    fn note(&mut self, _: &Origin, _: &Diagnostic, _: Option<&str>) -> io::Result<()> {
        Ok(())
    }
}

impl Half for Rows {
    fn end_batch(&mut self) -> io::Result<()> {
        Ok(())
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
type Pending = (Option<RecordBatch>, Option<RecordBatch>);

impl Files {
    fn is_open(&self) -> bool {
        self.pdus.is_some() || self.records.is_some()
    }

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

/// The rows gathered so far, as batches (nothing for a table without rows).
fn take(rows: &mut Rows) -> io::Result<Pending> {
    let p = match &mut rows.pdus {
        Some(p) if p.rows > 0 => Some(p.finish()?),
        _ => None,
    };
    let r = match &mut rows.records {
        Some(r) if r.rows > 0 => Some(r.finish()?),
        _ => None,
    };
    Ok((p, r))
}

/// Writes the `pdus` and `records` tables of a run; a sink (that splits over two threads: the
/// worker's half gathers rows, this side writes them in input order).
///
/// With a file per input, an input's files stay open after it ends while the worker still has
/// a batch of it: its rows, then the rows this side gathered after them, go there when the
/// batch comes back.
pub struct ParquetSink {
    layout: Layout,
    tables: Tables,
    rows: Rows,
    files: Files,
    /// The last input's files and its last rows, while its last batch is at the worker.
    prev: Option<(Files, Pending)>,
    /// A batch is at the worker.
    outstanding: bool,
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
            files: Files::default(),
            prev: None,
            outstanding: false,
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
        if self.tables.pdus {
            self.files.pdus = Some(Table::create(&p, pdus_schema())?);
            self.written.push(p);
        }
        if self.tables.records {
            self.files.records = Some(Table::create(&r, records_schema())?);
            self.written.push(r);
        }
        Ok(())
    }

    /// Writes what this side gathered.
    fn write_rows(&mut self) -> io::Result<()> {
        let pending = take(&mut self.rows)?;
        self.files.write(pending)
    }

    /// The last input's files get the rows that came after its last batch, and close.
    fn close_prev(&mut self) -> io::Result<()> {
        if let Some((mut files, pending)) = self.prev.take() {
            files.write(pending)?;
            files.close()?;
        }
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        input.name.clone_into(&mut self.rows.input);
        if !self.files.is_open() {
            self.open(input.name)?;
        }
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
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
        if !matches!(self.layout, Layout::PerInput(_)) {
            return Ok(());
        }
        let pending = take(&mut self.rows)?;
        if self.outstanding {
            self.close_prev()?;
            self.prev = Some((std::mem::take(&mut self.files), pending));
        } else {
            self.files.write(pending)?;
            self.files.close()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.close_prev()?;
        if self.written.is_empty() {
            // Nothing was read (no input opened): still leave the tables, empty.
            self.open("stdin")?;
        }
        self.write_rows()?;
        self.files.close()
    }
}

impl Split for ParquetSink {
    type Half = Rows;

    fn fork(&mut self, _turn: &Arc<Turn>) -> Option<Rows> {
        Some(Rows::new(self.tables))
    }

    /// Rows gathered here come before the batch: they go to the file first.
    fn hand_over(&mut self, half: &mut Rows) -> io::Result<()> {
        self.close_prev()?;
        half.input.clone_from(&self.rows.input);
        self.outstanding = true;
        self.write_rows()
    }

    /// The batch's rows, in input order; rows gathered here meanwhile come after them.
    fn take_back(&mut self, half: &mut Rows) -> io::Result<()> {
        self.outstanding = false;
        let pending = take(half)?;
        match &mut self.prev {
            Some((files, _)) => {
                files.write(pending)?;
                self.close_prev()
            }
            None => self.files.write(pending),
        }
    }
}
