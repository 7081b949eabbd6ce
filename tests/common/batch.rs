//! A v2 record batch compressed with snappy, for tests that need a large decompressed record set
//! from small input. Shared by the `it` tests and `peak_heap` (a test binary of its own).

/// A v2 batch at `base` whose records section is `records` compressed with snappy, declaring
/// `count` records and `last_offset_delta`; its length and CRC-32C are right.
pub fn snappy_batch(base: i64, last_offset_delta: i32, count: i32, records: &[u8]) -> Vec<u8> {
    let compressed = snap::raw::Encoder::new().compress_vec(records).unwrap();
    let mut b = Vec::new();
    b.extend_from_slice(&base.to_be_bytes()); // BaseOffset
    b.extend_from_slice(&0i32.to_be_bytes()); // BatchLength, set below
    b.extend_from_slice(&0i32.to_be_bytes()); // PartitionLeaderEpoch
    b.push(2); // Magic
    b.extend_from_slice(&0u32.to_be_bytes()); // Crc, set below
    b.extend_from_slice(&2i16.to_be_bytes()); // Attributes: snappy
    b.extend_from_slice(&last_offset_delta.to_be_bytes());
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
