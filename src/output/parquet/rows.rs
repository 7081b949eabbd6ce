//! The tables' schemas, and the Arrow builders rows gather in before they are written.

use super::pages::{ColumnPages, Kind, Paged};
use super::{Job, Pending, Tables, ToWriter, BATCH_BYTES, BATCH_ROWS};
use crate::capture::stats::Stats;
use crate::diag::{Diagnostic, Severity};
use crate::engine::{Half, Sink};
use crate::output::notes::Notes;
use crate::output::records::{each_record, log_place, Record};
use crate::pdu::{Origin, Pdu};
use crate::query::{Field as Fact, Value as QValue};
use arrow_array::builder::{
    Float64Builder, Int16Builder, Int32Builder, ListBuilder, StringBuilder,
    TimestampNanosecondBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use std::fmt::Write as _;
use std::io;
use std::sync::Arc;

pub(super) fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("parquet: {e}"))
}

/// The parquet crate's error as an I/O error; an I/O error the crate wrapped is given back as it
/// was (a closed pipe stays `BrokenPipe`, which ends the run quietly).
pub(super) fn from_parquet(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(inner) => other(inner),
        },
        e => other(e),
    }
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

/// The PDU's client id ([`Pdu::client_id`]) as a string column takes it: null unless UTF-8.
fn client_id(pdu: &Pdu) -> Option<&str> {
    pdu.client_id().and_then(|c| std::str::from_utf8(c).ok())
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
        self.size.append_value(pdu.size() as u32);
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
            match crate::output::summary::error_name(code) {
                Some(name) => errors.values().append_value(name),
                None => errors.values().append_value(Stats::error_label(code)),
            }
            codes.values().append_value(code);
        });
        self.errors.append(true);
        self.error_codes.append(true);
    }

    fn finish(&mut self) -> io::Result<Batch> {
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
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        Batch::new(rows, cols, Vec::new())
    }
}

/// Rows of the `records` table being gathered: every column straight into Parquet pages
/// ([`ColumnPages`]), the two leaves of `headers` with their repetition levels.
pub struct RecordRows {
    cols: RecordColumns,
    rows: usize,
    bytes: usize,
    /// The client address of the PDU whose records are being pushed.
    client_text: String,
    schema: SchemaRef,
}

/// The `records` leaf columns, encoded into pages as rows come.
#[derive(Default)]
struct RecordColumns {
    input: ColumnPages,
    frame: ColumnPages,
    file_offset: ColumnPages,
    direction: ColumnPages,
    client: ColumnPages,
    client_id: ColumnPages,
    topic: ColumnPages,
    partition: ColumnPages,
    offset: ColumnPages,
    offset_delta: ColumnPages,
    timestamp: ColumnPages,
    timestamp_type: ColumnPages,
    key: ColumnPages,
    value: ColumnPages,
    producer_id: ColumnPages,
    producer_epoch: ColumnPages,
    sequence: ColumnPages,
    transactional: ColumnPages,
    control: ColumnPages,
    codec: ColumnPages,
    magic: ColumnPages,
    crc_ok: ColumnPages,
    header_key: ColumnPages,
    header_value: ColumnPages,
}

/// The leaves of the `headers` column (a list of key-value structs), as the parquet crate names
/// them.
const HEADER_KEY: &[&str] = &["headers", "list", "item", "key"];
const HEADER_VALUE: &[&str] = &["headers", "list", "item", "value"];

/// The definition levels of a header's key or value: the list is required (level 0: empty), an
/// entry's struct and each of its members nullable; a value has level 3, a null member 2.
const HEADER_NULL: u8 = 2;
const HEADER_SET: u8 = 3;

impl RecordColumns {
    /// Each column with its path in the schema: the one list of them.
    fn each_mut(&mut self) -> [(&'static [&'static str], &mut ColumnPages); 24] {
        [
            (&["input"], &mut self.input),
            (&["frame"], &mut self.frame),
            (&["file_offset"], &mut self.file_offset),
            (&["direction"], &mut self.direction),
            (&["client"], &mut self.client),
            (&["client_id"], &mut self.client_id),
            (&["topic"], &mut self.topic),
            (&["partition"], &mut self.partition),
            (&["offset"], &mut self.offset),
            (&["offset_delta"], &mut self.offset_delta),
            (&["timestamp"], &mut self.timestamp),
            (&["timestamp_type"], &mut self.timestamp_type),
            (&["key"], &mut self.key),
            (&["value"], &mut self.value),
            (HEADER_KEY, &mut self.header_key),
            (HEADER_VALUE, &mut self.header_value),
            (&["producer_id"], &mut self.producer_id),
            (&["producer_epoch"], &mut self.producer_epoch),
            (&["sequence"], &mut self.sequence),
            (&["transactional"], &mut self.transactional),
            (&["control"], &mut self.control),
            (&["codec"], &mut self.codec),
            (&["magic"], &mut self.magic),
            (&["crc_ok"], &mut self.crc_ok),
        ]
    }
}

/// The page encoder of the `records` leaf column at `path`, as the schema types it (kind; the
/// definition level of a value: one for each nullable field on the way and each list; whether it
/// is in a list) and as [`super::has_statistics`] says. A list's path goes through `list` and
/// `item`, as the parquet crate names a list's levels.
fn column(schema: &Schema, path: &[&str]) -> ColumnPages {
    let mut field = path.first().and_then(|p| schema.field_with_name(p).ok());
    let (mut max_def, mut lists) = (0u8, 0u8);
    let mut rest = path.get(1..).unwrap_or_default();
    while let Some(f) = field {
        max_def += u8::from(f.is_nullable());
        field = match (f.data_type(), rest) {
            (_, []) => break,
            (DataType::List(item), ["list", "item", more @ ..]) => {
                (max_def, lists) = (max_def + 1, lists + 1);
                rest = more;
                Some(item.as_ref())
            }
            (DataType::Struct(fields), [name, more @ ..]) => {
                rest = more;
                fields.iter().find(|c| c.name() == name).map(|c| c.as_ref())
            }
            _ => None,
        };
    }
    let kind = field.and_then(|f| Kind::of(f.data_type()));
    let stats = super::has_statistics(path);
    let mut c = match lists {
        0 => ColumnPages::new(kind.unwrap_or(Kind::Bytes), max_def > 0, stats),
        _ => ColumnPages::in_list(kind.unwrap_or(Kind::Bytes), max_def, stats),
    };
    if kind.is_none() || lists > 1 {
        c.fail(format!(
            "the records column {} has no page encoding",
            path.join(".")
        ));
    }
    c
}

impl Default for RecordRows {
    fn default() -> Self {
        let schema = records_schema();
        let mut cols = RecordColumns::default();
        for (path, c) in cols.each_mut() {
            *c = column(&schema, path);
        }
        RecordRows {
            cols,
            rows: 0,
            bytes: 0,
            client_text: String::new(),
            schema,
        }
    }
}

/// The `records` columns a run of records shares, those of their batch (or legacy message),
/// in the form the columns take: records that share them are pushed as runs.
#[derive(Clone, Copy)]
struct BatchCols<'a> {
    file_offset: Option<i64>,
    topic: Option<&'a str>,
    partition: Option<i64>,
    timestamp_type: &'static str,
    producer_id: Option<i64>,
    producer_epoch: Option<i64>,
    transactional: bool,
    control: bool,
    codec: &'static str,
    magic: i8,
    crc_ok: Option<bool>,
}

/// `v` if it is within `lo..=hi` (a narrower column's range), else null.
fn narrow(v: Option<i64>, lo: i64, hi: i64) -> Option<i64> {
    v.filter(|v| (lo..=hi).contains(v))
}

/// UInt64 columns take the numbers' bits (the pages write them as INT64).
fn u64_bits(v: u64) -> i64 {
    v as i64
}

impl PartialEq for BatchCols<'_> {
    /// Field by field; the topic, which the records of a PDU's partition share as one string,
    /// by where it is before what it says.
    fn eq(&self, o: &Self) -> bool {
        let same_topic = match (self.topic, o.topic) {
            (Some(a), Some(b)) => std::ptr::eq(a, b) || a == b,
            (a, b) => a.is_none() && b.is_none(),
        };
        same_topic
            && (
                self.file_offset,
                self.partition,
                self.producer_id,
                self.producer_epoch,
            ) == (o.file_offset, o.partition, o.producer_id, o.producer_epoch)
            && (self.transactional, self.control, self.magic, self.crc_ok)
                == (o.transactional, o.control, o.magic, o.crc_ok)
            && (self.timestamp_type, self.codec) == (o.timestamp_type, o.codec)
    }
}

impl<'a> BatchCols<'a> {
    fn of(pdu: &Pdu, r: &Record<'a>) -> BatchCols<'a> {
        BatchCols {
            file_offset: r.file_offset(pdu).map(u64_bits),
            topic: r.topic,
            partition: narrow(r.partition, i32::MIN.into(), i32::MAX.into()),
            timestamp_type: r.timestamp_type,
            producer_id: r.producer_id,
            producer_epoch: narrow(r.producer_epoch, i16::MIN.into(), i16::MAX.into()),
            transactional: r.transactional,
            control: r.control,
            codec: r.codec,
            magic: r.magic,
            crc_ok: r.crc_ok,
        }
    }
}

impl RecordRows {
    /// Every record of `pdu`. The columns its records share (those of the PDU, and of each
    /// batch) are pushed once per run of records, not once per record: most of the table's
    /// columns, and most of its rows' cost when values are small.
    pub fn push_pdu(&mut self, pdu: &Pdu, input: &str) {
        let mut run: Option<(BatchCols<'_>, u32)> = None;
        let mut records = 0u32;
        let _ = each_record(pdu, log_place(input), &mut |r| {
            let batch = BatchCols::of(pdu, r);
            match &mut run {
                Some((b, n)) if *b == batch && *n < u32::MAX => *n += 1,
                _ => {
                    if let Some((b, n)) = run.replace((batch, 1)) {
                        self.push_batch(&b, n);
                    }
                }
            }
            self.push(input, r);
            records = records.saturating_add(1);
            Ok(())
        });
        if let Some((b, n)) = run {
            self.push_batch(&b, n);
        }
        if records == 0 {
            return;
        }
        // The client's address once per PDU.
        let mut client = std::mem::take(&mut self.client_text);
        client.clear();
        if let Some(c) = &pdu.origin.conn {
            let _ = write!(client, "{}", c.client);
        }
        let c = &mut self.cols;
        c.input.push_str_n(Some(input), records);
        c.frame.push_int_n(pdu.origin.frame.map(u64_bits), records);
        c.direction
            .push_str_n(pdu.direction.map(|d| d.as_str()), records);
        c.client
            .push_str_n(pdu.origin.conn.as_ref().map(|_| client.as_str()), records);
        c.client_id.push_str_n(client_id(pdu), records);
        self.client_text = client;
    }

    /// The columns `n` records of one batch share.
    fn push_batch(&mut self, b: &BatchCols<'_>, n: u32) {
        let c = &mut self.cols;
        c.file_offset.push_int_n(b.file_offset, n);
        c.topic.push_str_n(b.topic, n);
        c.partition.push_int_n(b.partition, n);
        c.timestamp_type.push_str_n(Some(b.timestamp_type), n);
        c.producer_id.push_int_n(b.producer_id, n);
        c.producer_epoch.push_int_n(b.producer_epoch, n);
        c.transactional.push_bool_n(Some(b.transactional), n);
        c.control.push_bool_n(Some(b.control), n);
        c.codec.push_str_n(Some(b.codec), n);
        c.magic.push_int_n(Some(b.magic.into()), n);
        c.crc_ok.push_bool_n(b.crc_ok, n);
    }

    /// One record's own columns (its batch's and its PDU's are pushed as runs).
    fn push(&mut self, input: &str, r: &Record<'_>) {
        let c = &mut self.cols;
        c.offset.push_int(r.offset);
        c.offset_delta.push_int(Some(r.offset_delta));
        c.timestamp.push_int(r.timestamp);
        c.key.push_bytes(r.key);
        c.value.push_bytes(r.value);
        c.sequence
            .push_int(narrow(r.sequence, i32::MIN.into(), i32::MAX.into()));
        let mut first = true;
        for (k, v) in r.headers() {
            // A key is text in the table; one that is not UTF-8 is shown as text can be.
            let key = String::from_utf8_lossy(k);
            c.header_key
                .push_entry(first, HEADER_SET, Some(key.as_bytes()));
            let def = if v.is_some() { HEADER_SET } else { HEADER_NULL };
            c.header_value.push_entry(first, def, v);
            first = false;
            self.bytes += k.len() + v.map_or(0, <[u8]>::len);
        }
        if first {
            c.header_key.push_no_entry(0, 1);
            c.header_value.push_no_entry(0, 1);
        }
        self.rows += 1;
        self.bytes +=
            96 + input.len() + r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
    }

    fn finish(&mut self) -> io::Result<Batch> {
        let schema = Arc::clone(&self.schema);
        let mut paged = Vec::with_capacity(schema.fields().len());
        for (path, c) in self.cols.each_mut() {
            paged.push((path, c.finish()?));
        }
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        Batch::new(rows, Vec::new(), paged)
    }
}

/// Rows finished for the writer: an array per column of the table's schema, in its order, but
/// for the columns whose values come as encoded pages (`paged`: by leaf path).
pub struct Batch {
    pub(super) rows: usize,
    pub(super) columns: Vec<ArrayRef>,
    pub(super) paged: Vec<(&'static [&'static str], Paged)>,
}

impl Batch {
    fn new(
        rows: usize,
        columns: Vec<ArrayRef>,
        paged: Vec<(&'static [&'static str], Paged)>,
    ) -> io::Result<Batch> {
        if let Some(c) = columns.iter().find(|c| c.len() != rows) {
            return Err(other(format!(
                "a column of {} rows in a batch of {rows}",
                c.len()
            )));
        }
        if let Some((f, p)) = paged.iter().find(|(_, p)| p.rows() != rows) {
            return Err(other(format!(
                "column {}: pages of {} rows in a batch of {rows}",
                f.join("."),
                p.rows()
            )));
        }
        Ok(Batch {
            rows,
            columns,
            paged,
        })
    }
}

/// The rows one side gathers: both tables' (those written).
#[derive(Default)]
pub struct Rows {
    pdus: Option<Box<PduRows>>,
    records: Option<Box<RecordRows>>,
    /// The input being read (named in every row).
    pub(super) input: String,
    /// The worker's half: the writer it hands its rows to itself, in its turn, and the number
    /// of the input its batch is of (set as the batch is handed over).
    pub(super) to: Option<ToWriter>,
    pub(super) id: usize,
    /// Rows the reading thread gathered before this half's batch (of the input numbered), to go
    /// to the writer before the batch's ([`super::ParquetSink`]'s `hand_over`).
    pub(super) carried: Option<(usize, Pending)>,
    /// What the tables have no place for (capture notes, log findings), and the PDUs with error
    /// diagnostics: a line each with only the `records` table, counted with `pdus` (whose
    /// `diagnostics` column holds them).
    pub notes: Notes,
}

impl Rows {
    pub(super) fn new(tables: Tables) -> Rows {
        Rows {
            pdus: tables.pdus.then(Box::default),
            records: tables.records.then(Box::default),
            input: String::new(),
            to: None,
            id: 0,
            carried: None,
            notes: Notes::new(!tables.pdus),
        }
    }

    /// Hands the rows gathered to the writer (the worker's half only), after those carried.
    fn send(&mut self) -> io::Result<()> {
        if let (Some((id, carried)), Some(to)) = (self.carried.take(), &self.to) {
            to.send(Job::Write(id, carried))?;
        }
        let pending = take(self)?;
        match &self.to {
            Some(to) if pending.0.is_some() || pending.1.is_some() => {
                to.send(Job::Write(self.id, pending))
            }
            _ => Ok(()),
        }
    }

    pub(super) fn push(&mut self, pdu: &Pdu, input: Option<&str>) {
        if let Some(i) = input.filter(|i| *i != self.input) {
            i.clone_into(&mut self.input);
        }
        if let Some(p) = &mut self.pdus {
            p.push(pdu, &self.input);
        }
        if let Some(r) = &mut self.records {
            r.push_pdu(pdu, &self.input);
        }
        self.notes.pdu(pdu, Some(&self.input));
    }

    pub(super) fn full(&self) -> bool {
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
    /// The worker has the output for its whole batch: full rows go to the writer at once.
    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        self.push(pdu, input);
        if self.full() {
            self.send()?;
        }
        Ok(())
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.notes.note(origin, d, input);
        Ok(())
    }
}

impl Half for Rows {
    /// The batch's rows go to the writer before the output's turn goes back to the reading
    /// thread, whose rows gathered meanwhile come after them.
    fn end_batch(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// The rows gathered so far, as batches (nothing for a table without rows).
pub(super) fn take(rows: &mut Rows) -> io::Result<Pending> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The paged columns' one list names every leaf of the `records` table as the parquet crate
    /// lays its schema out, in order, each once; and each encoder's levels are the leaf's.
    #[test]
    fn paged_columns_are_the_schemas_leaves() {
        let schema = records_schema();
        let parquet = parquet::arrow::ArrowSchemaConverter::new()
            .convert(&schema)
            .unwrap();
        let want: Vec<Vec<String>> = parquet
            .columns()
            .iter()
            .map(|c| c.path().parts().to_vec())
            .collect();
        let mut cols = RecordColumns::default();
        let got: Vec<Vec<String>> = cols
            .each_mut()
            .iter()
            .map(|(p, _)| p.iter().map(|s| s.to_string()).collect())
            .collect();
        assert_eq!(got, want);
        for ((path, _), leaf) in cols.each_mut().into_iter().zip(parquet.columns()) {
            let mut c = column(&schema, path);
            assert_eq!(
                c.levels(),
                (leaf.max_def_level(), leaf.max_rep_level()),
                "{path:?}"
            );
            assert!(c.finish().is_ok(), "{path:?}");
        }
    }
}
