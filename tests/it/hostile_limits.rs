//! Limits of `src/limits.rs` applied where hostile input multiplies work or memory: each test
//! builds the input that used to blow up and checks the work done is bounded (by counting, never
//! by timing).

use kinspect::limits::{MAX_DIAGNOSTICS_PER_RECORD_SET, MAX_DIAGNOSTICS_PER_TREE};
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;

use kinspect::wire::tree::SUPPRESSED;

/// A v2 batch whose records section is `payload` compressed with snappy and claims
/// `count` records.
fn snappy_batch(payload: &[u8], count: i32) -> Vec<u8> {
    let compressed = snap::raw::Encoder::new().compress_vec(payload).unwrap();
    let mut b = Vec::new();
    b.extend_from_slice(&0i64.to_be_bytes()); // BaseOffset
    b.extend_from_slice(&0i32.to_be_bytes()); // BatchLength, set below
    b.extend_from_slice(&0i32.to_be_bytes()); // PartitionLeaderEpoch
    b.push(2); // Magic
    b.extend_from_slice(&0u32.to_be_bytes()); // Crc, set below
    b.extend_from_slice(&2i16.to_be_bytes()); // Attributes: snappy
    b.extend_from_slice(&0i32.to_be_bytes()); // LastOffsetDelta
    b.extend_from_slice(&0i64.to_be_bytes()); // BaseTimestamp
    b.extend_from_slice(&0i64.to_be_bytes()); // MaxTimestamp
    b.extend_from_slice(&(-1i64).to_be_bytes()); // ProducerId
    b.extend_from_slice(&(-1i16).to_be_bytes()); // ProducerEpoch
    b.extend_from_slice(&(-1i32).to_be_bytes()); // BaseSequence
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(&compressed);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
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

/// The number in a summary's message: "N more diagnostics …".
fn counted(msg: &str) -> u64 {
    msg.split(' ').next().and_then(|n| n.parse().ok()).unwrap()
}

/// A batch that decompresses to megabytes of zeros (2.2 MB in the report; 400 kB here) and claims 2^31-1 records: every zero byte is a
/// record of length 0, each one `truncated`. That used to be one diagnostic (with its path and
/// message strings) per byte, 2.1 million of them in one frame.
#[test]
fn a_diagnostic_per_byte_of_a_snappy_bomb_is_capped_per_record_set() {
    let zeros = vec![0u8; 400_000];
    let frame = produce_v3(&[snappy_batch(&zeros, i32::MAX)]);
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
    // Every record that failed was counted: kept + dropped = records decoded.
    assert!(dropped > 100_000, "{sum}");
    assert!(p.tree.has_errors());
    assert!(p.tree.check_tiling(0).is_ok());
}

/// Many bad record sets in one frame: each keeps its own first diagnostics until the tree's cap,
/// after which one summary counts the rest of the frame.
#[test]
fn many_bad_record_sets_stop_at_the_tree_cap() {
    let zeros = vec![0u8; 20_000];
    let batch = snappy_batch(&zeros, i32::MAX);
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
