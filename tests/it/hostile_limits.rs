//! Limits of `src/limits.rs` applied where hostile input multiplies work or memory: each test
//! builds the input that used to blow up and checks the work done is bounded (by counting, never
//! by timing).

use kinspect::limits::{MAX_DIAGNOSTICS_PER_RECORD_SET, MAX_DIAGNOSTICS_PER_TREE};
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;

use kinspect::wire::tree::SUPPRESSED;

/// A v2 batch at offset 0 whose records section is `payload` compressed with snappy and claims
/// `count` records.
fn snappy_batch(payload: &[u8], count: i32) -> Vec<u8> {
    crate::batch::snappy_batch(0, 0, count, payload)
}

/// A size-prefixed Produce v3 request carrying `batches` as the records of one partition each.
fn produce_v3(batches: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0i16.to_be_bytes()); // api key
    f.extend_from_slice(&3i16.to_be_bytes()); // version
    f.extend_from_slice(&7i32.to_be_bytes()); // correlation id
    f.extend_from_slice(&(-1i16).to_be_bytes()); // client id: null
    f.extend_from_slice(&(-1i16).to_be_bytes()); // transactional id: null
    f.extend_from_slice(&1i16.to_be_bytes()); // acks
    f.extend_from_slice(&1000i32.to_be_bytes()); // timeout
    f.extend_from_slice(&1i32.to_be_bytes()); // one topic
    f.extend_from_slice(&1i16.to_be_bytes());
    f.push(b't');
    f.extend_from_slice(&(batches.len() as i32).to_be_bytes());
    for (i, b) in batches.iter().enumerate() {
        f.extend_from_slice(&(i as i32).to_be_bytes());
        f.extend_from_slice(&(b.len() as i32).to_be_bytes());
        f.extend_from_slice(b);
    }
    let mut out = (f.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&f);
    out
}

/// `pairs` times a clean record (no key, no value, no headers) followed by a record of length 0,
/// which is malformed (`truncated`): each bad record is followed by a good one, so none of them
/// is cut short by `MAX_MALFORMED_RECORDS_IN_A_ROW` and every one costs a diagnostic.
fn good_bad_records(pairs: usize) -> Vec<u8> {
    [0x0c, 0, 0, 0, 1, 1, 0, 0].repeat(pairs)
}

/// The number in a summary's message: "N more diagnostics …".
fn counted(msg: &str) -> u64 {
    msg.split(' ').next().and_then(|n| n.parse().ok()).unwrap()
}

/// A batch that decompresses to megabytes of zeros (2.2 MB in the report) and claims 2^31-1
/// records: every zero byte is a record of length 0, each one `truncated`. That used to be one
/// diagnostic (with its path and message strings) per byte, 2.1 million of them in one frame.
/// Zeros alone now stop at `MAX_MALFORMED_RECORDS_IN_A_ROW` (next test); here a good record
/// separates the bad ones, 400 kB of them.
#[test]
fn a_diagnostic_per_byte_of_a_snappy_bomb_is_capped_per_record_set() {
    let frame = produce_v3(&[snappy_batch(&good_bad_records(50_000), i32::MAX)]);
    assert!(frame.len() < 150_000, "{}", frame.len());
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    d.decode_frame(&frame, &Hints::default(), &mut p);
    let diags = &p.tree.diags;
    assert!(
        diags.len() <= MAX_DIAGNOSTICS_PER_RECORD_SET + 1,
        "{} diagnostics",
        diags.len()
    );
    let truncated = diags.iter().filter(|d| d.code == "truncated").count();
    assert_eq!(truncated, MAX_DIAGNOSTICS_PER_RECORD_SET);
    let sum = diags.last().unwrap();
    assert_eq!(sum.code, SUPPRESSED);
    assert!(sum.is_error(), "it counts errors: {sum}");
    assert!(
        sum.message.contains("MAX_DIAGNOSTICS_PER_RECORD_SET"),
        "{sum}"
    );
    assert!(sum.message.contains("truncated"), "{sum}");
    let dropped = counted(&sum.message);
    assert_eq!(dropped, p.tree.diags.suppressed());
    // Every record that failed was counted: kept + dropped = the 50,000 bad records and the
    // count mismatch at the end (2^31-1 declared).
    assert_eq!(
        dropped,
        50_001 - MAX_DIAGNOSTICS_PER_RECORD_SET as u64,
        "{sum}"
    );
    assert!(p.tree.has_errors());
    assert!(p.tree.check_tiling(0).is_ok());
}

/// Many bad record sets in one frame: each keeps its own first diagnostics until the tree's cap,
/// after which one summary counts the rest of the frame.
#[test]
fn many_bad_record_sets_stop_at_the_tree_cap() {
    let batch = snappy_batch(&good_bad_records(2_500), i32::MAX);
    let sets = MAX_DIAGNOSTICS_PER_TREE / MAX_DIAGNOSTICS_PER_RECORD_SET + 3;
    let frame = produce_v3(&vec![batch; sets]);
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    d.decode_frame(&frame, &Hints::default(), &mut p);
    let diags = &p.tree.diags;
    assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_TREE + 1, "{}", diags.len());
    let sum = diags.last().unwrap();
    assert_eq!(sum.code, SUPPRESSED);
    assert!(sum.message.contains("MAX_DIAGNOSTICS_PER_TREE"), "{sum}");
    // Each record set before the cap has its own summary.
    let set_sums = diags
        .iter()
        .filter(|d| d.code == SUPPRESSED && d.message.contains("record set"))
        .count();
    assert!(set_sums >= 3, "{set_sums}");
    let listed: u64 = diags
        .iter()
        .filter(|d| d.code == SUPPRESSED)
        .map(|d| counted(&d.message))
        .sum();
    assert_eq!(listed, p.tree.diags.suppressed());
    // The error nodes past the cap point at the summary, never out of range.
    for n in &p.tree.nodes {
        if let kinspect::wire::tree::Value::Diag(i) = n.value {
            assert!((i as usize) < diags.len());
        }
    }
}

/// Records that are all malformed but each correctly length-prefixed (`02 00`: one byte,
/// attributes, then nothing) let decoding go on record after record: a 400 kB snappy batch of
/// them was 700,000 error records, and the hostile campaign's `bombs:57` (twenty such batches
/// in a log segment) printed 3 GB of tree. After `MAX_MALFORMED_RECORDS_IN_A_ROW` in a row the
/// rest of the record set is one `records-abandoned` error node.
#[test]
fn a_record_set_of_only_malformed_records_is_abandoned_after_a_run_of_them() {
    use kinspect::limits::MAX_MALFORMED_RECORDS_IN_A_ROW;
    let payload = [2u8, 0].repeat(4 * 1024 * 1024);
    let frame = produce_v3(&[snappy_batch(&payload, i32::MAX), snappy_batch(&payload, 9)]);
    let (mut d, mut p) = (kinspect::records::decoder(builtin()), Pdu::default());
    d.decode_frame(&frame, &Hints::default(), &mut p);
    let diags = &p.tree.diags;
    let truncated = diags.iter().filter(|d| d.code == "truncated").count();
    // The first batch: a run of bad records, then abandoned; the second declares 9 and has them.
    assert_eq!(truncated, MAX_MALFORMED_RECORDS_IN_A_ROW + 9);
    let abandoned: Vec<_> = diags
        .iter()
        .filter(|d| d.code == "records-abandoned")
        .collect();
    assert_eq!(abandoned.len(), 1, "{diags:?}");
    let a = abandoned[0];
    assert!(a.is_error(), "{a}");
    assert!(a.path.contains("Records"), "{a}");
    assert!(
        a.message
            .contains(&format!("records {MAX_MALFORMED_RECORDS_IN_A_ROW}..")),
        "{a}"
    );
    assert!(a.message.contains("MAX_MALFORMED_RECORDS_IN_A_ROW"), "{a}");
    // The second batch still decoded (its trailing bytes are reported, not abandoned).
    assert!(diags.iter().any(|d| d.code == "record-count-mismatch"));
    assert!(p.tree.nodes.len() < 1_000, "{} nodes", p.tree.nodes.len());
    assert!(p.tree.check_tiling(0).is_ok());
}

/// What the two decoding threads' trees held together, as the engine's accounting saw it.
#[derive(Default)]
struct Peak {
    turn: Option<std::sync::Arc<kinspect::engine::parallel::Turn>>,
    pdus: usize,
}

impl kinspect::engine::Sink for Peak {
    fn pdu(&mut self, _: &Pdu, _: Option<&str>) -> std::io::Result<()> {
        self.pdus += 1;
        Ok(())
    }
    fn note(
        &mut self,
        _: &kinspect::pdu::Origin,
        _: &kinspect::diag::Diagnostic,
        _: Option<&str>,
    ) -> std::io::Result<()> {
        Ok(())
    }
}

impl kinspect::engine::Split for Peak {
    type Half = Peak;
    fn fork(&mut self, turn: &std::sync::Arc<kinspect::engine::parallel::Turn>) -> Option<Peak> {
        self.turn = Some(turn.clone());
        Some(Peak::default())
    }
    fn hand_over(&mut self, _: &mut Peak) -> std::io::Result<()> {
        Ok(())
    }
    fn take_back(&mut self, half: &mut Peak) -> std::io::Result<()> {
        self.pdus += std::mem::take(&mut half.pdus);
        Ok(())
    }
}

impl kinspect::engine::Half for Peak {
    fn end_batch(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Two Produce frames whose snappy batches each decompress to 48 MiB, on two threads: the first
/// goes to the worker, the second is read while the worker decodes it. Each thread bounded only
/// what it held itself, so the two heavy trees were held at once (the campaign's `bombs` peaked
/// at twice one frame); now the reading thread waits for the worker before its trees pass
/// `engine::parallel::TOGETHER`, and the two hold one heavy tree at a time.
#[test]
fn two_heavy_frames_on_two_threads_are_not_held_at_once() {
    use kinspect::engine::parallel::TOGETHER;
    let payload = 48 << 20;
    assert!(payload > TOGETHER);
    let zeros = vec![0u8; payload];
    let one = produce_v3(&[snappy_batch(&zeros, 1)]);
    drop(zeros);
    let input = [one.clone(), one].concat();
    if let Some(dir) = option_env!("CARGO_TARGET_TMPDIR") {
        // The input of the README's peak-RSS figures (`/usr/bin/time -v kinspect decode
        // --input raw …`).
        let _ = std::fs::write(
            std::path::Path::new(dir).join("two-snappy-bombs.bin"),
            &input,
        );
    }
    let mut opts = kinspect::engine::Options::new(builtin());
    opts.threads = 2;
    opts.kind = Some(kinspect::input::InputKind::Raw);
    let mut sink = Peak::default();
    let out = kinspect::engine::run_split(
        [kinspect::engine::Input::Bytes {
            name: "two-bombs".into(),
            bytes: &input,
        }],
        &opts,
        &mut sink,
    );
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    assert_eq!(sink.pdus, 2);
    let turn = sink.turn.expect("the sink was split");
    let peak = turn.peak_trees();
    assert!(peak >= payload, "the accounting saw {peak} bytes");
    assert!(
        peak < payload + payload / 2,
        "the two threads held {} MiB of trees together (one frame's is {} MiB)",
        peak >> 20,
        payload >> 20
    );
}
