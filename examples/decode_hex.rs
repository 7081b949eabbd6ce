//! Decodes one Kafka frame given in hex (a Metadata v1 request by default, or the first
//! argument) and prints three of its fields.
//!
//! ```console
//! $ cargo run --example decode_hex
//! $ cargo run --example decode_hex -- 0000001a00030001000000070004...
//! ```

use kinspect::engine::FieldValue;
use kinspect::pdu::Hints;

/// Metadata v1 request, correlation id 7, client id "demo", for the topic "orders".
const FRAME: &str = "0000001a 00030001 00000007 0004 64656d6f 00000001 0006 6f7264657273";

fn main() {
    let hex = std::env::args().nth(1).unwrap_or_else(|| FRAME.to_string());
    let digits: Vec<u8> = hex.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    let bytes: Vec<u8> = digits
        .chunks(2)
        .filter_map(|p| u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok())
        .collect();
    let pdu = kinspect::decode_frame(&bytes, &Hints::default());
    println!(
        "api: {} v{}",
        pdu.api_name.unwrap_or("?"),
        pdu.api_version.unwrap_or(-1)
    );
    match pdu.field("header.ClientId").map(|f| f.value()) {
        Some(FieldValue::Str(s)) => println!("client id: {s}"),
        other => println!("client id: {other:?}"),
    }
    if let Some(topic) = pdu.field("body.Topics[0].Name") {
        println!(
            "first topic: {:?} (bytes {}..{})",
            topic.as_str().unwrap_or_default(),
            topic.offset(),
            topic.offset() + topic.len()
        );
    }
    for d in pdu.diagnostics() {
        println!("{}: {} at byte {}", d.severity.as_str(), d.code, d.offset);
    }
}
