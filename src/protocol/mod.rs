//! The built-in Kafka protocol: the embedded schema bundle, the API registry, header rules and
//! error-code names.

pub mod errors;
pub mod headers;
pub mod registry;

pub use registry::{
    builtin, load, with_overlay, ApiRelease, CoordinatorGroup, KnownApis, Protocol, Resolved,
};
