//! The spec validator: Kafka's own generator rules for one release, lints for what Kafka
//! accepts but is almost certainly a mistake, and the per-directory cross-file rules.
//!
//! Kafka's generator stops at the first problem; this module reports all of them at once. The
//! loader (`schema::load`) already reports what stops a file from being read at all (JSON
//! syntax, unknown properties, the type grammar, version syntax, enum values, required
//! properties). This module adds the rules that need the whole model, and decides per release
//! what is an error: 3.9's generator and 4.x's disagree on empty `validVersions`, the `zkBroker`
//! listener, the coordinator record types and duplicate field names (see
//! `reference/kafka-generator-rules.md` §8).
//!
//! One file per rule family: [`messages`] (M), [`structs`] (S), [`fields`] (F), [`defaults`]
//! (D), [`cross`] (X, one run per directory as Kafka runs its generator once per directory) and
//! [`lints`] (warnings read from the JSON itself: duplicated keys, reversed ranges).
//!
//! Diagnostic codes (stable; (W) warning, (I) information, else error; the loader's own codes
//! such as `unknown-property`, `invalid-type`, `json-syntax`, `non-json-whitespace` come first):
//! - messages: `unsupported-spec-type` (3.9: coordinator types), `empty-valid-versions` (3.9),
//!   `missing-flexible-versions`, `flexible-versions-not-open-ended`, `unbounded-valid-versions`,
//!   `listeners-not-request`, `unknown-listener` (4.x: zkBroker), `unstable-not-request`,
//!   `missing-api-key`, `negative-api-key` (W), `coordinator-key-versions`,
//!   `coordinator-key-flexible`, `name-suffix`, `deprecated-outside-valid` (W),
//!   `proposed-property` (I), `header-versions-not-api`, `header-versions-outside-valid`,
//!   `header-versions-not-flexible` (W);
//! - structs: `duplicate-tag`, `tag-gap`, `duplicate-field-name` (error in 4.x, W in 3.9),
//!   `field-name-case-collision` (W), `struct-versions-disjoint`, `struct-name-case`,
//!   `duplicate-common-struct`, `common-struct-inline-fields`, `duplicate-struct`,
//!   `unknown-struct` (W), `unused-common-struct` (W), `top-level-map-key`;
//! - fields: `invalid-field-name`, `nullable-not-allowed`, `nullable-outside-versions` (W),
//!   `fields-on-non-struct`, `fields-ignored` (W), `flexible-override-type`,
//!   `flexible-override-not-subset`, `tag-with-map-key`, `tag-without-tagged-versions`,
//!   `tagged-nullable-partial`, `tagged-versions-not-open-ended`, `tagged-outside-versions`,
//!   `tagged-versions-without-tag`, `tagged-not-flexible`, `tagged-records`, `records-array`,
//!   `zero-copy-type`, `entity-type-mismatch`, `field-outside-valid-versions` (W);
//! - defaults: `invalid-default`, `null-default-not-nullable`, `leading-zero-default` (W),
//!   `records-default-ignored` (W);
//! - cross-file: `duplicate-api-key`, `missing-response`, `missing-request`,
//!   `pair-versions-differ` (W), `duplicate-metadata-key`, `duplicate-coordinator-key`,
//!   `coordinator-missing-value`, `coordinator-missing-key`, `duplicate-spec-name` (W);
//! - JSON lints: `duplicate-key` (W), `reversed-range` (W); files: `file-too-large` (also past
//!   `limits::MAX_SPEC_JSON_VALUES` values), `invalid-utf8`, `diagnostics-suppressed` (past
//!   `limits::MAX_DIAGNOSTICS_PER_SPEC_FILE` for one file or `MAX_DIAGNOSTICS_PER_SPEC_RUN` for a
//!   run, as severe as the worst it counts), `too-many-files` (past `limits::MAX_SPEC_FILES`),
//!   `input-too-large` (past `limits::MAX_SPEC_INPUT_BYTES` read in all);
//! - compatibility (`schema::compat`): `compat-field-added`, `compat-field-removed`,
//!   `compat-field-retyped`, `compat-nullability-changed`, `compat-tagging-changed`,
//!   `compat-field-moved`, `compat-flexible-changed`, `compat-versions-removed` (W),
//!   `compat-field-renamed`, `compat-tagged-added`, `compat-tagged-removed`, `compat-new-spec`,
//!   `compat-unstable-skipped`, `compat-versions-capped` (I), `compat-incomplete` (W, past
//!   `limits::MAX_COMPAT_WORK`).

mod cross;
mod defaults;
mod fields;
/// The files and folders a run reads; here too, where the validator's callers first found it.
pub use super::files;
mod lints;
mod messages;
mod structs;
mod walk;

use super::diag::{cap_per_file, tally, RunCap, SchemaDiag};
use super::json;
use super::load::load_spec_uncapped;
use super::model::MessageSpec;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// Whose generator rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Release {
    /// Apache Kafka 3.9.0.
    V3_9,
    /// Apache Kafka 4.3.1 (the newest built in).
    #[default]
    V4_3,
}

impl Release {
    pub const NEWEST: Release = Release::V4_3;
    pub const ALL: [Release; 2] = [Release::V4_3, Release::V3_9];

    /// Accepts `3.9`, `3.9.0`, `4.3`, `4.3.1`.
    pub fn parse(s: &str) -> Option<Release> {
        match s.trim() {
            "3.9" | "3.9.0" => Some(Release::V3_9),
            "4.3" | "4.3.1" => Some(Release::V4_3),
            _ => None,
        }
    }
    /// The full release name, as the built-in protocol names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Release::V3_9 => "3.9.0",
            Release::V4_3 => "4.3.1",
        }
    }
    /// 4.x generators: empty validVersions, coordinator record types, no `zkBroker`, unique
    /// field names.
    pub fn is_4x(self) -> bool {
        self == Release::V4_3
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Release {
    type Err = String;
    fn from_str(s: &str) -> Result<Release, String> {
        Release::parse(s)
            .ok_or_else(|| format!("unknown release {s:?}: expected 4.3 (4.3.1) or 3.9 (3.9.0)"))
    }
}

/// One spec file after loading and checking.
#[derive(Debug)]
pub struct Checked {
    pub file: Arc<str>,
    /// The model, when the file could be read (possibly with errors in it).
    pub spec: Option<MessageSpec>,
}

/// Validates spec files as one release's generator would, all diagnostics at once, sorted by
/// file, line and column. `files` are (path, text); cross-file rules group them by directory.
pub fn validate_files(files: &[(String, String)], release: Release) -> Vec<SchemaDiag> {
    check_files(files, release).1
}

/// Like [`validate_files`], also returning each file's model (for compatibility checks).
pub fn check_files(
    files: &[(String, String)],
    release: Release,
) -> (Vec<Checked>, Vec<SchemaDiag>) {
    let mut cap = RunCap::default();
    let mut checked = Vec::with_capacity(files.len());
    for (path, text) in files {
        let (spec, d) = check_file(path, text, release);
        cap.push(d);
        checked.push(Checked {
            file: path.as_str().into(),
            spec,
        });
    }
    let mut diags = cap.finish();
    let loaded: Vec<(Arc<str>, &MessageSpec)> = checked
        .iter()
        .filter_map(|c| c.spec.as_ref().map(|s| (c.file.clone(), s)))
        .collect();
    diags.extend(cross::check(&loaded, release));
    sort_and_dedup(&mut diags);
    (checked, diags)
}

/// Validates specs already loaded (say, the built-in protocol), without their text: the rules
/// that read the JSON itself (duplicated keys, reversed ranges) have nothing to read, every
/// other rule applies. `specs` are (file, spec); cross-file rules group them by directory.
pub fn validate_specs(specs: &[(Arc<str>, &MessageSpec)], release: Release) -> Vec<SchemaDiag> {
    let mut diags = Vec::new();
    for (file, spec) in specs {
        let mut cx = walk::Cx::new(file, spec, None, release);
        messages::check(&mut cx);
        structs::check(&mut cx);
        fields::check(&mut cx);
        defaults::check(&mut cx);
        diags.append(&mut cx.out);
    }
    diags.extend(cross::check(specs, release));
    sort_and_dedup(&mut diags);
    diags
}

/// Loads and checks one file (cross-file rules aside).
pub fn check_file(
    path: &str,
    text: &str,
    release: Release,
) -> (Option<MessageSpec>, Vec<SchemaDiag>) {
    let file: Arc<str> = path.into();
    let (spec, mut diags) = load_spec_uncapped(path, text);
    // The loader parsed this text already; parsing again keeps the two modules independent and
    // costs little next to loading. After a syntax error, the value read up to it still holds
    // real duplicated keys and reversed ranges.
    let ast = json::parse_all(text).value;
    if let Some(ast) = &ast {
        lints::check_json(&file, ast, &mut diags);
    }
    if let Some(spec) = &spec {
        let mut cx = walk::Cx::new(&file, spec, ast.as_ref(), release);
        messages::check(&mut cx);
        structs::check(&mut cx);
        fields::check(&mut cx);
        defaults::check(&mut cx);
        diags.append(&mut cx.out);
    }
    sort_and_dedup(&mut diags);
    cap_per_file(&mut diags);
    (spec, diags)
}

/// Sorts by file, line, column (then code), and drops exact repeats (the same finding reached
/// by two rules).
fn sort_and_dedup(diags: &mut Vec<SchemaDiag>) {
    diags.sort_by(|a, b| {
        (&*a.file, a.pos, a.code, &a.path, &a.message)
            .cmp(&(&*b.file, b.pos, b.code, &b.path, &b.message))
    });
    diags.dedup_by(|a, b| {
        a.file == b.file && a.pos == b.pos && a.code == b.code && a.path == b.path
    });
}

/// Whether a field's `type` parsed (the loader keeps an unparseable type as a struct of that
/// name and reports it; rules and comparisons that depend on the type skip such fields).
pub fn type_parses(f: &super::model::Field) -> bool {
    walk::type_ok(f)
}

/// Counts of each severity, for summaries.
pub fn count(diags: &[SchemaDiag]) -> (usize, usize, usize) {
    let [e, w, i] = tally(diags);
    (e, w, i)
}

/// How many diagnostics `diagnostics-suppressed` diagnostics stand for.
pub fn not_listed(diags: &[SchemaDiag]) -> usize {
    diags
        .iter()
        .map(|d| d.not_listed.iter().sum::<usize>())
        .sum()
}
