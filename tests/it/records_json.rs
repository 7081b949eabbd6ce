//! Decoded records through the JSON printer: the contract's shape for record data (keys and
//! values as `{"text"}`/`{"base64"}`, null distinct from empty, labels as strings) and, in
//! annotated mode, offsets into the frame for compressed bytes and `"buffer"` for records in a
//! decompressed buffer. Batches are real (kafka-python's, from the bundled capture).

use crate::common;
use crate::support;

use kinspect::output::json::{write_pdu, JsonOptions};
use kinspect::pdu::Pdu;
use kinspect::records::{decode_records, RecordsContext};
use kinspect::wire::tree::Kind;
use serde_json::Value as J;
use support::*;

/// A PDU whose body is one `Records` field holding `bytes`, printed to JSON.
fn print(bytes: &[u8], annotate: bool) -> J {
    let mut pdu = Pdu::default();
    let t = &mut pdu.tree;
    t.reset(bytes);
    let root = t.open("", Kind::Struct, 0, 0);
    let body = t.open("body", Kind::Struct, 0, 0);
    let rs = t.open("Records", Kind::Array, 0, 0);
    decode_records(
        t,
        0,
        0,
        bytes.len() as u32,
        &RecordsContext::default(),
        "body.Records",
    );
    let n = bytes.len() as u32;
    t.close(rs, n);
    t.close(body, n);
    t.close(root, n);
    let mut out = Vec::new();
    write_pdu(
        &mut out,
        &pdu,
        None,
        &JsonOptions {
            annotate,
            show_secrets: false,
        },
    )
    .unwrap();
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
}

fn kafka_python_batch(codec: &str) -> Vec<u8> {
    let cap = common::captures_dir().join("mock-kafkapython2-codecs.pcap");
    for p in pdus(&cap).iter().filter(|p| p.to_broker) {
        for (s, l) in scan_v2_batches(&p.bytes) {
            let t = decode(&p.bytes[s..s + l], &RecordsContext::default());
            let n = records(&t).len();
            if label(
                &t,
                t.child(batches(&t)[0], "Attributes").unwrap(),
                "Compression",
            ) == codec
                && n == 5
            {
                return p.bytes[s..s + l].to_vec();
            }
        }
    }
    panic!("no {codec} batch of 5 records");
}

#[test]
fn record_data_prints_as_the_contract_says() {
    let j = print(&kafka_python_batch("gzip"), false);
    assert_eq!(j["diagnostics"], serde_json::json!([]));
    let b = &j["body"]["Records"][0];
    assert_eq!(b["Magic"], 2);
    assert_eq!(b["Attributes"]["Compression"], "gzip");
    assert_eq!(b["Attributes"]["TimestampType"], "CreateTime");
    assert_eq!(b["Crc"], b["CrcComputed"]);
    let r0 = &b["Records"][0];
    assert_eq!(r0["Key"], serde_json::json!({"text": "k0"}));
    let v = r0["Value"]["text"].as_str().unwrap();
    assert!(v.starts_with("kafka-python gzip message 0 "), "{v}");
    assert_eq!(
        r0["Headers"],
        serde_json::json!([{"Key": "h", "Value": {"text": "v0"}}])
    );
    assert_eq!(r0["Offset"], 0);
    assert_eq!(b["Records"].as_array().unwrap().len(), 5);
}

#[test]
fn annotated_records_carry_frame_offsets_and_their_decompressed_buffer() {
    let bytes = kafka_python_batch("lz4");
    let j = print(&bytes, true);
    let b = &j["body"]["value"]["Records"]["value"][0]["value"];
    // The compressed section: the Records member spans the count and the compressed bytes.
    let rs = &b["Records"];
    assert_eq!(rs["offset"], 57);
    assert_eq!(rs["length"].as_u64().unwrap() as usize, bytes.len() - 57);
    assert!(rs.get("buffer").is_none());
    // Records inside it live in buffer 1 with offsets from 0.
    let r0 = &rs["value"][0];
    assert_eq!(
        (r0["buffer"].as_u64(), r0["offset"].as_u64()),
        (Some(1), Some(0))
    );
    let key = &r0["value"]["Key"];
    assert_eq!(key["buffer"], 1);
    assert_eq!(key["value"], serde_json::json!({"text": "k0"}));
}
