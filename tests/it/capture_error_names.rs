//! The error-code table against an independent implementation: the `kafka-protocol` crate's
//! `ResponseError` (its variant names, CamelCase, turned into Kafka's UPPER_SNAKE).

use kafka_protocol::error::ResponseError;
use kinspect::protocol::errors::{error_name, ERRORS};

fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, ch) in camel.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_uppercase());
    }
    out
}

#[test]
fn every_code_agrees_with_kafka_protocol_crate() {
    let mut checked = 0;
    for code in -5i16..=300 {
        let theirs = match ResponseError::try_from_code(code) {
            None => Some("NONE".to_string()),
            Some(ResponseError::Unknown(_)) => None,
            Some(e) => Some(snake(&format!("{e:?}"))),
        };
        assert_eq!(error_name(code).map(str::to_string), theirs, "code {code}");
        checked += usize::from(theirs.is_some());
    }
    // kafka-protocol 0.18 knows -1..=133; a newer table may only grow past it.
    assert!(checked >= 135 && ERRORS.len() >= checked);
}
