//! RecordBatch v2 edge cases. Batches come from the bundled captures (real clients) or from the
//! `kafka-protocol` crate's encoder (an implementation independent of kinspect), altered where a
//! test needs a flaw, with the CRC recomputed by the test when the flaw is not the CRC itself.

use crate::common;
use crate::support;

use bytes::{BufMut, BytesMut};
use indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kinspect::diag::Severity;
use kinspect::records::RecordsContext;
use kinspect::wire::tree::{Kind, Tree, Value};
use std::io::Write;
use support::*;

fn rec(offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 7,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset,
        // kafka-protocol starts a new batch when offset - sequence changes; keep it constant.
        sequence: offset as i32 - 1,
        timestamp: 1_767_225_600_000 + offset * 10,
        key: key.map(bytes::Bytes::copy_from_slice),
        value: value.map(bytes::Bytes::copy_from_slice),
        headers: IndexMap::new(),
    }
}

fn encode(records: &[Record]) -> Vec<u8> {
    crate::common::kp_batch(records)
}

/// gzip through kafka-protocol's custom-compressor hook (its own codecs are not compiled in).
fn encode_gzip(records: &[Record]) -> Vec<u8> {
    let mut buf = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::Gzip,
    };
    let gz = |r: &mut BytesMut, out: &mut BytesMut, _c: Compression| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(r).unwrap();
        out.put_slice(&e.finish().unwrap());
        Ok(())
    };
    RecordBatchEncoder::encode_with_custom_compression(&mut buf, records, &opts, Some(gz)).unwrap();
    buf.to_vec()
}

/// Recomputes a v2 batch's CRC after a test changed covered bytes.
fn fix_crc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

fn errors(t: &Tree) -> Vec<&'static str> {
    t.errors().map(|d| d.code).collect()
}

fn real_batch(capture: &str, codec: &str) -> Vec<u8> {
    for p in pdus(&common::captures_dir().join(format!("{capture}.pcap"))) {
        for (s, l) in scan_v2_batches(&p.bytes) {
            let b = p.bytes[s..s + l].to_vec();
            let t = decode(&b, &RecordsContext::default());
            if label(
                &t,
                t.child(batches(&t)[0], "Attributes").unwrap(),
                "Compression",
            ) == codec
            {
                return b;
            }
        }
    }
    panic!("{capture}: no {codec} batch");
}

#[test]
fn null_and_empty_keys_and_values_stay_distinct() {
    let b = encode(&[
        rec(0, None, Some(b"")),
        rec(1, Some(b""), None),
        rec(2, Some(b"k"), Some(b"v")),
    ]);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let r = records(&t);
    assert_eq!((r[0].key.clone(), r[0].value.clone()), (None, Some(vec![])));
    assert_eq!((r[1].key.clone(), r[1].value.clone()), (Some(vec![]), None));
    assert_eq!(
        (r[2].key.clone(), r[2].value.clone()),
        (Some(b"k".to_vec()), Some(b"v".to_vec()))
    );
    assert_eq!(
        r.iter().map(|r| r.offset).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(r[2].timestamp, 1_767_225_600_020);
    let bt = batches(&t)[0];
    assert_eq!(int(&t, bt, "PartitionLeaderEpoch"), 7);
    assert_eq!(int(&t, bt, "LastOffsetDelta"), 2);
    t.check_tiling(0).unwrap();
}

#[test]
fn duplicate_header_keys_are_kept_in_order_and_null_header_values_are_null() {
    let mut r = rec(0, Some(b"k"), Some(b"v"));
    r.headers.insert(
        StrBytes::from_static_str("a"),
        Some(bytes::Bytes::from_static(b"1")),
    );
    r.headers.insert(StrBytes::from_static_str("b"), None);
    r.headers.insert(
        StrBytes::from_static_str("c"),
        Some(bytes::Bytes::from_static(b"3")),
    );
    let mut b = encode(&[r]);
    // kafka-protocol keeps headers in a map; make the third key repeat the first ("c" → "a").
    let at = b.windows(2).rposition(|w| w == [0x02, b'c']).unwrap() + 1;
    b[at] = b'a';
    fix_crc(&mut b);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let h = &records(&t)[0].headers;
    assert_eq!(
        h,
        &vec![
            ("a".into(), Some(b"1".to_vec())),
            ("b".into(), None),
            ("a".into(), Some(b"3".to_vec()))
        ]
    );
}

#[test]
fn log_append_time_gives_every_record_the_max_timestamp() {
    let mut b = encode(&[rec(0, None, Some(b"x")), rec(1, None, Some(b"y"))]);
    b[22] |= 0x08; // attributes low byte: timestamp type = LogAppendTime
    fix_crc(&mut b);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let bt = batches(&t)[0];
    assert_eq!(
        label(&t, t.child(bt, "Attributes").unwrap(), "TimestampType"),
        "LogAppendTime"
    );
    let max = int(&t, bt, "MaxTimestamp");
    assert_eq!(max, 1_767_225_600_010);
    assert!(records(&t).iter().all(|r| r.timestamp == max));
}

#[test]
fn transaction_markers_decode_as_control_records() {
    let mut commit = rec(5, Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 9]));
    commit.control = true;
    commit.transactional = true;
    commit.producer_id = 4000;
    commit.producer_epoch = 2;
    let mut abort = commit.clone();
    abort.offset = 6;
    abort.key = Some(bytes::Bytes::from_static(&[0, 0, 0, 0]));
    let b = encode(&[commit, abort]);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let bt = batches(&t)[0];
    let attrs = t.child(bt, "Attributes").unwrap();
    assert_eq!(
        t.node(t.child(attrs, "IsControlBatch").unwrap()).value,
        Value::Bool(true)
    );
    assert_eq!(
        t.node(t.child(attrs, "IsTransactional").unwrap()).value,
        Value::Bool(true)
    );
    assert_eq!(int(&t, bt, "ProducerId"), 4000);
    let rs: Vec<_> = t.children(t.child(bt, "Records").unwrap()).collect();
    let names = ["COMMIT", "ABORT"];
    for (r, name) in rs.iter().zip(names) {
        let k = t.child(*r, "Key").unwrap();
        assert_eq!(t.node(k).kind, Kind::Struct);
        assert_eq!(int(&t, k, "Version"), 0);
        assert_eq!(label(&t, k, "TypeName"), name);
        let v = t.child(*r, "Value").unwrap();
        assert_eq!(
            (int(&t, v, "Version"), int(&t, v, "CoordinatorEpoch")),
            (0, 9)
        );
    }
    t.check_tiling(0).unwrap();
}

#[test]
fn a_short_control_key_and_an_unknown_control_type_are_reported() {
    let mut short = rec(0, Some(&[0, 0, 1]), Some(b""));
    short.control = true;
    let mut unknown = short.clone();
    unknown.offset = 1;
    unknown.key = Some(bytes::Bytes::from_static(&[0, 0, 0, 42]));
    let t = decode(&encode(&[short, unknown]), &RecordsContext::default());
    let codes: Vec<_> = t.diags.iter().map(|d| (d.severity, d.code)).collect();
    assert_eq!(
        codes,
        vec![
            (Severity::Error, "control-record-invalid"),
            (Severity::Warning, "unknown-control-type")
        ]
    );
    t.check_tiling(0).unwrap();
}

#[test]
fn a_corrupted_byte_in_a_real_batch_is_a_crc_mismatch_and_the_batch_is_still_shown() {
    let good = real_batch("mock-kcat-none", "none");
    let mut bad = good.clone();
    let last = bad.len() - 3;
    bad[last] ^= 0x01;
    let t = decode(&bad, &RecordsContext::default());
    assert_eq!(errors(&t), vec!["crc-mismatch"]);
    let d = t.diags.iter().find(|d| d.code == "crc-mismatch").unwrap();
    assert_eq!((d.offset, d.path.as_str()), (17, "records[0].Crc"));
    let bt = batches(&t)[0];
    assert_ne!(int(&t, bt, "Crc"), int(&t, bt, "CrcComputed"));
    let ok = decode(&good, &RecordsContext::default());
    assert_eq!(records(&t).len(), records(&ok).len());
}

#[test]
fn a_batch_cut_short_is_partial_in_a_fetch_response_and_truncated_elsewhere() {
    let b = real_batch("mock-kcat-gzip", "gzip");
    let two: Vec<u8> = [b.clone(), b.clone()].concat();
    for cut in [1, 11, 12, 17, 40, 61, b.len() - 1] {
        let bytes = &two[..b.len() + cut];
        let fetch = RecordsContext {
            partial_tail_ok: true,
            ..Default::default()
        };
        let t = decode(bytes, &fetch);
        assert!(!t.has_errors(), "cut {cut}: {:?}", t.diags);
        assert!(
            t.diags
                .iter()
                .any(|d| d.code == "partial-batch" && d.severity == Severity::Info),
            "cut {cut}"
        );
        let bs = batches(&t);
        assert_eq!(bs.len(), 2, "cut {cut}");
        assert_eq!(
            t.node(t.child(bs[1], "Partial").unwrap()).value,
            Value::Bool(true)
        );
        assert_eq!(
            records(&t).len(),
            records(&decode(&b, &fetch)).len(),
            "the complete batch still decodes"
        );
        t.check_tiling(0).unwrap();
        let t = decode(bytes, &RecordsContext::default());
        assert_eq!(errors(&t), vec!["truncated"], "cut {cut}");
    }
}

#[test]
fn a_decompression_bomb_inside_a_batch_is_capped_cleanly() {
    let zeros = vec![0u8; 48 * 1024 * 1024];
    let b = encode_gzip(&[rec(0, None, Some(&zeros))]);
    assert!(b.len() < 200_000, "{} compressed bytes", b.len());
    let t = decode(&b, &RecordsContext::default());
    assert_eq!(errors(&t), vec!["decompression-bomb"]);
    let d = &t.diags[0];
    assert_eq!((d.offset, d.path.as_str()), (61, "records[0].Records"));
    assert!(
        d.message.contains("MAX_DECOMPRESSION_RATIO"),
        "{}",
        d.message
    );
    assert_eq!(t.bufs.len(), 1, "nothing decompressed was kept");
    t.check_tiling(0).unwrap();
    // The header is still there.
    assert_eq!(
        int(&t, batches(&t)[0], "Crc"),
        int(&t, batches(&t)[0], "CrcComputed")
    );
}

#[test]
fn compressed_records_carry_offsets_into_the_decompressed_buffer() {
    let b = encode_gzip(&[
        rec(0, Some(b"a"), Some(b"hello")),
        rec(1, Some(b"b"), Some(b"world")),
    ]);
    let t = decode(&b, &RecordsContext::default());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let rs = t.child(batches(&t)[0], "Records").unwrap();
    assert_eq!(
        (t.node(rs).buf, t.node(rs).offset, t.node(rs).hdr),
        (0, 57, 4)
    );
    assert_eq!(
        t.node(rs).len as usize,
        b.len() - 57,
        "Records spans the count and the compressed bytes"
    );
    let first = t.children(rs).next().unwrap();
    assert_eq!((t.node(first).buf, t.node(first).offset), (1, 0));
    assert_eq!(records(&t)[1].value.as_deref(), Some(&b"world"[..]));
}

#[test]
fn declared_counts_that_disagree_with_the_records_are_reported() {
    let mut b = encode(&[rec(0, None, Some(b"x")), rec(1, None, Some(b"y"))]);
    b[57..61].copy_from_slice(&3i32.to_be_bytes());
    fix_crc(&mut b);
    let t = decode(&b, &RecordsContext::default());
    assert_eq!(errors(&t), vec!["record-count-mismatch"]);
    assert_eq!(records(&t).len(), 2);
    b[57..61].copy_from_slice(&1i32.to_be_bytes());
    fix_crc(&mut b);
    let t = decode(&b, &RecordsContext::default());
    assert_eq!(errors(&t), vec!["record-count-mismatch"]);
    assert_eq!(records(&t).len(), 1);
    t.check_tiling(0).unwrap();
    b[57..61].copy_from_slice(&i32::MIN.to_be_bytes());
    fix_crc(&mut b);
    let t = decode(&b, &RecordsContext::default());
    assert_eq!(errors(&t), vec!["negative-count", "record-count-mismatch"]);
}

#[test]
fn an_unknown_magic_skips_that_batch_and_decoding_goes_on() {
    let a = encode(&[rec(0, None, Some(b"first"))]);
    let mut bad = a.clone();
    bad[16] = 7;
    let t = decode(&[a.clone(), bad, a].concat(), &RecordsContext::default());
    assert_eq!(errors(&t), vec!["unknown-magic"]);
    let bs = batches(&t);
    assert_eq!(bs.len(), 3);
    assert_eq!(t.node(bs[1]).kind, Kind::Error);
    assert_eq!(records(&t).len(), 2);
}

#[test]
fn every_single_byte_flip_and_cut_of_real_batches_decodes_without_panic() {
    // One real batch per codec; each byte flipped, and every prefix: the decoder must report,
    // never panic, and keep the every-byte-once tiling.
    let mut inputs = vec![real_batch("mock-kcat-none", "none")];
    for codec in ["gzip", "snappy", "lz4", "zstd"] {
        inputs.push(real_batch("mock-kafkapython2-codecs", codec));
    }
    for b in inputs {
        for i in 0..b.len() {
            let mut m = b.clone();
            m[i] ^= 0xff;
            let t = decode(&m, &RecordsContext::default());
            t.check_tiling(0)
                .unwrap_or_else(|e| panic!("flip at {i}: {e}"));
            // The base offset and the leader epoch are outside the CRC by design.
            if !(0..8).contains(&i) && !(12..16).contains(&i) {
                assert!(t.has_errors(), "flip at {i} went unnoticed");
            }
            let t = decode(
                &b[..i],
                &RecordsContext {
                    partial_tail_ok: true,
                    ..Default::default()
                },
            );
            t.check_tiling(0)
                .unwrap_or_else(|e| panic!("cut at {i}: {e}"));
        }
    }
}

#[test]
fn a_magic_2_batch_too_short_for_its_header_is_reported_and_skipped() {
    let a = encode(&[rec(0, None, Some(b"x"))]);
    // 12 + 20 bytes: plausible as a legacy size, but a v2 header alone is 61 bytes.
    let mut short = a[..32].to_vec();
    short[8..12].copy_from_slice(&20i32.to_be_bytes());
    let t = decode(&[short, a.clone()].concat(), &RecordsContext::default());
    assert_eq!(errors(&t), vec!["batch-length-invalid"]);
    assert_eq!(records(&t).len(), 1);
    // A cut-short tail with an impossible magic is not "partial": it is not a batch at all.
    let mut bad = a.clone();
    bad[16] = 9;
    let fetch = RecordsContext {
        partial_tail_ok: true,
        ..Default::default()
    };
    let t = decode(&[a.clone(), bad[..40].to_vec()].concat(), &fetch);
    assert_eq!(errors(&t), vec!["unknown-magic"]);
    t.check_tiling(0).unwrap();
}
