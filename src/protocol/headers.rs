//! Request/response header versions as Kafka derives them (owned by the decoder work).
