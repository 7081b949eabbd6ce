//! Diagnostics: what was wrong, where, and how bad. Shared by the decoder, the record-batch
//! reader, the capture layer and the schema validator.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding about the bytes. `code` is stable (documented in the README); `path` names the
/// field (`body.Topics[0].Partitions[2].Records`); `offset` is a byte offset into the buffer
/// named by `buf` (0 = the frame itself, others = decompressed buffers of the same tree).
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub path: String,
    pub offset: u64,
    pub buf: u16,
    pub message: String,
}

impl Diagnostic {
    pub fn new(
        severity: Severity,
        code: &'static str,
        path: impl Into<String>,
        offset: u64,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            code,
            path: path.into(),
            offset,
            buf: 0,
            message: message.into(),
        }
    }
    pub fn error(
        code: &'static str,
        path: impl Into<String>,
        offset: u64,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, path, offset, message)
    }
    pub fn warning(
        code: &'static str,
        path: impl Into<String>,
        offset: u64,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, path, offset, message)
    }
    pub fn info(
        code: &'static str,
        path: impl Into<String>,
        offset: u64,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Info, code, path, offset, message)
    }
    pub fn in_buf(mut self, buf: u16) -> Self {
        self.buf = buf;
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}] at byte {}",
            self.severity.as_str(),
            self.code,
            self.offset
        )?;
        if self.buf != 0 {
            write!(f, " of buffer {}", self.buf)?;
        }
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A field path (`body.Topics[0].Partitions[0].Records[3]`) kept as its pieces and put into
/// words only when a diagnostic is reported. Decoders pass it down by value (it is a few words
/// on the stack), so a field that decodes cleanly costs no formatting and no allocation for its
/// path: on record-heavy frames the paths formatted for every record set, batch and control or
/// internal-topic record were a tenth of all decoding.
#[derive(Clone, Copy)]
pub enum FieldPath<'a> {
    /// A path already in words.
    Text(&'a str),
    /// A path that writes itself (the message walker's segments).
    Shown(&'a dyn fmt::Display),
    /// `parent[i]`.
    Index(&'a FieldPath<'a>, i64),
    /// `parent.Name`.
    Member(&'a FieldPath<'a>, &'static str),
}

impl<'a> FieldPath<'a> {
    /// `self[i]`.
    pub fn index(&'a self, i: impl Into<i64>) -> FieldPath<'a> {
        FieldPath::Index(self, i.into())
    }

    /// `self.name`.
    pub fn member(&'a self, name: &'static str) -> FieldPath<'a> {
        FieldPath::Member(self, name)
    }

    /// Whether it writes nothing (only an empty [`FieldPath::Text`] does; a [`FieldPath::Shown`]
    /// is taken to write something).
    pub fn is_empty(&self) -> bool {
        matches!(self, FieldPath::Text(""))
    }
}

impl fmt::Debug for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldPath::Text(s) => f.write_str(s),
            FieldPath::Shown(d) => d.fmt(f),
            FieldPath::Index(p, i) => write!(f, "{p}[{i}]"),
            FieldPath::Member(p, n) => write!(f, "{p}.{n}"),
        }
    }
}

impl<'a> From<&'a str> for FieldPath<'a> {
    fn from(s: &'a str) -> FieldPath<'a> {
        FieldPath::Text(s)
    }
}

impl From<FieldPath<'_>> for String {
    fn from(p: FieldPath<'_>) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::FieldPath;

    #[test]
    fn a_field_path_reads_as_the_path_it_stands_for() {
        let base = FieldPath::Text("body.Topics[0].Partitions[2]");
        let records = base.member("Records");
        let batch = records.index(3usize as i64);
        let record = batch.member("Records");
        let rec = record.index(-1i32);
        assert_eq!(
            rec.to_string(),
            "body.Topics[0].Partitions[2].Records[3].Records[-1]"
        );
        let shown = format!("x{}", 7);
        assert_eq!(FieldPath::Shown(&shown).index(0i32).to_string(), "x7[0]");
        assert_eq!(String::from(FieldPath::Text("")), "");
    }
}

/// A `serde_json` error's message without the " at line L column C" it ends with: for messages
/// that name the place themselves (`FILE:LINE:COLUMN: …`, `line L column C: …`), so that it is
/// said once.
pub fn json_error_message(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())) {
        Some(m) => m.to_string(),
        None => msg,
    }
}

#[cfg(test)]
mod json_error_tests {
    /// serde_json's message carries the place; what is left is the message alone (and a
    /// message without a place is kept whole).
    #[test]
    fn the_place_is_taken_off_once() {
        let e = serde_json::from_str::<serde_json::Value>("{\n  \"a\": tru }").unwrap_err();
        assert_eq!((e.line(), e.column()), (2, 11));
        assert_eq!(super::json_error_message(&e), "expected ident");
        let io = serde_json::Error::io(std::io::Error::other("gone"));
        assert_eq!(super::json_error_message(&io), "gone");
    }
}
