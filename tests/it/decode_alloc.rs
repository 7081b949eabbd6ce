//! "No allocation per field once warmed up": decoding the bundled captures' frames a second time
//! with the same `Decoder` and `Pdu` allocates only for the diagnostics it reports (their
//! messages and paths), never per frame or per field.

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

// Counted per thread: the other tests of this binary run on other threads at the same time.
thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // (During thread teardown the slot may be gone: such allocations are not this test's.)
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocs() -> usize {
    ALLOCS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn a_warm_decoder_allocates_only_for_diagnostics() {
    let mut frames: Vec<(Hints, Vec<u8>)> = Vec::new();
    for cap in common::bundled_captures() {
        let f = std::fs::File::open(&cap).unwrap();
        read_capture(
            std::io::BufReader::new(f),
            &CaptureOptions::default(),
            &mut |e| {
                if let Event::Frame { hints, data, .. } = e {
                    frames.push((hints, data.to_vec()));
                }
            },
        )
        .unwrap();
    }
    let _ = builtin();
    let mut dec = kinspect::records::decoder(builtin());
    let mut pdu = Pdu::default();
    for (h, d) in &frames {
        dec.decode_frame(d, h, &mut pdu);
    }
    let before = allocs();
    let (mut diags, mut batches, mut inflated) = (0, 0, 0);
    for (h, d) in &frames {
        dec.decode_frame(d, h, &mut pdu);
        diags += pdu.tree.diags.len();
        let t = &pdu.tree;
        // Batches and legacy messages (each has one `Magic`), and the `records` fields holding
        // them; decompressed buffers are the tree's buffers after the frame.
        batches += t.nodes.iter().filter(|n| n.name == "Magic").count();
        inflated += t.bufs.len() - 1;
    }
    let allocs = allocs() - before;
    eprintln!(
        "{} frames, {diags} diagnostics, {batches} batches, {inflated} decompressed buffers, \
         {allocs} allocations",
        frames.len()
    );
    // A diagnostic owns a path and a message (plus growth of the reused diags vector). The
    // record layer names each batch's path (the batch and its records) and decompresses into
    // a buffer of its own (a codec's state and the output's growth: measured 8-9 per buffer on
    // these captures); the walker names each non-empty records field's path.
    assert!(
        allocs <= 4 * diags + 3 * batches + 12 * inflated,
        "{allocs} allocations for {} frames, {diags} diagnostics, {batches} batches",
        frames.len()
    );
}
