//! Decode/encode plans: a message spec at one version, compiled once into a flat table of
//! structs whose fields say exactly what is on the wire (field presence, compact or legacy
//! lengths, nullability, tagged sections and tags, null markers). The decoder, the encoder and
//! the test generators walk plans; nothing downstream looks at version ranges again.
//!
//! Rules (reference/kafka-wire-rules.md §2–§4): a field is on the wire at v iff v ∈ versions and
//! v ∉ taggedVersions; lengths are compact iff the message is flexible at v unless the field
//! overrides `flexibleVersions` (RequestHeader.ClientId); every struct of a flexible version has
//! its own tagged section; inside a tag everything is compact and a nullable struct carries a
//! uvarint presence marker (an int8 marker outside tags).

use crate::limits::MAX_DEPTH;
use crate::schema::model::{Entity, Field, FieldType, MessageSpec, Prim};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What one value is on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Prim(Prim),
    /// Index into [`Plan::structs`].
    Struct(u32),
    /// Elements are never nullable.
    Array(Box<Ty>),
    /// A struct that contains itself, or nesting beyond `limits::MAX_DEPTH`: decoding it
    /// reports `depth-limit`.
    TooDeep,
}

/// One field as it travels at the plan's version.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldPlan {
    pub name: &'static str,
    pub ty: Ty,
    pub nullable: bool,
    /// Lengths and counts are uvarints (N+1, 0 = null) rather than int16/int32.
    pub compact: bool,
    /// Set for fields carried in the tagged section.
    pub tag: Option<u32>,
    /// The spec's `default` as written (a tagged field equal to it is not written by Kafka).
    pub default: Option<&'static str>,
    /// What the value (an array's elements) identifies: [`Field::entity`].
    pub entity: Entity,
    /// How the decoder reads it, derived from the above when the plan is compiled.
    pub read: Read,
}

/// The decoder's shortcut for one field, worked out once per plan so that the per-field work
/// of decoding is a match on this and no more. Each shortcut is taken only when it cannot
/// produce a diagnostic; otherwise the decoder reads the field the general way, which reports
/// exactly what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// A fixed-width primitive, the first of `run` consecutive untagged ones (this one
    /// included) that take `width` bytes together: read with one bounds check for the run.
    Fixed { run: u16, width: u32 },
    /// A string or bytes.
    Blob,
    /// Anything else (structs, arrays, records, tagged fields).
    General,
}

/// The bytes a primitive always takes, when that is fixed.
pub fn fixed_width(p: Prim) -> Option<u32> {
    Some(match p {
        Prim::Bool | Prim::Int8 => 1,
        Prim::Int16 | Prim::Uint16 => 2,
        Prim::Int32 | Prim::Uint32 => 4,
        Prim::Int64 | Prim::Float64 => 8,
        Prim::Uuid => 16,
        Prim::String | Prim::Bytes | Prim::Records => return None,
    })
}

/// The shortcuts of a struct's untagged fields (`fields` in wire order).
fn set_reads(fields: &mut [FieldPlan]) {
    let mut run: u16 = 0;
    let mut width: u32 = 0;
    for f in fields.iter_mut().rev() {
        f.read = match f.ty {
            Ty::Prim(p) => match fixed_width(p) {
                Some(w) => {
                    run = run.saturating_add(1);
                    width = width.saturating_add(w);
                    Read::Fixed { run, width }
                }
                None => {
                    (run, width) = (0, 0);
                    if p == Prim::Records {
                        Read::General
                    } else {
                        Read::Blob
                    }
                }
            },
            _ => {
                (run, width) = (0, 0);
                Read::General
            }
        };
    }
}

/// One struct (the message itself, an inline struct or a common struct) at the plan's version.
#[derive(Clone, Debug, PartialEq)]
pub struct StructPlan {
    /// The struct's type name (the message name for the root).
    pub name: &'static str,
    /// Untagged fields in wire order.
    pub fields: Vec<FieldPlan>,
    /// Tagged fields, ascending by tag.
    pub tagged: Vec<FieldPlan>,
    /// Whether the struct ends with a tagged section.
    pub flexible: bool,
}

impl FieldPlan {
    /// The primitive and its width, for a fixed-width primitive field.
    pub fn fixed(&self) -> Option<(Prim, usize)> {
        match self.ty {
            Ty::Prim(p) => fixed_width(p).map(|w| (p, w as usize)),
            _ => None,
        }
    }
}

impl StructPlan {
    pub fn tagged_field(&self, tag: u32) -> Option<&FieldPlan> {
        self.tagged
            .binary_search_by_key(&tag, |f| f.tag.unwrap_or(u32::MAX))
            .ok()
            .and_then(|i| self.tagged.get(i))
    }
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub spec: &'static MessageSpec,
    pub version: i16,
    pub structs: Vec<StructPlan>,
    /// The message's top-level struct.
    pub root: u32,
}

impl Plan {
    pub fn structure(&self, id: u32) -> &StructPlan {
        // Ids only come from `compile`, which pushes before handing them out.
        &self.structs[id as usize]
    }

    /// Compiles `spec` at `version`. The version is not checked against `validVersions`: the
    /// caller decides what an unknown version means.
    pub fn compile(spec: &'static MessageSpec, version: i16) -> Plan {
        let flexible = spec.is_flexible(version);
        let mut plan = Plan {
            spec,
            version,
            structs: Vec::new(),
            root: 0,
        };
        let mut c = Compiler {
            plan: &mut plan,
            memo: HashMap::new(),
            open: Vec::new(),
        };
        let root = c.add_struct(&spec.name, &spec.fields, flexible, 0);
        plan.root = root;
        plan
    }
}

/// Compilation state: each struct definition is compiled once per plan (a common struct used in
/// ten places is one `StructPlan`), and a struct that contains itself is cut (`Ty::TooDeep`),
/// so a hostile schema overlay cannot make the plan grow exponentially.
struct Compiler<'p> {
    plan: &'p mut Plan,
    /// Struct definitions (their `fields` slice) already compiled.
    memo: HashMap<(usize, usize), u32>,
    /// Struct definitions being compiled, outermost first.
    open: Vec<(usize, usize)>,
}

impl Compiler<'_> {
    fn add_struct(
        &mut self,
        name: &'static str,
        fields: &'static [Field],
        flexible: bool,
        depth: usize,
    ) -> u32 {
        let key = (fields.as_ptr() as usize, fields.len());
        if let Some(&id) = self.memo.get(&key) {
            return id;
        }
        self.open.push(key);
        let id = self.plan.structs.len() as u32;
        self.memo.insert(key, id);
        self.plan.structs.push(StructPlan {
            name,
            fields: Vec::new(),
            tagged: Vec::new(),
            flexible,
        });
        let v = self.plan.version;
        let (mut regular, mut tagged) = (Vec::new(), Vec::new());
        for f in fields {
            if !f.versions.contains(v) {
                continue;
            }
            let in_tag = f.tagged_versions.contains(v);
            // Tagged fields exist only in flexible versions; a spec tagging a field at a
            // non-flexible version is invalid (the validator says so) and has nowhere to put it.
            if in_tag && !flexible {
                continue;
            }
            let compact = in_tag || f.flexible_versions.map_or(flexible, |fv| fv.contains(v));
            let ty = self.ty(&f.ty, f, flexible, depth + 1);
            let fp = FieldPlan {
                name: &f.name,
                ty,
                nullable: f.is_nullable_in(v),
                compact,
                tag: None,
                default: f.default.as_deref(),
                entity: f.entity(),
                read: Read::General,
            };
            if in_tag {
                tagged.push(FieldPlan {
                    tag: Some(f.tag.unwrap_or(u32::MAX)),
                    ..fp
                });
            } else {
                regular.push(fp);
            }
        }
        tagged.sort_by_key(|f| f.tag);
        set_reads(&mut regular);
        if let Some(s) = self.plan.structs.get_mut(id as usize) {
            s.fields = regular;
            s.tagged = tagged;
        }
        self.open.pop();
        id
    }

    fn ty(&mut self, t: &'static FieldType, f: &'static Field, flexible: bool, depth: usize) -> Ty {
        if depth > MAX_DEPTH {
            return Ty::TooDeep;
        }
        match t {
            FieldType::Prim(p) => Ty::Prim(*p),
            FieldType::Array(e) => Ty::Array(Box::new(self.ty(e, f, flexible, depth + 1))),
            FieldType::Struct(name) => {
                let fields = self.plan.spec.struct_fields(f);
                // Empty definitions all share one dangling pointer; they are never recursive.
                let key = (fields.as_ptr() as usize, fields.len());
                if !fields.is_empty() && self.open.contains(&key) {
                    return Ty::TooDeep;
                }
                Ty::Struct(self.add_struct(name, fields, flexible, depth))
            }
        }
    }
}

/// Plans compiled per `Decoder` (no locking on the hot path).
#[derive(Default)]
pub struct PlanCache {
    map: PlanMap,
}

/// Hostile input picks versions (coordinator values, metadata records): keep the caches bounded.
const MAX_CACHED_PLANS: usize = 8192;

impl PlanCache {
    pub fn get(&mut self, spec: &'static MessageSpec, version: i16) -> Arc<Plan> {
        let key = (spec as *const MessageSpec as usize, version);
        if let Some(p) = self.map.get(&key) {
            return p.clone();
        }
        if self.map.len() >= MAX_CACHED_PLANS {
            self.map.clear();
        }
        let p = shared(spec, version);
        self.map.insert(key, p.clone());
        p
    }
}

/// Plans by (spec address, version).
type PlanMap = HashMap<(usize, i16), Arc<Plan>>;

/// The process-wide plan for (spec, version), compiled on first use.
pub fn shared(spec: &'static MessageSpec, version: i16) -> Arc<Plan> {
    static CACHE: OnceLock<Mutex<PlanMap>> = OnceLock::new();
    let key = (spec as *const MessageSpec as usize, version);
    let cache = CACHE.get_or_init(Default::default);
    // A poisoned lock only means another thread panicked mid-insert; the map is still usable.
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&key) {
        return p.clone();
    }
    if map.len() >= MAX_CACHED_PLANS {
        map.clear();
    }
    let p = Arc::new(Plan::compile(spec, version));
    map.insert(key, p.clone());
    p
}

#[doc(hidden)]
pub mod testspec {
    //! Hand-built specs for tests that must not depend on the registry (public for the
    //! integration tests and fuzz targets; not a stable API).
    use crate::schema::model::*;
    use crate::schema::versions::Versions;
    use std::sync::Arc;

    pub fn ty(s: &str) -> FieldType {
        if let Some(e) = s.strip_prefix("[]") {
            return FieldType::Array(Box::new(ty(e)));
        }
        match Prim::parse(s) {
            Some(p) => FieldType::Prim(p),
            None => FieldType::Struct(s.into()),
        }
    }

    pub fn v(s: &str) -> Versions {
        Versions::parse(s, Some(Versions::NONE)).expect("test version string")
    }

    /// `f("Name", "[]string", "0+")`, then adjust with struct update syntax.
    pub fn f(name: &str, t: &str, versions: &str) -> Field {
        Field {
            name: name.into(),
            ty: ty(t),
            versions: v(versions),
            type_text: t.into(),
            ..Field::default()
        }
    }

    pub fn common_struct(name: &str, fields: Vec<Field>) -> StructSpec {
        StructSpec {
            name: name.into(),
            versions: v("0+"),
            fields,
            pos: Pos::default(),
            deprecated_versions: Versions::NONE,
            props: Vec::new(),
        }
    }

    pub fn tagged(mut fl: Field, tag: u32, versions: &str) -> Field {
        fl.tag = Some(tag);
        fl.tagged_versions = v(versions);
        fl
    }

    pub fn nullable(mut fl: Field, versions: &str) -> Field {
        fl.nullable_versions = v(versions);
        fl
    }

    pub fn with_fields(mut fl: Field, fields: Vec<Field>) -> Field {
        fl.fields = fields;
        fl
    }

    pub fn spec(
        name: &str,
        valid: &str,
        flexible: &str,
        fields: Vec<Field>,
    ) -> &'static MessageSpec {
        Box::leak(Box::new(MessageSpec {
            name: name.into(),
            spec_type: SpecType::Request,
            api_key: Some(0),
            valid_versions: v(valid),
            flexible_versions: v(flexible),
            deprecated_versions: Versions::NONE,
            listeners: Vec::new(),
            latest_version_unstable: false,
            header_versions: None,
            fields,
            common_structs: Vec::new(),
            path: Arc::from("test"),
            pos: Pos::default(),
            props: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::testspec::*;
    use super::*;

    #[test]
    fn presence_compactness_and_tags_follow_the_version() {
        let s = spec(
            "DemoRequest",
            "0-3",
            "2+",
            vec![
                f("A", "int32", "0+"),
                f("Gone", "string", "0-1"),
                tagged(f("T9", "string", "2+"), 9, "2+"),
                tagged(f("T1", "int8", "3+"), 1, "3+"),
                with_fields(
                    f("S", "[]Sub", "1+"),
                    vec![
                        f("X", "string", "0+"),
                        tagged(f("Y", "int8", "2+"), 0, "3+"),
                    ],
                ),
                {
                    let mut c = f("ClientId", "string", "0+");
                    c.flexible_versions = Some(v("none"));
                    c
                },
            ],
        );
        let p0 = Plan::compile(s, 0);
        let r0 = p0.structure(p0.root);
        assert_eq!(
            r0.fields.iter().map(|f| f.name).collect::<Vec<_>>(),
            ["A", "Gone", "ClientId"]
        );
        assert!(!r0.flexible && r0.tagged.is_empty());

        let p3 = Plan::compile(s, 3);
        let r3 = p3.structure(p3.root);
        assert_eq!(
            r3.fields.iter().map(|f| f.name).collect::<Vec<_>>(),
            ["A", "S", "ClientId"]
        );
        assert_eq!(
            r3.tagged
                .iter()
                .map(|f| (f.name, f.tag))
                .collect::<Vec<_>>(),
            [("T1", Some(1)), ("T9", Some(9))]
        );
        assert!(
            r3.fields[1].compact,
            "arrays are compact in flexible versions"
        );
        assert!(
            !r3.fields[2].compact,
            "the field-level override keeps ClientId an int16 string"
        );
        let Ty::Array(e) = &r3.fields[1].ty else {
            panic!("S is an array")
        };
        let Ty::Struct(sub) = **e else {
            panic!("of structs")
        };
        let sub = p3.structure(sub);
        assert!(sub.flexible);
        assert_eq!(sub.tagged_field(0).map(|f| f.name), Some("Y"));
        // At v2 Y is regular... but its versions say 2+ and tagged 3+, so at v2 it is untagged.
        let p2 = Plan::compile(s, 2);
        let Ty::Array(e) = &p2.structure(p2.root).fields[1].ty else {
            panic!()
        };
        let Ty::Struct(sub2) = **e else { panic!() };
        assert_eq!(
            p2.structure(sub2)
                .fields
                .iter()
                .map(|f| f.name)
                .collect::<Vec<_>>(),
            ["X", "Y"]
        );
    }

    #[test]
    fn self_referencing_struct_is_cut_and_shared_structs_compile_once() {
        let s = spec(
            "LoopRequest",
            "0",
            "none",
            vec![f("Me", "Loop", "0+"), f("Again", "[]Loop", "0+")],
        );
        let leaked: &'static mut MessageSpec = Box::leak(Box::new(s.clone()));
        // Loop holds itself twice: without the cut the plan would double at every level.
        leaked.common_structs.push(common_struct(
            "Loop",
            vec![
                f("A", "Loop", "0+"),
                f("B", "Loop", "0+"),
                f("X", "int8", "0+"),
            ],
        ));
        let p = Plan::compile(leaked, 0);
        assert_eq!(p.structs.len(), 2, "root and one shared Loop");
        let root = p.structure(p.root);
        let Ty::Struct(l) = root.fields[0].ty else {
            panic!("{:?}", root.fields[0].ty)
        };
        assert_eq!(root.fields[1].ty, Ty::Array(Box::new(Ty::Struct(l))));
        let lp = p.structure(l);
        assert_eq!(
            (&lp.fields[0].ty, &lp.fields[1].ty),
            (&Ty::TooDeep, &Ty::TooDeep)
        );
        assert_eq!(lp.fields[2].ty, Ty::Prim(Prim::Int8));
    }
}
