//! Tokens of a display-filter expression, each with the byte offset it starts at (for carets).

use super::QueryError;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A field name or path (`topic`, `body.Topics[].Name`), or a bare word as a value
    /// (`Produce`, `NOT_LEADER_OR_FOLLOWER`, `orders`).
    Word(String),
    /// A quoted string, escapes resolved.
    Str(Vec<u8>),
    /// A number; its text as written too (a number compared with a text field is that text).
    Int(i64, String),
    Float(f64, String),
    Cmp(CmpOp),
    Contains,
    Matches,
    In,
    And,
    Or,
    Not,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    DotDot,
    End,
}

impl Tok {
    /// How the token is named in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Str(_) => "a string".into(),
            Tok::Int(_, t) | Tok::Float(_, t) => format!("`{t}`"),
            Tok::Cmp(o) => format!("`{}`", o.as_str()),
            Tok::Contains => "`contains`".into(),
            Tok::Matches => "`matches`".into(),
            Tok::In => "`in`".into(),
            Tok::And => "`and`".into(),
            Tok::Or => "`or`".into(),
            Tok::Not => "`not`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::Comma => "`,`".into(),
            Tok::DotDot => "`..`".into(),
            Tok::End => "the end of the expression".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    /// Byte offset in the expression.
    pub at: usize,
}

fn word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'[' | b']' | b'-')
}

/// Splits `text` into tokens, ending with [`Tok::End`].
pub(crate) fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let two = b.get(i..i + 2).unwrap_or(&[]);
        let (tok, len) = match two {
            b"==" => (Tok::Cmp(CmpOp::Eq), 2),
            b"!=" => (Tok::Cmp(CmpOp::Ne), 2),
            b"<=" => (Tok::Cmp(CmpOp::Le), 2),
            b">=" => (Tok::Cmp(CmpOp::Ge), 2),
            b"&&" => (Tok::And, 2),
            b"||" => (Tok::Or, 2),
            b".." => (Tok::DotDot, 2),
            _ => match c {
                b'<' => (Tok::Cmp(CmpOp::Lt), 1),
                b'>' => (Tok::Cmp(CmpOp::Gt), 1),
                b'!' => (Tok::Not, 1),
                b'(' => (Tok::LParen, 1),
                b')' => (Tok::RParen, 1),
                b'{' => (Tok::LBrace, 1),
                b'}' => (Tok::RBrace, 1),
                b',' => (Tok::Comma, 1),
                b'=' => {
                    return Err(QueryError::new(at, "a lone `=`: compare with `==`"));
                }
                b'&' | b'|' => {
                    let w = if c == b'&' { "&&" } else { "||" };
                    return Err(QueryError::new(
                        at,
                        format!("a lone `{}`: write `{w}`", c as char),
                    ));
                }
                b'"' | b'\'' => {
                    let (s, len) = string(b, i)?;
                    (Tok::Str(s), len)
                }
                b'0'..=b'9' | b'-' if c != b'-' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                    number(text, i)?
                }
                _ if word_start(c) => {
                    let mut j = i + 1;
                    while j < b.len() && word_char(b[j]) {
                        j += 1;
                    }
                    let w = &text[i..j];
                    let tok = match w {
                        "and" => Tok::And,
                        "or" => Tok::Or,
                        "not" => Tok::Not,
                        "contains" => Tok::Contains,
                        "matches" => Tok::Matches,
                        "in" => Tok::In,
                        "eq" => Tok::Cmp(CmpOp::Eq),
                        "ne" => Tok::Cmp(CmpOp::Ne),
                        "lt" => Tok::Cmp(CmpOp::Lt),
                        "le" => Tok::Cmp(CmpOp::Le),
                        "gt" => Tok::Cmp(CmpOp::Gt),
                        "ge" => Tok::Cmp(CmpOp::Ge),
                        _ => Tok::Word(w.to_string()),
                    };
                    (tok, j - i)
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    return Err(QueryError::new(at, format!("unexpected character {ch:?}")));
                }
            },
        };
        out.push(Token { tok, at });
        i += len;
    }
    out.push(Token {
        tok: Tok::End,
        at: b.len(),
    });
    Ok(out)
}

/// A quoted string starting at `i`: its bytes and the length it took.
fn string(b: &[u8], i: usize) -> Result<(Vec<u8>, usize), QueryError> {
    let quote = b[i];
    let mut s = Vec::new();
    let mut j = i + 1;
    loop {
        let Some(&c) = b.get(j) else {
            return Err(QueryError::new(i, "this string has no closing quote"));
        };
        match c {
            _ if c == quote => return Ok((s, j + 1 - i)),
            b'\\' => {
                let e = b.get(j + 1).copied();
                let (byte, len) = match e {
                    Some(b'n') => (b'\n', 2),
                    Some(b't') => (b'\t', 2),
                    Some(b'r') => (b'\r', 2),
                    Some(b'0') => (0, 2),
                    Some(b'\\') => (b'\\', 2),
                    Some(b'"') => (b'"', 2),
                    Some(b'\'') => (b'\'', 2),
                    Some(b'x') => {
                        let hex = b
                            .get(j + 2..j + 4)
                            .and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            Some(v) => (v, 4),
                            None => {
                                return Err(QueryError::new(
                                    j,
                                    "`\\x` wants two hex digits (`\\x41`)",
                                ))
                            }
                        }
                    }
                    _ => {
                        return Err(QueryError::new(
                            j,
                            "unknown escape (known: \\n \\t \\r \\0 \\\\ \\\" \\' \\xHH)",
                        ))
                    }
                };
                s.push(byte);
                j += len;
            }
            _ => {
                s.push(c);
                j += 1;
            }
        }
    }
}

/// A number starting at `i` (`-1`, `42`, `0x1f`, `0.5`); `1..3` is two numbers and a range.
fn number(text: &str, i: usize) -> Result<(Tok, usize), QueryError> {
    let b = text.as_bytes();
    let mut j = i;
    if b[j] == b'-' {
        j += 1;
    }
    let hex = b
        .get(j..j + 2)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"0x"));
    if hex {
        j += 2;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            j += 1;
        }
    } else {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
            j += 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let t = &text[i..j];
            let v = t
                .parse::<f64>()
                .map_err(|_| QueryError::new(i, format!("`{t}` is not a number")))?;
            return Ok((Tok::Float(v, t.to_string()), j - i));
        }
    }
    if j < b.len() && word_start(b[j]) {
        let mut k = j;
        while k < b.len() && word_char(b[k]) {
            k += 1;
        }
        return Err(QueryError::new(
            i,
            format!(
                "`{}` is neither a number nor a name (quote text: \"{}\")",
                &text[i..k],
                &text[i..k]
            ),
        ));
    }
    let t = &text[i..j];
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let v = if hex {
        i64::from_str_radix(&digits[2..], 16)
    } else {
        digits.parse::<i64>()
    }
    .map_err(|_| QueryError::new(i, format!("`{t}` is not a 64-bit integer")))?;
    Ok((Tok::Int(if neg { -v } else { v }, t.to_string()), j - i))
}
