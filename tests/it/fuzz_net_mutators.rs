//! Each mutator changes exactly what it says, where the layout says that field is, fixes the
//! size prefix and nothing else, and is deterministic for a seed.

use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::probe::fuzz::layout::{Layout, Slot, What};
use kinspect::probe::fuzz::mutate::{self, Ctx, Mutated, MUTATORS};
use kinspect::probe::generate::{self, Entities};
use kinspect::protocol::builtin;
use kinspect::wire::sample::Rng;
use kinspect::wire::tree::Kind;

const METADATA: i16 = 3;
const PRODUCE: i16 = 0;

fn one(key: i16, v: i16) -> Vec<u8> {
    let p = builtin();
    let spec = generate::request_spec(p, key, v).unwrap();
    let b = generate::bodies(spec, v, 0, 0, &Entities::default());
    let one = b.iter().find(|b| b.variant == "one").unwrap();
    generate::encode_request(p, key, v, 9, "kinspect", &one.json).unwrap()
}

fn layout(f: &[u8], key: i16, v: i16) -> Layout {
    Layout::of(
        builtin(),
        &mut kinspect::records::decoder(builtin()),
        f,
        key,
        v,
    )
}

fn decode(f: &[u8]) -> Pdu {
    let mut pdu = Pdu::default();
    let h = Hints {
        direction: Some(Direction::Request),
        has_size_prefix: Some(true),
        ..Hints::default()
    };
    kinspect::records::decoder(builtin()).decode_frame(f, &h, &mut pdu);
    pdu
}

fn codes(p: &Pdu) -> Vec<&'static str> {
    p.tree.diags.iter().map(|d| d.code).collect()
}

fn apply(name: &str, f: &[u8], key: i16, v: i16, seed: u64) -> Option<Mutated> {
    let l = layout(f, key, v);
    mutate::apply(name, f, &l, &mut Rng::new(seed), &Ctx { max_version: v })
}

/// (first differing byte, end of the difference in `a`, in `b`), ignoring the size prefix.
fn diff(a: &[u8], b: &[u8]) -> (usize, usize, usize) {
    let start = (4..a.len().min(b.len()))
        .find(|&i| a[i] != b[i])
        .unwrap_or(a.len().min(b.len()));
    let mut k = 0;
    while k < a.len() - start && k < b.len() - start && a[a.len() - 1 - k] == b[b.len() - 1 - k] {
        k += 1;
    }
    (start, a.len() - k, b.len() - k)
}

fn size_ok(m: &[u8]) {
    assert_eq!(
        u32::from_be_bytes([m[0], m[1], m[2], m[3]]) as usize,
        m.len() - 4
    );
}

/// The change lies inside the prefix of one slot of kind `what` (and there is one).
fn in_prefix_of(f: &[u8], m: &[u8], key: i16, v: i16, what: &[What]) -> Slot {
    size_ok(m);
    let (s, ea, _) = diff(f, m);
    *layout(f, key, v)
        .slots
        .iter()
        .find(|x| what.contains(&x.what) && s >= x.offset && ea <= x.offset + x.hdr.max(1))
        .unwrap_or_else(|| panic!("change {s}..{ea} is in no {what:?} prefix"))
}

#[test]
fn the_layout_finds_every_kind_of_slot() {
    let f = one(METADATA, 12);
    let l = layout(&f, METADATA, 12);
    assert!(!l.had_errors);
    assert!(l
        .find(What::Array)
        .any(|s| s.name == "Topics" && s.compact && s.nullable));
    assert!(l.find(What::Str).any(|s| s.name == "Name"));
    assert!(l.find(What::Section).count() >= 3, "header, body, topic");
    let p = one(PRODUCE, 9);
    let l = layout(&p, PRODUCE, 9);
    for w in [
        What::Records,
        What::Batch,
        What::BatchCrc,
        What::BatchAttributes,
        What::BatchLength,
    ] {
        assert!(l.find(w).count() == 1, "{w:?}: {:?}", l.slots);
    }
}

#[test]
fn counts_and_lengths_lie_in_their_prefix_only() {
    for v in [4, 12] {
        let f = one(METADATA, v);
        for seed in 0..10 {
            let m = apply("count-lies", &f, METADATA, v, seed).unwrap();
            in_prefix_of(&f, &m.bytes, METADATA, v, &[What::Array]);
            let m = apply("length-lies", &f, METADATA, v, seed).unwrap();
            in_prefix_of(&f, &m.bytes, METADATA, v, &[What::Str, What::Bytes]);
            let m = apply("compact-confusion", &f, METADATA, v, seed).unwrap();
            let s = in_prefix_of(
                &f,
                &m.bytes,
                METADATA,
                v,
                &[What::Str, What::Array, What::Bytes],
            );
            assert!(!s.in_header);
        }
    }
}

#[test]
fn the_header_version_is_off_by_its_tagged_section() {
    let f = one(METADATA, 12);
    let m = apply("header-version", &f, METADATA, 12, 0).unwrap();
    assert_eq!(m.bytes.len(), f.len() - 1);
    let f = one(METADATA, 4);
    let m = apply("header-version", &f, METADATA, 4, 0).unwrap();
    assert_eq!(m.bytes.len(), f.len() + 1);
    let cid = layout(&f, METADATA, 4)
        .slots
        .into_iter()
        .find(|s| s.name == "ClientId")
        .unwrap();
    let at = cid.offset + cid.len;
    assert_eq!(m.bytes[4..at], f[4..at]);
    assert_eq!(m.bytes[at], 0);
    assert_eq!(m.bytes[at + 1..], f[at..]);
}

#[test]
fn tags_unknown_duplicated_and_lying_about_their_size() {
    let f = one(METADATA, 12);
    let m = apply("unknown-tag", &f, METADATA, 12, 1).unwrap();
    size_ok(&m.bytes);
    let p = decode(&m.bytes);
    assert!(p
        .tree
        .nodes
        .iter()
        .any(|n| n.kind == Kind::UnknownTag && p.tree.unknown_tag(n) >= 10_000));
    assert!(!p.tree.has_errors(), "{:?}", codes(&p));
    let d = apply("duplicate-tag", &m.bytes, METADATA, 12, 1).unwrap();
    assert!(
        codes(&decode(&d.bytes))
            .iter()
            .any(|c| *c == "tag-duplicate" || *c == "tag-order"),
        "{:?}",
        codes(&decode(&d.bytes))
    );
    let t = apply("tag-size-lies", &m.bytes, METADATA, 12, 1).unwrap();
    size_ok(&t.bytes);
    assert_ne!(t.bytes, m.bytes);
    assert!(decode(&t.bytes).tree.has_errors());
    // No tag in the minimal request: nothing to duplicate.
    assert!(apply("duplicate-tag", &f, METADATA, 12, 1).is_none());
}

#[test]
fn truncation_cuts_at_a_field_boundary() {
    let f = one(METADATA, 12);
    let l = layout(&f, METADATA, 12);
    for seed in 0..20 {
        let m = apply("truncate", &f, METADATA, 12, seed).unwrap();
        size_ok(&m.bytes);
        let n = m.bytes.len();
        assert!(n < f.len() && m.bytes[4..] == f[4..n]);
        assert!(
            l.slots
                .iter()
                .any(|s| s.offset == n || s.offset + s.len == n),
            "{n}"
        );
    }
}

#[test]
fn huge_varints_utf8_and_nulls() {
    let f = one(METADATA, 12);
    for seed in 0..6 {
        let m = apply("huge-varint", &f, METADATA, 12, seed).unwrap();
        let (s, _, eb) = diff(&f, &m.bytes);
        assert!(eb - s >= 4, "{}", m.note);
        assert!(
            decode(&m.bytes).tree.has_errors() || m.note.contains("6 bytes"),
            "{}",
            m.note
        );
    }
    let m = apply("invalid-utf8", &f, METADATA, 12, 0).unwrap();
    assert_eq!(m.bytes.len(), f.len());
    assert!(std::str::from_utf8(&m.bytes[diff(&f, &m.bytes).0..diff(&f, &m.bytes).1]).is_err());
    assert!(!decode(&m.bytes).tree.diags.is_empty());
    // Every prefixed field of Metadata v12 may be null; in v4 a topic's Name may not.
    assert!(apply("null-not-nullable", &f, METADATA, 12, 0).is_none());
    let f = one(METADATA, 4);
    for seed in 0..6 {
        let m = apply("null-not-nullable", &f, METADATA, 4, seed).unwrap();
        assert!(m.note.starts_with("Name"), "{}", m.note);
        assert!(
            codes(&decode(&m.bytes)).contains(&"null-not-allowed"),
            "{}: {:?}",
            m.note,
            codes(&decode(&m.bytes))
        );
    }
}

#[test]
fn versions_past_the_range_touch_only_the_version() {
    let f = one(METADATA, 12);
    for seed in 0..6 {
        let m = apply("version-past-range", &f, METADATA, 12, seed).unwrap();
        let (s, ea, eb) = diff(&f, &m.bytes);
        assert!(s >= 6 && ea <= 8 && eb <= 8);
        let v = i16::from_be_bytes([m.bytes[6], m.bytes[7]]);
        assert!(v == 13 || v == i16::MAX || v == -1);
    }
}

#[test]
fn record_batch_mutators() {
    for v in [3, 9] {
        let f = one(PRODUCE, v);
        let l = layout(&f, PRODUCE, v);
        let crc = l.find(What::BatchCrc).next().copied().unwrap();
        let m = apply("batch-bad-crc", &f, PRODUCE, v, 0).unwrap();
        let flipped: u32 = f
            .iter()
            .zip(&m.bytes)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        assert_eq!(flipped, 1);
        let (s, _, _) = diff(&f, &m.bytes);
        assert!(s >= crc.offset && s < crc.offset + 4);
        assert!(codes(&decode(&m.bytes)).contains(&"crc-mismatch"));
        let m = apply("batch-unknown-codec", &f, PRODUCE, v, 0).unwrap();
        let c = codes(&decode(&m.bytes));
        assert!(
            c.contains(&"unknown-codec") && !c.contains(&"crc-mismatch"),
            "{c:?}"
        );
        let m = apply("batch-length-lies", &f, PRODUCE, v, 0).unwrap();
        let bl = l.find(What::BatchLength).next().copied().unwrap();
        let (s, ea, eb) = diff(&f, &m.bytes);
        assert!(s >= bl.offset && ea <= bl.offset + 4 && ea == eb);
        let m = apply("compressed-bomb", &f, PRODUCE, v, 2).unwrap();
        assert!(
            m.bytes.len() < f.len() + 4096,
            "compressed: {}",
            m.bytes.len()
        );
        let p = decode(&m.bytes);
        assert!(!p.tree.has_errors(), "{:?}", codes(&p));
        let inflated: usize = p.tree.bufs.iter().skip(1).map(Vec::len).sum();
        assert!(
            inflated > 64 << 10 && inflated <= mutate::BOMB_MAX + 64,
            "{inflated}"
        );
    }
    // No batch in a Metadata request.
    assert!(apply("batch-bad-crc", &one(METADATA, 12), METADATA, 12, 0).is_none());
}

#[test]
fn every_mutator_is_deterministic_for_a_seed() {
    let frames = [
        (one(METADATA, 12), METADATA, 12),
        (one(PRODUCE, 9), PRODUCE, 9),
    ];
    for (name, _, _) in MUTATORS {
        let mut applied = false;
        for (f, k, v) in &frames {
            for seed in 0..4 {
                let a = apply(name, f, *k, *v, seed);
                assert_eq!(a, apply(name, f, *k, *v, seed), "{name}");
                if let Some(m) = a {
                    applied = true;
                    assert_ne!(&m.bytes, f, "{name} changed nothing");
                    size_ok(&m.bytes);
                }
            }
        }
        assert!(
            applied || *name == "duplicate-tag" || *name == "tag-size-lies",
            "{name} never applied"
        );
    }
}
