//! Kafka message-spec JSON: loader, model, validator, compatibility, bundle.

pub mod model;
pub mod versions;
