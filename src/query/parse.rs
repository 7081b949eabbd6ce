//! The parser: tokens into the compiled expression, names resolved as it goes (API names to
//! keys, error names to codes, directions), so evaluating a PDU looks nothing up.
//!
//! ```text
//! expr    := and ( ("or" | "||") and )*
//! and     := unary ( ("and" | "&&") unary )*
//! unary   := ("not" | "!") unary | "(" expr ")" | test
//! test    := FIELD [ CMP value | "contains" value | "matches" value | "in" "{" item ("," item)* "}" ]
//! CMP     := "==" | "!=" | "<" | "<=" | ">" | ">=" | eq | ne | lt | le | gt | ge
//! item    := value [ ".." value ]
//! value   := NUMBER | "string" | 'string' | WORD
//! ```

use super::eval::{Expr, Lit, Op, SetItem, Test};
use super::field::{Field, FieldKind};
use super::lex::{CmpOp, Tok, Token};
use super::QueryError;
use crate::limits::MAX_QUERY_DEPTH;
use crate::pdu::Direction;
use crate::protocol::Protocol;

pub(crate) struct Parser<'a> {
    toks: Vec<Token>,
    i: usize,
    proto: &'a Protocol,
    /// `not` and `(` open now: the parser recurses on them, and so do evaluation and drop.
    depth: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(toks: Vec<Token>, proto: &'a Protocol) -> Self {
        Parser {
            toks,
            i: 0,
            proto,
            depth: 0,
        }
    }

    fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }

    pub(crate) fn parse(mut self) -> Result<Expr, QueryError> {
        if self.peek().tok == Tok::End {
            return Err(QueryError::new(0, "the expression is empty"));
        }
        let e = self.or()?;
        let t = self.peek();
        if t.tok != Tok::End {
            let what = match t.tok {
                Tok::RParen => "a `)` without its `(`".to_string(),
                _ => format!(
                    "expected `and`, `or` or the end of the expression, found {}",
                    t.tok.describe()
                ),
            };
            return Err(QueryError::new(t.at, what));
        }
        Ok(e)
    }

    fn or(&mut self) -> Result<Expr, QueryError> {
        let e = self.and()?;
        if self.peek().tok != Tok::Or {
            return Ok(e);
        }
        let mut any = vec![e];
        while self.peek().tok == Tok::Or {
            self.next();
            any.push(self.and()?);
        }
        Ok(Expr::Or(any))
    }

    fn and(&mut self) -> Result<Expr, QueryError> {
        let e = self.unary()?;
        if self.peek().tok != Tok::And {
            return Ok(e);
        }
        let mut all = vec![e];
        while self.peek().tok == Tok::And {
            self.next();
            all.push(self.unary()?);
        }
        Ok(Expr::And(all))
    }

    fn unary(&mut self) -> Result<Expr, QueryError> {
        let t = self.next();
        if matches!(t.tok, Tok::Not | Tok::LParen) {
            if self.depth >= MAX_QUERY_DEPTH {
                return Err(QueryError::new(
                    t.at,
                    format!(
                        "more than {MAX_QUERY_DEPTH} `not` and `(` nested (limits::MAX_QUERY_DEPTH)"
                    ),
                ));
            }
            self.depth += 1;
            let e = self.nested(t);
            self.depth -= 1;
            return e;
        }
        match t.tok {
            Tok::Word(w) => self.test(w, t.at),
            other => Err(QueryError::new(
                t.at,
                format!(
                    "expected a field (such as api, topic or body.Topics[].Name), found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// After a `not` or a `(`.
    fn nested(&mut self, t: Token) -> Result<Expr, QueryError> {
        match t.tok {
            Tok::Not => Ok(Expr::Not(Box::new(self.unary()?))),
            _ => {
                let e = self.or()?;
                let close = self.next();
                if close.tok != Tok::RParen {
                    return Err(QueryError::new(
                        close.at,
                        format!(
                            "expected `)` to close the `(` at column {}, found {}",
                            t.at + 1,
                            close.tok.describe()
                        ),
                    ));
                }
                Ok(e)
            }
        }
    }

    fn test(&mut self, name: String, at: usize) -> Result<Expr, QueryError> {
        let field = Field::parse(&name).map_err(|m| QueryError::new(at, m))?;
        let kind = field.kind();
        let op_tok = self.peek().clone();
        let op = match op_tok.tok {
            Tok::Cmp(c) => {
                self.next();
                let (lit, lat) = self.value(&name, kind)?;
                if c != CmpOp::Eq && c != CmpOp::Ne && kind == FieldKind::Direction {
                    return Err(QueryError::new(
                        op_tok.at,
                        format!("`{name}` has no order: compare it with == or !="),
                    ));
                }
                let _ = lat;
                Op::Cmp(c, lit)
            }
            Tok::Contains | Tok::Matches => {
                self.next();
                if kind == FieldKind::Number {
                    return Err(QueryError::new(
                        op_tok.at,
                        format!(
                            "`{name}` is a number: {} works on text (compare numbers with == < >)",
                            op_tok.tok.describe()
                        ),
                    ));
                }
                let v = self.next();
                let bytes = match v.tok {
                    Tok::Str(s) => s,
                    Tok::Word(w) => w.into_bytes(),
                    Tok::Int(_, t) | Tok::Float(_, t) => t.into_bytes(),
                    other => {
                        return Err(QueryError::new(
                            v.at,
                            format!(
                                "expected a string after {}, found {}",
                                op_tok.tok.describe(),
                                other.describe()
                            ),
                        ))
                    }
                };
                if op_tok.tok == Tok::Contains {
                    Op::Contains(bytes)
                } else {
                    let text = String::from_utf8(bytes)
                        .map_err(|_| QueryError::new(v.at, "a regular expression must be UTF-8"))?;
                    let re = regex::bytes::RegexBuilder::new(&text)
                        .size_limit(1 << 20)
                        .build()
                        .map_err(|e| {
                            QueryError::new(
                                v.at,
                                format!("not a regular expression: {}", one_line(&e.to_string())),
                            )
                        })?;
                    Op::Matches(Box::new(re))
                }
            }
            Tok::In => {
                self.next();
                let open = self.next();
                if open.tok != Tok::LBrace {
                    return Err(QueryError::new(
                        open.at,
                        format!("expected `{{` after `in`, found {}", open.tok.describe()),
                    ));
                }
                let mut items = Vec::new();
                loop {
                    if self.peek().tok == Tok::RBrace && !items.is_empty() {
                        self.next();
                        break;
                    }
                    let (lo, _) = self.value(&name, kind)?;
                    let item = if self.peek().tok == Tok::DotDot {
                        let dd = self.next();
                        let (hi, _) = self.value(&name, kind)?;
                        if !matches!(lo, Lit::Int(_) | Lit::Float(_)) {
                            return Err(QueryError::new(dd.at, "a range `a..b` wants numbers"));
                        }
                        SetItem::Range(lo, hi)
                    } else {
                        SetItem::One(lo)
                    };
                    items.push(item);
                    let sep = self.next();
                    match sep.tok {
                        Tok::Comma => {}
                        Tok::RBrace => break,
                        other => {
                            return Err(QueryError::new(
                                sep.at,
                                format!(
                                    "expected `,` or `}}` in the set, found {}",
                                    other.describe()
                                ),
                            ))
                        }
                    }
                }
                Op::In(items)
            }
            _ => Op::Present,
        };
        Ok(Expr::Test(Test { field, op }))
    }

    /// A value for a test of field `name`, resolved for its kind.
    fn value(&mut self, name: &str, kind: FieldKind) -> Result<(Lit, usize), QueryError> {
        let t = self.next();
        let at = t.at;
        let bad = |what: &str| QueryError::new(at, what.to_string());
        let lit = match (kind, t.tok) {
            (FieldKind::Api, Tok::Int(k, _)) => Lit::Int(k),
            (FieldKind::Api, Tok::Word(w)) => Lit::Int(self.api(&w).ok_or_else(|| {
                bad(&format!("unknown API `{w}` (see `kinspect apis`)"))
            })?),
            (FieldKind::Api, Tok::Str(s)) => {
                let w = String::from_utf8_lossy(&s).into_owned();
                Lit::Int(self.api(&w).ok_or_else(|| bad(&format!("unknown API {w:?}")))?)
            }
            (FieldKind::Error, Tok::Int(k, _)) => Lit::Int(k),
            (FieldKind::Error, Tok::Word(w)) => Lit::Int(error(&w).ok_or_else(|| {
                bad(&format!("unknown error name `{w}` (Kafka's names: NOT_LEADER_OR_FOLLOWER, …; or a number)"))
            })?),
            (FieldKind::Error, Tok::Str(s)) => {
                let w = String::from_utf8_lossy(&s).into_owned();
                Lit::Int(error(&w).ok_or_else(|| bad(&format!("unknown error name {w:?}")))?)
            }
            (FieldKind::Direction, Tok::Word(w)) => Lit::Direction(direction(&w).ok_or_else(|| {
                bad(&format!("`{name}` is request or response, not `{w}`"))
            })?),
            (FieldKind::Direction, Tok::Str(s)) => {
                let w = String::from_utf8_lossy(&s).into_owned();
                Lit::Direction(direction(&w).ok_or_else(|| {
                    bad(&format!("`{name}` is request or response, not {w:?}"))
                })?)
            }
            (FieldKind::Number, Tok::Int(v, _)) | (FieldKind::Any, Tok::Int(v, _)) => Lit::Int(v),
            (FieldKind::Number, Tok::Float(v, _)) | (FieldKind::Any, Tok::Float(v, _)) => {
                Lit::Float(v)
            }
            (FieldKind::Number, Tok::Word(w)) => {
                return Err(bad(&format!("`{name}` is a number, not `{w}`")))
            }
            (FieldKind::Number, Tok::Str(_)) => {
                return Err(bad(&format!("`{name}` is a number, not a string")))
            }
            (FieldKind::Text | FieldKind::Addr, Tok::Int(_, t) | Tok::Float(_, t)) => {
                Lit::text(t.into_bytes())
            }
            (_, Tok::Word(w)) => Lit::text(w.into_bytes()),
            (_, Tok::Str(s)) => Lit::text(s),
            (_, other) => {
                return Err(QueryError::new(
                    at,
                    format!("expected a value (a number, a \"string\" or a name), found {}", other.describe()),
                ))
            }
        };
        Ok((lit, at))
    }

    fn api(&self, w: &str) -> Option<i64> {
        self.proto
            .api_keys()
            .into_iter()
            .find(|&k| {
                self.proto
                    .api_name(k)
                    .is_some_and(|n| n.eq_ignore_ascii_case(w))
            })
            .map(i64::from)
    }
}

fn error(w: &str) -> Option<i64> {
    crate::protocol::errors::error_code(&w.to_ascii_uppercase()).map(i64::from)
}

fn direction(w: &str) -> Option<Direction> {
    match w.to_ascii_lowercase().as_str() {
        "request" | "req" => Some(Direction::Request),
        "response" | "resp" => Some(Direction::Response),
        _ => None,
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}
