//! Throughput of the capture reader alone (pcap parsing, link layers, reassembly, framing,
//! matching) on a big capture. Ignored by default; run in release with the capture named by
//! KINSPECT_BIG_PCAP (made by ../shared/lab/make-big-capture.sh):
//!   KINSPECT_BIG_PCAP=/tmp/big.pcap cargo test --release --test capture_bench -- --ignored --nocapture

use kinspect::capture::{read_capture, CaptureOptions, Event};
use std::time::Instant;

#[test]
#[ignore]
fn reader_throughput_on_a_big_capture() {
    let Some(path) = std::env::var_os("KINSPECT_BIG_PCAP") else {
        eprintln!("SKIPPED: set KINSPECT_BIG_PCAP to a capture file");
        return;
    };
    let size = std::fs::metadata(&path).unwrap().len();
    let f = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&path).unwrap());
    let t = Instant::now();
    let (mut frames, mut bytes, mut notes) = (0u64, 0u64, 0u64);
    let s = read_capture(f, &CaptureOptions::default(), &mut |ev| match ev {
        Event::Frame { data, .. } => {
            frames += 1;
            bytes += data.len() as u64;
        }
        Event::Note { .. } => notes += 1,
    })
    .unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "{} packets, {frames} frames ({bytes} Kafka bytes), {notes} notes in {secs:.2} s: {:.0} frames/s, {:.0} MB/s of pcap",
        s.packets,
        frames as f64 / secs,
        size as f64 / 1e6 / secs
    );
    assert!(frames > 0);
}
