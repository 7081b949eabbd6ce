//! Legacy message sets (magic 0 and 1) written by kafka-python 2.0.2's own builder
//! (tests/fixtures/records/gen_legacy.py): uncompressed, and gzip/snappy/lz4 wrapper messages
//! (magic-0 lz4 with the KafkaLZ4 header checksum). The oracle is what the generator appended
//! (legacy/expected.json).

use crate::common;
use crate::support;

use base64::Engine;
use kinspect::diag::Severity;
use kinspect::records::RecordsContext;
use kinspect::wire::tree::{NodeId, Tree, Value};
use support::*;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        common::repo()
            .join("tests/fixtures/records/legacy")
            .join(name),
    )
    .unwrap()
}

fn expected() -> serde_json::Value {
    let s =
        std::fs::read_to_string(common::repo().join("tests/fixtures/records/legacy/expected.json"))
            .unwrap();
    serde_json::from_str(&s).unwrap()
}

fn b64(v: &serde_json::Value) -> Option<Vec<u8>> {
    v.as_str()
        .map(|s| base64::engine::general_purpose::STANDARD.decode(s).unwrap())
}

/// Checks one decoded message against the generator's record, and its CRC.
fn check_message(t: &Tree, m: NodeId, want: &serde_json::Value, magic: i64, ctx: &str) {
    assert_eq!(int(t, m, "Crc"), int(t, m, "CrcComputed"), "{ctx}");
    assert_eq!(int(t, m, "Magic"), magic, "{ctx}");
    assert_eq!(
        data(t, t.child(m, "Key").unwrap()),
        b64(&want["key"]),
        "{ctx}: key (null and empty differ)"
    );
    assert_eq!(
        data(t, t.child(m, "Value").unwrap()),
        b64(&want["value"]),
        "{ctx}: value"
    );
    match want["timestamp"].as_i64() {
        Some(ts) => assert_eq!(int(t, m, "Timestamp"), ts, "{ctx}"),
        None => assert!(
            t.child(m, "Timestamp").is_none(),
            "{ctx}: magic 0 has no timestamp"
        ),
    }
}

#[test]
fn every_kafka_python_legacy_message_set_decodes_as_built() {
    let exp = expected();
    let files = exp.as_object().unwrap();
    assert_eq!(files.len(), 8);
    for (name, e) in files {
        let bytes = fixture(name);
        let t = decode(&bytes, &RecordsContext::default());
        let errors: Vec<_> = t
            .diags
            .iter()
            .filter(|d| d.severity != Severity::Info)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        t.check_tiling(0)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let magic = e["magic"].as_i64().unwrap();
        let msgs = e["messages"].as_array().unwrap();
        let top = batches(&t);
        if e["codec"] == "none" {
            assert_eq!(top.len(), msgs.len(), "{name}");
            for (i, (m, w)) in top.iter().zip(msgs).enumerate() {
                check_message(&t, *m, w, magic, &format!("{name}[{i}]"));
                assert_eq!(int(&t, *m, "Offset"), w["offset"].as_i64().unwrap());
            }
            continue;
        }
        // One wrapper message holding the whole set, compressed.
        assert_eq!(top.len(), 1, "{name}");
        let wrapper = top[0];
        assert_eq!(
            int(&t, wrapper, "Crc"),
            int(&t, wrapper, "CrcComputed"),
            "{name}"
        );
        assert_eq!(
            label(&t, t.child(wrapper, "Attributes").unwrap(), "Compression"),
            e["codec"].as_str().unwrap()
        );
        assert_eq!(int(&t, wrapper, "Offset"), 1000);
        let inner = t
            .child(wrapper, "InnerMessages")
            .unwrap_or_else(|| panic!("{name}: no InnerMessages"));
        let kids: Vec<_> = t.children(inner).collect();
        assert_eq!(kids.len(), msgs.len(), "{name}");
        for (i, (m, w)) in kids.iter().zip(msgs).enumerate() {
            let ctx = format!("{name} inner[{i}]");
            assert_ne!(
                t.node(*m).buf,
                0,
                "{ctx}: inner messages live in the decompressed buffer"
            );
            check_message(&t, *m, w, magic, &ctx);
            let off = w["offset"].as_i64().unwrap();
            assert_eq!(int(&t, *m, "Offset"), off, "{ctx}");
            if magic == 1 {
                // Relative inner offsets; the wrapper carries the absolute offset of the last.
                let last = msgs.len() as i64 - 1;
                assert_eq!(int(&t, *m, "AbsoluteOffset"), 1000 - last + off, "{ctx}");
            } else {
                assert!(
                    t.child(*m, "AbsoluteOffset").is_none(),
                    "{ctx}: v0 inner offsets are absolute"
                );
            }
        }
        let lz4_note = t
            .diags
            .iter()
            .any(|d| d.code == "codec-note" && d.message.contains("KafkaLZ4"));
        assert_eq!(lz4_note, name == "v0-lz4.bin", "{name}: {:?}", t.diags);
    }
}

#[test]
fn a_flipped_value_byte_is_a_crc_mismatch_and_the_message_is_still_shown() {
    let mut bytes = fixture("v1-none.bin");
    // The first message's value starts after offset(8) size(4) crc(4) magic attrs ts(8)
    // keylen(4) "k0" vallen(4): byte 36.
    assert_eq!(&bytes[36..40], b"valu");
    bytes[36] ^= 0x20;
    let t = decode(&bytes, &RecordsContext::default());
    let d: Vec<_> = t.errors().collect();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0].code, d[0].offset, d[0].path.as_str()),
        ("crc-mismatch", 12, "records[0].Crc")
    );
    let m = batches(&t)[0];
    assert_ne!(int(&t, m, "Crc"), int(&t, m, "CrcComputed"));
    assert_eq!(
        data(&t, t.child(m, "Value").unwrap()).unwrap(),
        b"Value zero"
    );
    assert_eq!(batches(&t).len(), 4, "the following messages decode");
}

#[test]
fn a_message_cut_short_is_partial_in_a_fetch_and_truncated_elsewhere() {
    let bytes = fixture("v0-none.bin");
    let cut = &bytes[..bytes.len() - 5];
    let fetch = RecordsContext {
        partial_tail_ok: true,
        ..Default::default()
    };
    let t = decode(cut, &fetch);
    assert!(!t.has_errors(), "{:?}", t.diags);
    assert_eq!(
        t.diags.iter().map(|d| d.code).collect::<Vec<_>>(),
        vec!["partial-batch"]
    );
    let last = *batches(&t).last().unwrap();
    assert_eq!(
        t.node(t.child(last, "Partial").unwrap()).value,
        Value::Bool(true)
    );
    t.check_tiling(0).unwrap();
    let t = decode(cut, &RecordsContext::default());
    assert_eq!(
        t.errors().map(|d| d.code).collect::<Vec<_>>(),
        vec!["truncated"]
    );
}

#[test]
fn every_single_byte_flip_and_cut_of_the_legacy_sets_decodes_without_panic() {
    for name in [
        "v0-none.bin",
        "v1-none.bin",
        "v0-gzip.bin",
        "v0-snappy.bin",
        "v0-lz4.bin",
        "v1-gzip.bin",
        "v1-snappy.bin",
        "v1-lz4.bin",
    ] {
        let b = fixture(name);
        // Each message's offset (its first 8 bytes) is outside its CRC; every other byte is
        // covered by some checksum.
        let mut unchecked = Vec::new();
        let mut pos = 0;
        while pos + 12 <= b.len() {
            unchecked.push(pos..pos + 8);
            pos += 12 + i32::from_be_bytes(b[pos + 8..pos + 12].try_into().unwrap()) as usize;
        }
        for i in 0..b.len() {
            let mut m = b.clone();
            m[i] ^= 0xff;
            let t = decode(&m, &RecordsContext::default());
            t.check_tiling(0)
                .unwrap_or_else(|e| panic!("{name} flip at {i}: {e}"));
            if !unchecked.iter().any(|r| r.contains(&i)) {
                assert!(t.has_errors(), "{name}: flip at {i} went unnoticed");
            }
            let t = decode(
                &b[..i],
                &RecordsContext {
                    partial_tail_ok: true,
                    ..Default::default()
                },
            );
            t.check_tiling(0)
                .unwrap_or_else(|e| panic!("{name} cut at {i}: {e}"));
        }
    }
}

#[test]
fn inner_messages_of_a_log_append_time_v1_wrapper_take_its_timestamp() {
    let mut b = fixture("v1-gzip.bin");
    // Wrapper: offset(8) size(4) crc(4) magic@16 attributes@17 timestamp@18.
    b[17] |= 0x08;
    let crc = crc32fast::hash(&b[16..]);
    b[12..16].copy_from_slice(&crc.to_be_bytes());
    let t = decode(&b, &RecordsContext::default());
    assert!(!t.has_errors(), "{:?}", t.diags);
    let w = batches(&t)[0];
    assert_eq!(
        label(&t, t.child(w, "Attributes").unwrap(), "TimestampType"),
        "LogAppendTime"
    );
    let wrapper_ts = int(&t, w, "Timestamp");
    let inner: Vec<_> = t.children(t.child(w, "InnerMessages").unwrap()).collect();
    assert_eq!(inner.len(), 4);
    for (i, m) in inner.into_iter().enumerate() {
        assert_eq!(int(&t, m, "EffectiveTimestamp"), wrapper_ts);
        assert_eq!(
            int(&t, m, "Timestamp"),
            1_767_225_600_000 + i as i64,
            "the stored one is kept"
        );
    }
    // CreateTime wrappers add nothing.
    let t = decode(&fixture("v1-gzip.bin"), &RecordsContext::default());
    let w = batches(&t)[0];
    assert!(t
        .children(t.child(w, "InnerMessages").unwrap())
        .all(|m| t.child(m, "EffectiveTimestamp").is_none()));
}
