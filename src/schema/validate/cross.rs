//! Cross-file rules (X1–X6 of `reference/kafka-generator-rules.md` §5). Kafka runs its
//! generator once per directory, so files are grouped by the directory they sit in: one
//! request and one response per API key, each with its partner; metadata keys unique;
//! coordinator keys and values unique and paired (4.x). Lints: a request/response pair whose
//! versions differ (Kafka's own tests require equal ones) and two files declaring one name.

use super::Release;
use crate::schema::diag::SchemaDiag;
use crate::schema::model::{MessageSpec, SpecType};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub fn check(files: &[(Arc<str>, &MessageSpec)], release: Release) -> Vec<SchemaDiag> {
    let mut dirs: BTreeMap<&Path, Vec<(&Arc<str>, &MessageSpec)>> = BTreeMap::new();
    for (file, spec) in files {
        let dir = Path::new(&**file).parent().unwrap_or(Path::new(""));
        dirs.entry(dir).or_default().push((file, *spec));
    }
    let mut out = Vec::new();
    for specs in dirs.values() {
        check_dir(specs, release, &mut out);
    }
    out
}

type Entry<'a> = (&'a Arc<str>, &'a MessageSpec);

fn check_dir(specs: &[Entry], release: Release, out: &mut Vec<SchemaDiag>) {
    let of = |t: SpecType| -> Vec<&Entry> {
        specs
            .iter()
            .filter(|(_, s)| s.spec_type == t && s.api_key.is_some())
            .collect()
    };
    let requests = of(SpecType::Request);
    let responses = of(SpecType::Response);

    // X1, X4, X5 (uniqueness).
    unique(&requests, "duplicate-api-key", "request", out);
    unique(&responses, "duplicate-api-key", "response", out);
    unique(
        &of(SpecType::Metadata),
        "duplicate-metadata-key",
        "metadata record",
        out,
    );
    if release.is_4x() {
        unique(
            &of(SpecType::CoordinatorKey),
            "duplicate-coordinator-key",
            "coordinator-key",
            out,
        );
        unique(
            &of(SpecType::CoordinatorValue),
            "duplicate-coordinator-key",
            "coordinator-value",
            out,
        );
    }

    // X2, X5 (pairs).
    pair(
        &requests,
        &responses,
        "missing-response",
        "request",
        "response",
        out,
    );
    pair(
        &responses,
        &requests,
        "missing-request",
        "response",
        "request",
        out,
    );
    if release.is_4x() {
        let keys = of(SpecType::CoordinatorKey);
        let values = of(SpecType::CoordinatorValue);
        pair(
            &keys,
            &values,
            "coordinator-missing-value",
            "coordinator-key",
            "coordinator-value",
            out,
        );
        pair(
            &values,
            &keys,
            "coordinator-missing-key",
            "coordinator-value",
            "coordinator-key",
            out,
        );
    }

    // X3 lint.
    let request_of: BTreeMap<Option<i16>, &&Entry> =
        requests.iter().rev().map(|e| (e.1.api_key, e)).collect();
    for (rf, rs) in &responses {
        let Some((qf, qs)) = request_of.get(&rs.api_key) else {
            continue;
        };
        for (prop, a, b) in [
            ("validVersions", qs.valid_versions, rs.valid_versions),
            (
                "flexibleVersions",
                qs.flexible_versions,
                rs.flexible_versions,
            ),
        ] {
            if a != b {
                out.push(SchemaDiag::warning(
                    "pair-versions-differ",
                    rf,
                    rs.prop_pos(prop),
                    prop,
                    format!(
                        "{} has {prop} \"{b}\" but its request {} ({qf}) has \"{a}\"; every Kafka API uses the same versions for both",
                        rs.name, qs.name
                    ),
                ));
            }
        }
    }

    // Two files declaring one name generate one class: the second silently replaces the first.
    let mut names: BTreeMap<&str, &Entry> = BTreeMap::new();
    let mut sorted: Vec<&Entry> = specs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    for e in sorted {
        let (f, s) = e;
        if let Some((ff, _)) = names.get(&*s.name) {
            out.push(SchemaDiag::warning(
                "duplicate-spec-name",
                f,
                s.prop_pos("name"),
                "name",
                format!("{ff} already declares a spec named {}; its generated class would be overwritten", s.name),
            ));
        } else {
            names.insert(&s.name, e);
        }
    }
}

/// Reports every spec after the first (by file name) that reuses an apiKey.
fn unique(specs: &[&Entry], code: &'static str, what: &str, out: &mut Vec<SchemaDiag>) {
    let mut sorted: Vec<&&Entry> = specs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let mut seen: BTreeMap<i16, &Arc<str>> = BTreeMap::new();
    for (f, s) in sorted {
        let Some(k) = s.api_key else { continue };
        if let Some(first) = seen.get(&k) {
            out.push(SchemaDiag::error(
                code,
                f,
                s.prop_pos("apiKey"),
                "apiKey",
                format!("{first} is already a {what} with apiKey {k}; there may be only one per directory"),
            ));
        } else {
            seen.insert(k, f);
        }
    }
}

/// Reports every spec of `from` whose apiKey has no spec in `to`.
fn pair(
    from: &[&Entry],
    to: &[&Entry],
    code: &'static str,
    what: &str,
    partner: &str,
    out: &mut Vec<SchemaDiag>,
) {
    let keys: std::collections::BTreeSet<Option<i16>> = to.iter().map(|(_, t)| t.api_key).collect();
    for (f, s) in from {
        if keys.contains(&s.api_key) {
            continue;
        }
        let k = s.api_key.unwrap_or_default();
        out.push(SchemaDiag::error(
            code,
            f,
            s.prop_pos("apiKey"),
            "apiKey",
            format!(
                "{what} {} (apiKey {k}) has no {partner} with the same apiKey in its directory",
                s.name
            ),
        ));
    }
}
