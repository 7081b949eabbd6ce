//! The records printer: a kcat-style line [`Template`], or one JSON object per record; a sink
//! ([`RecordPrinter`]) that splits over two threads as the PDU printer does.

use super::{each_record, log_place, Record};
use crate::diag::Diagnostic;
use crate::engine::parallel::{Shared, Turn};
use crate::engine::{Half, InputInfo, Sink, Split};
use crate::output::json::{write_int, write_str, write_text_or_base64, write_value, JsonOptions};
use crate::output::notes::Notes;
use crate::pdu::{Origin, Pdu};
use std::io::{self, Write};
use std::sync::Arc;

/// The record views: one line per record (a template), or JSON Lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordsFormat {
    Line,
    Jsonl,
}

impl crate::choice::Choice for RecordsFormat {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        (
            "line",
            "One line per record (see --template)",
            RecordsFormat::Line,
        ),
        ("jsonl", "One JSON object per record", RecordsFormat::Jsonl),
    ];
}

/// One piece of a line template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Lit(Vec<u8>),
    Code(u8),
}

/// A kcat-style line template (`%t %p %o %k %s`), parsed once.
///
/// Codes (kcat's letters where kcat has them): `%t` topic, `%p` partition, `%o` offset (`?`
/// in a Produce request: not assigned yet), `%O` offset delta in the batch, `%k` key, `%s`
/// value, `%K` key length, `%S` value length (-1 when null), `%T` timestamp (ms since the
/// epoch), `%y` timestamp type, `%h` headers (`key=value,…`), `%f` where (frame number, `#N`
/// for a frame on its own, `FILE:OFFSET` of the batch in a log file), `%d` direction, `%c`
/// client id, `%a` client address, `%i` producer id, `%e` producer epoch, `%q` sequence, `%x`
/// flags (`txn`, `control`, or `-`), `%z` codec, `%C` batch CRC (`ok`, `BAD`, `-`), `%m` magic,
/// `%%` a percent sign; escapes `\n`, `\t`, `\r`, `\\`.
#[derive(Clone, Debug)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// The line shown without `--template`.
pub const DEFAULT_TEMPLATE: &str = "%f %d %t/%p@%o %T key=%k value=%s";

const CODES: &[u8] = b"tpoOksKSTyhfdcaieqxzCm";

impl Template {
    /// Parses a template; an unknown `%` code or a `%` at the end is an error naming its column.
    pub fn parse(s: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match (b[i], b.get(i + 1).copied()) {
                (b'%', Some(b'%')) => lit.push(b'%'),
                (b'%', Some(c)) if CODES.contains(&c) => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                    }
                    pieces.push(Piece::Code(c));
                }
                (b'%', c) => {
                    let got = c.map_or("the end".to_string(), |c| format!("%{}", c as char));
                    return Err(format!(
                        "column {}: {got} is no template code (known: %t %p %o %O %k %s %K %S %T %y %h %f %d %c %a %i %e %q %x %z %C %m %%)",
                        i + 1
                    ));
                }
                (b'\\', Some(e @ (b'n' | b't' | b'r' | b'\\'))) => lit.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    _ => b'\\',
                }),
                (c, _) => {
                    lit.push(c);
                    i += 1;
                    continue;
                }
            }
            i += 2;
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Ok(Template { pieces })
    }

    fn ends_with_newline(&self) -> bool {
        matches!(self.pieces.last(), Some(Piece::Lit(l)) if l.ends_with(b"\n"))
    }
}

/// Options of the records printer.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub format: RecordsFormat,
    /// `None`: [`DEFAULT_TEMPLATE`], with ` headers=…` when a record has headers.
    pub template: Option<Template>,
}

/// Prints every record of every PDU it is handed; a sink.
pub struct RecordPrinter<W: Write> {
    w: W,
    format: RecordsFormat,
    template: Arc<Template>,
    /// No `--template`: headers are added when present.
    default: bool,
    /// The input being read (log files: the records' file), from `begin_input`.
    input: String,
    pub records: u64,
    /// JSON Lines: the members every record of the PDU being printed shares.
    head: JsonHead,
    /// Capture notes, log findings and PDUs holding records that did not decode whole: they
    /// are not records, and say why records are missing (standard error, by the caller).
    pub notes: Notes,
}

impl<W: Write> RecordPrinter<W> {
    pub fn new(w: W, o: RecordOptions) -> RecordPrinter<W> {
        let default = o.template.is_none();
        let template = o.template.unwrap_or_else(|| {
            Template::parse(DEFAULT_TEMPLATE).unwrap_or(Template { pieces: Vec::new() })
        });
        RecordPrinter {
            w,
            format: o.format,
            template: Arc::new(template),
            default,
            input: String::new(),
            records: 0,
            head: JsonHead::default(),
            notes: Notes::new(true),
        }
    }

    fn with(&self, w: W) -> RecordPrinter<W> {
        RecordPrinter {
            w,
            format: self.format,
            template: Arc::clone(&self.template),
            default: self.default,
            input: self.input.clone(),
            records: 0,
            head: JsonHead::default(),
            notes: self.notes.half(),
        }
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    fn record(&mut self, pdu: &Pdu, input: &str, r: &Record<'_>) -> io::Result<()> {
        self.records += 1;
        match self.format {
            RecordsFormat::Jsonl => write_json(&mut self.w, &self.head, pdu, r),
            RecordsFormat::Line => {
                let w = &mut self.w;
                for p in &self.template.pieces {
                    match p {
                        Piece::Lit(l) => w.write_all(l)?,
                        Piece::Code(c) => write_code(w, *c, pdu, input, r)?,
                    }
                }
                if self.default && r.header_count() > 0 {
                    w.write_all(b" headers=")?;
                    write_code(w, b'h', pdu, input, r)?;
                }
                if self.default || !self.template.ends_with_newline() {
                    w.write_all(b"\n")?;
                }
                Ok(())
            }
        }
    }
}

impl<W: Write> Sink for RecordPrinter<W> {
    fn begin_input(&mut self, input: &InputInfo<'_>) -> io::Result<()> {
        input.name.clone_into(&mut self.input);
        self.notes.begin_input(input.name);
        Ok(())
    }

    fn pdu(&mut self, pdu: &Pdu, input: Option<&str>) -> io::Result<()> {
        // `input` names the file when several were read (each segment of a log folder); it is
        // borrowed from the engine, so the name is copied only when it changes.
        if let Some(i) = input {
            if i != self.input {
                i.clone_into(&mut self.input);
            }
        }
        let name = std::mem::take(&mut self.input);
        if self.format == RecordsFormat::Jsonl {
            self.head.set(pdu, &name)?;
        }
        let r = each_record(pdu, log_place(&name), &mut |r| self.record(pdu, &name, r));
        // A PDU holding records that did not decode whole (a batch that does not decompress, a
        // frame cut short) is why records are missing and why the run exits 1: say where.
        self.notes.pdu(pdu, Some(&name));
        self.input = name;
        r
    }

    fn note(&mut self, origin: &Origin, d: &Diagnostic, input: Option<&str>) -> io::Result<()> {
        self.notes.note(origin, d, input);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// On two threads the worker's half prints the records of its batches into its own buffer and
/// writes them in its turn, as [`super::Printer`] does.
impl Split for RecordPrinter<Shared> {
    type Half = RecordPrinter<Shared>;

    fn fork(&mut self, turn: &Arc<Turn>) -> Option<RecordPrinter<Shared>> {
        let w = self.w.worker_side().ok()?;
        self.w.set_turn(Arc::clone(turn));
        Some(self.with(w))
    }

    fn hand_over(&mut self, half: &mut RecordPrinter<Shared>) -> io::Result<()> {
        half.input.clone_from(&self.input);
        half.notes.sync(&self.notes);
        self.w.pass_to(&mut half.w)
    }

    fn queues(&self) -> bool {
        true
    }

    fn take_back(&mut self, half: &mut RecordPrinter<Shared>) -> io::Result<()> {
        self.records += std::mem::take(&mut half.records);
        self.notes.merge(&mut half.notes);
        Ok(())
    }
}

impl Half for RecordPrinter<Shared> {
    fn end_batch(&mut self) -> io::Result<()> {
        self.w.write_held()
    }
}

/// Data in a line: text with control characters escaped, `0x…` hex when not UTF-8, `NULL`.
fn write_data<W: Write + ?Sized>(w: &mut W, d: Option<&[u8]>) -> io::Result<()> {
    let Some(b) = d else {
        return w.write_all(b"NULL");
    };
    match std::str::from_utf8(b) {
        Ok(_) => {
            let mut run = 0;
            for (i, &c) in b.iter().enumerate() {
                let esc: &[u8] = match c {
                    b'\n' => b"\\n",
                    b'\t' => b"\\t",
                    b'\r' => b"\\r",
                    b'\\' => b"\\\\",
                    0..=0x1f | 0x7f => b"",
                    _ => continue,
                };
                w.write_all(&b[run..i])?;
                if esc.is_empty() {
                    write!(w, "\\x{c:02x}")?;
                } else {
                    w.write_all(esc)?;
                }
                run = i + 1;
            }
            w.write_all(&b[run..])
        }
        Err(_) => {
            w.write_all(b"0x")?;
            write_hex(w, b)
        }
    }
}

fn write_hex<W: Write + ?Sized>(w: &mut W, b: &[u8]) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 512];
    for chunk in b.chunks(256) {
        for (i, &c) in chunk.iter().enumerate() {
            buf[2 * i] = HEX[(c >> 4) as usize];
            buf[2 * i + 1] = HEX[(c & 15) as usize];
        }
        w.write_all(&buf[..2 * chunk.len()])?;
    }
    Ok(())
}

fn write_opt<W: Write + ?Sized>(w: &mut W, v: Option<i64>) -> io::Result<()> {
    match v {
        Some(v) => write_int(w, v),
        None => w.write_all(b"-"),
    }
}

/// The client's address: the connection's client side.
fn client_addr(pdu: &Pdu) -> Option<std::net::SocketAddr> {
    pdu.origin.conn.as_ref().map(|c| c.client)
}

fn write_where<W: Write + ?Sized>(
    w: &mut W,
    pdu: &Pdu,
    input: &str,
    r: &Record<'_>,
) -> io::Result<()> {
    match (pdu.origin.frame, r.file_offset(pdu)) {
        (Some(f), _) => write_int(w, f as i64),
        (None, Some(at)) => {
            let file = std::path::Path::new(input)
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or(input);
            w.write_all(file.as_bytes())?;
            w.write_all(b":")?;
            write_int(w, at as i64)
        }
        _ => {
            w.write_all(b"#")?;
            write_int(w, pdu.origin.index as i64)
        }
    }
}

fn write_code<W: Write + ?Sized>(
    w: &mut W,
    c: u8,
    pdu: &Pdu,
    input: &str,
    r: &Record<'_>,
) -> io::Result<()> {
    match c {
        b't' => write_data(w, r.topic.map(str::as_bytes).or(Some(b"?"))),
        b'p' => write_opt(w, r.partition),
        b'o' => match r.offset {
            Some(o) => write_int(w, o),
            None => w.write_all(b"?"),
        },
        b'O' => write_int(w, r.offset_delta),
        b'k' => match r.key_decoded {
            Some(id) => write_value(w, r.tree, id, &JsonOptions::default()),
            None => write_data(w, r.key),
        },
        b's' => match r.value_decoded {
            Some(id) => write_value(w, r.tree, id, &JsonOptions::default()),
            None => write_data(w, r.value),
        },
        b'K' => write_int(w, r.key.map_or(-1, |k| k.len() as i64)),
        b'S' => write_int(w, r.value.map_or(-1, |v| v.len() as i64)),
        b'T' => write_opt(w, r.timestamp),
        b'y' => w.write_all(r.timestamp_type.as_bytes()),
        b'h' => {
            for (i, (k, v)) in r.headers().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_data(w, Some(k))?;
                w.write_all(b"=")?;
                write_data(w, v)?;
            }
            Ok(())
        }
        b'f' => write_where(w, pdu, input, r),
        b'd' => w.write_all(match pdu.direction {
            Some(d) => d.as_str().as_bytes(),
            None => b"log",
        }),
        b'c' => write_data(w, Some(pdu.client_id().unwrap_or(b"-"))),
        b'a' => match client_addr(pdu) {
            Some(a) => write!(w, "{a}"),
            None => w.write_all(b"-"),
        },
        b'i' => write_opt(w, r.producer_id),
        b'e' => write_opt(w, r.producer_epoch),
        b'q' => write_opt(w, r.sequence),
        b'x' => w.write_all(match (r.transactional, r.control) {
            (true, true) => b"txn,control",
            (true, false) => b"txn",
            (false, true) => b"control",
            (false, false) => b"-",
        }),
        b'z' => w.write_all(r.codec.as_bytes()),
        b'C' => w.write_all(match r.crc_ok {
            Some(true) => b"ok",
            Some(false) => b"BAD",
            None => b"-",
        }),
        b'm' => write_int(w, r.magic as i64),
        _ => Ok(()),
    }
}

/// Data in JSON: `{"text":…}`, `{"base64":…}` or `null`.
fn write_json_data<W: Write + ?Sized>(w: &mut W, d: Option<&[u8]>) -> io::Result<()> {
    match d {
        None => w.write_all(b"null"),
        Some(b) => write_text_or_base64(w, b),
    }
}

fn write_json_opt<W: Write + ?Sized>(w: &mut W, v: Option<i64>) -> io::Result<()> {
    match v {
        Some(v) => write_int(w, v),
        None => w.write_all(b"null"),
    }
}

/// The members of a record's JSON object that are the same for every record of a PDU, written
/// once per PDU rather than once per record: `{"input":…,"frame":…` and
/// `,"direction":…,"client":…,"client_id":…`. A log file's records each have a
/// `file_offset`, which goes between the two.
#[derive(Default)]
struct JsonHead {
    start: Vec<u8>,
    conn: Vec<u8>,
    /// A log file's batch, whose records carry `file_offset`.
    log: bool,
}

impl JsonHead {
    fn set(&mut self, pdu: &Pdu, input: &str) -> io::Result<()> {
        self.log = pdu.api_key.is_none() && pdu.origin.frame.is_none();
        let w = &mut self.start;
        w.clear();
        str_member(w, b"{\"input\":", Some(input))?;
        int_member(w, b",\"frame\":", pdu.origin.frame.map(|f| f as i64))?;
        let w = &mut self.conn;
        w.clear();
        str_member(w, b",\"direction\":", pdu.direction.map(|d| d.as_str()))?;
        w.write_all(b",\"client\":")?;
        match client_addr(pdu) {
            Some(a) => write!(w, "\"{a}\"")?,
            None => w.write_all(b"null")?,
        }
        let client_id = pdu.client_id().map(String::from_utf8_lossy);
        str_member(w, b",\"client_id\":", client_id.as_deref())
    }
}

/// `member` (`,"name":`, written as given), then a number or `null`.
fn int_member<W: Write + ?Sized>(w: &mut W, member: &[u8], v: Option<i64>) -> io::Result<()> {
    w.write_all(member)?;
    write_json_opt(w, v)
}

/// `member`, then a JSON string or `null`.
fn str_member<W: Write + ?Sized>(w: &mut W, member: &[u8], v: Option<&str>) -> io::Result<()> {
    w.write_all(member)?;
    match v {
        Some(v) => write_str(w, v),
        None => w.write_all(b"null"),
    }
}

/// `member`, then `true`, `false` or `null`.
fn bool_member<W: Write + ?Sized>(w: &mut W, member: &[u8], v: Option<bool>) -> io::Result<()> {
    w.write_all(member)?;
    w.write_all(match v {
        Some(true) => b"true",
        Some(false) => b"false",
        None => b"null",
    })
}

/// One record as a JSON object (keys documented in the README's records section); `head` is
/// set for its PDU.
fn write_json<W: Write + ?Sized>(
    w: &mut W,
    head: &JsonHead,
    pdu: &Pdu,
    r: &Record<'_>,
) -> io::Result<()> {
    w.write_all(&head.start)?;
    if head.log {
        int_member(
            w,
            b",\"file_offset\":",
            r.file_offset(pdu).map(|a| a as i64),
        )?;
    }
    w.write_all(&head.conn)?;
    str_member(w, b",\"topic\":", r.topic)?;
    int_member(w, b",\"partition\":", r.partition)?;
    int_member(w, b",\"offset\":", r.offset)?;
    int_member(w, b",\"offset_delta\":", Some(r.offset_delta))?;
    int_member(w, b",\"timestamp\":", r.timestamp)?;
    str_member(w, b",\"timestamp_type\":", Some(r.timestamp_type))?;
    w.write_all(b",\"key\":")?;
    write_json_data(w, r.key)?;
    if let Some(id) = r.key_decoded {
        w.write_all(b",\"key_decoded\":")?;
        write_value(w, r.tree, id, &JsonOptions::default())?;
    }
    w.write_all(b",\"value\":")?;
    write_json_data(w, r.value)?;
    if let Some(id) = r.value_decoded {
        w.write_all(b",\"value_decoded\":")?;
        write_value(w, r.tree, id, &JsonOptions::default())?;
    }
    w.write_all(b",\"headers\":[")?;
    for (i, (k, v)) in r.headers().enumerate() {
        let member: &[u8] = if i == 0 { b"{\"key\":" } else { b",{\"key\":" };
        str_member(w, member, Some(&String::from_utf8_lossy(k)))?;
        w.write_all(b",\"value\":")?;
        write_json_data(w, v)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]")?;
    int_member(w, b",\"producer_id\":", r.producer_id)?;
    int_member(w, b",\"producer_epoch\":", r.producer_epoch)?;
    int_member(w, b",\"sequence\":", r.sequence)?;
    bool_member(w, b",\"transactional\":", Some(r.transactional))?;
    bool_member(w, b",\"control\":", Some(r.control))?;
    str_member(w, b",\"codec\":", Some(r.codec))?;
    int_member(w, b",\"magic\":", Some(r.magic.into()))?;
    bool_member(w, b",\"crc_ok\":", r.crc_ok)?;
    w.write_all(b"}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_codes_and_escapes() {
        let t = Template::parse("%t\\t%p%%\\n").unwrap();
        assert_eq!(
            t.pieces,
            vec![
                Piece::Code(b't'),
                Piece::Lit(b"\t".to_vec()),
                Piece::Code(b'p'),
                Piece::Lit(b"%\n".to_vec())
            ]
        );
        assert!(t.ends_with_newline());
        let e = Template::parse("ab %w").unwrap_err();
        assert!(e.starts_with("column 4: %w"), "{e}");
        assert!(Template::parse("%").unwrap_err().contains("the end"));
    }

    #[test]
    fn line_data_stays_on_one_line() {
        let mut out = Vec::new();
        write_data(&mut out, Some(b"a\nb\x01")).unwrap();
        out.push(b' ');
        write_data(&mut out, Some(&[0xff, 0x00])).unwrap();
        out.push(b' ');
        write_data(&mut out, None).unwrap();
        assert_eq!(out, b"a\\nb\\x01 0xff00 NULL");
    }

    #[test]
    fn log_folders_name_topic_and_partition() {
        assert_eq!(
            log_place("d/orders-3/00000000000000000000.log"),
            (Some("orders"), Some(3))
        );
        assert_eq!(
            log_place("__consumer_offsets-12/x.log"),
            (Some("__consumer_offsets"), Some(12))
        );
        assert_eq!(log_place("x.log"), (None, None));
    }
}
