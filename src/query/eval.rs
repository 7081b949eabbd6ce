//! The compiled expression and its evaluation against a PDU: a walk of the PDU's fields by node
//! id that stops at the first value that decides, with nothing allocated.
//!
//! Repeated values are existential, as in Wireshark: `topic == "orders"` holds when some topic
//! is `orders`. `!=` is its negation over values that exist: `topic != "orders"` holds when the
//! PDU has topics and none is `orders` (a PDU without topics satisfies neither; write
//! `not topic == "orders"` to include it).

use super::field::{Field, Value};
use super::lex::CmpOp;
use crate::pdu::{Direction, Pdu};
use std::cmp::Ordering;

#[derive(Debug)]
pub(crate) enum Expr {
    /// `a and b and c …`, flat: a chain of any length costs no depth.
    And(Vec<Expr>),
    /// `a or b or c …`, flat.
    Or(Vec<Expr>),
    Not(Box<Expr>),
    Test(Test),
}

#[derive(Debug)]
pub(crate) struct Test {
    pub field: Field,
    pub op: Op,
}

#[derive(Debug)]
pub(crate) enum Op {
    /// The field alone: it has a value.
    Present,
    Cmp(CmpOp, Lit),
    Contains(Vec<u8>),
    Matches(Box<regex::bytes::Regex>),
    In(Vec<SetItem>),
}

#[derive(Debug)]
pub(crate) enum SetItem {
    One(Lit),
    Range(Lit, Lit),
}

/// A literal, resolved for the field it is compared with.
#[derive(Debug, Clone)]
pub(crate) enum Lit {
    Int(i64),
    Float(f64),
    Direction(Direction),
    /// Text; also what it reads as for a uuid, a boolean or null.
    Text {
        bytes: Vec<u8>,
        uuid: Option<[u8; 16]>,
        boolean: Option<bool>,
        null: bool,
    },
}

impl Lit {
    pub(crate) fn text(bytes: Vec<u8>) -> Lit {
        use base64::Engine as _;
        let uuid = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&bytes)
            .ok()
            .and_then(|b| <[u8; 16]>::try_from(b).ok());
        let boolean = match &bytes[..] {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        };
        let null = bytes == b"null";
        Lit::Text {
            bytes,
            uuid,
            boolean,
            null,
        }
    }
}

impl Expr {
    pub(crate) fn eval(&self, pdu: &Pdu) -> bool {
        match self {
            Expr::And(all) => all.iter().all(|e| e.eval(pdu)),
            Expr::Or(any) => any.iter().any(|e| e.eval(pdu)),
            Expr::Not(a) => !a.eval(pdu),
            Expr::Test(t) => t.eval(pdu),
        }
    }

    /// Every field the expression reads.
    pub(crate) fn fields<'a>(&'a self, out: &mut Vec<&'a Field>) {
        match self {
            Expr::And(es) | Expr::Or(es) => es.iter().for_each(|e| e.fields(out)),
            Expr::Not(a) => a.fields(out),
            Expr::Test(t) => out.push(&t.field),
        }
    }
}

impl Test {
    fn eval(&self, pdu: &Pdu) -> bool {
        let f = &self.field;
        match &self.op {
            Op::Present => f.any(pdu, |_| true),
            Op::Cmp(CmpOp::Ne, lit) => {
                let mut seen = false;
                let equal = f.any(pdu, |v| {
                    seen = true;
                    compare(v, lit) == Some(Ordering::Equal)
                });
                seen && !equal
            }
            Op::Cmp(op, lit) => f.any(pdu, |v| {
                compare(v, lit).is_some_and(|o| match op {
                    CmpOp::Eq => o == Ordering::Equal,
                    CmpOp::Ne => o != Ordering::Equal,
                    CmpOp::Lt => o == Ordering::Less,
                    CmpOp::Le => o != Ordering::Greater,
                    CmpOp::Gt => o == Ordering::Greater,
                    CmpOp::Ge => o != Ordering::Less,
                })
            }),
            Op::Contains(needle) => f.any(pdu, |v| {
                v.text().is_some_and(|h| {
                    needle.is_empty() || h.windows(needle.len()).any(|w| w == &needle[..])
                })
            }),
            Op::Matches(re) => f.any(pdu, |v| v.text().is_some_and(|h| re.is_match(h))),
            Op::In(items) => f.any(pdu, |v| {
                items.iter().any(|it| match it {
                    SetItem::One(l) => compare(v, l) == Some(Ordering::Equal),
                    SetItem::Range(lo, hi) => {
                        compare(v, lo).is_some_and(|o| o != Ordering::Less)
                            && compare(v, hi).is_some_and(|o| o != Ordering::Greater)
                    }
                })
            }),
        }
    }
}

fn num(v: &Value<'_>) -> Option<f64> {
    match *v {
        Value::Int(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        Value::Api(k, _) | Value::Error(k) => Some(k.into()),
        Value::Array(n) => Some(n as f64),
        _ => None,
    }
}

fn int(v: &Value<'_>) -> Option<i64> {
    match *v {
        Value::Int(i) => Some(i),
        Value::Api(k, _) | Value::Error(k) => Some(k.into()),
        Value::Array(n) => i64::try_from(n).ok(),
        _ => None,
    }
}

/// How a value orders against a literal; `None` when they do not compare.
pub(crate) fn compare(v: &Value<'_>, lit: &Lit) -> Option<Ordering> {
    match lit {
        Lit::Int(b) => match int(v) {
            Some(a) => Some(a.cmp(b)),
            None => num(v)?.partial_cmp(&(*b as f64)),
        },
        Lit::Float(b) => num(v)?.partial_cmp(b),
        Lit::Direction(d) => match v {
            Value::Direction(x) => (x == d).then_some(Ordering::Equal).or(Some(Ordering::Less)),
            _ => None,
        },
        Lit::Text {
            bytes,
            uuid,
            boolean,
            null,
        } => match v {
            Value::Uuid(u) => uuid.map(|x| u.cmp(&x)),
            Value::Bool(b) => boolean.map(|x| b.cmp(&x)),
            Value::Null => null.then_some(Ordering::Equal),
            Value::Addr(a) => {
                // Compared as written (`127.0.0.1:9092`); formatting only when asked.
                let s = a.to_string();
                Some(s.as_bytes().cmp(bytes))
            }
            _ => v.text().map(|t| t.cmp(bytes)),
        },
    }
}
