//! kinspect: an inspector and fuzzer for the Apache Kafka wire protocol.
//!
//! Data flows one way: inputs (pcap, hex, raw, log files) → TCP reassembly and Kafka framing →
//! sessions → the schema-driven message decoder → record batches → printers. The schema
//! model (Kafka's own message-spec JSON) is the single source of protocol truth.

pub mod capture;
pub mod choice;
pub mod diag;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod input;
pub mod limits;
pub mod output;
pub mod pdu;
pub mod probe;
pub mod protocol;
pub mod records;
pub mod schema;
pub mod wire;
