//! The built-in Kafka protocol: the embedded schema bundle, the API registry, header rules and
//! error-code names; and `validate-schema` as one call ([`validation::run`]), built-in releases
//! and baselines included.

pub mod errors;
pub mod headers;
pub mod registry;
pub mod validation;

/// Which way a frame travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to broker.
    Request,
    /// Broker to client.
    Response,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }
}

pub use registry::{
    builtin, load, with_overlay, ApiRelease, CoordinatorGroup, KnownApis, Protocol, Resolved,
};
