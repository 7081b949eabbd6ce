//! The language on its own: errors point at the right column, precedence, names resolved when
//! compiled, existential semantics, on a real Metadata request frame.

use super::*;
use crate::pdu::Hints;

fn proto() -> &'static Protocol {
    crate::protocol::builtin()
}

/// A Metadata v1 request (correlation id 7, client "demo") for the topics "orders" and "audit".
fn metadata() -> Pdu {
    let mut f = vec![
        0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x04, b'd',
        b'e', b'm', b'o', 0x00, 0x00, 0x00, 0x02,
    ];
    for t in ["orders", "audit"] {
        f.extend_from_slice(&(t.len() as u16).to_be_bytes());
        f.extend_from_slice(t.as_bytes());
    }
    let n = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&n.to_be_bytes());
    let pdu = crate::engine::decode_frame(&f, &Hints::default());
    assert!(pdu.diagnostics().is_empty(), "{:?}", pdu.diagnostics());
    pdu
}

fn err(expr: &str) -> (usize, String) {
    let e = Query::compile(expr, proto()).expect_err(expr);
    (e.column(), e.message)
}

fn yes(expr: &str, pdu: &Pdu) -> bool {
    Query::compile(expr, proto())
        .unwrap_or_else(|e| panic!("{}", e.pointed(expr)))
        .matches(pdu)
}

#[test]
fn errors_point_at_their_column() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty"),
        ("api == Produce and", 19, "expected a field"),
        ("api = Produce", 5, "compare with `==`"),
        ("api == Prodice", 8, "unknown API `Prodice`"),
        ("error == NOT_A_CODE", 10, "unknown error name"),
        ("topci == \"x\"", 1, "did you mean `topic`"),
        ("(api == Fetch", 14, "expected `)`"),
        ("api == Fetch)", 13, "without its `(`"),
        ("frame == \"x\"", 10, "is a number"),
        ("frame contains \"x\"", 7, "is a number"),
        ("topic matches \"(\"", 15, "not a regular expression"),
        ("topic == \"open", 10, "no closing quote"),
        ("direction < request", 11, "has no order"),
        ("direction == sideways", 14, "request or response"),
        ("api in {Produce, Fetch", 23, "expected `,` or `}`"),
        ("api & Fetch", 5, "write `&&`"),
        ("topic == \"x\" topic", 14, "expected `and`, `or`"),
        ("body.Topics[x].Name", 1, "not an index"),
        ("frame == 12abc", 10, "neither a number nor a name"),
    ];
    for (expr, col, msg) in cases {
        let (c, m) = err(expr);
        assert_eq!(
            (c, m.contains(msg)),
            (*col, true),
            "{expr:?}: column {c}: {m}"
        );
    }
    // The caret counts characters, not bytes.
    let e = Query::compile("topic == \"é\" and", proto()).unwrap_err();
    assert_eq!(
        e.pointed("topic == \"é\" and"),
        "column 17: expected a field (such as api, topic or body.Topics[].Name), found the end of the expression\n  topic == \"é\" and\n                  ^"
    );
}

#[test]
fn not_binds_tighter_than_and_tighter_than_or() {
    let p = metadata();
    // false or (true and true)
    assert!(yes("api == Fetch or api == Metadata and version == 1", &p));
    // (not false) and true
    assert!(yes("not api == Fetch and topic == orders", &p));
    // not (false or true)
    assert!(!yes("not (api == Fetch or api == Metadata)", &p));
    assert!(yes("!api == Fetch && (version == 0 || version == 1)", &p));
}

#[test]
fn names_resolve_when_compiled_and_values_are_existential() {
    let p = metadata();
    for (expr, want) in [
        ("api == Metadata", true),
        ("api == metadata", true),
        ("api == 3", true),
        ("api_key == 3 and version >= 1 and version < 2", true),
        ("api contains \"Meta\"", true),
        ("api matches \"^Meta.*a$\"", true),
        ("direction == request", true),
        ("direction == response", false),
        ("client_id == demo", true),
        ("client_id == \"demo\"", true),
        ("correlation_id in {1, 5..9}", true),
        ("correlation_id in {1, 8..9}", false),
        ("topic == audit", true),
        ("topic == orders", true),
        ("topic != orders", false),
        ("topic != other", true),
        ("topic > \"b\"", true),
        ("topic matches \"^aud\"", true),
        ("body.Topics[].Name == audit", true),
        ("body.Topics[0].Name == audit", false),
        ("body.Topics[1].Name == audit", true),
        ("body.Topics.Name contains rde", true),
        ("body.Topics == 2", true),
        ("header.ClientId == demo", true),
        ("body.Nope", false),
        ("topic", true),
        ("error", false),
        ("latency_us", false),
        ("not latency_us", true),
        ("partition", false),
        ("group == x", false),
        ("error != NONE", false),
    ] {
        assert_eq!(yes(expr, &p), want, "{expr}");
    }
}

#[test]
fn facts_give_values_with_their_elements() {
    let p = metadata();
    let mut got = Vec::new();
    Field::parse("topic")
        .unwrap()
        .values_at(&p, |v, e| got.push((v.to_string(), e)));
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].0.as_str(), got[1].0.as_str()), ("orders", "audit"));
    assert!(
        got[0].1 != 0 && got[0].1 < got[1].1,
        "each in its own element: {got:?}"
    );
    assert_eq!(
        Field::parse("api")
            .unwrap()
            .first(&p)
            .map(|v| v.to_string()),
        Some("Metadata".into())
    );
    assert!(Field::parse("nope").unwrap_err().contains("unknown field"));
    assert!(Field::parse("latency").unwrap_err().contains("latency_us"));
}

#[test]
fn notes_and_log_batches_do_not_pass_a_display_filter() {
    use crate::engine::Filter;
    let q = Query::compile("api == Produce", proto()).unwrap();
    let d = crate::diag::Diagnostic::warning("gap", "capture", 0, "x");
    assert!(!q.note(&Origin::default(), &d));
    assert!(!q.tree(&Tree::default()));
}

/// 100,000 `!` overflowed the stack (parse, evaluation and drop all recurse on `not` and `(`):
/// nesting is capped, and the error points at the first one past the cap.
#[test]
fn nesting_past_the_depth_cap_is_an_error_not_a_stack_overflow() {
    use crate::limits::MAX_QUERY_DEPTH;
    for open in ["!", "not ", "("] {
        let expr = format!("{}api == Metadata", open.repeat(100_000));
        let (col, msg) = err(&expr);
        assert!(msg.contains("limits::MAX_QUERY_DEPTH"), "{open}: {msg}");
        assert_eq!(col, MAX_QUERY_DEPTH * open.len() + 1, "{open}: {msg}");
    }
    // At the cap it still works.
    let pdu = metadata();
    let at_cap = format!(
        "{}api == Metadata{}",
        "(".repeat(MAX_QUERY_DEPTH),
        ")".repeat(MAX_QUERY_DEPTH)
    );
    assert!(yes(&at_cap, &pdu));
    assert!(yes(
        &format!("{}api == Metadata", "!!".repeat(MAX_QUERY_DEPTH / 2)),
        &pdu
    ));
}

/// `and`/`or` chains are flat: one of 100,000 tests parses, evaluates and drops without
/// recursing 100,000 deep.
#[test]
fn a_chain_of_a_hundred_thousand_tests_costs_no_depth() {
    let pdu = metadata();
    let all = vec!["correlation_id == 7"; 100_000].join(" and ");
    assert!(yes(&all, &pdu));
    let any = format!(
        "{} or api == Metadata",
        vec!["correlation_id == 8"; 100_000].join(" or ")
    );
    assert!(yes(&any, &pdu));
    assert!(!yes(&format!("{all} and correlation_id == 8"), &pdu));
}
