//! A JSON reader for Kafka message-spec files that remembers where everything is.
//!
//! It accepts what Kafka's Jackson setup accepts (`//` and `/* */` comments wherever whitespace
//! may be, duplicate keys) and rejects what it rejects (`#` comments, a non-breaking space outside
//! a string, trailing content after the root), but unlike Jackson it keeps the 1-based
//! line:column of every value and every object key, keeps duplicate keys in order so the
//! validator can lint them, and keeps numbers as their raw text so coercions can be judged later.
//! Columns count Unicode scalar values, as editors do.

use super::model::Pos;
use crate::limits::{MAX_DEPTH, MAX_SPEC_FILE_BYTES};
use std::fmt;

/// A JSON value and the position of its first character.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonValue {
    pub pos: Pos,
    pub kind: JsonKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JsonKind {
    Null,
    Bool(bool),
    /// The number exactly as written (`-1`, `2.50`, `1e3`).
    Number(String),
    Str(String),
    Array(Vec<JsonValue>),
    /// Members in file order, duplicates included.
    Object(Vec<Member>),
}

/// One `"key": value` member of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_pos: Pos,
    pub value: JsonValue,
}

impl JsonKind {
    /// What kind of value this is, for messages ("a string", "an array").
    pub fn describe(&self) -> &'static str {
        match self {
            JsonKind::Null => "null",
            JsonKind::Bool(_) => "a boolean",
            JsonKind::Number(_) => "a number",
            JsonKind::Str(_) => "a string",
            JsonKind::Array(_) => "an array",
            JsonKind::Object(_) => "an object",
        }
    }
}

impl JsonValue {
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            JsonKind::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&[Member]> {
        match &self.kind {
            JsonKind::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The last member named `key` (Kafka keeps the last of duplicated keys).
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.as_object()?.iter().rev().find(|m| m.key == key)
    }
}

/// Why a file is not JSON as Kafka reads it, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}

impl std::error::Error for JsonError {}

/// Parses one spec file: exactly one JSON value, surrounded by whitespace and comments only.
pub fn parse(text: &str) -> Result<JsonValue, JsonError> {
    if text.len() > MAX_SPEC_FILE_BYTES {
        return Err(JsonError {
            pos: Pos { line: 1, col: 1 },
            message: format!(
                "file is {} bytes; spec files are limited to {} bytes",
                text.len(),
                MAX_SPEC_FILE_BYTES
            ),
        });
    }
    let mut p = Parser {
        src: text,
        at: 0,
        line: 1,
        col: 1,
    };
    // A byte-order mark is not JSON whitespace, but editors add it silently; Jackson skips it.
    if p.peek() == Some('\u{feff}') {
        p.bump();
    }
    p.skip_ws()?;
    if p.peek().is_none() {
        return Err(p.err_here("empty file: expected a JSON object"));
    }
    let v = p.value(0)?;
    p.skip_ws()?;
    if let Some(c) = p.peek() {
        return Err(p.err_here(format!(
            "trailing content {} after the root value (which ends before line {}, column {})",
            describe_char(c),
            p.line,
            p.col
        )));
    }
    Ok(v)
}

struct Parser<'a> {
    src: &'a str,
    at: usize,
    line: u32,
    col: u32,
}

/// Names a character for an error message, spelling out the invisible ones.
pub fn describe_char(c: char) -> String {
    let name = match c {
        '\u{a0}' => Some("non-breaking space"),
        '\u{200b}' => Some("zero-width space"),
        '\u{feff}' => Some("byte-order mark / zero-width no-break space"),
        '\u{2028}' => Some("line separator"),
        '\u{2029}' => Some("paragraph separator"),
        '\u{201c}' | '\u{201d}' => Some("curly double quote"),
        '\u{2018}' | '\u{2019}' => Some("curly single quote"),
        '\u{3000}' => Some("ideographic space"),
        '\u{2002}'..='\u{200a}' => Some("typographic space"),
        _ => None,
    };
    match name {
        Some(n) => format!("U+{:04X} ({n})", c as u32),
        None if c.is_control() => format!("U+{:04X} (control character)", c as u32),
        None if c.is_ascii() => format!("'{c}'"),
        None => format!("'{c}' (U+{:04X})", c as u32),
    }
}

impl<'a> Parser<'a> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }
    fn peek(&self) -> Option<char> {
        self.src.get(self.at..)?.chars().next()
    }
    fn peek2(&self) -> Option<char> {
        let mut it = self.src.get(self.at..)?.chars();
        it.next();
        it.next()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn err_at(&self, pos: Pos, message: impl Into<String>) -> JsonError {
        JsonError {
            pos,
            message: message.into(),
        }
    }
    fn err_here(&self, message: impl Into<String>) -> JsonError {
        self.err_at(self.pos(), message)
    }

    /// Skips whitespace and comments; rejects look-alike characters Kafka's parser rejects.
    fn skip_ws(&mut self) -> Result<(), JsonError> {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\n' | '\r') => {
                    self.bump();
                }
                Some('/') => match self.peek2() {
                    Some('/') => {
                        while let Some(c) = self.peek() {
                            if c == '\n' {
                                break;
                            }
                            self.bump();
                        }
                    }
                    Some('*') => {
                        let start = self.pos();
                        self.bump();
                        self.bump();
                        loop {
                            match self.bump() {
                                None => {
                                    return Err(self.err_at(
                                        start,
                                        "unterminated /* comment: expected */ before the end of the file",
                                    ))
                                }
                                Some('*') if self.peek() == Some('/') => {
                                    self.bump();
                                    break;
                                }
                                Some(_) => {}
                            }
                        }
                    }
                    _ => {
                        return Err(self.err_here(
                            "unexpected '/': a comment starts with // or /*",
                        ))
                    }
                },
                Some('#') => {
                    return Err(self.err_here(
                        "'#' comments are not allowed (Kafka's parser accepts only // and /* */ comments)",
                    ))
                }
                Some(c) if c != ' ' && c.is_whitespace() || c == '\u{feff}' || c == '\u{200b}' => {
                    return Err(self.err_here(format!(
                        "unexpected {}: only space, tab, CR and LF may separate JSON tokens (pasted from a web page?)",
                        describe_char(c)
                    )))
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<JsonValue, JsonError> {
        if depth >= MAX_DEPTH {
            return Err(self.err_here(format!(
                "nesting deeper than {MAX_DEPTH} levels of arrays and objects"
            )));
        }
        let pos = self.pos();
        let kind = match self.peek() {
            None => return Err(self.err_here("unexpected end of file: expected a value")),
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some('"') => JsonKind::Str(self.string()?),
            Some('-' | '0'..='9') => JsonKind::Number(self.number()?),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.bump();
                }
                match &self.src[start..self.at] {
                    "true" => JsonKind::Bool(true),
                    "false" => JsonKind::Bool(false),
                    "null" => JsonKind::Null,
                    w => {
                        return Err(self.err_at(
                            pos,
                            format!("unexpected word {w:?}: expected a value (string, number, object, array, true, false or null)"),
                        ))
                    }
                }
            }
            Some('\'') => {
                return Err(self.err_here("single-quoted strings are not JSON: use double quotes"))
            }
            Some(c) => {
                return Err(
                    self.err_here(format!("unexpected {}: expected a value", describe_char(c)))
                )
            }
        };
        Ok(JsonValue { pos, kind })
    }

    fn object(&mut self, depth: usize) -> Result<JsonKind, JsonError> {
        let open = self.pos();
        self.bump();
        let mut members = Vec::new();
        self.skip_ws()?;
        if self.peek() == Some('}') {
            self.bump();
            return Ok(JsonKind::Object(members));
        }
        loop {
            self.skip_ws()?;
            let key_pos = self.pos();
            let key = match self.peek() {
                Some('"') => self.string()?,
                Some('}') => {
                    return Err(
                        self.err_here("trailing comma before '}': expected another \"key\": value")
                    )
                }
                None => {
                    return Err(self.err_at(
                        open,
                        "unterminated object: expected '}' before the end of the file",
                    ))
                }
                Some(c) => {
                    return Err(self.err_here(format!(
                        "unexpected {}: expected an object key in double quotes",
                        describe_char(c)
                    )))
                }
            };
            self.skip_ws()?;
            match self.peek() {
                Some(':') => {
                    self.bump();
                }
                Some(c) => {
                    return Err(self.err_here(format!(
                        "unexpected {} after key {key:?}: expected ':'",
                        describe_char(c)
                    )))
                }
                None => {
                    return Err(self.err_here(format!(
                        "unexpected end of file after key {key:?}: expected ':'"
                    )))
                }
            }
            self.skip_ws()?;
            let value = self.value(depth + 1)?;
            members.push(Member {
                key,
                key_pos,
                value,
            });
            self.skip_ws()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {
                    self.bump();
                    return Ok(JsonKind::Object(members));
                }
                Some(c) => {
                    return Err(self.err_here(format!(
                        "unexpected {}: expected ',' or '}}' (object opened at {}:{})",
                        describe_char(c),
                        open.line,
                        open.col
                    )))
                }
                None => {
                    return Err(self.err_at(
                        open,
                        "unterminated object: expected '}' before the end of the file",
                    ))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsonKind, JsonError> {
        let open = self.pos();
        self.bump();
        let mut items = Vec::new();
        self.skip_ws()?;
        if self.peek() == Some(']') {
            self.bump();
            return Ok(JsonKind::Array(items));
        }
        loop {
            self.skip_ws()?;
            if self.peek() == Some(']') {
                return Err(self.err_here("trailing comma before ']': expected another value"));
            }
            if self.peek().is_none() {
                return Err(self.err_at(
                    open,
                    "unterminated array: expected ']' before the end of the file",
                ));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {
                    self.bump();
                    return Ok(JsonKind::Array(items));
                }
                Some(c) => {
                    return Err(self.err_here(format!(
                        "unexpected {}: expected ',' or ']' (array opened at {}:{})",
                        describe_char(c),
                        open.line,
                        open.col
                    )))
                }
                None => {
                    return Err(self.err_at(
                        open,
                        "unterminated array: expected ']' before the end of the file",
                    ))
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, JsonError> {
        let open = self.pos();
        self.bump();
        let mut out = String::new();
        loop {
            let here = self.pos();
            match self.bump() {
                None => {
                    return Err(self.err_at(open, "unterminated string: expected '\"' before the end of the file"))
                }
                Some('"') => return Ok(out),
                Some('\\') => {
                    let c = match self.bump() {
                        Some('"') => '"',
                        Some('\\') => '\\',
                        Some('/') => '/',
                        Some('b') => '\u{8}',
                        Some('f') => '\u{c}',
                        Some('n') => '\n',
                        Some('r') => '\r',
                        Some('t') => '\t',
                        Some('u') => self.unicode_escape(here)?,
                        Some(c) => {
                            return Err(self.err_at(
                                here,
                                format!("invalid escape \\{c} in a string: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"),
                            ))
                        }
                        None => {
                            return Err(self.err_at(open, "unterminated string: expected '\"' before the end of the file"))
                        }
                    };
                    out.push(c);
                }
                Some('\n') => {
                    return Err(self.err_at(
                        here,
                        format!("unterminated string (opened at {}:{}): a line break inside a string must be written \\n", open.line, open.col),
                    ))
                }
                Some(c) if (c as u32) < 0x20 => {
                    return Err(self.err_at(
                        here,
                        format!("{} inside a string: control characters must be escaped", describe_char(c)),
                    ))
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn hex4(&mut self, esc: Pos) -> Result<u32, JsonError> {
        let mut n = 0u32;
        for _ in 0..4 {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    self.bump();
                    n = n * 16 + d;
                }
                None => return Err(self.err_at(esc, "invalid \\u escape: expected 4 hex digits")),
            }
        }
        Ok(n)
    }

    fn unicode_escape(&mut self, esc: Pos) -> Result<char, JsonError> {
        let hi = self.hex4(esc)?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.peek() == Some('\\') && self.peek2() == Some('u') {
                self.bump();
                self.bump();
                let lo = self.hex4(esc)?;
                if (0xDC00..0xE000).contains(&lo) {
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return char::from_u32(c)
                        .ok_or_else(|| self.err_at(esc, "invalid surrogate pair"));
                }
            }
            return Err(self.err_at(esc, format!("unpaired surrogate \\u{hi:04X} in a string")));
        }
        char::from_u32(hi)
            .ok_or_else(|| self.err_at(esc, format!("unpaired surrogate \\u{hi:04X} in a string")))
    }

    /// JSON's number grammar, as Jackson enforces it by default (no leading zeros, no `+`, no
    /// bare `.5`).
    fn number(&mut self) -> Result<String, JsonError> {
        let start_pos = self.pos();
        let start = self.at;
        if self.peek() == Some('-') {
            self.bump();
        }
        match self.peek() {
            Some('0') => {
                self.bump();
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(
                        self.err_at(start_pos, "leading zeros are not allowed in JSON numbers")
                    );
                }
            }
            Some('1'..='9') => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
            }
            _ => return Err(self.err_here("expected a digit after '-'")),
        }
        if self.peek() == Some('.') {
            self.bump();
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.err_here("expected a digit after the decimal point"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.err_here("expected a digit in the exponent"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
        }
        if let Some(c) = self.peek().filter(|c| c.is_alphanumeric()) {
            return Err(self.err_here(format!("unexpected {} in a number", describe_char(c))));
        }
        Ok(self.src[start..self.at].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> JsonError {
        parse(text).expect_err("should fail")
    }
    fn at(line: u32, col: u32) -> Pos {
        Pos { line, col }
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let v = parse("// licence\n{\n  \"name\": \"Foo\",\n  \"n\": [1, -2.5e3]\n}\n").unwrap();
        assert_eq!(v.pos, at(2, 1));
        let m = v.as_object().unwrap();
        assert_eq!(m[0].key, "name");
        assert_eq!(m[0].key_pos, at(3, 3));
        assert_eq!(m[0].value.pos, at(3, 11));
        assert_eq!(m[1].value.pos, at(4, 8));
        match &m[1].value.kind {
            JsonKind::Array(items) => {
                assert_eq!(items[1].kind, JsonKind::Number("-2.5e3".into()));
                assert_eq!(items[1].pos, at(4, 12));
            }
            k => panic!("expected array, got {k:?}"),
        }
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let v = parse("{\"a\": \"é€\", \"b\": 1}").unwrap();
        assert_eq!(v.get("b").unwrap().key_pos, at(1, 13));
    }

    #[test]
    fn comments_anywhere_whitespace_may_be() {
        let v = parse("/* a */{/*b*/\"k\"/*c*/:/*d*/1 // e\n/* f\n*/}/* g */ // h").unwrap();
        assert_eq!(v.get("k").unwrap().value.kind, JsonKind::Number("1".into()));
    }

    #[test]
    fn duplicate_keys_kept_in_order_and_last_wins() {
        let v = parse("{\"a\": 1, \"a\": 2}").unwrap();
        assert_eq!(v.as_object().unwrap().len(), 2);
        assert_eq!(v.get("a").unwrap().value.kind, JsonKind::Number("2".into()));
        assert_eq!(v.get("a").unwrap().key_pos, at(1, 10));
    }

    #[test]
    fn non_breaking_space_is_named_at_its_place() {
        let e = err("{\n  \"a\":\u{a0}1\n}");
        assert_eq!(e.pos, at(2, 7));
        assert!(
            e.message.contains("U+00A0 (non-breaking space)"),
            "{}",
            e.message
        );
        // Inside a string it is just text.
        assert!(parse("{\"a\": \"x\u{a0}y\"}").is_ok());
    }

    #[test]
    fn hash_comment_rejected() {
        let e = err("{\n  # note\n  \"a\": 1\n}");
        assert_eq!(e.pos, at(2, 3));
        assert!(e.message.contains("'#'"), "{}", e.message);
    }

    #[test]
    fn trailing_content_rejected() {
        let e = err("{\"a\": 1}\n}");
        assert_eq!(e.pos, at(2, 1));
        assert!(e.message.contains("trailing content '}'"), "{}", e.message);
        let e = err("{} {}");
        assert_eq!(e.pos, at(1, 4));
    }

    #[test]
    fn unterminated_things_point_at_their_start() {
        let e = err("{\n \"a\": \"abc");
        assert_eq!(e.pos, at(2, 7));
        assert!(e.message.contains("unterminated string"), "{}", e.message);
        let e = err("{\"a\": 1 /* never closed");
        assert_eq!(e.pos, at(1, 9));
        assert!(e.message.contains("unterminated /*"), "{}", e.message);
        let e = err("\n\n  [1, 2");
        assert_eq!(e.pos, at(3, 3));
        let e = err("{\"a\": 1");
        assert_eq!(e.pos, at(1, 1));
    }

    #[test]
    fn syntax_errors_say_what_was_expected() {
        let e = err("{\"a\" 1}");
        assert_eq!(e.pos, at(1, 6));
        assert!(e.message.contains("expected ':'"), "{}", e.message);
        let e = err("{\"a\": 1,}");
        assert_eq!(e.pos, at(1, 9));
        assert!(e.message.contains("trailing comma"), "{}", e.message);
        let e = err("[1 2]");
        assert_eq!(e.pos, at(1, 4));
        let e = err("{a: 1}");
        assert_eq!(e.pos, at(1, 2));
        let e = err("{\"a\": True}");
        assert_eq!(e.pos, at(1, 7));
        assert!(e.message.contains("\"True\""), "{}", e.message);
        let e = err("{\"a\": \u{201c}x\u{201d}}");
        assert!(e.message.contains("curly double quote"), "{}", e.message);
        assert_eq!(err("").pos, at(1, 1));
        assert_eq!(err("  // only a comment\n").pos, at(2, 1));
    }

    #[test]
    fn numbers_follow_json_grammar() {
        for bad in ["01", "+1", ".5", "1.", "1e", "-", "1x", "0x10"] {
            assert!(parse(bad).is_err(), "{bad} should fail");
        }
        for good in ["0", "-0", "12", "1.25", "1E+3", "-7e-2"] {
            assert_eq!(parse(good).unwrap().kind, JsonKind::Number(good.into()));
        }
    }

    #[test]
    fn strings_escapes_and_control_characters() {
        let v = parse(r#""a\"b\\\/\n\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v.as_str(), Some("a\"b\\/\n\u{e9}\u{1f600}"));
        assert!(parse("\"\\x\"").is_err());
        assert!(parse("\"\\ud83d\"").is_err());
        let e = err("\"a\tb\"");
        assert!(e.message.contains("control character"), "{}", e.message);
        assert_eq!(e.pos, at(1, 3));
    }

    #[test]
    fn nesting_beyond_the_limit_fails_cleanly() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let e = err(&deep);
        assert!(e.message.contains("nesting deeper"), "{}", e.message);
        let ok = "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1);
        assert!(parse(&ok).is_ok());
        // A million open brackets must neither overflow the stack nor allocate per bracket.
        assert!(parse(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn byte_order_mark_skipped_only_at_start() {
        assert!(parse("\u{feff}{}").is_ok());
        let e = err("{\u{feff}}");
        assert!(e.message.contains("U+FEFF"), "{}", e.message);
    }
}
