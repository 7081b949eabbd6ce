//! `-f fields -e FIELD…`: one row per PDU, or one row per array element when a field is
//! repeated, as tshark's `-T fields` but lined up by element.
//!
//! How values line up: every value of a field comes with its *element*, the innermost array
//! element holding it in the decoded tree (the root for fields of the PDU itself, such as
//! `frame` or `api`, and for values outside arrays; see `query::Field::values_at`). The PDU
//! gives one row per *innermost* element holding a value of any requested field (an element
//! none of whose descendants holds one), or one row when no value is inside an array. In each
//! row a column shows the values of its field held by that element or by an element (or the
//! root) enclosing it; several are joined with `,`. So `-e topic -e partition -e error` on a
//! Produce response gives one row per partition, with its topic and its error (empty when
//! none); a field held by another branch (Metadata's brokers beside its topics) is empty in the
//! other branch's rows.
//!
//! Cells: tab-separated by default, with tabs, newlines, carriage returns and backslashes in
//! values escaped as `\t`, `\n`, `\r`, `\\`. With another separator (`--separator ,`), a cell
//! holding the separator, a double quote, CR or LF is quoted as RFC 4180 says (`"a ""b"""`).
//! Nulls and structs are empty cells; bytes are base64, uuids base64url (as Kafka prints them),
//! error codes by name (`error`) or number (`error_code`).

use crate::diag::Diagnostic;
use crate::engine::parallel::{Shared, Turn};
use crate::engine::{Half, Sink, Split};
use crate::pdu::{Origin, Pdu};
use crate::query::Field;
use crate::wire::tree::NodeId;
use std::io::{self, Write};
use std::sync::Arc;

/// What to print.
#[derive(Clone, Debug)]
pub struct FieldsOptions {
    /// Each column: its name as given (for the header) and the field.
    pub fields: Vec<(String, Field)>,
    /// Between cells (a tab by default).
    pub separator: String,
    /// A first row naming the columns.
    pub header: bool,
}

impl FieldsOptions {
    /// Columns from field names (`topic`, `body.Topics[].Name`), tab-separated, no header.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<FieldsOptions, String> {
        let mut fields = Vec::new();
        for n in names {
            let n = n.as_ref();
            fields.push((n.to_string(), Field::parse(n)?));
        }
        Ok(FieldsOptions {
            fields,
            separator: "\t".into(),
            header: false,
        })
    }

    /// Whether some column is inside record batches (they must then be decoded).
    pub fn reaches_records(&self) -> bool {
        self.fields
            .iter()
            .any(|(_, f)| matches!(f, Field::Path(p) if p.reaches_records()))
    }
}

/// One value, formatted: its column, element and text (`text[start..end]` of the scratch).
#[derive(Clone, Copy)]
struct Cell {
    elem: NodeId,
    start: u32,
    end: u32,
}

/// Buffers reused from PDU to PDU.
#[derive(Default)]
struct Scratch {
    text: Vec<u8>,
    cells: Vec<Cell>,
    /// Per column, its range in `cells`.
    cols: Vec<(usize, usize)>,
    rows: Vec<NodeId>,
    cell: Vec<u8>,
    line: Vec<u8>,
}

/// The fields printer.
pub struct FieldsPrinter<W: Write> {
    w: W,
    o: Arc<FieldsOptions>,
    s: Scratch,
    quote: bool,
}

impl<W: Write> FieldsPrinter<W> {
    /// A printer; writes the header row now when asked.
    pub fn new(w: W, o: FieldsOptions) -> io::Result<FieldsPrinter<W>> {
        let mut p = Self::half(w, Arc::new(o));
        if p.o.header {
            let o = Arc::clone(&p.o);
            p.s.line.clear();
            for (i, (name, _)) in o.fields.iter().enumerate() {
                if i > 0 {
                    p.s.line.extend_from_slice(o.separator.as_bytes());
                }
                push_cell(&mut p.s.line, name.as_bytes(), &o.separator, p.quote);
            }
            p.s.line.push(b'\n');
            p.w.write_all(&p.s.line)?;
        }
        Ok(p)
    }

    fn half(w: W, o: Arc<FieldsOptions>) -> FieldsPrinter<W> {
        let quote = o.separator != "\t";
        FieldsPrinter {
            w,
            o,
            s: Scratch::default(),
            quote,
        }
    }

    /// The output it writes to.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// The rows of one PDU.
    pub fn write_pdu(&mut self, pdu: &Pdu) -> io::Result<()> {
        let s = &mut self.s;
        s.text.clear();
        s.cells.clear();
        s.cols.clear();
        s.rows.clear();
        for (_, f) in &self.o.fields {
            let from = s.cells.len();
            f.values_at(pdu, |v, elem| {
                let start = s.text.len() as u32;
                let _ = write!(s.text, "{v}");
                s.cells.push(Cell {
                    elem,
                    start,
                    end: s.text.len() as u32,
                });
                if elem != 0 {
                    s.rows.push(elem);
                }
            });
            s.cols.push((from, s.cells.len()));
        }
        let nodes = &pdu.tree.nodes;
        let end = |e: NodeId| nodes.get(e as usize).map_or(e + 1, |n| n.end);
        // Innermost elements: in pre-order an element's descendants follow it, so an element
        // is innermost when the next one is not inside it.
        s.rows.sort_unstable();
        s.rows.dedup();
        let mut k = 0;
        for i in 0..s.rows.len() {
            let e = s.rows[i];
            let inner = s.rows.get(i + 1).is_none_or(|&n| n >= end(e));
            if inner {
                s.rows[k] = e;
                k += 1;
            }
        }
        s.rows.truncate(k);
        if s.rows.is_empty() {
            s.rows.push(0);
        }
        let sep = self.o.separator.as_bytes();
        s.line.clear();
        for &r in &s.rows {
            for (c, &(from, to)) in s.cols.iter().enumerate() {
                if c > 0 {
                    s.line.extend_from_slice(sep);
                }
                s.cell.clear();
                let mut first = true;
                for cell in &s.cells[from..to] {
                    let e = cell.elem;
                    if e == 0 || (e <= r && r < end(e)) {
                        if !first {
                            s.cell.push(b',');
                        }
                        first = false;
                        s.cell
                            .extend_from_slice(&s.text[cell.start as usize..cell.end as usize]);
                    }
                }
                push_cell(&mut s.line, &s.cell, &self.o.separator, self.quote);
            }
            s.line.push(b'\n');
        }
        self.w.write_all(&s.line)
    }
}

/// Appends one cell, escaped (TSV) or quoted (any other separator).
fn push_cell(out: &mut Vec<u8>, cell: &[u8], sep: &str, quote: bool) {
    if quote {
        let needs = cell.iter().any(|&b| matches!(b, b'"' | b'\n' | b'\r'))
            || (!sep.is_empty() && cell.windows(sep.len()).any(|w| w == sep.as_bytes()));
        if !needs {
            out.extend_from_slice(cell);
            return;
        }
        out.push(b'"');
        for &b in cell {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
        return;
    }
    if !cell
        .iter()
        .any(|&b| matches!(b, b'\t' | b'\n' | b'\r' | b'\\'))
    {
        out.extend_from_slice(cell);
        return;
    }
    for &b in cell {
        match b {
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            _ => out.push(b),
        }
    }
}

impl<W: Write> Sink for FieldsPrinter<W> {
    #[inline]
    fn pdu(&mut self, pdu: &Pdu, _input: Option<&str>) -> io::Result<()> {
        self.write_pdu(pdu)
    }

    /// Capture notes are not rows.
    fn note(&mut self, _origin: &Origin, _d: &Diagnostic, _input: Option<&str>) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// On two threads as the text printers are: the worker's half prints its batches into its own
/// buffer and writes them in its turn.
impl Split for FieldsPrinter<Shared> {
    type Half = FieldsPrinter<Shared>;

    fn fork(&mut self, turn: &Arc<Turn>) -> Option<FieldsPrinter<Shared>> {
        let w = self.w.worker_side().ok()?;
        self.w.set_turn(Arc::clone(turn));
        Some(FieldsPrinter::half(w, Arc::clone(&self.o)))
    }

    fn hand_over(&mut self, half: &mut FieldsPrinter<Shared>) -> io::Result<()> {
        self.w.pass_to(&mut half.w)
    }

    fn queues(&self) -> bool {
        true
    }

    fn batch_bytes(&self) -> usize {
        crate::engine::parallel::LIGHT_BATCH_BYTES
    }

    fn take_back(&mut self, _half: &mut FieldsPrinter<Shared>) -> io::Result<()> {
        Ok(())
    }
}

impl Half for FieldsPrinter<Shared> {
    fn end_batch(&mut self) -> io::Result<()> {
        self.w.write_held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(s: &str, sep: &str) -> String {
        let mut v = Vec::new();
        push_cell(&mut v, s.as_bytes(), sep, sep != "\t");
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn cells_are_escaped_for_tsv_and_quoted_for_csv() {
        assert_eq!(cell("a\tb\\c\nd", "\t"), "a\\tb\\\\c\\nd");
        assert_eq!(cell("plain", ","), "plain");
        assert_eq!(cell("a,b", ","), "\"a,b\"");
        assert_eq!(cell("say \"hi\"", ","), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("two\nlines", ";"), "\"two\nlines\"");
        assert_eq!(cell("a,b", ";"), "a,b");
    }
}
