//! Every bundled capture decoded end to end (reader → decoder → session). Error diagnostics
//! appear only where the bytes really break the protocol, each case explained below from the
//! bytes; the version check fires once, where a client sent a version the broker did not
//! advertise; topic ids in requests resolve to names learnt from earlier responses.

use crate::common;

use kinspect::capture::{read_capture, CaptureOptions};
use kinspect::diag::Diagnostic;
use kinspect::engine::decoded::{DecodeLoop, Decoded};
use kinspect::pdu::{Direction, Pdu};
use kinspect::wire::tree::Value;

/// Why an error diagnostic on a real capture is right, or None when it is not explained.
fn explained(capture: &str, p: &Pdu, d: &Diagnostic) -> Option<&'static str> {
    let mock = capture.starts_with("mock-");
    let resp = p.direction == Some(Direction::Response);
    match (d.code, p.api_key, p.api_version) {
        // librdkafka 2.0.2's mock broker answers ApiVersions v3 (which it does not support) with
        // `00 23 | 01 | 00 12 00 00 00 02 | 00 00 00 00`: UNSUPPORTED_VERSION, then a one-byte
        // count 01 (as a compact array that means *zero* entries), then one entry (key 18,
        // versions 0..2) and a throttle time — valid neither as v3 nor as the v0 fallback Kafka
        // sends. tshark flags the same PDUs ("does not end at the pdu length offset"); the
        // client gives up on v3 and retries ApiVersions v0.
        ("trailing-bytes", Some(18), Some(3)) if mock && resp => Some("mock ApiVersions v3 reply"),
        // The mock's ListOffsets v5 partition ends `… ff ff ff ff | ff ff ff ff`: LeaderEpoch -1
        // then 4 more bytes no version of ListOffsetsResponse has.
        ("trailing-bytes", Some(2), Some(5)) if mock && resp => Some("mock ListOffsets v5 reply"),
        // confluent-kafka 2.16 (librdkafka 2.16.0) sends Metadata v12 as `00 | 00 00 00 00 01 00
        // 00`: null Topics, two bools, an empty tagged section, then 3 bytes (01 00 00) that
        // v12 does not have; they read as one more bool (the v8-10 IncludeClusterAuthorized-
        // Operations) plus a tagged section holding tag 0 of size 0. Brokers do not check for
        // trailing bytes (AbstractRequest.parseRequest), so tansu answered.
        ("trailing-bytes", Some(3), Some(12)) if capture == "tansu-confluent-admin" && !resp => {
            Some("librdkafka Metadata v12")
        }
        // tcpdump -s 128: every frame past 58 captured bytes is cut.
        ("truncated", _, _) if capture == "mock-kcat-snaplen128" => Some("snap length"),
        // kafka-python's raw sweep sends Metadata v13 although tansu advertised 0..=12 (the
        // session warns on the request); tansu answers with a v12-shaped body, which lacks
        // v13's top-level ErrorCode.
        ("truncated", Some(3), Some(13)) if capture == "tansu-kafkapython3-admin-sweep" && resp => {
            Some("tansu v12 body to v13")
        }
        _ => None,
    }
}

fn uuid_members(p: &Pdu, name: &str) -> Vec<[u8; 16]> {
    p.tree
        .nodes
        .iter()
        .filter(|n| n.name == name)
        .filter_map(|n| {
            if let Value::Uuid(u) = n.value {
                Some(u)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn real_captures_decode_with_only_explained_errors() {
    let opts = CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    let mut unexplained = Vec::new();
    let mut version_warnings = Vec::new();
    for path in common::bundled_captures() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let mut dl = DecodeLoop::new(kinspect::protocol::builtin());
        // The conversation rules too (`decode --check`): they must add no unexplained error.
        dl.set_check(true);
        let mut pdus = 0;
        read_capture(&bytes[..], &opts, &mut |ev| {
            dl.event(ev, &mut |d| {
                let Decoded::Pdu(p) = d else { return };
                pdus += 1;
                for d in &p.tree.diags {
                    if d.is_error() && explained(&name, p, d).is_none() {
                        unexplained.push(format!(
                            "{name} frame {:?} {:?} api {:?} v{:?}: {d}",
                            p.origin.last_frame, p.direction, p.api_key, p.api_version
                        ));
                    }
                    if d.code == "version-not-advertised" || d.code == "api-not-advertised" {
                        version_warnings.push((
                            name.clone(),
                            p.origin.last_frame,
                            p.api_key,
                            p.api_version,
                        ));
                    }
                }
            });
        })
        .unwrap();
        assert!(pdus > 0, "{name}");
    }
    assert!(
        unexplained.is_empty(),
        "unexplained errors:\n{}",
        unexplained.join("\n")
    );
    assert_eq!(
        version_warnings,
        [(
            "tansu-kafkapython3-admin-sweep".to_string(),
            Some(160),
            Some(3),
            Some(13)
        )]
    );
}

#[test]
fn topic_ids_in_fetch_requests_resolve_to_names_from_metadata() {
    let opts = CaptureOptions {
        protocol: Some(kinspect::protocol::builtin()),
        ..CaptureOptions::default()
    };
    for (capture, min_ids) in [("tansu-confluent-admin", 1), ("tansu-confluent-group", 1)] {
        let bytes = std::fs::read(common::captures_dir().join(format!("{capture}.pcap"))).unwrap();
        let mut dl = DecodeLoop::new(kinspect::protocol::builtin());
        let mut asked: Vec<[u8; 16]> = Vec::new();
        let mut unresolved = Vec::new();
        let mut names = Vec::new();
        read_capture(&bytes[..], &opts, &mut |ev| {
            let mut ids = Vec::new();
            dl.event(ev, &mut |d| {
                if let Decoded::Pdu(p) = d {
                    if p.direction == Some(Direction::Request)
                        && p.api_key == Some(1)
                        && p.api_version.is_some_and(|v| v >= 13)
                    {
                        ids = uuid_members(p, "TopicId");
                    }
                }
            });
            for id in ids {
                match dl.session().topic_name(id) {
                    Some(n) => names.push(n.to_string()),
                    None => unresolved.push(id),
                }
                asked.push(id);
            }
        })
        .unwrap();
        assert!(
            asked.len() >= min_ids,
            "{capture}: Fetch v13+ requests name topics by id"
        );
        assert!(unresolved.is_empty(), "{capture}: ids never seen in a Metadata/DescribeTopicPartitions/CreateTopics response: {unresolved:?}");
        assert!(names.iter().all(|n| !n.is_empty()), "{capture}: {names:?}");
    }
}
