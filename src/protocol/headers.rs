//! Request/response header versions as Kafka derives them (`ApiMessageType.
//! {request,response}HeaderVersion`, reference/kafka-wire-rules.md §1): request header 2 iff the
//! API version is flexible, else 1 (ControlledShutdown v0: 0, 3.9.0 only); response header 1 iff
//! flexible, else 0, except ApiVersions responses, always 0 (KIP-511). These two exceptions are
//! hand-written rules; the APIs they name are looked up by name ([`Protocol::known`]).
//!
//! Flexibility of a version the registry does not know (ApiVersions v99) follows the newest
//! release's `flexibleVersions`, as Kafka's `VersionConditional` does.

use super::registry::Protocol;
use super::Direction;

/// Whether `api_version` of `api_key` is flexible; `None` for an API no release defines.
pub fn is_flexible(proto: &Protocol, api_key: i16, api_version: i16) -> Option<bool> {
    if let Some(r) = proto.message(api_key, api_version, Direction::Request) {
        return Some(r.spec.is_flexible(api_version));
    }
    proto
        .api_versions(api_key)
        .first()
        .map(|a| a.flexible.contains(api_version))
}

/// The request header version Kafka uses for `api_key` at `api_version`; `None` for an API no
/// release defines (a decoder may still try v1 to show the correlation id).
pub fn request_header_version(proto: &Protocol, api_key: i16, api_version: i16) -> Option<i16> {
    if proto.known().controlled_shutdown == Some(api_key)
        && api_version == 0
        && proto.header(Direction::Request, 0).is_some()
    {
        return Some(0);
    }
    is_flexible(proto, api_key, api_version).map(|f| if f { 2 } else { 1 })
}

/// The response header version Kafka uses for `api_key` at `api_version` (the request's).
pub fn response_header_version(proto: &Protocol, api_key: i16, api_version: i16) -> Option<i16> {
    if proto.known().api_versions == Some(api_key) {
        return Some(0);
    }
    is_flexible(proto, api_key, api_version).map(|f| if f { 1 } else { 0 })
}

/// Either direction.
pub fn header_version(
    proto: &Protocol,
    dir: Direction,
    api_key: i16,
    api_version: i16,
) -> Option<i16> {
    match dir {
        Direction::Request => request_header_version(proto, api_key, api_version),
        Direction::Response => response_header_version(proto, api_key, api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::builtin;

    #[test]
    fn header_versions_follow_kafkas_rules() {
        let p = builtin();
        // Metadata: v9+ flexible.
        assert_eq!(request_header_version(p, 3, 8), Some(1));
        assert_eq!(request_header_version(p, 3, 9), Some(2));
        assert_eq!(response_header_version(p, 3, 8), Some(0));
        assert_eq!(response_header_version(p, 3, 9), Some(1));
        // ApiVersions: request follows the rule (v3+ flexible), the response header is always 0,
        // also for versions above the newest one.
        assert_eq!(request_header_version(p, 18, 2), Some(1));
        assert_eq!(request_header_version(p, 18, 3), Some(2));
        assert_eq!(request_header_version(p, 18, 99), Some(2));
        assert_eq!(response_header_version(p, 18, 4), Some(0));
        // ControlledShutdown v0 (3.9.0): request header v0.
        assert_eq!(request_header_version(p, 7, 0), Some(0));
        assert_eq!(request_header_version(p, 7, 1), Some(1));
        // An API nobody defines.
        assert_eq!(request_header_version(p, 999, 0), None);
    }
}
