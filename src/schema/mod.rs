//! Kafka message-spec JSON: the position-keeping JSON reader, the loader that builds the model
//! (with diagnostics and suggestions), the model itself, version ranges, and the bundle format
//! the built-in protocol is stored in.

pub mod bundle;
pub mod compat;
pub mod diag;
pub mod files;
mod jackson;
pub mod json;
pub mod load;
pub mod model;
pub mod suggest;
pub mod validate;
pub mod versions;

pub use diag::{SchemaDiag, Severity};
pub use load::{load_dir, load_spec};
pub use model::{Field, FieldType, MessageSpec, Pos, Prim, SpecType, StructSpec};
pub use versions::Versions;
