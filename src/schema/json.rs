//! A JSON reader for Kafka message-spec files that remembers where everything is.
//!
//! It accepts what Kafka's Jackson setup accepts (`//` and `/* */` comments wherever whitespace
//! may be, duplicate keys) and rejects what it rejects (`#` comments, a non-breaking space outside
//! a string, trailing content after the root), but unlike Jackson it keeps the 1-based
//! line:column of every value and every object key, keeps duplicate keys in order so the
//! validator can lint them, and keeps numbers as their raw text so coercions can be judged later.
//! Columns count Unicode scalar values, as editors do.

use super::model::Pos;
use crate::limits::{MAX_DEPTH, MAX_SPEC_FILE_BYTES, MAX_SPEC_JSON_VALUES, MAX_SPEC_RECOVERED};
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

/// Why a file is not JSON as Kafka reads it, and where. `code` is `json-syntax`, `file-too-large`
/// (more than [`MAX_SPEC_JSON_VALUES`] values), or for the mistakes the reader steps over to keep
/// going: `non-json-whitespace` (a non-breaking or other Unicode space outside a string),
/// `hash-comment`, `trailing-content`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub code: &'static str,
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}

impl std::error::Error for JsonError {}

/// Parses one spec file strictly: exactly one JSON value, surrounded by whitespace and comments
/// only. The first problem is the error.
pub fn parse(text: &str) -> Result<JsonValue, JsonError> {
    let mut p = parse_all(text);
    match p.value {
        Some(v) if p.errors.is_empty() => Ok(v),
        _ if !p.errors.is_empty() => Err(p.errors.swap_remove(0)),
        _ => Err(JsonError {
            code: "json-syntax",
            pos: Pos { line: 1, col: 1 },
            message: "no value".into(),
        }),
    }
}

/// What a lenient parse found.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The value; after a syntax error (`complete == false`), what was read before it, with
    /// every open array and object closed there.
    pub value: Option<JsonValue>,
    /// Every problem, in file order.
    pub errors: Vec<JsonError>,
    /// False when a syntax error cut the value short.
    pub complete: bool,
}

/// Parses one spec file, stepping over the mistakes that leave the structure clear (pasted
/// Unicode spaces, `#` comments, content after the root) so one run reports them all along
/// with whatever the value itself holds. Any other syntax error ends the parse; the value read
/// up to it is kept so that what comes before can still be checked.
pub fn parse_all(text: &str) -> Parsed {
    if text.len() > MAX_SPEC_FILE_BYTES {
        let e = JsonError {
            code: "json-syntax",
            pos: Pos { line: 1, col: 1 },
            message: format!(
                "file is {} bytes; spec files are limited to {MAX_SPEC_FILE_BYTES} bytes",
                text.len()
            ),
        };
        return Parsed {
            value: None,
            errors: vec![e],
            complete: false,
        };
    }
    let mut p = Parser {
        src: text,
        at: 0,
        line: 1,
        col: 1,
        recovered: Vec::new(),
        partial: None,
        values: 0,
    };
    let v = p.document();
    let mut errors = std::mem::take(&mut p.recovered);
    match v {
        Ok(v) => Parsed {
            value: Some(v),
            errors,
            complete: true,
        },
        Err(e) => {
            errors.push(e);
            Parsed {
                value: p.partial.take(),
                errors,
                complete: false,
            }
        }
    }
}

struct Parser<'a> {
    src: &'a str,
    at: usize,
    line: u32,
    col: u32,
    recovered: Vec<JsonError>,
    /// The containers read before a syntax error, each taken by its parent on the way up.
    partial: Option<JsonValue>,
    /// Values begun so far, against [`MAX_SPEC_JSON_VALUES`].
    values: usize,
}

impl Parser<'_> {
    fn document(&mut self) -> Result<JsonValue, JsonError> {
        // A byte-order mark is not JSON whitespace, but editors add it silently; Jackson skips it.
        if self.peek() == Some('\u{feff}') {
            self.bump();
        }
        self.skip_ws()?;
        if self.peek().is_none() {
            return Err(self.err_here("empty file: expected a JSON object"));
        }
        let v = self.value(0)?;
        self.skip_ws()?;
        if let Some(c) = self.peek() {
            let e = self.err_here(format!(
                "trailing content {} after the root value",
                describe_char(c)
            ));
            self.recovered.push(JsonError {
                code: "trailing-content",
                ..e
            });
        }
        Ok(v)
    }
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
            code: "json-syntax",
            pos,
            message: message.into(),
        }
    }
    /// Notes a mistake the reader can step over; too many of them end the parse.
    fn recover(&mut self, code: &'static str, message: String) -> Result<(), JsonError> {
        if self.recovered.len() >= MAX_SPEC_RECOVERED {
            return Err(self.err_here(format!("more than {MAX_SPEC_RECOVERED} errors; giving up")));
        }
        let e = JsonError {
            code,
            pos: self.pos(),
            message,
        };
        self.recovered.push(e);
        Ok(())
    }
    fn err_here(&self, message: impl Into<String>) -> JsonError {
        self.err_at(self.pos(), message)
    }

    /// The end of the file inside the object or array (`what`, closed by `close`) opened at `open`.
    fn unterminated(&self, close: char, what: &str, open: Pos) -> JsonError {
        self.err_at(
            open,
            format!("unterminated {what}: expected '{close}' before the end of the file"),
        )
    }

    /// After a member of an object or an item of an array (`what`, closed by `close`, opened at
    /// `open`): `true` at the closing character, `false` after a comma (both consumed).
    fn after_item(&mut self, close: char, what: &str, open: Pos) -> Result<bool, JsonError> {
        self.skip_ws()?;
        match self.peek() {
            Some(',') => {
                self.bump();
                Ok(false)
            }
            Some(c) if c == close => {
                self.bump();
                Ok(true)
            }
            Some(c) => Err(self.err_here(format!(
                "unexpected {}: expected ',' or '{close}' ({what} opened at {}:{})",
                describe_char(c),
                open.line,
                open.col
            ))),
            None => Err(self.unterminated(close, what, open)),
        }
    }

    /// Skips whitespace and comments; rejects look-alike characters Kafka's parser rejects.
    fn skip_ws(&mut self) -> Result<(), JsonError> {
        // A pasted run of odd spaces is one mistake: report it once per line.
        let mut reported_line = None;
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
                        return Err(self.err_here("unexpected '/': a comment starts with // or /*"))
                    }
                },
                Some('#') => {
                    self.recover(
                        "hash-comment",
                        "'#' comments are not allowed (Kafka's parser accepts only // and /* */ comments)".into(),
                    )?;
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some(c) if c != ' ' && c.is_whitespace() || c == '\u{feff}' || c == '\u{200b}' => {
                    if reported_line == Some(self.line) {
                        self.bump();
                        continue;
                    }
                    reported_line = Some(self.line);
                    self.recover(
                        "non-json-whitespace",
                        format!(
                            "unexpected {}: only space, tab, CR and LF may separate JSON tokens (pasted from a web page?)",
                            describe_char(c)
                        ),
                    )?;
                    self.bump();
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
        if self.values >= MAX_SPEC_JSON_VALUES {
            return Err(JsonError {
                code: "file-too-large",
                pos: self.pos(),
                message: format!(
                    "more than {MAX_SPEC_JSON_VALUES} JSON values; the rest of the file is not read \
                     (Kafka's largest spec has 298)"
                ),
            });
        }
        self.values += 1;
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

    /// An object; on a syntax error, what was read so far is left in `self.partial`.
    fn object(&mut self, depth: usize) -> Result<JsonKind, JsonError> {
        let open = self.pos();
        let mut members = Vec::new();
        match self.object_body(depth, open, &mut members) {
            Ok(()) => Ok(JsonKind::Object(members)),
            Err(e) => {
                self.partial = Some(JsonValue {
                    pos: open,
                    kind: JsonKind::Object(members),
                });
                Err(e)
            }
        }
    }

    fn object_body(
        &mut self,
        depth: usize,
        open: Pos,
        members: &mut Vec<Member>,
    ) -> Result<(), JsonError> {
        self.bump();
        self.skip_ws()?;
        if self.peek() == Some('}') {
            self.bump();
            return Ok(());
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
                None => return Err(self.unterminated('}', "object", open)),
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
            let value = match self.value(depth + 1) {
                Ok(v) => v,
                Err(e) => {
                    if let Some(value) = self.partial.take() {
                        members.push(Member {
                            key,
                            key_pos,
                            value,
                        });
                    }
                    return Err(e);
                }
            };
            members.push(Member {
                key,
                key_pos,
                value,
            });
            if self.after_item('}', "object", open)? {
                return Ok(());
            }
        }
    }

    /// An array; on a syntax error, what was read so far is left in `self.partial`.
    fn array(&mut self, depth: usize) -> Result<JsonKind, JsonError> {
        let open = self.pos();
        let mut items = Vec::new();
        match self.array_body(depth, open, &mut items) {
            Ok(()) => Ok(JsonKind::Array(items)),
            Err(e) => {
                self.partial = Some(JsonValue {
                    pos: open,
                    kind: JsonKind::Array(items),
                });
                Err(e)
            }
        }
    }

    fn array_body(
        &mut self,
        depth: usize,
        open: Pos,
        items: &mut Vec<JsonValue>,
    ) -> Result<(), JsonError> {
        self.bump();
        self.skip_ws()?;
        if self.peek() == Some(']') {
            self.bump();
            return Ok(());
        }
        loop {
            self.skip_ws()?;
            if self.peek() == Some(']') {
                return Err(self.err_here("trailing comma before ']': expected another value"));
            }
            if self.peek().is_none() {
                return Err(self.unterminated(']', "array", open));
            }
            match self.value(depth + 1) {
                Ok(v) => items.push(v),
                Err(e) => {
                    items.extend(self.partial.take());
                    return Err(e);
                }
            }
            if self.after_item(']', "array", open)? {
                return Ok(());
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
#[path = "json_tests.rs"]
mod tests;
