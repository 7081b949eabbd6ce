//! Shared by the broken-spec tables (tests/validate_rules*.rs): a case is a small spec with `$`
//! written just before the token the diagnostic must point at.
#![allow(dead_code)]

use kinspect::schema::diag::{SchemaDiag, Severity};
use kinspect::schema::validate::{validate_files, Release};

pub struct Case {
    pub name: &'static str,
    pub release: &'static str,
    pub code: &'static str,
    pub severity: Severity,
    pub line: u32,
    pub text: &'static str,
}

pub const E: Severity = Severity::Error;
pub const W: Severity = Severity::Warning;
pub const I: Severity = Severity::Info;

/// Removes the `$` marker and returns the text with the marker's 1-based line and column
/// (columns count characters, as editors do).
pub fn unmark(marked: &str) -> (String, u32, u32) {
    let at = marked
        .find('$')
        .expect("every case marks its mistake with $");
    let before = &marked[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() as u32 + 1;
    let mut text = marked.to_string();
    text.remove(at);
    assert!(!text.contains('$'), "one marker per case");
    (text, line, col)
}

pub fn show(diags: &[SchemaDiag]) -> String {
    diags.iter().map(|d| format!("  {d}\n")).collect()
}

/// Runs the table (at least 40 cases, so a truncated table is noticed) and fails listing every
/// case whose diagnostic is missing.
pub fn assert_all_found(cases: &[Case]) {
    assert!(cases.len() >= 40);
    let f = failures(cases);
    assert!(
        f.is_empty(),
        "{} of {} cases failed:\n{}",
        f.len(),
        cases.len(),
        f.join("\n")
    );
}

/// Runs the cases; returns one message per case whose diagnostic is missing.
pub fn failures(cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for c in cases {
        let (text, line, col) = unmark(c.text);
        assert_eq!(
            line, c.line,
            "{}: the table's line disagrees with its marker",
            c.name
        );
        let release = Release::parse(c.release).unwrap();
        let file = format!("cases/{}.json", c.name);
        let diags = validate_files(&[(file, text)], release);
        let hit = diags.iter().any(|d| {
            d.code == c.code && d.severity == c.severity && d.pos.line == line && d.pos.col == col
        });
        if !hit {
            failures.push(format!(
                "{} ({}): expected {}[{}] at {line}:{col}, got:\n{}",
                c.name,
                c.release,
                c.severity.as_str(),
                c.code,
                show(&diags)
            ));
        }
    }
    failures
}
