//! Unit tests of the spec JSON reader: positions, what it steps over, what it refuses.
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
fn steps_over_pasted_spaces_hash_comments_and_trailing_content() {
    let p = parse_all("{\n\u{a0}\u{a0}\"a\": 1, # x\n \"b\":\u{2003}[2]\n}\n}");
    assert!(p.complete);
    let (v, errs) = (p.value.expect("the value is still read"), p.errors);
    assert_eq!(v.get("b").unwrap().value.pos, at(3, 7));
    let got: Vec<(&str, u32, u32)> = errs
        .iter()
        .map(|e| (e.code, e.pos.line, e.pos.col))
        .collect();
    assert_eq!(
        got,
        [
            ("non-json-whitespace", 2, 1),
            ("hash-comment", 2, 11),
            ("non-json-whitespace", 3, 6),
            ("trailing-content", 5, 1),
        ]
    );
    // A real syntax error still ends the parse, after what was stepped over.
    let p = parse_all("{\"x\": [1, {\"y\": 2}], \u{a0}\"a\" 1}");
    assert!(!p.complete);
    assert_eq!(
        p.errors.iter().map(|e| e.code).collect::<Vec<_>>(),
        ["non-json-whitespace", "json-syntax"]
    );
    // What came before the syntax error is kept, containers closed where it stopped.
    let v = p.value.expect("partial value");
    assert_eq!(v.as_object().map(|m| m.len()), Some(1));
    assert!(matches!(&v.get("x").unwrap().value.kind, JsonKind::Array(a) if a.len() == 2));
    let p = parse_all("{\"x\": [1, {\"y\": \"unterminated");
    let v = p.value.expect("partial value");
    let JsonKind::Array(items) = &v.get("x").unwrap().value.kind else {
        panic!("{v:?}")
    };
    assert_eq!(items.len(), 2, "the open object is kept, empty: {items:?}");
    // Stepping over is bounded.
    let p = parse_all(&format!("{{{}}}", "\u{a0}\n".repeat(10_000)));
    assert!(p.value.is_none() || !p.complete);
    assert_eq!(p.errors.len(), MAX_SPEC_RECOVERED + 1);
    assert_eq!(
        parse_all(&format!("{{{}}}", "\u{a0}".repeat(10_000)))
            .errors
            .len(),
        1
    );
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

/// An array of `n` zeros, one per line from line 2: the object is value 1, the array value 2, so
/// zero number `k` (from 1) is value `k + 2` and sits on line `k + 1`.
fn zeros(n: usize) -> String {
    let mut s = String::from("{\"a\": [\n");
    s.push_str(&vec!["0"; n].join(",\n"));
    s.push_str("\n]}\n");
    s
}

#[test]
fn values_beyond_the_limit_end_the_file_where_the_limit_is_passed() {
    assert!(parse(&zeros(MAX_SPEC_JSON_VALUES - 2)).is_ok());
    let e = err(&zeros(MAX_SPEC_JSON_VALUES - 1));
    assert_eq!(e.code, "file-too-large");
    // Value MAX + 1 is zero number MAX - 1, on line MAX.
    assert_eq!(e.pos, at(MAX_SPEC_JSON_VALUES as u32, 1));
    assert!(
        e.message.contains(&MAX_SPEC_JSON_VALUES.to_string()),
        "{}",
        e.message
    );
    // What was read before it is still there for the checks that can run on it.
    let p = parse_all(&zeros(MAX_SPEC_JSON_VALUES + 10));
    assert_eq!(
        p.errors
            .iter()
            .filter(|e| e.code == "file-too-large")
            .count(),
        1
    );
    assert!(!p.complete);
    match p.value.map(|v| v.kind) {
        Some(JsonKind::Object(m)) => match &m[0].value.kind {
            JsonKind::Array(items) => assert_eq!(items.len(), MAX_SPEC_JSON_VALUES - 2),
            k => panic!("expected the array read so far, got {k:?}"),
        },
        k => panic!("expected the object read so far, got {k:?}"),
    }
}
