//! Display filters and fields: a small expression language over a decoded [`Pdu`] (`--filter`,
//! `-Y`), and the named fields it tests, which the fields printer, the tables and the report
//! read too ([`Field`], the per-PDU facts).
//!
//! ```
//! use kinspect::query::{Field, Query, Value};
//!
//! let q = Query::compile("api == Metadata and topic == \"orders\"", kinspect::protocol::builtin()).unwrap();
//! // A Metadata v1 request (correlation id 7, client "demo") for the topic "orders".
//! let frame = [
//!     0x00, 0x00, 0x00, 0x1a, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x04,
//!     b'd', b'e', b'm', b'o', 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, b'o', b'r', b'd', b'e',
//!     b'r', b's',
//! ];
//! let pdu = kinspect::decode_frame(&frame, &Default::default());
//! assert!(q.matches(&pdu));
//! let mut topics = Vec::new();
//! Field::parse("topic").unwrap().values(&pdu, |v| topics.push(v.to_string()));
//! assert_eq!(topics, ["orders"]);
//! assert_eq!(Field::parse("client_id").unwrap().first(&pdu), Some(Value::Str(b"demo")));
//!
//! let e = Query::compile("api == Produce and", kinspect::protocol::builtin()).unwrap_err();
//! assert_eq!(e.column(), 19);
//! ```
//!
//! The grammar (precedence: `not` over `and` over `or`):
//!
//! ```text
//! expr    := and ( ("or" | "||") and )*
//! and     := unary ( ("and" | "&&") unary )*
//! unary   := ("not" | "!") unary | "(" expr ")" | test
//! test    := FIELD [ CMP value | "contains" value | "matches" value | "in" "{" item ("," item)* "}" ]
//! CMP     := "==" | "!=" | "<" | "<=" | ">" | ">=" (or eq ne lt le gt ge)
//! item    := value [ ".." value ]
//! value   := NUMBER | "string" | 'string' | WORD
//! ```
//!
//! A field alone tests presence (`latency_us`, `error`). Fields are listed in [`FIELDS`];
//! anything starting with `body.` or `header.` is a path into the decoded tree
//! (`body.Topics[].Name`, `[]` any element, `[N]` the N-th). Repeated values are existential
//! (see [`eval`]). API names, error names and directions are resolved when the expression is
//! compiled; an unknown one is an error pointing at its column.

mod eval;
pub mod field;
mod lex;
pub mod pairs;
mod parse;

pub use field::{Field, FieldKind, Path, Step, Value, FIELDS};
pub use lex::CmpOp;
pub use pairs::Pairs;

use crate::diag::Diagnostic;
use crate::pdu::{Origin, Pdu};
use crate::protocol::Protocol;
use crate::wire::tree::Tree;
use std::fmt;

/// What is wrong with an expression, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    /// Byte offset in the expression.
    pub offset: usize,
    pub message: String,
}

impl QueryError {
    pub(crate) fn new(offset: usize, message: impl Into<String>) -> Self {
        QueryError {
            offset,
            message: message.into(),
        }
    }

    /// The 1-based column (in characters) the error points at; one past the end for
    /// "the expression ends too soon".
    pub fn column(&self) -> usize {
        self.column_in(None)
    }

    fn column_in(&self, expr: Option<&str>) -> usize {
        match expr {
            Some(e) => {
                e.get(..self.offset.min(e.len()))
                    .map_or(self.offset, |p| p.chars().count())
                    + 1
            }
            None => self.offset + 1,
        }
    }

    /// The message, then the expression and a caret under the column:
    ///
    /// ```text
    /// column 19: expected a field (such as api, topic or body.Topics[].Name), found the end of the expression
    ///   api == Produce and
    ///                     ^
    /// ```
    pub fn pointed(&self, expr: &str) -> String {
        let col = self.column_in(Some(expr));
        let line = expr.replace(['\n', '\t', '\r'], " ");
        format!(
            "column {col}: {}\n  {line}\n  {}^",
            self.message,
            " ".repeat(col - 1)
        )
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column(), self.message)
    }
}

impl std::error::Error for QueryError {}

/// A compiled display filter. It is an [`engine::Filter`](crate::engine::Filter): push it into
/// `engine::Filters::more`. Capture notes and log-file batches (not Kafka messages) do not
/// pass it.
#[derive(Debug)]
pub struct Query {
    expr: eval::Expr,
    text: String,
}

impl Query {
    /// Compiles `text` against `proto` (API names are its names).
    pub fn compile(text: &str, proto: &Protocol) -> Result<Query, QueryError> {
        let toks = lex::lex(text)?;
        let expr = parse::Parser::new(toks, proto).parse()?;
        Ok(Query {
            expr,
            text: text.to_string(),
        })
    }

    /// Whether `pdu` satisfies the expression.
    #[inline]
    pub fn matches(&self, pdu: &Pdu) -> bool {
        self.expr.eval(pdu)
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether some field it reads is inside record batches (they must then be decoded).
    pub fn reaches_records(&self) -> bool {
        let mut fields = Vec::new();
        self.expr.fields(&mut fields);
        fields
            .iter()
            .any(|f| matches!(f, Field::Path(p) if p.reaches_records()))
    }
}

impl crate::engine::Filter for Query {
    fn pdu(&self, pdu: &Pdu) -> bool {
        self.matches(pdu)
    }
    fn note(&self, _origin: &Origin, _diag: &Diagnostic) -> bool {
        false
    }
    fn tree(&self, _tree: &Tree) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
