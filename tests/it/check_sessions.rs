//! Session rules on small captures encoded by the kafka-protocol crate: each fires on one
//! conversation and stays silent on the same conversation without the fault.

use crate::check_support::{check, request, response, Net};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
};
use std::net::SocketAddr;

fn ends() -> (SocketAddr, SocketAddr) {
    (
        "10.0.1.1:50000".parse().unwrap(),
        "10.0.0.1:9092".parse().unwrap(),
    )
}

fn codes(net: &Net) -> Vec<&'static str> {
    check(&net.pcap()).0.iter().map(|f| f.rule.code).collect()
}

/// ApiVersions v3 answered with these (api key, min, max).
fn api_versions(net: &mut Net, keys: &[(i16, i16, i16)]) {
    let (c, s) = ends();
    let corr = net.corr();
    net.send(
        c,
        s,
        true,
        &request(18, 3, corr, &ApiVersionsRequest::default()),
    );
    let r = ApiVersionsResponse::default().with_api_keys(
        keys.iter()
            .map(|&(k, min, max)| {
                ApiVersion::default()
                    .with_api_key(k)
                    .with_min_version(min)
                    .with_max_version(max)
            })
            .collect(),
    );
    net.send(c, s, false, &response(3, corr, &r));
}

fn metadata(net: &mut Net, version: i16, corr: i32, answer: bool) {
    let (c, s) = ends();
    net.send(
        c,
        s,
        true,
        &request(3, version, corr, &MetadataRequest::default()),
    );
    if answer {
        net.send(
            c,
            s,
            false,
            &response(version, corr, &MetadataResponse::default()),
        );
    }
}

#[test]
fn response_without_request() {
    let mut net = Net::new();
    api_versions(&mut net, &[(3, 0, 12), (18, 0, 4)]);
    let mut silent = Net::new();
    api_versions(&mut silent, &[(3, 0, 12), (18, 0, 4)]);
    assert!(codes(&silent).is_empty());
    let (c, s) = ends();
    net.send(c, s, false, &response(12, 99, &MetadataResponse::default()));
    assert_eq!(codes(&net), ["response-without-request"]);
}

#[test]
fn correlation_id_reused_while_in_flight() {
    let mut net = Net::new();
    metadata(&mut net, 12, 5, false);
    metadata(&mut net, 12, 5, true);
    assert_eq!(codes(&net), ["correlation-id-reused"]);
    let mut net = Net::new();
    metadata(&mut net, 12, 5, true);
    metadata(&mut net, 12, 5, true);
    assert!(codes(&net).is_empty(), "answered before it was reused");
}

/// Requests in flight on a connection are capped (limits::MAX_CHECK_INFLIGHT_PER_CONN): the
/// first request past the cap is named once, and the cap is silent up to it.
#[test]
fn requests_in_flight_past_the_cap_are_named_once() {
    let cap = kinspect::limits::MAX_CHECK_INFLIGHT_PER_CONN as i32;
    let mut net = Net::new();
    for corr in 1..=cap {
        metadata(&mut net, 12, corr, false);
    }
    assert!(codes(&net).is_empty(), "{cap} in flight is within the cap");
    // The request is the first packet of its send (the peer's ACK follows it).
    let first_past = net.frames() + 1;
    metadata(&mut net, 12, cap + 1, false);
    metadata(&mut net, 12, cap + 2, false);
    let (findings, _) = check(&net.pcap());
    let capped: Vec<_> = findings
        .iter()
        .filter(|f| f.rule.code == "check-state-capped")
        .collect();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(capped.len(), 1, "{findings:?}");
    assert_eq!(capped[0].frames, [first_past], "{}", capped[0].message);
    assert!(
        capped[0]
            .message
            .contains("limits::MAX_CHECK_INFLIGHT_PER_CONN"),
        "{}",
        capped[0].message
    );
}

#[test]
fn versions_and_apis_not_advertised() {
    for (version, keys, want) in [
        (
            13,
            &[(3, 0, 12), (18, 0, 4)][..],
            vec!["version-not-advertised"],
        ),
        (12, &[(3, 0, 12), (18, 0, 4)][..], vec![]),
        (12, &[(18, 0, 4)][..], vec!["api-not-advertised"]),
    ] {
        let mut net = Net::new();
        api_versions(&mut net, keys);
        let corr = net.corr();
        metadata(&mut net, version, corr, true);
        assert_eq!(codes(&net), want, "Metadata v{version} with {keys:?}");
    }
}

#[test]
fn request_after_unsupported_version() {
    for (again, want) in [(3, vec!["request-after-unsupported-version"]), (2, vec![])] {
        let mut net = Net::new();
        let (c, s) = ends();
        net.send(
            c,
            s,
            true,
            &request(18, 3, 1, &ApiVersionsRequest::default()),
        );
        // The broker answers a version it does not know with a v0 body: UNSUPPORTED_VERSION.
        let r = ApiVersionsResponse::default()
            .with_error_code(35)
            .with_api_keys(vec![ApiVersion::default()
                .with_api_key(18)
                .with_min_version(0)
                .with_max_version(2)]);
        net.send(c, s, false, &response(0, 1, &r));
        net.send(
            c,
            s,
            true,
            &request(18, again, 2, &ApiVersionsRequest::default()),
        );
        assert_eq!(codes(&net), want, "ApiVersions v{again} again");
    }
}
