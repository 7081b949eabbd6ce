//! Bytes ↔ values: cursor and primitives, plan compiler and interpreter, encoder,
//! and the decoded-tree arena.

pub mod cursor;
pub mod decode;
pub mod encode;
pub mod hook;
pub mod plan;
pub mod sample;
pub mod tree;
pub mod walk;
