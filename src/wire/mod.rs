//! Bytes ↔ values: cursor and primitives, plan interpreter, encoder, limits, diagnostics.

pub mod diag;
pub mod tree;
