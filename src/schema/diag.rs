//! Diagnostics about spec files: what is wrong, in which file at which line:column, in which
//! field, and what was probably meant. Shared by the loader and the validator.

use super::model::Pos;
pub use crate::diag::Severity;
use std::fmt;
use std::sync::Arc;

/// One finding about a spec file. `code` is stable kebab-case (documented in the README);
/// `path` is the field path (`Topics.Partitions.LeaderEpoch`) or the message property
/// (`validVersions`), empty when the finding is about the file as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaDiag {
    pub severity: Severity,
    pub code: &'static str,
    pub file: Arc<str>,
    pub pos: Pos,
    pub path: String,
    pub message: String,
    pub suggestion: Option<String>,
}

impl SchemaDiag {
    pub fn new(
        severity: Severity,
        code: &'static str,
        file: &Arc<str>,
        pos: Pos,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> SchemaDiag {
        SchemaDiag {
            severity,
            code,
            file: file.clone(),
            pos,
            path: path.into(),
            message: message.into(),
            suggestion: None,
        }
    }
    pub fn error(
        code: &'static str,
        file: &Arc<str>,
        pos: Pos,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, code, file, pos, path, message)
    }
    pub fn warning(
        code: &'static str,
        file: &Arc<str>,
        pos: Pos,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, file, pos, path, message)
    }
    pub fn info(
        code: &'static str,
        file: &Arc<str>,
        pos: Pos,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Info, code, file, pos, path, message)
    }
    pub fn with_suggestion(mut self, s: Option<impl Into<String>>) -> Self {
        self.suggestion = s.map(Into::into);
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    /// Sort key that lists a file's findings top to bottom.
    pub fn sort_key(&self) -> (&str, Pos, &'static str) {
        (&self.file, self.pos, self.code)
    }
}

impl fmt::Display for SchemaDiag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}[{}]",
            self.file,
            self.pos.line,
            self.pos.col,
            self.severity.as_str(),
            self.code
        )?;
        if !self.path.is_empty() {
            write!(f, " {}", self.path)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean `{s}`?)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_place_code_path_and_suggestion() {
        let file: Arc<str> = "AlterIsrRequest.json".into();
        let d = SchemaDiag::error(
            "unknown-property",
            &file,
            Pos { line: 12, col: 7 },
            "Topics.Partitions.LeaderRecoveryState",
            "unknown field property \"ignoreable\"",
        )
        .with_suggestion(Some("ignorable"));
        assert_eq!(
            d.to_string(),
            "AlterIsrRequest.json:12:7: error[unknown-property] Topics.Partitions.LeaderRecoveryState: \
             unknown field property \"ignoreable\" (did you mean `ignorable`?)"
        );
        let w = SchemaDiag::warning("duplicate-key", &file, Pos { line: 1, col: 2 }, "", "twice");
        assert_eq!(
            w.to_string(),
            "AlterIsrRequest.json:1:2: warning[duplicate-key]: twice"
        );
    }
}
