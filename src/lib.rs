//! kinspect: an inspector and fuzzer for the Apache Kafka wire protocol.
//!
//! Data flows one way: inputs (pcap, hex, raw, log files) → TCP reassembly and Kafka framing →
//! sessions → the schema-driven message decoder → record batches → sinks (printers, tables,
//! statistics). The schema model (Kafka's own message-spec JSON) is the single source of
//! protocol truth.
//!
//! [`engine`] runs that pipeline for any input and hands every decoded PDU and capture note, in
//! input order, to a [`engine::Sink`] (the printers of [`output`] and the statistics are sinks).
//!
//! One frame on its own, bytes in, a message tree out:
//!
//! ```
//! use kinspect::engine::FieldValue;
//! use kinspect::pdu::Hints;
//!
//! // A Metadata v1 request (correlation id 7, client "demo") for the topic "orders", with its
//! // 4-byte size prefix.
//! let frame = [
//!     0x00, 0x00, 0x00, 0x1a, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x04,
//!     b'd', b'e', b'm', b'o', 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, b'o', b'r', b'd', b'e',
//!     b'r', b's',
//! ];
//! let pdu = kinspect::decode_frame(&frame, &Hints::default());
//! assert_eq!(pdu.api_name, Some("Metadata"));
//! assert_eq!(pdu.correlation_id, Some(7));
//! let topic = pdu.field("body.Topics[0].Name").unwrap();
//! assert_eq!(topic.value(), FieldValue::Str("orders".into()));
//! assert_eq!((topic.offset(), topic.len()), (22, 8)); // its length prefix and its bytes
//! assert!(pdu.diagnostics().is_empty());
//! ```
//!
//! # Layers
//!
//! Each module uses only modules of its own layer and of lower-numbered layers;
//! `tests/it/layering.rs` reads every `crate::` path in `src/` and fails on any other edge.
//! The command line (`src/main.rs`, `src/cli/`) is a module of the binary, not of the library:
//! no library module can reach it, and `--no-default-features` builds the library without clap.
//!
//! | layer | modules | owns |
//! |---|---|---|
//! | 0 | `limits`, `choice`, `diag` | every cap on hostile input; named option values; diagnostics |
//! | 1 | `schema` | spec loader, model, validator, compatibility, bundles |
//! | 2 | `protocol` | the built-in bundle, API registry, header rules, error names, [`protocol::Direction`], a whole `validate-schema` run ([`protocol::validation`]) |
//! | 3 | `wire`, `pdu` | plans, the message decoder and encoder, the decoded tree; a PDU and its origin |
//! | 4 | `records` | record batches, codecs, internal-topic records, log files (a hook of the wire decoder) |
//! | 5 | `input`, `capture` | input detection, hex and raw readers; pcap, TCP, framing, sessions |
//! | 6 | `check` | conversation rules across PDUs |
//! | 7 | `engine`, `query` | the entry point: inputs to decoded PDUs, handed in order to a sink; display filters and the named fields of a PDU |
//! | 8 | `output` | sinks: printers, statistics, tables |
//! | 9 | `fuzzing`, `probe` | drivers: fuzz target bodies, live-broker prober and fuzzer |

pub mod capture;
pub mod check;
pub mod choice;
pub mod diag;
pub mod engine;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod input;
pub mod limits;
pub mod output;
pub mod pdu;
pub mod probe;
pub mod protocol;
pub mod query;
pub mod records;
pub mod schema;
pub mod wire;

pub use engine::{decode_frame, decode_frame_in};
