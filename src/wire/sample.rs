//! Schema-driven message generators over compiled plans: a minimal message (zeros and empties)
//! and seeded varied messages (nulls, empty and non-empty arrays, tagged fields present and
//! absent, unknown tags, non-ASCII strings, extreme integers), as the decoded-PDU JSON the
//! encoder takes. Used by the round-trip and differential tests and by fuzz seeding.
//!
//! A tagged field is only generated with a value different from its default, because Kafka's
//! writers omit a tagged field equal to its default: generating one would make byte-exact
//! comparisons with an independent encoder meaningless.

use super::plan::{FieldPlan, Plan, Ty};
use crate::schema::model::Prim;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use serde_json::{Map, Value as J};

/// A small, seeded PRNG (splitmix64): reproducible across platforms, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

/// The smallest message: every untagged field present with zero / false / "" / [] / an empty
/// struct, no tagged fields.
pub fn minimal(plan: &Plan) -> J {
    Gen {
        plan,
        rng: None,
        depth: 0,
    }
    .structure(plan.root)
}

/// A varied message drawn from `rng`.
pub fn varied(plan: &Plan, rng: &mut Rng) -> J {
    Gen {
        plan,
        rng: Some(rng),
        depth: 0,
    }
    .structure(plan.root)
}

/// A varied message whose every choice is read from fuzzer input: the structure-aware
/// generator of the `roundtrip` fuzz target. Strings and bytes come from the input too, so the
/// fuzzer reaches contents the fixed samples never hold; once the input runs out every choice
/// is the smallest one, so the message stays bounded by the input's length.
#[cfg(feature = "fuzzing")]
pub fn from_unstructured(plan: &Plan, u: &mut arbitrary::Unstructured<'_>) -> J {
    let mut src = Fuzzed(u);
    Gen {
        plan,
        rng: Some(&mut src),
        depth: 0,
    }
    .structure(plan.root)
}

/// Where a varied message's choices come from.
trait Source {
    fn next_u64(&mut self) -> u64;
    /// Uniform (for a PRNG) in `0..n`.
    fn below(&mut self, n: u64) -> u64;
    /// Contents of a string field.
    fn text(&mut self) -> String {
        STRINGS[self.below(STRINGS.len() as u64) as usize].to_string()
    }
    /// Contents of a bytes field.
    fn blob(&mut self) -> Vec<u8> {
        let len = self.below(17) as usize;
        (0..len).map(|_| self.below(256) as u8).collect()
    }
}

impl Source for Rng {
    fn next_u64(&mut self) -> u64 {
        Rng::next_u64(self)
    }
    fn below(&mut self, n: u64) -> u64 {
        Rng::below(self, n)
    }
}

/// Longest string or bytes value taken from fuzzer input: long enough to cross the 1- and
/// 2-byte compact-length boundaries, far below Kafka's 32767-byte string limit.
#[cfg(feature = "fuzzing")]
const MAX_FUZZED_BLOB: usize = 300;

#[cfg(feature = "fuzzing")]
struct Fuzzed<'u, 'd>(&'u mut arbitrary::Unstructured<'d>);

#[cfg(feature = "fuzzing")]
impl Source for Fuzzed<'_, '_> {
    fn next_u64(&mut self) -> u64 {
        self.0.arbitrary().unwrap_or(0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.int_in_range(0..=n.max(1) - 1).unwrap_or(0)
    }
    fn text(&mut self) -> String {
        if self.below(2) == 0 {
            let i = self.below(STRINGS.len() as u64) as usize;
            return STRINGS[i].to_string();
        }
        let len = self.below(MAX_FUZZED_BLOB as u64 + 1) as usize;
        let raw = self.0.bytes(len.min(self.0.len())).unwrap_or(&[]);
        // Whole characters only: a cut one would make the string invalid UTF-8.
        match std::str::from_utf8(raw) {
            Ok(s) => s.to_string(),
            Err(e) => String::from_utf8_lossy(&raw[..e.valid_up_to()]).into_owned(),
        }
    }
    fn blob(&mut self) -> Vec<u8> {
        let len = self.below(MAX_FUZZED_BLOB as u64 + 1) as usize;
        self.0.bytes(len.min(self.0.len())).unwrap_or(&[]).to_vec()
    }
}

struct Gen<'a, 'r> {
    plan: &'a Plan,
    rng: Option<&'r mut dyn Source>,
    depth: usize,
}

const STRINGS: [&str; 7] = [
    "",
    "a",
    "kinspect",
    "héllo wörld ✓",
    "日本語のトピック",
    "emoji 🦀 crab",
    "tab\tquote\"slash\\",
];

impl Gen<'_, '_> {
    fn pick(&mut self, n: u64) -> u64 {
        self.rng.as_mut().map_or(0, |r| r.below(n))
    }

    fn structure(&mut self, sid: u32) -> J {
        self.depth += 1;
        let sp = self.plan.structure(sid);
        let mut m = Map::new();
        for f in &sp.fields {
            let v = self.field_value(f);
            m.insert(f.name.to_string(), v);
        }
        if sp.flexible && self.rng.is_some() {
            for f in &sp.tagged {
                if self.pick(2) == 0 {
                    let v = self.field_value(f);
                    if v != default_json(self.plan, f) {
                        m.insert(f.name.to_string(), v);
                    }
                }
            }
            if self.pick(6) == 0 {
                let len = self.pick(5) as usize;
                let data: Vec<u8> = (0..len).map(|_| self.pick(256) as u8).collect();
                let tag = 1000 + self.pick(1000);
                let e = Map::from_iter([
                    ("tag".to_string(), J::from(tag)),
                    ("data".to_string(), J::from(STANDARD.encode(data))),
                ]);
                m.insert(
                    super::encode::UNKNOWN_TAGS.into(),
                    J::Array(vec![J::Object(e)]),
                );
            }
        }
        self.depth -= 1;
        J::Object(m)
    }

    fn field_value(&mut self, f: &FieldPlan) -> J {
        if f.nullable && self.rng.is_some() && self.pick(4) == 0 {
            return J::Null;
        }
        self.value(&f.ty)
    }

    fn value(&mut self, ty: &Ty) -> J {
        match ty {
            Ty::Prim(p) => self.prim(*p),
            Ty::Struct(sid) => self.structure(*sid),
            // Never produced by well-formed specs; the encoder reports it.
            Ty::TooDeep => J::Null,
            Ty::Array(e) => {
                // Keep deep arrays short so nested specs stay small.
                let max = if self.depth > 3 { 2 } else { 4 };
                let n = self.pick(max);
                J::Array((0..n).map(|_| self.value(e)).collect())
            }
        }
    }

    fn int(&mut self, lo: i64, hi: i64) -> J {
        let v = match self.pick(6) {
            0 => 0,
            1 => lo,
            2 => hi,
            3 if lo < 0 => -1,
            _ => {
                let span = (hi as i128 - lo as i128 + 1) as u128;
                let r = self.rng.as_mut().map_or(0, |r| r.next_u64()) as u128 % span;
                (lo as i128 + r as i128) as i64
            }
        };
        J::from(v)
    }

    fn prim(&mut self, p: Prim) -> J {
        match p {
            Prim::Bool => J::Bool(self.pick(2) == 1),
            Prim::Int8 => self.int(i8::MIN.into(), i8::MAX.into()),
            Prim::Int16 => self.int(i16::MIN.into(), i16::MAX.into()),
            Prim::Uint16 => self.int(0, u16::MAX.into()),
            Prim::Int32 => self.int(i32::MIN.into(), i32::MAX.into()),
            Prim::Uint32 => self.int(0, u32::MAX.into()),
            Prim::Int64 => self.int(i64::MIN, i64::MAX),
            Prim::Float64 => match self.pick(5) {
                0 => J::from(0.0),
                1 => J::from(-1.5),
                2 => J::from(1.0e300),
                3 => J::from("Infinity"),
                _ => J::from(self.pick(1 << 40) as f64 / 1024.0),
            },
            Prim::Uuid => {
                let b: Vec<u8> = (0..16).map(|_| self.pick(256) as u8).collect();
                J::from(URL_SAFE_NO_PAD.encode(b))
            }
            Prim::String => match self.rng.as_mut() {
                Some(r) => J::from(r.text()),
                None => J::from(""),
            },
            Prim::Bytes | Prim::Records => {
                let b = self.rng.as_mut().map_or_else(Vec::new, |r| r.blob());
                J::from(STANDARD.encode(b))
            }
        }
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// The value Kafka gives a field that is absent: its `default`, else zero / false / "" / empty.
pub fn default_json(plan: &Plan, f: &FieldPlan) -> J {
    let d = f.default.map(str::trim);
    if f.nullable && d == Some("null") {
        return J::Null;
    }
    match &f.ty {
        Ty::Prim(Prim::Bool) => J::Bool(d == Some("true")),
        Ty::Prim(Prim::Float64) => J::from(d.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0)),
        Ty::Prim(Prim::Uuid) => J::from(
            d.filter(|s| !s.is_empty())
                .unwrap_or("AAAAAAAAAAAAAAAAAAAAAA"),
        ),
        Ty::Prim(Prim::String) => J::from(d.unwrap_or("")),
        Ty::Prim(Prim::Bytes | Prim::Records) => J::from(""),
        Ty::Prim(_) => J::from(d.and_then(parse_int).unwrap_or(0)),
        Ty::Array(_) => J::Array(Vec::new()),
        Ty::TooDeep => J::Null,
        Ty::Struct(sid) => {
            let sp = plan.structure(*sid);
            J::Object(
                sp.fields
                    .iter()
                    .map(|g| (g.name.to_string(), default_json(plan, g)))
                    .collect(),
            )
        }
    }
}
