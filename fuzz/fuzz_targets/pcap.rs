#![no_main]
// The body is library code: kinspect::fuzzing::pcap (smoke-tested by `cargo test`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| kinspect::fuzzing::pcap(data));
