//! Kafka error codes and their names (owned by the capture/stats work).
