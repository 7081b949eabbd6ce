//! "No allocation per field once warmed up": decoding the bundled captures' frames a second time
//! with the same `Decoder` and `Pdu` allocates only for the diagnostics it reports (their
//! messages and paths), never per frame or per field.

mod common;

use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::pdu::{Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::wire::decode::Decoder;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
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
    let mut dec = Decoder::new(builtin());
    let mut pdu = Pdu::default();
    for (h, d) in &frames {
        dec.decode_frame(d, h, &mut pdu);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    let mut diags = 0;
    for (h, d) in &frames {
        dec.decode_frame(d, h, &mut pdu);
        diags += pdu.tree.diags.len();
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    eprintln!(
        "{} frames, {diags} diagnostics, {allocs} allocations",
        frames.len()
    );
    // A diagnostic owns a path and a message (plus growth of the reused diags vector).
    assert!(
        allocs <= 4 * diags,
        "{allocs} allocations for {} frames and {diags} diagnostics",
        frames.len()
    );
}
