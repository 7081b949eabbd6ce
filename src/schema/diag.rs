//! Diagnostics about spec files: what is wrong, in which file at which line:column, in which
//! field, and what was probably meant. Shared by the loader and the validator.

use super::model::Pos;
pub use crate::diag::Severity;
use crate::limits::{MAX_DIAGNOSTICS_PER_SPEC_FILE, MAX_DIAGNOSTICS_PER_SPEC_RUN};
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
    /// For `diagnostics-suppressed`, the errors, warnings and infos it stands for; zeros
    /// otherwise.
    pub not_listed: [usize; 3],
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
            not_listed: [0; 3],
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

/// Counts of errors, warnings and infos; a `diagnostics-suppressed` diagnostic counts for those
/// it stands for.
pub fn tally(diags: &[SchemaDiag]) -> [usize; 3] {
    let mut n = [0usize; 3];
    for d in diags {
        if d.code == "diagnostics-suppressed" {
            n.iter_mut().zip(d.not_listed).for_each(|(n, k)| *n += k);
        } else {
            n[d.severity as usize] += 1;
        }
    }
    n
}

/// Keeps the first [`MAX_DIAGNOSTICS_PER_SPEC_FILE`] of one file's diagnostics, which must be
/// sorted top to bottom, and replaces the rest with one `diagnostics-suppressed` diagnostic at
/// the first of them. What ended the reading of the file (`json-syntax`, `file-too-large`: one
/// at most) is kept wherever it is, since it says why nothing after it was checked.
pub fn cap_per_file(diags: &mut Vec<SchemaDiag>) {
    if diags.len() <= MAX_DIAGNOSTICS_PER_SPEC_FILE {
        return;
    }
    let (ended, rest): (Vec<SchemaDiag>, Vec<SchemaDiag>) = diags
        .split_off(MAX_DIAGNOSTICS_PER_SPEC_FILE)
        .into_iter()
        .partition(|d| matches!(d.code, "json-syntax" | "file-too-large"));
    if let Some(first) = rest.first() {
        diags.push(suppressed(
            first,
            tally(&rest),
            "per file",
            MAX_DIAGNOSTICS_PER_SPEC_FILE,
        ));
    }
    diags.extend(ended);
}

/// Keeps the first [`MAX_DIAGNOSTICS_PER_SPEC_RUN`] diagnostics of a run, taken file by file,
/// and counts the rest in one `diagnostics-suppressed` diagnostic at the first of them. What
/// stopped the reading of the files (`too-many-files`, `input-too-large`) or the comparison with
/// a baseline (`compat-incomplete`), two each at most, is always listed, since it says what was
/// not checked.
#[derive(Default)]
pub struct RunCap {
    listed: Vec<SchemaDiag>,
    stops: Vec<SchemaDiag>,
    first_not_listed: Option<SchemaDiag>,
    not_listed: [usize; 3],
}

impl RunCap {
    /// Takes one file's diagnostics, already capped by [`cap_per_file`] (or a whole report's).
    pub fn push(&mut self, mut diags: Vec<SchemaDiag>) {
        if diags.len() > MAX_DIAGNOSTICS_PER_SPEC_RUN.saturating_sub(self.listed.len()) {
            let (stops, rest) = diags.into_iter().partition(|d| {
                matches!(
                    d.code,
                    "too-many-files" | "input-too-large" | "compat-incomplete"
                )
            });
            self.stops.extend::<Vec<SchemaDiag>>(stops);
            diags = rest;
        }
        let room = MAX_DIAGNOSTICS_PER_SPEC_RUN.saturating_sub(self.listed.len());
        if diags.len() > room {
            let over = diags.split_off(room);
            let n = tally(&over);
            self.not_listed.iter_mut().zip(n).for_each(|(a, k)| *a += k);
            if self.first_not_listed.is_none() {
                self.first_not_listed = over.into_iter().next();
            }
        }
        self.listed.append(&mut diags);
    }
    /// The diagnostics listed, then the one that counts the rest.
    pub fn finish(mut self) -> Vec<SchemaDiag> {
        if let Some(first) = &self.first_not_listed {
            let d = suppressed(
                first,
                self.not_listed,
                "in one run",
                MAX_DIAGNOSTICS_PER_SPEC_RUN,
            );
            self.listed.push(d);
        }
        self.listed.append(&mut self.stops);
        self.listed
    }
}

/// A `diagnostics-suppressed` diagnostic at `first`, as severe as the worst it stands for.
fn suppressed(first: &SchemaDiag, n: [usize; 3], scope: &str, max: usize) -> SchemaDiag {
    let [e, w, i] = n;
    let worst = if e > 0 {
        Severity::Error
    } else if w > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    let mut d = SchemaDiag::new(
        worst,
        "diagnostics-suppressed",
        &first.file,
        first.pos,
        "",
        format!(
            "{} more diagnostics from here on not listed ({e} errors, {w} warnings, {i} infos); \
             at most {max} are listed {scope}",
            e + w + i
        ),
    );
    d.not_listed = n;
    d
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

    #[test]
    fn past_the_cap_one_diagnostic_counts_the_rest_and_what_ended_the_file_stays() {
        let file: Arc<str> = "Big.json".into();
        let at = |line: u32| Pos { line, col: 3 };
        let mut diags: Vec<SchemaDiag> = (1..=1000)
            .map(|l| SchemaDiag::warning("wrong-json-type", &file, at(l), "", "w"))
            .chain((1001..=1300).map(|l| SchemaDiag::error("bad-type", &file, at(l), "", "e")))
            .chain((1301..=1500).map(|l| SchemaDiag::info("lint", &file, at(l), "", "i")))
            .chain([SchemaDiag::error(
                "file-too-large",
                &file,
                at(1501),
                "",
                "stop",
            )])
            .collect();
        let untouched = diags[..1000].to_vec();
        cap_per_file(&mut diags);
        assert_eq!(diags.len(), 1002);
        assert_eq!(diags[..1000], untouched[..]);
        let s = &diags[1000];
        assert_eq!(
            (s.code, s.severity, s.pos),
            ("diagnostics-suppressed", Severity::Error, at(1001))
        );
        assert_eq!(s.not_listed, [300, 0, 200]);
        assert!(
            s.message.starts_with(
                "500 more diagnostics from here on not listed (300 errors, 0 warnings, 200 infos)"
            ),
            "{}",
            s.message
        );
        assert_eq!(
            (diags[1001].code, diags[1001].pos),
            ("file-too-large", at(1501))
        );

        // At the cap nothing changes; only what ended the file past it: no suppressed diagnostic.
        let mut exact = untouched.clone();
        cap_per_file(&mut exact);
        assert_eq!(exact, untouched);
        let mut ended = untouched.clone();
        ended.push(SchemaDiag::error("json-syntax", &file, at(1001), "", "eof"));
        let before = ended.clone();
        cap_per_file(&mut ended);
        assert_eq!(ended, before);
    }
}
