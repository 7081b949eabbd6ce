//! The plan interpreter on hand-built specs with hand-written bytes (the oracle is the wire
//! rules, reference/kafka-wire-rules.md §2-§4, not the decoder): layouts, spans, diagnostics and
//! hostile inputs.

use kinspect::schema::model::MessageSpec;
use kinspect::wire::decode::decode_message_at;
use kinspect::wire::plan::testspec::*;
use kinspect::wire::tree::{Kind, Span, Tree, Value};

fn run(spec: &'static MessageSpec, v: i16, bytes: &[u8]) -> (Tree, u32) {
    let mut t = Tree::new();
    t.reset(bytes);
    let end = decode_message_at(&mut t, spec, v, 0, 0, bytes.len() as u32, "body", "body");
    t.check_tiling(0).unwrap();
    (t, end)
}

fn codes(t: &Tree) -> Vec<&'static str> {
    t.diags.iter().map(|d| d.code).collect()
}

fn demo() -> &'static MessageSpec {
    spec(
        "DemoRequest",
        "0-1",
        "1+",
        vec![
            f("Id", "int32", "0+"),
            nullable(f("Name", "string", "0+"), "0+"),
            with_fields(
                f("Items", "[]Item", "0+"),
                vec![f("B", "bool", "0+"), f("K", "int16", "0+")],
            ),
            tagged(f("Note", "string", "1+"), 3, "1+"),
        ],
    )
}

#[test]
fn legacy_version_layout_and_spans() {
    // Id=7, Name=null, Items=[{true,258}]
    let bytes = [0, 0, 0, 7, 0xff, 0xff, 0, 0, 0, 1, 1, 1, 2];
    let (t, end) = run(demo(), 0, &bytes);
    assert_eq!(end, 13);
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let root = 0;
    assert_eq!(t.node(root).name, "body");
    let id = t.child(root, "Id").unwrap();
    assert_eq!(t.node(id).value, Value::Int(7));
    let name = t.child(root, "Name").unwrap();
    assert_eq!(
        (t.node(name).value, t.node(name).hdr, t.node(name).len),
        (Value::Null, 2, 2)
    );
    let items = t.child(root, "Items").unwrap();
    assert_eq!(
        (t.node(items).hdr, t.node(items).offset, t.node(items).len),
        (4, 6, 7)
    );
    let el = t.children(items).next().unwrap();
    assert_eq!(t.node(t.child(el, "K").unwrap()).value, Value::Int(258));
    assert_eq!(t.node(t.child(el, "B").unwrap()).value, Value::Bool(true));
}

#[test]
fn flexible_version_with_known_and_unknown_tags() {
    // Id=1, Name="hé" (compact len 4), Items=[] (compact 1), tags: 2 fields:
    // tag 3 size 3 "ok" (compact 3), tag 7 size 2 [aa bb]; Item structs have tagged sections.
    let bytes = [
        0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 3, 3, 3, b'o', b'k', 7, 2, 0xaa, 0xbb,
    ];
    let (t, end) = run(demo(), 1, &bytes);
    assert_eq!(end as usize, bytes.len());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let name = t.child(0, "Name").unwrap();
    assert_eq!(t.node(name).value, Value::Str(Span { start: 5, len: 3 }));
    let sec = t.children(0).last().unwrap();
    assert_eq!(
        (t.node(sec).kind, t.node(sec).hdr, t.node(sec).offset),
        (Kind::TaggedSection, 1, 9)
    );
    let kids: Vec<_> = t.children(sec).collect();
    let note = t.node(kids[0]);
    assert_eq!(
        (note.name, note.offset, note.hdr, note.len),
        ("Note", 10, 3, 5)
    );
    assert_eq!(note.value, Value::Str(Span { start: 13, len: 2 }));
    let unk = t.node(kids[1]);
    assert_eq!(
        (unk.kind, t.unknown_tag(unk), unk.offset, unk.hdr, unk.value),
        (
            Kind::UnknownTag,
            7,
            15,
            2,
            Value::Bytes(Span { start: 17, len: 2 })
        )
    );
}

#[test]
fn unknown_tags_of_several_bytes_keep_their_numbers() {
    // The tag number of an unknown tag is read back from its header when shown: tags 300
    // (uvarint ac 02) and 70000 (f0 a2 04), as the tree, JSON and the tree printer give them.
    let bytes = [
        0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 0xac, 0x02, 1, 0xff, 0xf0, 0xa2, 0x04, 0,
    ];
    let (t, end) = run(demo(), 1, &bytes);
    assert_eq!(end as usize, bytes.len());
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let sec = t.children(0).last().unwrap();
    let tags: Vec<_> = t
        .children(sec)
        .map(|c| (t.node(c).kind, t.unknown_tag(t.node(c)), t.node(c).hdr))
        .collect();
    assert_eq!(
        tags,
        [(Kind::UnknownTag, 300, 3), (Kind::UnknownTag, 70000, 4)]
    );
    assert_eq!(
        kinspect::output::value::tree_to_json(&t, 0)["_unknown_tagged_fields"],
        serde_json::json!([{"tag":300,"data":"/w=="},{"tag":70000,"data":""}])
    );
    // The same tags in a real message: ApiVersions v3 request, header v2 (client id "c").
    let hex = "0012000300000001000163000261026202ac0201fff0a20400";
    let path =
        std::env::temp_dir().join(format!("kinspect-unknown-tags-{}.hex", std::process::id()));
    std::fs::write(&path, hex).unwrap();
    let p = path.to_str().unwrap();
    let tree = crate::common::kinspect(&["decode", "-f", "tree", "--color", "never", p]);
    let json = crate::common::kinspect(&["decode", "-f", "jsonl", p]);
    let _ = std::fs::remove_file(&path);
    let tree = crate::common::stdout(&tree);
    assert!(
        tree.contains("| ac 02 01 ff             |     tag 300 (unknown) = 1 bytes"),
        "{tree}"
    );
    assert!(
        tree.contains("| f0 a2 04 00             |     tag 70000 (unknown) = 0 bytes"),
        "{tree}"
    );
    let json: serde_json::Value = serde_json::from_str(&crate::common::stdout(&json)).unwrap();
    assert_eq!(
        json["body"]["_unknown_tagged_fields"],
        serde_json::json!([{"tag":300,"data":"/w=="},{"tag":70000,"data":""}])
    );
}

#[test]
fn two_billion_elements_in_ten_bytes_fail_at_once() {
    // Id, Name null, Items claiming 2^31-1 elements.
    let bytes = [0, 0, 0, 1, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff];
    let t0 = std::time::Instant::now();
    let (t, _) = run(demo(), 0, &bytes);
    assert!(t0.elapsed().as_millis() < 100);
    assert_eq!(codes(&t), ["count-exceeds-remaining"]);
    assert_eq!(t.diags[0].path, "body.Items");
    assert_eq!(t.diags[0].offset, 6);
}

#[test]
fn every_truncation_is_reported_and_never_panics() {
    let bytes = [
        0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 3, 3, 3, b'o', b'k', 7, 2, 0xaa, 0xbb,
    ];
    for cut in 0..bytes.len() {
        let (t, end) = run(demo(), 1, &bytes[..cut]);
        assert_eq!(end as usize, cut);
        // A count that no longer fits the cut bytes is caught before the bytes run out.
        let c = codes(&t);
        assert!(
            c.contains(&"truncated") || c.contains(&"count-exceeds-remaining"),
            "cut {cut}: {:?}",
            t.diags
        );
    }
}

#[test]
fn wire_validity_diagnostics() {
    // Id, Name length -2, ...
    let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0xff, 0xfe, 0, 0]);
    assert_eq!(codes(&t), ["negative-length"]);
    // Items null (not nullable), then a bool of 2 is never reached.
    let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(codes(&t), ["null-not-allowed"]);
    // A bool of 2 and invalid UTF-8.
    let (t, _) = run(demo(), 0, &[0, 0, 0, 1, 0, 1, 0xff, 0, 0, 0, 1, 2, 0, 0]);
    assert_eq!(codes(&t), ["invalid-utf8", "invalid-bool"]);
    // Flexible: overlong compact string length, tags out of order and repeated.
    let (t, _) = run(
        demo(),
        1,
        &[0, 0, 0, 1, 0x81, 0x00, 1, 3, 7, 0, 3, 2, 1, 0, 3, 1, 1],
    );
    assert_eq!(
        codes(&t),
        [
            "varint-overlong",
            "tag-order",
            "tag-size-mismatch",
            "tag-duplicate"
        ]
    );
    // A varint with a sixth byte.
    let (t, _) = run(demo(), 1, &[0, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert_eq!(codes(&t), ["varint-overflow"]);
    // Trailing bytes are the caller's to judge: decoding stops where the message ends.
    let (t, end) = run(demo(), 0, &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 9, 9]);
    assert_eq!((codes(&t).len(), end), (0, 10));
    // Unknown version.
    let (t, _) = run(demo(), 5, &[0]);
    assert_eq!(codes(&t), ["unknown-version"]);
}

#[test]
fn known_tag_larger_than_its_content_keeps_the_excess_visible() {
    let s = spec(
        "TagRequest",
        "0",
        "0+",
        vec![tagged(
            with_fields(f("S", "Sub", "0+"), vec![f("X", "int8", "0+")]),
            0,
            "0+",
        )],
    );
    // One tag: 0, size 3, content = X(1 byte) + empty tagged section (1 byte) + 1 excess.
    let (t, end) = run(s, 0, &[1, 0, 3, 5, 0, 9]);
    assert_eq!(end, 6);
    assert_eq!(codes(&t), ["tag-size-mismatch"]);
    let sec = t.children(0).last().unwrap();
    let sn = t.children(sec).next().unwrap();
    assert_eq!(t.node(sn).name, "S");
    assert_eq!(
        t.children(sn).map(|c| t.node(c).name).collect::<Vec<_>>(),
        ["X", "", "_excess"]
    );
}

#[test]
fn nullable_struct_markers_inside_and_outside_tags() {
    let sub = vec![f("X", "int8", "0+")];
    let s = spec(
        "NullRequest",
        "0-1",
        "1+",
        vec![
            nullable(with_fields(f("A", "Sub", "0+"), sub.clone()), "0+"),
            nullable(
                tagged(with_fields(f("B", "Sub2", "1+"), sub), 0, "1+"),
                "1+",
            ),
        ],
    );
    // v0: marker -1 (null)
    let (t, end) = run(s, 0, &[0xff]);
    assert_eq!((t.node(1).value, end), (Value::Null, 1));
    // v0: marker 0 is read as present (any non-negative byte)
    let (t, _) = run(s, 0, &[0, 5]);
    assert_eq!(t.node(t.child(1, "X").unwrap()).value, Value::Int(5));
    // v1: A present {X=5, no tags}, tag 0 size 1 marker 0 → null B
    let (t, _) = run(s, 1, &[1, 5, 0, 1, 0, 1, 0, 0]);
    assert!(t.diags.is_empty(), "{:?}", t.diags);
    let sec = t.children(0).last().unwrap();
    let b = t.children(sec).next().unwrap();
    assert_eq!(
        (t.node(b).name, t.node(b).value, t.node(b).hdr),
        ("B", Value::Null, 3)
    );
}

#[test]
fn self_nesting_hits_the_depth_limit_not_the_stack() {
    let mut s = spec("DeepRequest", "0", "none", vec![]).clone();
    s.common_structs.push(common_struct(
        "Deep",
        vec![nullable(f("Next", "Deep", "0+"), "0+")],
    ));
    s.fields.push(nullable(f("Next", "Deep", "0+"), "0+"));
    let s: &'static MessageSpec = Box::leak(Box::new(s));
    let bytes = vec![1u8; 500];
    let (t, _) = run(s, 0, &bytes);
    assert_eq!(codes(&t), ["depth-limit"]);
}

#[test]
fn decoded_json_encodes_back_to_the_same_bytes() {
    use kinspect::output::value::tree_to_json;
    use kinspect::wire::encode::encode_message;
    use kinspect::wire::plan::Plan;
    let cases: [(i16, &[u8]); 3] = [
        (0, &[0, 0, 0, 7, 0xff, 0xff, 0, 0, 0, 1, 1, 1, 2]),
        (
            1,
            &[
                0, 0, 0, 1, 4, b'h', 0xc3, 0xa9, 1, 2, 3, 3, 3, b'o', b'k', 7, 2, 0xaa, 0xbb,
            ],
        ),
        (1, &[0x80, 0, 0, 0, 0, 2, 0, 0x7f, 0xff, 0, 0]),
    ];
    for (v, bytes) in cases {
        let (t, _) = run(demo(), v, bytes);
        assert!(t.diags.is_empty(), "{:?}", t.diags);
        let json = tree_to_json(&t, 0);
        let mut out = Vec::new();
        encode_message(&Plan::compile(demo(), v), &json, &mut out, "body").unwrap();
        assert_eq!(out, bytes, "v{v} {json}");
    }
    let (t, _) = run(demo(), 1, cases[1].1);
    let json = tree_to_json(&t, 0);
    assert_eq!(
        json,
        serde_json::json!({"Id":1,"Name":"hé","Items":[],"Note":"ok",
            "_unknown_tagged_fields":[{"tag":7,"data":"qrs="}]})
    );
    // Encoder errors say where and what.
    let mut out = Vec::new();
    let bad = serde_json::json!({"Id":1,"Name":null,"Items":[{"B":true,"K":70000}]});
    let e = encode_message(&Plan::compile(demo(), 0), &bad, &mut out, "body").unwrap_err();
    assert_eq!(e.path, "body.Items[0].K");
    assert!(e.message.contains("int16"), "{e}");
}

#[test]
fn decode_message_at_works_inside_another_buffer_and_range() {
    // A record value inside a decompressed buffer: 3 bytes of something else, then the message
    // (v0: Id, Name null, Items []), then bytes the caller owns.
    let mut t = Tree::new();
    t.reset(&[0xaa; 8]);
    let mut data = vec![9, 9, 9];
    data.extend_from_slice(&[0, 0, 0, 5, 0xff, 0xff, 0, 0, 0, 0]);
    data.extend_from_slice(&[7, 7]);
    let buf = t.add_buf(data).unwrap();
    let root = t.open("", Kind::Struct, buf, 0);
    let end = decode_message_at(&mut t, demo(), 0, buf, 3, 15, "value", "records[0].value");
    t.close(root, 15);
    assert_eq!(end, 13);
    assert!(t.diags.is_empty());
    let v = t.child(root, "value").unwrap();
    assert_eq!(
        (t.node(v).buf, t.node(v).offset, t.node(v).len),
        (buf, 3, 10)
    );
    assert_eq!(t.node(t.child(v, "Id").unwrap()).value, Value::Int(5));
    assert_eq!(t.buf(buf).len(), 15, "the buffer is given back");
    // Cut inside that buffer: the diagnostic names the buffer, the path and the offset in it.
    let end = decode_message_at(&mut t, demo(), 0, buf, 3, 9, "value", "records[1].value");
    assert_eq!(end, 9);
    let d = t.diags.last().unwrap();
    assert_eq!(
        (d.code, d.buf, d.offset, d.path.as_str()),
        ("truncated", buf, 9, "records[1].value.Items")
    );
}
