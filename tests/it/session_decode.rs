//! The session layer in `kinspect decode` (and `stats`, which shares its loop): topic ids
//! learnt from Metadata responses
//! name the topics of later PDUs (`_topic_name`, the tree) and decide how their records decode.
//! Oracles: the capture's known defect (kafka-python sent Metadata v13 to a broker advertising
//! 0..=12, found by the capture engineer with tshark), Metadata responses decoded by the
//! `kafka-protocol` crate, and frames written by that crate's encoders.

use crate::common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::metadata_response::MetadataResponseTopic;
use kafka_protocol::messages::{
    FetchRequest, FetchResponse, MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader,
    TopicName,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use kafka_protocol::records::{Compression, RecordBatchEncoder, RecordEncodeOptions};
use kinspect::capture::testgen::{self, Conversation, Link};
use kinspect::capture::{read_capture, CaptureOptions, Event};
use kinspect::pdu::Direction;
use serde_json::Value as J;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn kinspect(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .output()
        .expect("run kinspect");
    (
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        out.status.code().unwrap_or(-1),
    )
}

fn jsonl(path: &Path) -> Vec<J> {
    jsonl_with(path, &[])
}

fn jsonl_with(path: &Path, more: &[&str]) -> Vec<J> {
    let p = path.to_str().unwrap();
    let mut args = vec!["decode", "-f", "jsonl", p];
    args.extend(more);
    let (out, _) = kinspect(&args);
    out.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn codes(pdu: &J) -> Vec<&str> {
    pdu["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect()
}

#[test]
fn metadata_v13_beyond_the_advertised_range_is_diagnosed_at_its_frame_with_check() {
    let cap = common::captures_dir().join("tansu-kafkapython3-admin-sweep.pcap");
    // Decoding alone does not judge the conversation.
    assert!(jsonl(&cap)
        .iter()
        .all(|p| codes(p).iter().all(|c| !c.ends_with("-not-advertised"))));
    let pdus = jsonl_with(&cap, &["--check"]);
    let flagged: Vec<(u64, &str, i64, &str)> = pdus
        .iter()
        .flat_map(|p| {
            codes(p)
                .into_iter()
                .filter(|c| c.ends_with("-not-advertised"))
                .map(move |c| {
                    (
                        p["frame"].as_u64().unwrap(),
                        p["api"].as_str().unwrap(),
                        p["api_version"].as_i64().unwrap(),
                        c,
                    )
                })
        })
        .collect();
    assert_eq!(flagged, [(160, "Metadata", 13, "version-not-advertised")]);
    let d = pdus
        .iter()
        .find(|p| p["frame"] == 160)
        .and_then(|p| p["diagnostics"].as_array())
        .and_then(|d| d.first())
        .unwrap();
    assert_eq!(d["path"], "header.RequestApiVersion");
    assert!(d["message"].as_str().unwrap().contains("0..=12"), "{d}");
    // The tree and the summary (which counts warnings) carry it too with --check; `stats`
    // (which runs no rules) does not.
    let p = cap.to_str().unwrap();
    let (out, _) = kinspect(&["decode", "--check", "-f", "tree", "--color", "never", p]);
    assert_eq!(out.matches("version-not-advertised").count(), 1);
    let (out, _) = kinspect(&["decode", "--check", "-f", "summary", "--color", "never", p]);
    let warned: Vec<&str> = out.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].trim_start().starts_with("160 ") && warned[0].contains("Metadata v13"),
        "{warned:?}"
    );
    let (out, _) = kinspect(&["stats", "--format", "json", p]);
    let stats: J = serde_json::from_str(&out).unwrap();
    let n: Vec<&J> = stats["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "version-not-advertised")
        .map(|d| &d["count"])
        .collect();
    assert!(n.is_empty(), "{n:?}");
}

/// Every object (at any depth) with a `TopicId` member: (TopicId, `_topic_name`).
fn topic_ids<'a>(v: &'a J, out: &mut Vec<(&'a str, Option<&'a str>)>) {
    match v {
        J::Object(o) => {
            if let Some(id) = o.get("TopicId").and_then(J::as_str) {
                out.push((id, o.get("_topic_name").and_then(J::as_str)));
            }
            o.values().for_each(|c| topic_ids(c, out));
        }
        J::Array(a) => a.iter().for_each(|c| topic_ids(c, out)),
        _ => {}
    }
}

#[test]
fn fetch_v16_topic_ids_carry_the_names_metadata_gave_them() {
    let cap = common::captures_dir().join("tansu-confluent-group.pcap");
    let bytes = std::fs::read(&cap).unwrap();
    // Oracle: the Metadata responses as the kafka-protocol crate reads them.
    let mut names: HashMap<String, String> = HashMap::new();
    let mut frames: HashMap<u64, Vec<u8>> = HashMap::new();
    read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| {
        if let Event::Frame {
            origin,
            hints,
            data,
        } = ev
        {
            frames.insert(origin.frame.unwrap(), data.to_vec());
            let (Some(3), Some(v), Some(Direction::Response)) =
                (hints.api_key, hints.api_version, hints.direction)
            else {
                return;
            };
            let mut b = Bytes::copy_from_slice(&data[4..]);
            ResponseHeader::decode(&mut b, MetadataResponse::header_version(v)).unwrap();
            for t in MetadataResponse::decode(&mut b, v).unwrap().topics {
                let id = URL_SAFE_NO_PAD.encode(t.topic_id.as_bytes());
                names.insert(id, t.name.unwrap().0.to_string());
            }
        }
    })
    .unwrap();
    assert!(!names.is_empty());
    let pdus = jsonl(&cap);
    let mut named = 0;
    for p in pdus.iter().filter(|p| p["api"] == "Fetch") {
        assert!(p["api_version"].as_i64().unwrap() >= 13);
        let mut ids = Vec::new();
        topic_ids(&p["body"], &mut ids);
        assert!(!ids.is_empty(), "frame {}", p["frame"]);
        for (id, name) in ids {
            assert_eq!(
                name,
                names.get(id).map(String::as_str),
                "frame {}",
                p["frame"]
            );
            named += 1;
        }
        // The name is not on the wire: the encoder ignores it and gives back the frame.
        let frame = p["frame"].as_u64().unwrap();
        let enc = kinspect::records::encode_pdu(kinspect::protocol::builtin(), p).unwrap();
        assert_eq!(&enc, frames.get(&frame).unwrap(), "frame {frame}");
    }
    assert!(named >= 20, "{named} topic ids named");
    // Metadata responses name their topics themselves: no `_topic_name` there.
    for p in pdus.iter().filter(|p| p["api"] == "Metadata") {
        let mut ids = Vec::new();
        topic_ids(&p["body"], &mut ids);
        assert!(ids.iter().all(|(_, n)| n.is_none()), "frame {}", p["frame"]);
    }
    let (tree, _) = kinspect(&[
        "decode",
        "-f",
        "tree",
        "--color",
        "never",
        cap.to_str().unwrap(),
    ]);
    let (id, name) = names.iter().next().unwrap();
    assert!(
        tree.contains(&format!("TopicId = {id} ({name})")),
        "{id} {name}"
    );
}

/// Non-flexible string: int16 length, bytes.
fn s16(s: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn frame<M: Encodable>(head: impl FnOnce(&mut BytesMut), body: &M, version: i16) -> Vec<u8> {
    let mut b = BytesMut::new();
    head(&mut b);
    body.encode(&mut b, version).unwrap();
    let mut f = (b.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&b);
    f
}

fn request<M: Encodable + HeaderVersion>(key: i16, version: i16, corr: i32, body: &M) -> Vec<u8> {
    let h = RequestHeader::default()
        .with_request_api_key(key)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(StrBytes::from_static_str("t")));
    frame(
        |b| h.encode(b, M::header_version(version)).unwrap(),
        body,
        version,
    )
}

fn response<M: Encodable + HeaderVersion>(version: i16, corr: i32, body: &M) -> Vec<u8> {
    let h = ResponseHeader::default().with_correlation_id(corr);
    frame(
        |b| h.encode(b, M::header_version(version)).unwrap(),
        body,
        version,
    )
}

#[test]
fn consumer_offsets_records_fetched_by_topic_id_decode_with_the_coordinator_schemas() {
    let id = uuid::Uuid::from_bytes([7; 16]);
    let topic = |n: &'static str| TopicName(StrBytes::from_static_str(n));
    let meta = MetadataResponse::default().with_topics(vec![MetadataResponseTopic::default()
        .with_name(Some(topic("__consumer_offsets")))
        .with_topic_id(id)]);
    // OffsetCommitKey (record type 1: group, topic, partition) and OffsetCommitValue v3
    // (offset, leaderEpoch, metadata, commitTimestamp), from Kafka's group-coordinator specs.
    let mut key = 1i16.to_be_bytes().to_vec();
    s16("g1", &mut key);
    s16("orders", &mut key);
    key.extend_from_slice(&2i32.to_be_bytes());
    let mut value = 3i16.to_be_bytes().to_vec();
    value.extend_from_slice(&42i64.to_be_bytes());
    value.extend_from_slice(&5i32.to_be_bytes());
    s16("m", &mut value);
    value.extend_from_slice(&1_767_225_600_123i64.to_be_bytes());
    let rec = crate::common::kp_record(0, 1_767_225_600_000, Some(key.into()), Some(value.into()));
    let mut batch = BytesMut::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut batch, [rec].iter(), &opts).unwrap();
    let fetch_req = FetchRequest::default().with_topics(vec![FetchTopic::default()
        .with_topic_id(id)
        .with_partitions(vec![FetchPartition::default().with_partition(0)])]);
    let fetch = FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic_id(id)
        .with_partitions(vec![PartitionData::default()
            .with_partition_index(0)
            .with_records(Some(batch.freeze()))])]);
    let mut c = Conversation::new(
        "10.0.0.1:50000".parse().unwrap(),
        "10.0.0.2:9092".parse().unwrap(),
    );
    c.handshake()
        .send(true, &request(3, 12, 1, &MetadataRequest::default()))
        .send(false, &response(12, 1, &meta))
        .send(true, &request(1, 13, 2, &fetch_req))
        .send(false, &response(13, 2, &fetch))
        .close();
    let recs = testgen::records(&Link::Ethernet, &c.packets, 65535);
    let pcap = testgen::pcap(Link::Ethernet.linktype(), &recs, false, false, 65535);
    let dir = std::env::temp_dir().join(format!("kinspect-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("offsets-by-id.pcap");
    std::fs::write(&path, pcap).unwrap();
    let pdus = jsonl(&path);
    let _ = std::fs::remove_dir_all(&dir);
    let apis: Vec<(&str, &str)> = pdus
        .iter()
        .map(|p| (p["api"].as_str().unwrap(), p["direction"].as_str().unwrap()))
        .collect();
    assert_eq!(
        apis,
        [
            ("Metadata", "request"),
            ("Metadata", "response"),
            ("Fetch", "request"),
            ("Fetch", "response")
        ]
    );
    for p in &pdus {
        assert_eq!(codes(p), Vec::<&str>::new(), "{p}");
    }
    let t = &pdus[3]["body"]["Responses"][0];
    assert_eq!(t["_topic_name"], "__consumer_offsets");
    assert_eq!(
        pdus[2]["body"]["Topics"][0]["_topic_name"],
        "__consumer_offsets"
    );
    let r = &t["Partitions"][0]["Records"][0]["Records"][0];
    assert_eq!(r["Key"]["TypeName"], "OffsetCommitKey", "{r}");
    assert_eq!(r["Key"]["Data"]["group"], "g1", "{r}");
    assert_eq!(r["Key"]["Data"]["topic"], "orders", "{r}");
    assert_eq!(r["Value"]["TypeName"], "OffsetCommitValue", "{r}");
    assert_eq!(r["Value"]["Data"]["offset"], 42, "{r}");
    assert_eq!(r["Value"]["Data"]["metadata"], "m", "{r}");
}
