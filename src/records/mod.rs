//! Record data: v2 record batches, legacy v0/v1 message sets, compression codecs, control
//! records, internal-topic records and Kafka log files.

pub mod codec;
pub mod read;
