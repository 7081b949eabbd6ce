//! Requests a connection leaves unanswered: when the connection ends (FIN, RST, a reused
//! address, the end of the capture) the reader names them in one `unanswered` note, a warning
//! when the server ended it on them (what a Kafka broker does with a request it cannot handle),
//! else info. A Produce with Acks 0 is never answered, so it is not named; nor is anything when
//! bytes of the responses were lost. Requests and responses are encoded by the independent
//! `kafka-protocol` crate; frame numbers are counted from the packets the scenario sends.

use crate::check_support::{request, response};
use kafka_protocol::messages::{self as m, TransactionalId};
use kafka_protocol::protocol::StrBytes;
use kinspect::capture::testgen::{self, Conversation, Link, ACK, FIN, RST};
use kinspect::capture::{read_capture, CaptureOptions, Event};

/// (code, severity, message, frame) of every note.
fn notes(c: &Conversation) -> Vec<(String, String, String, Option<u64>)> {
    let recs = testgen::records(&Link::Ethernet, &c.packets, 65535);
    let bytes = testgen::pcap(1, &recs, false, true, 65535);
    let mut out = Vec::new();
    read_capture(&bytes[..], &CaptureOptions::default(), &mut |ev| {
        if let Event::Note { origin, diag } = ev {
            out.push((
                diag.code.to_string(),
                diag.severity.as_str().to_string(),
                diag.message.clone(),
                origin.frame,
            ));
        }
    })
    .unwrap();
    out
}

fn conv() -> Conversation {
    let mut c = Conversation::new(
        "127.0.0.1:40000".parse().unwrap(),
        "127.0.0.1:9092".parse().unwrap(),
    );
    c.handshake(); // frames 1-3
    c
}

/// ApiVersions v3 answered (frames 4-7), then Metadata v12 corr 2 sent (frame 8, its ACK 9).
fn one_left() -> Conversation {
    let mut c = conv();
    c.send(true, &request(18, 3, 1, &m::ApiVersionsRequest::default()));
    c.send(false, &response(3, 1, &m::ApiVersionsResponse::default()));
    c.send(true, &request(3, 12, 2, &m::MetadataRequest::default()));
    c
}

#[test]
fn a_request_the_server_closed_on_is_a_warning_naming_it() {
    let mut c = one_left();
    c.flags(false, FIN | ACK)
        .flags(true, FIN | ACK)
        .flags(false, ACK);
    assert_eq!(
        notes(&c),
        [(
            "unanswered".into(),
            "warning".into(),
            "1 request was never answered before the server closed the connection (FIN, frame 10): Metadata v12 corr=2 (frame 8)".into(),
            Some(10)
        )]
    );
}

#[test]
fn a_reset_says_which_side_sent_it() {
    let mut c = one_left();
    c.flags(false, RST);
    let n = notes(&c);
    assert_eq!(
        (n[0].1.as_str(), n[0].2.as_str()),
        ("warning", "1 request was never answered before the server reset the connection (RST, frame 10): Metadata v12 corr=2 (frame 8)")
    );
    let mut c = one_left();
    c.flags(true, RST);
    let n = notes(&c);
    assert_eq!(
        (n[0].1.as_str(), n[0].2.as_str()),
        ("info", "1 request was never answered before the client reset the connection (RST, frame 10): Metadata v12 corr=2 (frame 8)")
    );
}

#[test]
fn the_client_closing_or_the_capture_ending_is_info() {
    let mut c = one_left();
    c.close(); // client FIN first (frame 10)
    let n = notes(&c);
    assert_eq!(
        (n[0].1.as_str(), n[0].2.as_str()),
        ("info", "1 request was never answered before the client closed the connection (FIN, frame 10): Metadata v12 corr=2 (frame 8)")
    );
    let c = one_left();
    let n = notes(&c);
    assert_eq!(
        (n[0].1.as_str(), n[0].2.as_str(), n[0].3),
        (
            "info",
            "1 request was never answered before the capture ended: Metadata v12 corr=2 (frame 8)",
            Some(9)
        )
    );
}

#[test]
fn an_answered_conversation_has_no_note() {
    let mut c = one_left();
    c.send(false, &response(12, 2, &m::MetadataResponse::default()));
    c.flags(false, FIN | ACK).flags(true, FIN | ACK);
    assert_eq!(notes(&c), []);
}

/// A Produce of `version` with `acks` (and a transactional id from v3).
fn produce(version: i16, corr: i32, acks: i16) -> Vec<u8> {
    if version == 2 {
        // kafka-protocol encodes v3 and up: v2's body is v3's without the TransactionalId
        // before Acks, here the null one (int16 -1) after the 8-byte client id "scenario".
        let mut f = produce_encoded(3, corr, acks, false);
        let at = 4 + 2 + 2 + 4 + 2 + 8;
        assert_eq!(f.drain(at..at + 2).as_slice(), [0xff, 0xff]);
        f[6..8].copy_from_slice(&2i16.to_be_bytes());
        let size = (f.len() - 4) as u32;
        f[..4].copy_from_slice(&size.to_be_bytes());
        return f;
    }
    produce_encoded(version, corr, acks, true)
}

fn produce_encoded(version: i16, corr: i32, acks: i16, txn: bool) -> Vec<u8> {
    let mut p = m::ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(1000);
    if txn {
        p = p.with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("tx-7"))));
    }
    request(0, version, corr, &p)
}

#[test]
fn produce_with_acks_zero_is_not_waited_for_in_any_header_or_body_layout() {
    // v2: Acks first in the body; v3 and v7: after a nullable int16 TransactionalId; v9 and v11:
    // after a compact one, behind a request header with tagged fields.
    for v in [2, 3, 7, 9, 11] {
        let mut c = conv();
        c.send(true, &produce(v, 1, 0));
        c.send(true, &produce(v, 2, 0));
        c.flags(false, FIN | ACK).flags(true, FIN | ACK);
        assert_eq!(notes(&c), [], "Produce v{v} with Acks 0");
        // The same with Acks 1 and -1 waits for answers.
        let mut c = conv();
        c.send(true, &produce(v, 1, 1));
        c.send(true, &produce(v, 2, -1));
        c.flags(false, FIN | ACK).flags(true, FIN | ACK);
        let n = notes(&c);
        assert_eq!(
            n[0].2,
            format!("2 requests were never answered before the server closed the connection (FIN, frame 8): Produce v{v} corr=1 (frame 4), Produce v{v} corr=2 (frame 6)"),
            "Produce v{v} with Acks 1 and -1"
        );
    }
}

#[test]
fn lost_response_bytes_leave_the_question_open() {
    let mut c = conv();
    c.send(true, &request(18, 3, 1, &m::ApiVersionsRequest::default()));
    c.send(true, &request(3, 12, 2, &m::MetadataRequest::default()));
    // The answer to corr 1 comes in two segments; the first is not captured.
    c.mss = 8;
    let before = c.packets.len();
    c.send(false, &response(3, 1, &m::ApiVersionsResponse::default()));
    c.packets.remove(before);
    c.flags(false, FIN | ACK).flags(true, FIN | ACK);
    let n = notes(&c);
    let codes: Vec<&str> = n.iter().map(|n| n.0.as_str()).collect();
    assert!(codes.contains(&"gap"), "{n:?}");
    assert!(!codes.contains(&"unanswered"), "{n:?}");
}

#[test]
fn a_long_list_names_five_and_counts_the_rest() {
    let mut c = conv();
    for corr in 1..=7 {
        c.send(true, &request(3, 12, corr, &m::MetadataRequest::default()));
    }
    // The server's FIN, and the capture ends before the client's.
    c.flags(false, FIN | ACK);
    let n = notes(&c);
    // Seven requests (frames 4, 6, ..., 16), the server's FIN at frame 18.
    assert_eq!(
        n[0].2,
        "7 requests were never answered before the server closed the connection (FIN, frame 18): Metadata v12 corr=1 (frame 4), Metadata v12 corr=2 (frame 6), Metadata v12 corr=3 (frame 8), Metadata v12 corr=4 (frame 10), Metadata v12 corr=5 (frame 12), and 2 more"
    );
}
