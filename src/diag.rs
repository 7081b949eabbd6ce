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
