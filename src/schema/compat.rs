//! Wire compatibility of changed specs against a baseline (a folder, or the built-in protocol).
//!
//! A spec is matched to its baseline by name, else by apiKey and type. For every version both
//! define, the two wire layouts are compared struct by struct: a field added, removed, retyped,
//! made (non-)nullable, moved, or moved in or out of the tagged section changes the bytes of a
//! version peers already speak, so it is an error that needs a new version. A field renamed in
//! place (same wire type and nullability at that version) changes no byte: information. Adding or
//! removing a tagged field is information too, since tagged fields exist to be optional.
//! Findings are reported once per field with the versions they affect.
//!
//! The versions are compared a run of alike versions at a time ([`classes`]), and a whole
//! comparison does at most `limits::MAX_COMPAT_WORK` units of work; past it `compat-incomplete`
//! says which versions were not compared (at the spec where the work ran out) and how many specs
//! after it were not (at the first of them): two diagnostics at most.

use super::diag::SchemaDiag;
use super::model::{Field, FieldType, MessageSpec, Pos, SpecType};
use super::versions::Versions;
use crate::limits::MAX_COMPAT_WORK;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// Most versions compared per spec (an unbounded range is a validity error of its own).
const MAX_VERSIONS: i32 = 1024;
/// Above this many cells the field alignment falls back from a longest common subsequence to
/// matching names greedily, so a hostile spec cannot make it quadratic in time and memory.
const MAX_ALIGN_CELLS: usize = 1 << 20;
/// Deepest struct nesting compared (the loader bounds depth too).
const MAX_DEPTH: usize = 64;

/// One baseline spec and where it comes from (a release name such as "4.3.1", or a path).
pub struct BaselineSpec<'a> {
    pub origin: &'a str,
    pub spec: &'a MessageSpec,
}

/// Checks each changed spec against its baseline, within [`MAX_COMPAT_WORK`]. `changed` is
/// (file, spec); the baseline is searched in order, so list the preferred (newest) release
/// first.
pub fn check(changed: &[(Arc<str>, &MessageSpec)], baseline: &[BaselineSpec]) -> Vec<SchemaDiag> {
    check_within(changed, baseline, MAX_COMPAT_WORK).0
}

/// [`check`] with `limit` units of work instead of [`MAX_COMPAT_WORK`]; also returns the work
/// done.
pub fn check_within(
    changed: &[(Arc<str>, &MessageSpec)],
    baseline: &[BaselineSpec],
    limit: u64,
) -> (Vec<SchemaDiag>, u64) {
    let mut out = Vec::new();
    let index = Index::new(baseline);
    let mut work = limit;
    let mut exhausted = false;
    // The specs not compared once the work ran out: the first, and how many in all.
    let mut not_compared: Option<(&Arc<str>, &MessageSpec, usize)> = None;
    for (file, spec) in changed {
        let Some(base) = index.find(spec) else {
            out.push(SchemaDiag::info(
                "compat-new-spec",
                file,
                spec.pos,
                "",
                format!("{} has no counterpart in the baseline (by name or by apiKey and type): nothing to compare", spec.name),
            ));
            continue;
        };
        if exhausted {
            not_compared.get_or_insert((file, spec, 0)).2 += 1;
            continue;
        }
        let unstable = index.unstable_latest(base.spec);
        exhausted = compare_spec(file, spec, base, unstable, &mut work, &mut out);
    }
    if let Some((file, spec, n)) = not_compared {
        let others = match n - 1 {
            0 => String::new(),
            1 => " and the 1 spec after it that has a counterpart are".into(),
            k => format!(" and the {k} specs after it that have a counterpart are"),
        };
        let is = if n == 1 { " is" } else { "" };
        out.push(SchemaDiag::warning(
            "compat-incomplete",
            file,
            spec.pos,
            "",
            format!("{}{others}{is} not compared with the baseline: the comparison reached its work limit (fields and alignment cells, limits::MAX_COMPAT_WORK) on the specs before", spec.name),
        ));
    }
    (out, limit - work)
}

/// The baseline indexed by name and by (apiKey, type); the first (preferred) spec wins.
struct Index<'a> {
    by_name: HashMap<&'a str, &'a BaselineSpec<'a>>,
    by_key: HashMap<(i16, SpecType), &'a BaselineSpec<'a>>,
}

impl<'a> Index<'a> {
    fn new(baseline: &'a [BaselineSpec<'a>]) -> Index<'a> {
        let mut ix = Index {
            by_name: HashMap::new(),
            by_key: HashMap::new(),
        };
        for b in baseline {
            ix.by_name.entry(&b.spec.name).or_insert(b);
            if let Some(k) = b.spec.api_key {
                ix.by_key.entry((k, b.spec.spec_type)).or_insert(b);
            }
        }
        ix
    }
    /// The latest version of `spec`'s API when its request marks it unstable (Kafka's
    /// `latestVersionUnstable` covers the response too).
    fn unstable_latest(&self, spec: &MessageSpec) -> Option<i16> {
        let request = match spec.spec_type {
            SpecType::Request => spec,
            SpecType::Response => self.by_key.get(&(spec.api_key?, SpecType::Request))?.spec,
            _ => return None,
        };
        (request.latest_version_unstable && !request.valid_versions.is_empty())
            .then_some(request.valid_versions.hi)
    }
    /// By name, else by apiKey and type for the types an apiKey identifies.
    fn find(&self, spec: &MessageSpec) -> Option<&'a BaselineSpec<'a>> {
        if let Some(b) = self.by_name.get(&*spec.name) {
            return Some(b);
        }
        let k = spec.api_key.filter(|_| spec.spec_type.is_keyed())?;
        self.by_key.get(&(k, spec.spec_type)).copied()
    }
}

/// What changed about one field, gathered over versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    Added,
    Removed,
    Retyped,
    Nullability,
    Tagging,
    Moved,
    Renamed,
    TaggedAdded,
    TaggedRemoved,
}

struct Finding {
    pos: Pos,
    detail: String,
    versions: Vec<i16>,
}

struct Run<'a> {
    new: &'a MessageSpec,
    base: &'a MessageSpec,
    /// (change, path in the changed spec) → finding.
    found: BTreeMap<(Change, String), Finding>,
    /// The versions being compared: one class of [`classes`], compared at its first version.
    class: &'a [i16],
    /// What is left of the run's work ([`MAX_COMPAT_WORK`]).
    work: &'a mut u64,
    /// Set when work ran out: the class was not compared whole.
    exhausted: bool,
}

fn compare_spec(
    file: &Arc<str>,
    new: &MessageSpec,
    base: &BaselineSpec,
    unstable: Option<i16>,
    work: &mut u64,
    out: &mut Vec<SchemaDiag>,
) -> bool {
    let b = base.spec;
    let both = new.valid_versions.intersect(b.valid_versions);
    // A release names its spec; a baseline file already names itself.
    let label = if base.origin.ends_with(".json") {
        base.origin.to_string()
    } else {
        format!("{} {}", base.origin, b.name)
    };
    let lost = b
        .valid_versions
        .iter()
        .filter(|v| !new.valid_versions.contains(*v))
        .count();
    if lost > 0 {
        out.push(SchemaDiag::warning(
            "compat-versions-removed",
            file,
            new.prop_pos("validVersions"),
            "validVersions",
            format!(
                "validVersions \"{}\" drops {lost} version(s) of the baseline's \"{}\" ({label}): peers speaking them will be refused",
                new.valid_versions, b.valid_versions
            ),
        ));
    }
    if both.is_empty() {
        return false;
    }
    if i32::from(both.hi) - i32::from(both.lo) + 1 > MAX_VERSIONS {
        let first_left = i32::from(both.lo) + MAX_VERSIONS;
        out.push(SchemaDiag::info(
            "compat-versions-capped",
            file,
            new.prop_pos("validVersions"),
            "validVersions",
            format!(
                "version(s) {first_left}-{} are not compared with {label}: at most {MAX_VERSIONS} versions are",
                both.hi
            ),
        ));
    }
    // A version the baseline marks unstable is still being designed: it may change freely.
    let versions: Vec<i16> = capped(both).filter(|v| Some(*v) != unstable).collect();
    if let Some(u) = unstable.filter(|u| both.contains(*u)) {
        out.push(SchemaDiag::info(
            "compat-unstable-skipped",
            file,
            new.prop_pos("validVersions"),
            "validVersions",
            format!(
                "version {u} is unstable in {label} (latestVersionUnstable), so it is not compared"
            ),
        ));
    }
    let flex_changed: Vec<i16> = versions
        .iter()
        .copied()
        .filter(|v| new.is_flexible(*v) != b.is_flexible(*v))
        .collect();
    if !flex_changed.is_empty() {
        out.push(SchemaDiag::error(
            "compat-flexible-changed",
            file,
            new.prop_pos("flexibleVersions"),
            "flexibleVersions",
            format!(
                "flexibleVersions \"{}\" differs from the baseline's \"{}\" ({label}) in version(s) {} that already exist: every field's encoding changes there; needs a new version",
                new.flexible_versions,
                b.flexible_versions,
                ranges(&flex_changed)
            ),
        ));
    }
    let mut found = BTreeMap::new();
    let mut stopped = None;
    for class in classes(&versions, new, b) {
        let mut run = Run {
            new,
            base: b,
            found,
            class,
            work: &mut *work,
            exhausted: false,
        };
        compare_struct(&mut run, &new.fields, &b.fields, class[0], "", new.pos, 0);
        let exhausted = run.exhausted;
        found = run.found;
        if exhausted {
            stopped = Some(class[0]);
            break;
        }
    }
    if let Some(at) = stopped {
        let left: Vec<i16> = versions.iter().copied().filter(|v| *v >= at).collect();
        out.push(SchemaDiag::warning(
            "compat-incomplete",
            file,
            new.prop_pos("validVersions"),
            "validVersions",
            format!(
                "version(s) {} are not (all) compared with {label}: the comparison reached its work limit (fields and alignment cells, limits::MAX_COMPAT_WORK); what is listed for the versions before is complete",
                ranges(&left)
            ),
        ));
    }
    for ((change, path), f) in found {
        let vs = ranges(&f.versions);
        let (sev, code, msg) = match change {
            Change::Added => ("error", "compat-field-added", format!("{} is added in version(s) {vs}, which already exist in {label}: the bytes of those versions change; needs a new version", f.detail)),
            Change::Removed => ("error", "compat-field-removed", format!("{} is removed from version(s) {vs}, which exist in {label}: the bytes of those versions change; needs a new version", f.detail)),
            Change::Retyped => ("error", "compat-field-retyped", format!("{} in version(s) {vs} of {label}; needs a new version", f.detail)),
            Change::Nullability => ("error", "compat-nullability-changed", format!("{} in version(s) {vs} of {label}; needs a new version", f.detail)),
            Change::Tagging => ("error", "compat-tagging-changed", format!("{} in version(s) {vs} of {label}; needs a new version", f.detail)),
            Change::Moved => ("error", "compat-field-moved", format!("{} in version(s) {vs} of {label}: wire order is field order; needs a new version", f.detail)),
            Change::Renamed => ("info", "compat-field-renamed", format!("{} (same type and place: the wire is unchanged) in version(s) {vs} of {label}", f.detail)),
            Change::TaggedAdded => ("info", "compat-tagged-added", format!("{} in version(s) {vs} of {label}: old readers skip it, so no new version is needed", f.detail)),
            Change::TaggedRemoved => ("info", "compat-tagged-removed", format!("{} from version(s) {vs} of {label}: tagged fields are optional, so no new version is needed", f.detail)),
        };
        let d = match sev {
            "error" => SchemaDiag::error(code, file, f.pos, path, msg),
            _ => SchemaDiag::info(code, file, f.pos, path, msg),
        };
        out.push(d);
    }
    stopped.is_some()
}

/// The versions of a range, at most [`MAX_VERSIONS`] of them.
fn capped(v: Versions) -> impl Iterator<Item = i16> {
    v.iter().take(MAX_VERSIONS as usize)
}

/// `versions` (ascending) cut into runs that every version range of the two specs treats alike:
/// a field's `versions`, `nullableVersions`, `taggedVersions` and own `flexibleVersions`, in
/// messages and common structs. The comparison at one version of a run is the comparison at
/// each (nothing else it looks at depends on the version), so it runs once per run: a spec of
/// 1,024 versions whose fields all say `0+` is compared once, not 1,024 times.
fn classes<'v>(versions: &'v [i16], new: &MessageSpec, base: &MessageSpec) -> Vec<&'v [i16]> {
    let mut cuts: Vec<i32> = Vec::new();
    let mut cut = |r: Versions| {
        if !r.is_empty() {
            cuts.push(i32::from(r.lo));
            cuts.push(i32::from(r.hi) + 1);
        }
    };
    for spec in [new, base] {
        let mut stack: Vec<&[Field]> = vec![&spec.fields];
        stack.extend(spec.common_structs.iter().map(|c| &c.fields[..]));
        while let Some(fields) = stack.pop() {
            for f in fields {
                cut(f.versions);
                cut(f.nullable_versions);
                cut(f.tagged_versions);
                if let Some(x) = f.flexible_versions {
                    cut(x);
                }
                stack.push(&f.fields);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut rest = versions;
    while let Some(&first) = rest.first() {
        // The next cut after `first`: the run ends before it (or where the versions skip one,
        // as around an unstable version left out).
        let next = cuts
            .get(cuts.partition_point(|&c| c <= i32::from(first)))
            .copied()
            .unwrap_or(i32::MAX);
        let mut len = 1;
        while len < rest.len()
            && i32::from(rest[len]) < next
            && rest[len] == rest[len - 1].saturating_add(1)
        {
            len += 1;
        }
        let (class, tail) = rest.split_at(len);
        out.push(class);
        rest = tail;
    }
    out
}

/// A field as it is on the wire at one version.
struct Present<'a> {
    field: &'a Field,
    /// The nested fields, for struct and struct-array types.
    children: &'a [Field],
}

/// The fields of a struct that are regular (untagged) fields at version `v`, in wire order.
fn regular<'a>(spec: &'a MessageSpec, fields: &'a [Field], v: i16) -> Vec<Present<'a>> {
    fields
        .iter()
        .filter(|f| f.is_regular_in(v))
        .map(|f| Present {
            field: f,
            children: spec.struct_fields(f),
        })
        .collect()
}

/// The type as the wire sees it: struct names do not travel, only their shape (compared
/// separately), so every struct is `struct`.
fn wire_type(f: &Field) -> String {
    if super::validate::type_parses(f) {
        sig(&f.ty)
    } else {
        format!("?{}", f.type_text)
    }
}

fn sig(t: &FieldType) -> String {
    match t {
        FieldType::Prim(p) => p.as_str().to_string(),
        FieldType::Struct(_) => "struct".into(),
        FieldType::Array(e) => format!("[]{}", sig(e)),
    }
}

impl Run<'_> {
    /// A change seen at the class's first version `v`, so in every version of the class.
    fn note(
        &mut self,
        change: Change,
        path: String,
        pos: Pos,
        v: i16,
        detail: impl FnOnce() -> String,
    ) {
        debug_assert_eq!(self.class.first(), Some(&v));
        self.found
            .entry((change, path))
            .or_insert_with(|| Finding {
                pos,
                detail: detail(),
                versions: Vec::new(),
            })
            .versions
            .extend_from_slice(self.class);
    }

    /// Takes `units` of work; false (and no work left) when there was not that much.
    fn spend(&mut self, units: usize) -> bool {
        let units = u64::try_from(units).unwrap_or(u64::MAX);
        match self.work.checked_sub(units) {
            Some(left) => {
                *self.work = left;
                true
            }
            None => {
                *self.work = 0;
                self.exhausted = true;
                false
            }
        }
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

fn compare_struct(
    run: &mut Run,
    new: &[Field],
    base: &[Field],
    v: i16,
    path: &str,
    struct_pos: Pos,
    depth: usize,
) {
    if depth > MAX_DEPTH || !run.spend(new.len() + base.len()) {
        return;
    }
    let (new_spec, base_spec) = (run.new, run.base);
    let n = regular(new_spec, new, v);
    let b = regular(base_spec, base, v);

    // Regular fields: the same name in the same order is the same field.
    let cells = n.len().saturating_mul(b.len());
    if cells <= MAX_ALIGN_CELLS && !run.spend(cells) {
        return;
    }
    let pairs = align(&n, &b);
    let mut used_n = vec![false; n.len()];
    let mut used_b = vec![false; b.len()];
    for &(i, j) in &pairs {
        used_n[i] = true;
        used_b[j] = true;
        compare_field(run, &n[i], &b[j], v, path, depth);
    }
    // The same name out of order: moved. Each name's unused base fields, first to last: a field
    // takes the first left (by a lookup, not a scan of the base: 16,000 renamed fields were four
    // seconds of name comparisons).
    let mut unused_by_name: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (j, p) in b.iter().enumerate().filter(|&(j, _)| !used_b[j]) {
        unused_by_name
            .entry(&p.field.name)
            .or_default()
            .push_back(j);
    }
    for i in 0..n.len() {
        if used_n[i] {
            continue;
        }
        let first = unused_by_name
            .get_mut(&*n[i].field.name)
            .and_then(VecDeque::pop_front);
        if let Some(j) = first {
            used_n[i] = true;
            used_b[j] = true;
            let f = n[i].field;
            run.note(
                Change::Moved,
                join(path, &f.name),
                f.prop_pos("name"),
                v,
                || format!("{} moved", f.name),
            );
            compare_field(run, &n[i], &b[j], v, path, depth);
        }
    }
    // Between two anchors, what is left pairs up in order as renames when the wire agrees at
    // this version (a field renamed in place, whatever versions each name spans).
    let mut bounds: Vec<(usize, usize)> = pairs.clone();
    bounds.push((n.len(), b.len()));
    let (mut ni, mut bi) = (0, 0);
    for (pn, pb) in bounds {
        let mut next = bi;
        let end = pb.min(b.len());
        for i in ni..pn {
            if used_n[i] {
                continue;
            }
            let f = n[i].field;
            // The first unused base field from `next`; those passed stay used.
            while next < end && used_b[next] {
                next += 1;
            }
            if next >= end {
                break;
            }
            let j = next;
            let bf = b[j].field;
            if wire_type(bf) == wire_type(f) && bf.is_nullable_in(v) == f.is_nullable_in(v) {
                used_n[i] = true;
                used_b[j] = true;
                next = j + 1;
                run.note(
                    Change::Renamed,
                    join(path, &f.name),
                    f.prop_pos("name"),
                    v,
                    || format!("{} was {}", f.name, bf.name),
                );
                compare_field(run, &n[i], &b[j], v, path, depth);
            }
        }
        ni = pn + 1;
        bi = pb + 1;
    }
    // What is left was added or removed, unless it moved in or out of the tagged section (the
    // tagged pass reports that).
    let base_tagged = names(base, |f| f.is_tagged_in(v));
    let new_tagged = names(new, |f| f.is_tagged_in(v));
    for i in 0..n.len() {
        let f = n[i].field;
        if !used_n[i] && !base_tagged.contains(&*f.name) {
            run.note(
                Change::Added,
                join(path, &f.name),
                f.prop_pos("name"),
                v,
                || format!("field {} ({})", f.name, f.type_text),
            );
        }
    }
    for j in 0..b.len() {
        let bf = b[j].field;
        if !used_b[j] && !new_tagged.contains(&*bf.name) {
            run.note(Change::Removed, join(path, &bf.name), struct_pos, v, || {
                format!("field {} ({})", bf.name, bf.type_text)
            });
        }
    }

    // Tagged fields: matched by tag number.
    let tagged = |fields: &'_ [Field]| -> BTreeMap<u32, usize> {
        fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_tagged_in(v))
            .filter_map(|(i, f)| f.tag.map(|t| (t, i)))
            .collect()
    };
    let nt = tagged(new);
    let bt = tagged(base);
    let base_regular = names(base, |f| f.is_regular_in(v));
    // The first field of each name regular at `v`, as a scan from the start finds it.
    let mut new_regular: HashMap<&str, &Field> = HashMap::new();
    for f in new.iter().filter(|f| f.is_regular_in(v)) {
        new_regular.entry(&f.name).or_insert(f);
    }
    for (t, &i) in &nt {
        let f = &new[i];
        let p = join(path, &f.name);
        match bt.get(t) {
            None if base_regular.contains(&*f.name) => {
                run.note(Change::Tagging, p, f.prop_pos("taggedVersions"), v, || {
                    format!("{} moved into the tagged section (tag {t})", f.name)
                })
            }
            None => run.note(Change::TaggedAdded, p, f.prop_pos("tag"), v, || {
                format!("tagged field {} (tag {t}) is added", f.name)
            }),
            Some(&j) => {
                let bf = &base[j];
                let np = Present {
                    field: f,
                    children: new_spec.struct_fields(f),
                };
                let bp = Present {
                    field: bf,
                    children: base_spec.struct_fields(bf),
                };
                if bf.name != f.name && wire_type(bf) == wire_type(f) {
                    run.note(Change::Renamed, p, f.prop_pos("name"), v, || {
                        format!("tagged field {} (tag {t}) was {}", f.name, bf.name)
                    });
                }
                compare_field(run, &np, &bp, v, path, depth);
            }
        }
    }
    for (t, &j) in &bt {
        if nt.contains_key(t) {
            continue;
        }
        let bf = &base[j];
        match new_regular.get(&*bf.name) {
            Some(f) => run.note(
                Change::Tagging,
                join(path, &f.name),
                f.prop_pos("taggedVersions"),
                v,
                || {
                    format!(
                        "{} moved out of the tagged section (it was tag {t})",
                        f.name
                    )
                },
            ),
            None => run.note(
                Change::TaggedRemoved,
                join(path, &bf.name),
                struct_pos,
                v,
                || format!("tagged field {} (tag {t}) is removed", bf.name),
            ),
        }
    }
}

/// The names of the fields `keep` takes.
fn names(fields: &[Field], keep: impl Fn(&Field) -> bool) -> HashSet<&str> {
    fields
        .iter()
        .filter(|f| keep(f))
        .map(|f| &*f.name)
        .collect()
}

fn compare_field(run: &mut Run, n: &Present, b: &Present, v: i16, path: &str, depth: usize) {
    let (f, bf) = (n.field, b.field);
    let p = join(path, &f.name);
    let (nt, bt) = (wire_type(f), wire_type(bf));
    if nt != bt {
        run.note(Change::Retyped, p, f.prop_pos("type"), v, || {
            format!("{} changed type from {bt} to {nt}", f.name)
        });
        return;
    }
    if f.is_nullable_in(v) != bf.is_nullable_in(v) {
        let (was, is) = if f.is_nullable_in(v) {
            ("non-nullable", "nullable")
        } else {
            ("nullable", "non-nullable")
        };
        run.note(
            Change::Nullability,
            p.clone(),
            f.prop_pos("nullableVersions"),
            v,
            || format!("{} changed from {was} to {is}", f.name),
        );
    }
    let fflex = f.flexible_versions.map(|x| x.contains(v));
    let bflex = bf.flexible_versions.map(|x| x.contains(v));
    if fflex != bflex {
        run.note(
            Change::Retyped,
            p.clone(),
            f.prop_pos("flexibleVersions"),
            v,
            || {
                let show = |o: Option<Versions>| {
                    o.map_or("the message's".to_string(), |x| format!("\"{x}\""))
                };
                format!(
                    "{} changed its own flexibleVersions from {} to {}",
                    f.name,
                    show(bf.flexible_versions),
                    show(f.flexible_versions)
                )
            },
        );
    }
    if f.ty.struct_name().is_some() {
        compare_struct(run, n.children, b.children, v, &p, f.pos, depth + 1);
    }
}

/// Matches fields of the same name, keeping order (a longest common subsequence), as
/// (index in new, index in base) in increasing order of both. Same-named fields out of order
/// are matched afterwards (and reported as moved).
fn align(n: &[Present], b: &[Present]) -> Vec<(usize, usize)> {
    let (ln, lb) = (n.len(), b.len());
    let mut pairs = Vec::new();
    if ln.saturating_mul(lb) <= MAX_ALIGN_CELLS {
        let mut t = vec![0u32; (ln + 1) * (lb + 1)];
        let at = |i: usize, j: usize| i * (lb + 1) + j;
        for i in (0..ln).rev() {
            for j in (0..lb).rev() {
                t[at(i, j)] = if n[i].field.name == b[j].field.name {
                    t[at(i + 1, j + 1)] + 1
                } else {
                    t[at(i + 1, j)].max(t[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ln && j < lb {
            if n[i].field.name == b[j].field.name {
                pairs.push((i, j));
                i += 1;
                j += 1;
            } else if t[at(i + 1, j)] >= t[at(i, j + 1)] {
                i += 1;
            } else {
                j += 1;
            }
        }
    } else {
        // Too large for the table: each field pairs with the first base field of its name after
        // the last pair, found among that name's places (a scan of the base per field was
        // quadratic).
        let mut places: HashMap<&str, Vec<usize>> = HashMap::new();
        for (j, y) in b.iter().enumerate() {
            places.entry(&y.field.name).or_default().push(j);
        }
        let mut j0 = 0;
        for (i, x) in n.iter().enumerate() {
            let Some(js) = places.get(&*x.field.name) else {
                continue;
            };
            if let Some(&j) = js.get(js.partition_point(|&j| j < j0)) {
                pairs.push((i, j));
                j0 = j + 1;
            }
        }
    }
    pairs
}

/// `1, 3-5, 7` from sorted versions.
fn ranges(vs: &[i16]) -> String {
    let mut v = vs.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            i += 1;
            end = v[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn versions_read_as_ranges() {
        assert_eq!(ranges(&[3, 1, 2, 7, 5, 5]), "1-3, 5, 7");
        assert_eq!(ranges(&[0]), "0");
        assert_eq!(ranges(&[]), "");
    }
}
