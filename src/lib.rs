//! kinspect: an inspector and fuzzer for the Apache Kafka wire protocol.
//!
//! Data flows one way: inputs (pcap, hex, raw, log files) → TCP reassembly and Kafka framing →
//! sessions → the schema-driven message decoder → record batches → sinks (printers, tables,
//! statistics). The schema model (Kafka's own message-spec JSON) is the single source of
//! protocol truth.
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
//! | 2 | `protocol` | the built-in bundle, API registry, header rules, error names, [`protocol::Direction`] |
//! | 3 | `wire`, `pdu` | plans, the message decoder and encoder, the decoded tree; a PDU and its origin |
//! | 4 | `records` | record batches, codecs, internal-topic records, log files (a hook of the wire decoder) |
//! | 5 | `input`, `capture` | input detection, hex and raw readers; pcap, TCP, framing, sessions |
//! | 6 | `check` | conversation rules across PDUs |
//! | 7 | `engine` | the entry point: inputs to decoded PDUs, handed in order to a sink |
//! | 8 | `output` | sinks: printers, statistics, tables |
//! | 9 | `fuzzing`, `probe` | drivers: fuzz target bodies, live-broker prober and fuzzer |

pub mod capture;
pub mod check;
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
