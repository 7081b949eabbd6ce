//! Kafka files: log segments and snapshots built from real batches taken from the bundled
//! captures (the broker-assigned batches of Fetch responses), streamed batch by batch; corrupt
//! regions, cut-short tails; the KRaft quorum-state file.

use crate::common;
use crate::support;

use kinspect::diag::Severity;
use kinspect::records::file::{decode_log_file, decode_quorum_state, FileKind, LogSummary};
use kinspect::records::RecordsContext;
use kinspect::wire::tree::{Kind, Tree, Value};
use std::io::Read;
use support::*;

/// The distinct batches brokers sent in Fetch responses of the codec captures: every codec.
fn fetched_batches() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let caps = [
        "mock-kafkapython2-codecs",
        "mock-kcat-gzip",
        "mock-kcat-snappy",
        "mock-kcat-zstd",
        "tansu-kafkapython3-codecs",
    ];
    let all: Vec<_> = caps
        .iter()
        .flat_map(|c| pdus(&common::captures_dir().join(format!("{c}.pcap"))))
        .collect();
    for p in all.iter().filter(|p| !p.to_broker) {
        for (s, l) in scan_v2_batches(&p.bytes) {
            let b = p.bytes[s..s + l].to_vec();
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    assert!(out.len() >= 10, "{}", out.len());
    out
}

/// Reads one byte per call: the reader must not rely on whole-batch reads.
struct Trickle<'a>(&'a [u8]);
impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((b, rest)), Some(slot)) => {
                *slot = *b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

/// Streams `bytes` and returns (file offset, tree) for every item. Each tree is taken, as the
/// engine takes them, leaving the reader an empty tree: a reader that looked at a tree after
/// handing it out would see that empty tree instead.
fn stream(bytes: &[u8], kind: FileKind, trickle: bool) -> (Vec<(u64, Tree)>, LogSummary) {
    let mut items = Vec::new();
    let mut each = |at: u64, t: &mut Tree| items.push((at, std::mem::take(t)));
    let ctx = RecordsContext::default();
    let sum = if trickle {
        decode_log_file(Trickle(bytes), kind, &ctx, &mut each)
    } else {
        decode_log_file(bytes, kind, &ctx, &mut each)
    }
    .unwrap();
    (items, sum)
}

#[test]
fn a_segment_of_real_batches_streams_back_batch_by_batch() {
    let batches = fetched_batches();
    let seg: Vec<u8> = batches.concat();
    for trickle in [false, true] {
        let (items, sum) = stream(&seg, FileKind::Segment, trickle);
        assert_eq!(
            sum,
            LogSummary {
                items: batches.len() as u64,
                batches: batches.len() as u64,
                bytes: seg.len() as u64,
                ..Default::default()
            }
        );
        let mut at = 0u64;
        for ((off, t), b) in items.iter().zip(&batches) {
            assert_eq!(*off, at);
            assert!(
                t.diags.iter().all(|d| d.severity == Severity::Info),
                "{:?}",
                t.diags
            );
            assert_eq!(records(t), records(&decode(b, &RecordsContext::default())));
            t.check_tiling(0).unwrap();
            at += b.len() as u64;
        }
    }
}

#[test]
fn garbage_between_batches_is_one_corrupt_region_and_decoding_resumes() {
    let batches = fetched_batches();
    let garbage: Vec<u8> = (0..100u32).map(|i| (i * 37 % 251) as u8 | 0x80).collect();
    let seg = [
        batches[0].clone(),
        batches[1].clone(),
        garbage.clone(),
        batches[2].clone(),
    ]
    .concat();
    let (items, sum) = stream(&seg, FileKind::Segment, false);
    assert_eq!(
        (sum.batches, sum.corrupt_regions, sum.corrupt_bytes),
        (3, 1, 100)
    );
    assert!(sum.had_errors);
    let (off, t) = &items[2];
    assert_eq!(*off, (batches[0].len() + batches[1].len()) as u64);
    assert_eq!(
        t.diags.iter().map(|d| d.code).collect::<Vec<_>>(),
        vec!["corrupt-region"]
    );
    assert_eq!(t.node(1).kind, Kind::Error);
    assert_eq!(t.node(1).len, 100);
    assert_eq!(
        records(&items[3].1),
        records(&decode(&batches[2], &RecordsContext::default()))
    );
}

#[test]
fn a_batch_with_a_smashed_size_is_skipped_up_to_the_next_verifying_batch() {
    let batches = fetched_batches();
    let mut seg = [batches[0].clone(), batches[1].clone(), batches[2].clone()].concat();
    let b1 = batches[0].len();
    seg[b1 + 8..b1 + 12].copy_from_slice(&5i32.to_be_bytes());
    let (items, sum) = stream(&seg, FileKind::Segment, false);
    assert_eq!(
        (sum.batches, sum.corrupt_regions, sum.corrupt_bytes),
        (2, 1, batches[1].len() as u64)
    );
    assert_eq!(items[1].0, b1 as u64);
    assert_eq!(items[2].0, (b1 + batches[1].len()) as u64);
}

#[test]
fn a_segment_cut_mid_batch_ends_with_a_partial_batch_not_an_error() {
    let batches = fetched_batches();
    let seg = [batches[0].clone(), batches[1][..30].to_vec()].concat();
    let (items, sum) = stream(&seg, FileKind::Segment, true);
    assert!(
        !sum.had_errors,
        "{:?}",
        items.iter().map(|i| &i.1.diags).collect::<Vec<_>>()
    );
    assert_eq!((sum.items, sum.batches), (2, 1));
    assert_eq!(items[1].1.diags[0].code, "partial-batch");
    // Fewer than 17 bytes at the end: still a partial tail.
    let seg = [batches[0].clone(), batches[1][..9].to_vec()].concat();
    let (items, sum) = stream(&seg, FileKind::Segment, false);
    assert!(!sum.had_errors);
    assert_eq!(items.last().unwrap().1.diags[0].code, "partial-batch");
}

/// A v2 batch around `records` (already encoded), written per Kafka's layout with its CRC.
fn v2_batch(base_offset: i64, attrs: i16, records: &[Vec<u8>]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&attrs.to_be_bytes());
    body.extend_from_slice(&(records.len() as i32 - 1).to_be_bytes());
    body.extend_from_slice(&1_767_225_600_000i64.to_be_bytes());
    body.extend_from_slice(&1_767_225_600_000i64.to_be_bytes());
    body.extend_from_slice(&(-1i64).to_be_bytes());
    body.extend_from_slice(&(-1i16).to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&(records.len() as i32).to_be_bytes());
    for r in records {
        body.extend_from_slice(r);
    }
    let mut b = base_offset.to_be_bytes().to_vec();
    b.extend_from_slice(&((body.len() + 9) as i32).to_be_bytes());
    b.extend_from_slice(&3i32.to_be_bytes()); // partition leader epoch
    b.push(2);
    b.extend_from_slice(&crc32c::crc32c(&body).to_be_bytes());
    b.extend_from_slice(&body);
    b
}

fn zigzag(v: i64, out: &mut Vec<u8>) {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

/// A v2 record with offset delta `delta`, key and value (None = null), no headers.
fn v2_record(delta: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Vec<u8> {
    let mut r = vec![0u8]; // attributes
    zigzag(0, &mut r); // timestamp delta
    zigzag(delta, &mut r);
    for f in [key, value] {
        match f {
            None => zigzag(-1, &mut r),
            Some(b) => {
                zigzag(b.len() as i64, &mut r);
                r.extend_from_slice(b);
            }
        }
    }
    zigzag(0, &mut r); // headers
    let mut out = Vec::new();
    zigzag(r.len() as i64, &mut out);
    out.extend(r);
    out
}

/// A snapshot: header control batch, one metadata record batch, footer control batch. Values
/// follow the spec files: SnapshotHeaderRecord {Version int16, LastContainedLogTimestamp int64,
/// tags}, SnapshotFooterRecord {Version int16, tags}; the metadata record is framed
/// (frameVersion 1, apiKey 12 = FeatureLevelRecord, version 0) with {Name compact string,
/// FeatureLevel int16, tags}.
fn snapshot(with_header: bool) -> Vec<u8> {
    let mut hdr_val = 0i16.to_be_bytes().to_vec();
    hdr_val.extend_from_slice(&1_767_225_600_000i64.to_be_bytes());
    hdr_val.push(0);
    let header = v2_batch(
        0,
        0x20,
        &[v2_record(0, Some(&[0, 0, 0, 3]), Some(&hdr_val))],
    );
    let mut feat = vec![1u8, 12, 0];
    feat.push(b"metadata.version".len() as u8 + 1);
    feat.extend_from_slice(b"metadata.version");
    feat.extend_from_slice(&21i16.to_be_bytes());
    feat.push(0);
    let data = v2_batch(0, 0, &[v2_record(0, None, Some(&feat))]);
    let footer = v2_batch(
        1,
        0x20,
        &[v2_record(0, Some(&[0, 0, 0, 4]), Some(&[0, 0, 0]))],
    );
    if with_header {
        [header, data, footer].concat()
    } else {
        [data, footer].concat()
    }
}

#[test]
fn a_metadata_snapshot_streams_with_its_header_footer_and_framed_records() {
    let (items, sum) = stream(&snapshot(true), FileKind::Snapshot, false);
    assert!(!sum.had_errors);
    assert_eq!(
        (sum.items, sum.batches),
        (3, 3),
        "{:?}",
        items.iter().map(|i| &i.1.diags).collect::<Vec<_>>()
    );
    assert!(
        items.iter().all(|(_, t)| t.diags.is_empty()),
        "{:?}",
        items.iter().map(|i| &i.1.diags).collect::<Vec<_>>()
    );
    let t = &items[1].1;
    let r = t
        .children(t.child(batches(t)[0], "Records").unwrap())
        .next()
        .unwrap();
    assert_eq!(t.node(t.child(r, "Key").unwrap()).value, Value::Null);
    let v = t.child(r, "Value").unwrap();
    assert_eq!(
        (
            int(t, v, "FrameVersion"),
            int(t, v, "ApiKey"),
            int(t, v, "Version")
        ),
        (1, 12, 0)
    );
    assert_eq!(label(t, v, "TypeName"), "FeatureLevelRecord");
    let d = t.child(v, "Data").unwrap();
    assert_eq!(
        data(t, t.child(d, "Name").unwrap()).unwrap(),
        b"metadata.version"
    );
    assert_eq!(int(t, d, "FeatureLevel"), 21);
    let h = &items[0].1;
    let hr = h
        .children(h.child(batches(h)[0], "Records").unwrap())
        .next()
        .unwrap();
    assert_eq!(
        label(h, h.child(hr, "Key").unwrap(), "TypeName"),
        "SNAPSHOT_HEADER"
    );
    let hv = h.child(hr, "Value").unwrap();
    assert_eq!(int(h, hv, "Version"), 0);
    assert_eq!(int(h, hv, "LastContainedLogTimestamp"), 1_767_225_600_000);
}

#[test]
fn a_snapshot_without_its_header_batch_is_reported() {
    let (items, _) = stream(&snapshot(false), FileKind::Snapshot, false);
    let codes: Vec<_> = items
        .iter()
        .flat_map(|(_, t)| t.diags.iter().map(|d| d.code))
        .collect();
    assert_eq!(codes, vec!["snapshot-header-missing"]);
}

#[test]
fn quorum_state_members_span_their_json_values() {
    let text = br#"{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}"#;
    let t = decode_quorum_state(&text[..]).unwrap();
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    t.check_tiling(0).unwrap();
    let names: Vec<_> = t.children(0).map(|c| t.node(c).name).collect();
    assert_eq!(
        names,
        vec![
            "leaderId",
            "leaderEpoch",
            "votedId",
            "votedDirectoryId",
            "data_version"
        ]
    );
    assert_eq!(
        (
            int(&t, 0, "leaderId"),
            int(&t, 0, "leaderEpoch"),
            int(&t, 0, "votedId")
        ),
        (-1, 2, 1)
    );
    let u = t.child(0, "votedDirectoryId").unwrap();
    // Python: base64.urlsafe_b64decode("J8aAPcfLQt2bqs1JT_rMgQ==").hex()
    let want = unhex("27c6803dc7cb42dd9baacd494ffacc81");
    let want: [u8; 16] = want.try_into().unwrap();
    assert_eq!(t.node(u).value, Value::Uuid(want));
    let n = t.node(u);
    assert_eq!(
        &text[n.offset as usize..(n.offset + n.len) as usize],
        br#""J8aAPcfLQt2bqs1JT_rMgQ""#
    );
    let l = t.node(t.child(0, "leaderId").unwrap());
    assert_eq!(&text[l.offset as usize..(l.offset + l.len) as usize], b"-1");
}

#[test]
fn old_quorum_state_voters_and_broken_files_are_reported_where_they_break() {
    let text = br#"{"clusterId":"","leaderId":1,"leaderEpoch":5,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2}],"data_version":0}"#;
    let t = decode_quorum_state(&text[..]).unwrap();
    assert_eq!(
        t.diags.iter().map(|d| d.code).collect::<Vec<_>>(),
        vec!["unknown-field"]
    );
    let v = t.child(0, "currentVoters").unwrap();
    let ids: Vec<_> = t.children(v).map(|e| int(&t, e, "voterId")).collect();
    assert_eq!(ids, vec![1, 2]);
    t.check_tiling(0).unwrap();
    let t = decode_quorum_state(&b"{\"leaderId\":1,\n\"leaderEpoch\": }"[..]).unwrap();
    let d = &t.diags[0];
    assert_eq!(d.code, "quorum-state-invalid");
    // The place is said once: serde_json's own " at line 2 column 16" is taken off.
    assert_eq!(
        d.message, "line 2 column 16: expected value",
        "{}",
        d.message
    );
}

#[test]
fn files_are_recognised_by_name_and_decoded_from_disk() {
    let dir = std::env::temp_dir().join(format!("kinspect-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seg = dir.join("00000000000000000000.log");
    let batches = fetched_batches();
    std::fs::write(&seg, batches[..3].concat()).unwrap();
    let qs = dir.join("quorum-state");
    std::fs::write(
        &qs,
        br#"{"leaderId":2,"leaderEpoch":7,"votedId":-1,"data_version":1}"#,
    )
    .unwrap();
    let other = dir.join("notes.txt");
    std::fs::write(&other, b"hello").unwrap();
    let ctx = RecordsContext::default();
    let mut n = 0;
    let sum = kinspect::records::file::decode_path(&seg, None, &ctx, &mut |_, _| n += 1)
        .unwrap()
        .unwrap();
    assert_eq!((sum.batches, n), (3, 3));
    let mut leader = None;
    let sum = kinspect::records::file::decode_path(&qs, None, &ctx, &mut |_, t| {
        leader = Some(int(t, 0, "leaderId"))
    })
    .unwrap()
    .unwrap();
    assert_eq!((sum.items, leader), (1, Some(2)));
    assert!(
        kinspect::records::file::decode_path(&other, None, &ctx, &mut |_, _| {})
            .unwrap()
            .is_none()
    );
    assert_eq!(
        FileKind::of_path(std::path::Path::new(
            "/x/00000000000000001234-0000000001.checkpoint"
        )),
        Some(FileKind::Snapshot)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
