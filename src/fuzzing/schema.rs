//! Target `schema`: text through the spec loader (`schema::load::load_spec`), the validator
//! of both releases (`schema::validate::check_files`, which also runs the cross-file rules) and,
//! when it loads, the comparison with a baseline (`schema::compat`): against itself, which must
//! find no change, and against the built-in spec of its name or API. Every diagnostic must point
//! inside the text and say what it expected.

use crate::protocol::builtin;
use crate::schema::compat::{check, BaselineSpec};
use crate::schema::diag::SchemaDiag;
use crate::schema::load::load_spec;
use crate::schema::validate::{check_files, Release};
use std::sync::Arc;

/// Name the fuzzed file is checked under (rules that compare the file name with the message
/// name then report a mismatch, which is one more path to exercise).
const FILE: &str = "specs/FuzzRequest.json";

pub fn schema(data: &[u8]) {
    // The loader takes text; invalid UTF-8 is the file reader's business (`schema::files`).
    let text = String::from_utf8_lossy(data);
    let (spec, diags) = load_spec(FILE, &text);
    positions(&text, &diags, "load_spec");
    if let Some(spec) = &spec {
        let changed = [(Arc::from(FILE), spec)];
        let itself = [BaselineSpec { origin: FILE, spec }];
        let diags = check(&changed, &itself);
        // Only the notes of versions left out (an unstable latest one, those past the 1,024
        // compared) may come of it.
        assert!(
            diags
                .iter()
                .all(|d| matches!(d.code, "compat-unstable-skipped" | "compat-versions-capped")),
            "a spec compared with itself: {diags:?}"
        );
        let releases: Vec<BaselineSpec> = builtin()
            .specs()
            .map(|(origin, spec)| BaselineSpec { origin, spec })
            .collect();
        positions(&text, &check(&changed, &releases), "compat");
    }
    let files = [(FILE.to_string(), text.to_string())];
    for release in Release::ALL {
        let (_, diags) = check_files(&files, release);
        positions(&text, &diags, release.as_str());
    }
}

fn positions(text: &str, diags: &[SchemaDiag], what: &str) {
    let lines: Vec<&str> = text.split('\n').collect();
    for d in diags {
        assert!(
            !d.message.is_empty() && !d.code.is_empty(),
            "{what}: a diagnostic that says nothing: {d:?}"
        );
        let (line, col) = (d.pos.line as usize, d.pos.col as usize);
        if line == 0 {
            // Whole-file findings carry no position.
            assert_eq!(col, 0, "{what}: column without a line: {d:?}");
            continue;
        }
        let Some(l) = lines.get(line - 1) else {
            panic!("{what}: line {line} of a {}-line text: {d:?}", lines.len());
        };
        assert!(
            col <= l.len() + 2,
            "{what}: column {col} of a {}-byte line {line}: {d:?}",
            l.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sample::Rng;

    /// The built-in bundle's specs as text, whole and damaged: the `schema` smoke set.
    #[test]
    fn smoke_schema() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/schema");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("{} holds the schema seeds", dir.display());
        };
        let mut texts: Vec<Vec<u8>> = entries
            .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
            .collect();
        texts.sort();
        assert!(texts.len() >= 5, "only {} schema seeds", texts.len());
        let mut rng = Rng::new(0x7363_6865);
        for t in &texts {
            schema(t);
            for _ in 0..6 {
                let mut bad = t.clone();
                super::super::check::mutate(&mut bad, &mut rng);
                schema(&bad);
            }
        }
        schema(b"");
        schema(b"\xff\xfe{");
    }
}
