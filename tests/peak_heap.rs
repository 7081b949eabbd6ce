//! Peak heap while the engine reads a Kafka log segment whose batches fill their trees to
//! `limits::MAX_NODES_PER_TREE`, counted by this test binary's own allocator. It is a binary of
//! its own so that the counting allocator serves only this test. Bytes are counted, not timed.
//!
//! The engine used to copy each batch's tree out of the file reader's tree. That made one
//! batch peak at two trees and the second batch at three: the hostile campaign's `bombs:49`
//! (seed 0x1352956) reached 490 MiB of its 512 MiB limit. The engine now takes the tree
//! (`Driver::tree` swaps its last tree in) and lets go of one this large once it is shown.
//!
//! Spec files are bounded the same way: a 4.5 MB file whose `fields` held 1.5 million numbers
//! ran the validator out of 4 GiB of address space (a diagnostic and a JSON report object for
//! each). The reader now stops at `limits::MAX_SPEC_JSON_VALUES` and each file lists at most
//! `limits::MAX_DIAGNOSTICS_PER_SPEC_FILE` diagnostics.

use kinspect::engine::{run, Input, Options, Sink};
use kinspect::pdu::{Origin, Pdu};
use kinspect::protocol::builtin;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

#[path = "common/batch.rs"]
mod batch;
use batch::snappy_batch;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// One measurement at a time: the counters are the whole binary's.
static SERIAL: Mutex<()> = Mutex::new(());

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged; the counters only watch.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        grew(l.size());
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new >= l.size() {
            grew(new - l.size());
        } else {
            LIVE.fetch_sub(l.size() - new, Relaxed);
        }
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The smallest valid record: length 6, attributes, timestamp and offset deltas 0, null key and
/// value, no headers.
const EMPTY_RECORD: [u8; 7] = [0x0c, 0, 0, 0, 0x01, 0x01, 0];

/// Counts the trees shown and the most heap one of them held.
#[derive(Default)]
struct Largest {
    trees: usize,
    node_limit_hit: usize,
    held: usize,
}

impl Sink for Largest {
    fn pdu(&mut self, p: &Pdu, _: Option<&str>) -> std::io::Result<()> {
        let t = &p.tree;
        self.trees += 1;
        self.node_limit_hit += t.diags.iter().any(|d| d.code == "node-limit") as usize;
        let held = t.nodes.capacity() * std::mem::size_of::<kinspect::wire::tree::Node>()
            + t.buf_capacity();
        self.held = self.held.max(held);
        Ok(())
    }
    fn note(
        &mut self,
        _: &Origin,
        _: &kinspect::diag::Diagnostic,
        _: Option<&str>,
    ) -> std::io::Result<()> {
        Ok(())
    }
}

/// Decodes `batches` as one log segment on one thread: (what the engine's peak heap rose to
/// above what was live before it started, the sink's findings).
fn peak_of(segment: &[u8]) -> (usize, Largest) {
    let mut opts = Options::new(builtin());
    opts.threads = 1;
    opts.kind = Some(kinspect::input::InputKind::Log);
    let mut sink = Largest::default();
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let out = run(
        [Input::Bytes {
            name: "00000000000000000000.log".into(),
            bytes: segment,
        }],
        &opts,
        &mut sink,
    );
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    (PEAK.load(Relaxed) - before, sink)
}

#[test]
fn batches_that_fill_their_trees_are_held_one_at_a_time() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use kinspect::limits::MAX_NODES_PER_TREE;
    // Enough records that each batch stops at the node limit (nine nodes a record).
    let n = (MAX_NODES_PER_TREE / 9 * 2) as i32;
    let records = EMPTY_RECORD.repeat(n as usize);
    let one = snappy_batch(0, n - 1, n, &records);
    let two = [one.clone(), snappy_batch(i64::from(n), n - 1, n, &records)].concat();
    drop(records);

    let (peak_one, seen) = peak_of(&one);
    assert_eq!((seen.trees, seen.node_limit_hit), (1, 1));
    let tree = seen.held;
    let node = std::mem::size_of::<kinspect::wire::tree::Node>();
    assert!(
        tree >= MAX_NODES_PER_TREE * node,
        "the batch's tree held only {tree} bytes: it did not reach the node limit"
    );
    // Room for the limit's nodes, not for twice as many (the arena stops doubling there).
    assert!(
        tree < MAX_NODES_PER_TREE * node * 3 / 2,
        "the batch's tree held {} MiB for {} MiB of nodes",
        tree >> 20,
        (MAX_NODES_PER_TREE * node) >> 20
    );
    // The tree, the segment's bytes it keeps and the reader's buffers; not a copy of the tree.
    assert!(
        peak_one < tree + tree / 4,
        "one batch: peak {} MiB, its tree {} MiB",
        peak_one >> 20,
        tree >> 20
    );

    let (peak_two, seen) = peak_of(&two);
    assert_eq!((seen.trees, seen.node_limit_hit), (2, 2));
    // The first batch's tree is let go before the second fills another.
    assert!(
        peak_two < peak_one + peak_one / 8,
        "two batches: peak {} MiB, one batch {} MiB",
        peak_two >> 20,
        peak_one >> 20
    );
}

#[test]
fn a_spec_file_of_a_million_values_is_checked_in_bounded_memory() {
    use kinspect::limits::{
        MAX_DIAGNOSTICS_PER_SPEC_FILE, MAX_SPEC_FILE_BYTES, MAX_SPEC_JSON_VALUES,
    };
    use kinspect::schema::validate::{validate_files, Release};
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1_500_000;
    let text = format!(
        "{{\n\"apiKey\": 40, \"type\": \"request\", \"name\": \"ExpireDelegationTokenRequest\",\n\
         \"validVersions\": \"0-2\", \"flexibleVersions\": \"2+\",\n\"fields\": [\n{}]\n}}\n",
        vec!["0"; n].join(",\n")
    );
    assert!(
        text.len() < MAX_SPEC_FILE_BYTES,
        "under the size limit: {}",
        text.len()
    );
    let files = [("ExpireDelegationTokenRequest.json".to_string(), text)];
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let diags = validate_files(&files, Release::parse("4.3.1").unwrap());
    let peak = PEAK.load(Relaxed) - before;
    let code = |c: &str| diags.iter().filter(|d| d.code == c).count();
    // The numbers are one a line from line 5: the first thousand are listed, the rest counted.
    assert_eq!(code("wrong-json-type"), MAX_DIAGNOSTICS_PER_SPEC_FILE);
    assert_eq!(diags[0].pos.line, 5, "{}", diags[0]);
    assert_eq!(code("diagnostics-suppressed"), 1);
    // The reader stopped at the first value past the limit. Before the first number come the
    // object, its five other members' values and the fields array: the number on line 5 is
    // value 8, the one on line L value L + 3.
    let stop = diags
        .iter()
        .find(|d| d.code == "file-too-large")
        .expect("the limit is reported");
    assert_eq!(
        stop.pos.line as usize,
        MAX_SPEC_JSON_VALUES + 1 - 3,
        "{stop}"
    );
    // Each of the 65,536 values read costs some hundreds of bytes (its JSON node and, once, its
    // diagnostic); the 4.5 MB text itself is held by the caller. Before, 4 GiB did not suffice.
    assert!(
        peak < 64 << 20,
        "validating peaked at {} MiB above the text",
        peak >> 20
    );
}
