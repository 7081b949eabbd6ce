//! Fuzz cases and their seeded generator. A case is one request frame (size prefix included;
//! the correlation id is rewritten when sent) with the API and version it was built for and
//! the mutator that made it. The generator draws every choice from one seeded stream, so a seed
//! gives the same cases in the same order for the same broker ranges and names.

use super::layout::Layout;
use super::mutate::{self, Ctx, MUTATORS, NEEDS_BATCH};
use crate::probe::generate::{self, Entities};
use crate::protocol::Protocol;
use crate::wire::decode::Decoder;
use crate::wire::sample::Rng;
use std::collections::HashMap;

/// `mutator` of a well-formed request with the generator's plain values.
pub const VALID: &str = "valid";
/// `mutator` of a well-formed request with hostile values (nulls, extremes, non-ASCII).
pub const HOSTILE: &str = "hostile-values";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub api_key: i16,
    pub api_version: i16,
    pub mutator: String,
    pub note: String,
    pub bytes: Vec<u8>,
}

impl Case {
    /// A well-formed request: its answer must decode at its version.
    pub fn well_formed(&self) -> bool {
        self.mutator == VALID || self.mutator == HOSTILE
    }

    /// The frame with correlation id `corr` (frames cut before it are sent as they are).
    pub fn with_corr(&self, corr: i32) -> Vec<u8> {
        let mut b = self.bytes.clone();
        if b.len() >= 12 {
            b[8..12].copy_from_slice(&corr.to_be_bytes());
        }
        b
    }
}

/// One API the fuzzer may send, at the broker's advertised range.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    pub api_key: i16,
    pub lo: i16,
    pub hi: i16,
}

/// One valid request in this many cases; the rest are hostile or mutated.
pub const VALID_EVERY: u64 = 8;

pub struct Generator {
    proto: &'static Protocol,
    targets: Vec<Target>,
    /// Indexes of targets whose requests carry record batches (Produce).
    batch_targets: Vec<usize>,
    ents: Entities,
    rng: Rng,
    decoder: Decoder,
    client_id: String,
    /// The deterministic `one` body of each (api, version), computed once.
    ones: HashMap<(i16, i16), Vec<u8>>,
    pub generated: u64,
}

impl Generator {
    pub fn new(
        proto: &'static Protocol,
        targets: Vec<Target>,
        ents: Entities,
        seed: u64,
        client_id: &str,
    ) -> Generator {
        let batch_targets = targets
            .iter()
            .enumerate()
            .filter(|(_, t)| proto.api_name(t.api_key) == Some("Produce"))
            .map(|(i, _)| i)
            .collect();
        Generator {
            proto,
            targets,
            batch_targets,
            ents,
            rng: Rng::new(seed),
            decoder: crate::records::decoder(proto),
            client_id: client_id.to_string(),
            ones: HashMap::new(),
            generated: 0,
        }
    }

    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// The `one` request of (api, version): every array of one element, known names.
    fn one(&mut self, key: i16, v: i16) -> Option<Vec<u8>> {
        if let Some(b) = self.ones.get(&(key, v)) {
            return Some(b.clone());
        }
        let spec = generate::request_spec(self.proto, key, v)?;
        let bodies = generate::bodies(spec, v, 0, 0, &self.ents);
        let body = bodies.iter().find(|b| b.variant == "one")?;
        let f =
            generate::encode_request(self.proto, key, v, 0, &self.client_id, &body.json).ok()?;
        self.ones.insert((key, v), f.clone());
        Some(f)
    }

    /// The next case (`None` only when no target can be encoded at all).
    pub fn next_case(&mut self) -> Option<Case> {
        for _ in 0..16 {
            if let Some(c) = self.attempt() {
                self.generated += 1;
                return Some(c);
            }
        }
        None
    }

    fn attempt(&mut self) -> Option<Case> {
        if self.targets.is_empty() {
            return None;
        }
        let n = self.generated;
        let kind = if n % VALID_EVERY == 0 {
            VALID
        } else if self.rng.chance(6) {
            HOSTILE
        } else {
            MUTATORS[self.rng.below(MUTATORS.len() as u64) as usize].0
        };
        let batch = NEEDS_BATCH.contains(&kind);
        let ti = if batch && !self.batch_targets.is_empty() {
            self.batch_targets[self.rng.below(self.batch_targets.len() as u64) as usize]
        } else {
            self.rng.below(self.targets.len() as u64) as usize
        };
        let t = self.targets[ti];
        let span = (t.hi - t.lo) as u64 + 1;
        let v = t.lo + self.rng.below(span) as i16;
        let spec = generate::request_spec(self.proto, t.api_key, v)?;
        let base = if kind == VALID || batch {
            self.one(t.api_key, v)?
        } else {
            let body = generate::varied_body(spec, v, &mut self.rng, &self.ents);
            generate::encode_request(self.proto, t.api_key, v, 0, &self.client_id, &body).ok()?
        };
        let mut case = Case {
            api_key: t.api_key,
            api_version: v,
            mutator: kind.to_string(),
            note: String::new(),
            bytes: base,
        };
        if kind == VALID || kind == HOSTILE {
            return Some(case);
        }
        let layout = Layout::of(self.proto, &mut self.decoder, &case.bytes, t.api_key, v);
        let ctx = Ctx { max_version: t.hi };
        let m = mutate::apply(kind, &case.bytes, &layout, &mut self.rng, &ctx)?;
        case.bytes = m.bytes;
        case.note = m.note;
        if kind == "version-past-range" {
            case.api_version = i16::from_be_bytes([case.bytes[6], case.bytes[7]]);
        }
        Some(case)
    }
}
