//! Frame-level decoding on hand-written frames (bytes laid out from the wire rules, not from
//! kinspect's encoder): size prefixes, direction, headers as Kafka picks them, and one test per
//! frame-level diagnostic code, each checked for its path and byte offset.

use kinspect::output::value::pdu_json;
use kinspect::pdu::{Direction, Hints, Pdu};
use kinspect::protocol::builtin;
use kinspect::records::encode_pdu;
use kinspect::wire::tree::{Kind, Value};

fn dec(frame: &[u8], hints: Hints) -> Pdu {
    let mut d = kinspect::records::decoder(builtin());
    let mut p = Pdu::default();
    d.decode_frame(frame, &hints, &mut p);
    p.tree.check_tiling(0).unwrap();
    p
}

fn codes(p: &Pdu) -> Vec<&'static str> {
    p.tree.diags.iter().map(|d| d.code).collect()
}

fn with_prefix(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn response(key: i16, v: i16) -> Hints {
    Hints {
        direction: Some(Direction::Response),
        api_key: Some(key),
        api_version: Some(v),
        ..Hints::default()
    }
}

/// ApiVersions v0 request, header v1: key 18, version 0, correlation 7, client id "cli".
const API_VERSIONS_V0: [u8; 13] = [0, 18, 0, 0, 0, 0, 0, 7, 0, 3, b'c', b'l', b'i'];

#[test]
fn request_with_and_without_size_prefix_is_detected() {
    for frame in [with_prefix(&API_VERSIONS_V0), API_VERSIONS_V0.to_vec()] {
        let p = dec(&frame, Hints::default());
        assert!(codes(&p).is_empty(), "{:?}", p.tree.diags);
        assert_eq!(
            (
                p.direction,
                p.api_key,
                p.api_name,
                p.api_version,
                p.correlation_id,
                p.release
            ),
            (
                Some(Direction::Request),
                Some(18),
                Some("ApiVersions"),
                Some(0),
                Some(7),
                Some("4.3.1")
            )
        );
        let root = p.tree.node(0);
        assert_eq!(
            (root.hdr as usize, root.len as usize),
            (frame.len() - 13, frame.len())
        );
        let names: Vec<_> = p.tree.children(0).map(|c| p.tree.node(c).name).collect();
        assert_eq!(names, ["header", "body"]);
        let h = p.tree.child(0, "header").unwrap();
        let cid = p.tree.child(h, "ClientId").unwrap();
        assert_eq!(p.tree.node(cid).hdr, 2);
        assert_eq!(encode_pdu(builtin(), &pdu_json(&p)).unwrap(), frame);
    }
}

#[test]
fn flexible_request_header_keeps_an_int16_client_id_and_has_tags() {
    // ApiVersions v3: header v2 = key, version, correlation, ClientId (int16 length!), tags;
    // body = ClientSoftwareName "k" (compact), ClientSoftwareVersion "1", tags.
    let f = with_prefix(&[0, 18, 0, 3, 0, 0, 0, 9, 0, 1, b'x', 0, 2, b'k', 2, b'1', 0]);
    let p = dec(&f, Hints::default());
    assert!(codes(&p).is_empty(), "{:?}", p.tree.diags);
    let j = pdu_json(&p);
    assert_eq!(j["header"]["ClientId"], "x");
    assert_eq!(
        j["body"],
        serde_json::json!({"ClientSoftwareName":"k","ClientSoftwareVersion":"1"})
    );
}

#[test]
fn controlled_shutdown_v0_uses_request_header_v0() {
    // 3.9.0 only: key 7, version 0, correlation 1, no client id; body BrokerId 5.
    let p = dec(
        &with_prefix(&[0, 7, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5]),
        Hints::default(),
    );
    assert!(codes(&p).is_empty(), "{:?}", p.tree.diags);
    assert_eq!(p.release, Some("3.9.0"));
    let h = p.tree.child(0, "header").unwrap();
    assert!(p.tree.child(h, "ClientId").is_none());
}

#[test]
fn api_versions_response_header_is_v0_even_when_flexible() {
    // ApiVersions v3 response: header v0 (no tags) + ErrorCode 0, ApiKeys [] , Throttle 0, tags.
    let f = with_prefix(&[0, 0, 0, 4, 0, 0, 1, 0, 0, 0, 0, 0]);
    let p = dec(&f, response(18, 3));
    assert!(codes(&p).is_empty(), "{:?}", p.tree.diags);
    assert_eq!(p.correlation_id, Some(4));
    // The same frame without the hint's direction: API hints mean a response.
    let q = dec(
        &f,
        Hints {
            direction: None,
            ..response(18, 3)
        },
    );
    assert_eq!(q.direction, Some(Direction::Response));
}

#[test]
fn api_versions_v0_fallback_is_reported_as_info() {
    // Answer to a v3 request, written as v0: ErrorCode 35, ApiKeys (int32 count 1) [18, 0, 3].
    let f = with_prefix(&[0, 0, 0, 1, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3]);
    let p = dec(&f, response(18, 3));
    assert_eq!(codes(&p), ["apiversions-fallback"]);
    assert_eq!(p.api_version, Some(0));
    assert_eq!(pdu_json(&p)["body"]["ApiKeys"][0]["MaxVersion"], 3);
}

#[test]
fn unknown_api_and_version_keep_the_header() {
    let p = dec(
        &with_prefix(&[0x03, 0xe7, 0, 0, 0, 0, 0, 2, 0xff, 0xff, 1, 2, 3]),
        Hints::default(),
    );
    assert_eq!(codes(&p), ["unknown-api"]);
    assert_eq!((p.correlation_id, p.tree.diags[0].offset), (Some(2), 14));
    let body = p.tree.child(0, "body").unwrap();
    assert_eq!(
        (p.tree.node(body).kind, p.tree.node(body).len),
        (Kind::Error, 3)
    );
    // ApiVersions v99: header v2 as Kafka would pick it, body unknown.
    let p = dec(
        &with_prefix(&[0, 18, 0, 99, 0, 0, 0, 3, 0xff, 0xff, 0]),
        Hints::default(),
    );
    assert_eq!(codes(&p), ["unknown-version"]);
    assert_eq!(p.correlation_id, Some(3));
}

#[test]
fn unstable_version_is_a_warning() {
    let j = serde_json::json!({"direction":"request","api_key":22,"api_version":6,"length":0,
        "header":{"RequestApiKey":22,"RequestApiVersion":6,"CorrelationId":1,"ClientId":null},
        "body":{"TransactionalId":null,"TransactionTimeoutMs":0,"ProducerId":-1,"ProducerEpoch":-1,
                "Enable2Pc":false,"KeepPreparedTxn":false}});
    let p = dec(&encode_pdu(builtin(), &j).unwrap(), Hints::default());
    assert_eq!(codes(&p), ["unstable-version"]);
    assert!(!p.tree.has_errors());
}

#[test]
fn size_prefix_disagreements() {
    let mut f = with_prefix(&API_VERSIONS_V0);
    f[3] -= 1;
    let p = dec(
        &f,
        Hints {
            has_size_prefix: Some(true),
            ..Hints::default()
        },
    );
    // The message itself is whole: decoding goes by the bytes, the prefix is reported.
    assert_eq!(codes(&p), ["size-mismatch"]);
    f[3] += 2;
    let p = dec(
        &f,
        Hints {
            has_size_prefix: Some(true),
            ..Hints::default()
        },
    );
    assert_eq!(codes(&p), ["truncated"]);
    assert_eq!(p.tree.diags[0].offset, 0);
}

#[test]
fn trailing_bytes_are_an_error_node_and_still_round_trip() {
    let mut body = API_VERSIONS_V0.to_vec();
    body.extend_from_slice(&[0xde, 0xad]);
    let f = with_prefix(&body);
    let p = dec(&f, Hints::default());
    assert_eq!(codes(&p), ["trailing-bytes"]);
    assert_eq!(p.tree.diags[0].offset, 17);
    let last = p.tree.children(0).last().unwrap();
    assert_eq!(
        (
            p.tree.node(last).name,
            p.tree.node(last).offset,
            p.tree.node(last).len
        ),
        ("_trailing", 17, 2)
    );
    assert_eq!(encode_pdu(builtin(), &pdu_json(&p)).unwrap(), f);
}

#[test]
fn a_response_alone_needs_hints() {
    let p = dec(
        &with_prefix(&[0, 0, 0, 5, 0, 0]),
        Hints {
            direction: Some(Direction::Response),
            ..Hints::default()
        },
    );
    assert_eq!(codes(&p), ["missing-hints"]);
    assert_eq!(p.correlation_id, Some(5));
}

#[test]
fn value_diagnostics_carry_field_paths() {
    // Metadata v4 request: Topics null, AllowAutoTopicCreation = 2.
    let p = dec(
        &with_prefix(&[
            0, 3, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2,
        ]),
        Hints::default(),
    );
    assert_eq!(codes(&p), ["invalid-bool"]);
    assert_eq!(
        (p.tree.diags[0].path.as_str(), p.tree.diags[0].offset),
        ("body.AllowAutoTopicCreation", 18)
    );
    // A header tagged section with tag 5 before tag 3.
    let p = dec(
        &with_prefix(&[0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 2, 5, 0, 3, 0, 1, 1, 0]),
        Hints::default(),
    );
    assert_eq!(codes(&p), ["tag-order"]);
    assert_eq!(
        (p.tree.diags[0].path.as_str(), p.tree.diags[0].offset),
        ("header._tagged_fields", 17)
    );
    // ApiVersions v3 response: FinalizedFeaturesEpoch (tag 1, int64) declared 9 bytes.
    let mut b = vec![0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 9];
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 42, 0xee]);
    let p = dec(&with_prefix(&b), response(18, 3));
    assert_eq!(codes(&p), ["tag-size-mismatch"]);
    assert_eq!(p.tree.diags[0].path, "body.FinalizedFeaturesEpoch");
    assert_eq!(pdu_json(&p)["body"]["FinalizedFeaturesEpoch"], 42);
}

#[test]
fn sasl_tokens_are_raw_bytes() {
    let p = dec(
        &with_prefix(b"\0user\0secret"),
        Hints {
            sasl_token: true,
            ..Hints::default()
        },
    );
    assert!(codes(&p).is_empty());
    let t = p.tree.child(0, "token").unwrap();
    assert!(matches!(p.tree.node(t).value, Value::Bytes(s) if s.start == 4 && s.len == 12));
    assert_eq!(pdu_json(&p)["token"], "AHVzZXIAc2VjcmV0");
    assert_eq!(
        encode_pdu(builtin(), &pdu_json(&p)).unwrap(),
        with_prefix(b"\0user\0secret")
    );
}
