//! Printer tests on trees built by hand, in the shape CONTRACT.md fixes, from real frames of the
//! bundled captures; the expected JSON was written from the bytes annotated by hand.

use super::*;
use crate::pdu::{Conn, Direction, Pdu};
use crate::wire::tree::{Kind, Span, Tree, Value};

/// mock-kcat-none.pcap frame 4: ApiVersions v3 request from librdkafka (tshark: kafka.len 36).
/// 00000024 size | 0012 key 18 | 0003 v3 | 00000001 corr 1 | 0007 "rdkafka" | 00 no header tags
/// | 0b "librdkafka" | 06 "2.0.2" | 00 no body tags.
pub(crate) const APIVERSIONS_REQ: &str =
    "000000240012000300000001000772646b61666b61000b6c696272646b61666b6106322e302e3200";

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The tree the decoder is to build for [`APIVERSIONS_REQ`], built by hand.
pub(crate) fn apiversions_pdu() -> Pdu {
    let frame = unhex(APIVERSIONS_REQ);
    let mut t = Tree::new();
    t.reset(&frame);
    let root = t.open("", Kind::Struct, 0, 0);
    t.node_mut(root).hdr = 4;
    let h = t.open("header", Kind::Struct, 0, 4);
    t.leaf("RequestApiKey", Value::Int(18), 0, 4, 2);
    t.leaf("RequestApiVersion", Value::Int(3), 0, 6, 2);
    t.leaf("CorrelationId", Value::Int(1), 0, 8, 4);
    let c = t.leaf("ClientId", Value::Str(Span { start: 14, len: 7 }), 0, 12, 9);
    t.node_mut(c).hdr = 2;
    let ts = t.open("", Kind::TaggedSection, 0, 21);
    t.node_mut(ts).hdr = 1;
    t.close(ts, 22);
    t.close(h, 22);
    let b = t.open("body", Kind::Struct, 0, 22);
    let n = t.leaf(
        "ClientSoftwareName",
        Value::Str(Span { start: 23, len: 10 }),
        0,
        22,
        11,
    );
    t.node_mut(n).hdr = 1;
    let v = t.leaf(
        "ClientSoftwareVersion",
        Value::Str(Span { start: 34, len: 5 }),
        0,
        33,
        6,
    );
    t.node_mut(v).hdr = 1;
    let ts = t.open("", Kind::TaggedSection, 0, 39);
    t.node_mut(ts).hdr = 1;
    t.close(ts, 40);
    t.close(b, 40);
    t.close(root, 40);
    t.check_tiling(0).unwrap();
    let mut pdu = Pdu {
        direction: Some(Direction::Request),
        api_key: Some(18),
        api_name: Some("ApiVersions"),
        api_version: Some(3),
        correlation_id: Some(1),
        release: Some("4.3.1"),
        tree: t,
        ..Pdu::default()
    };
    pdu.origin.frame = Some(4);
    pdu.origin.last_frame = Some(4);
    pdu.origin.ts_ns = Some(1_714_557_600_123_456_789);
    pdu.origin.conn = Some(Conn {
        client: "127.0.0.1:41548".parse().unwrap(),
        server: "127.0.0.1:19094".parse().unwrap(),
        stream: 0,
    });
    pdu.origin.stream_offset = Some(0);
    pdu
}

fn to_string(pdu: &Pdu, o: JsonOptions) -> String {
    let mut v = Vec::new();
    write_pdu(&mut v, pdu, None, &o).unwrap();
    let s = String::from_utf8(v).unwrap();
    serde_json::from_str::<serde_json::Value>(&s)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}): {s}"));
    s
}

#[test]
fn plain_pdu_matches_the_contract() {
    let s = to_string(&apiversions_pdu(), JsonOptions::default());
    assert_eq!(
        s,
        concat!(
            r#"{"index":0,"frame":4,"last_frame":4,"ts":"2024-05-01T10:00:00.123456789Z","#,
            r#""connection":{"client":"127.0.0.1:41548","server":"127.0.0.1:19094","stream":0},"#,
            r#""direction":"request","stream_offset":0,"length":36,"api_key":18,"api":"ApiVersions","#,
            r#""api_version":3,"correlation_id":1,"release":"4.3.1","#,
            r#""header":{"RequestApiKey":18,"RequestApiVersion":3,"CorrelationId":1,"ClientId":"rdkafka"},"#,
            r#""body":{"ClientSoftwareName":"librdkafka","ClientSoftwareVersion":"2.0.2"},"diagnostics":[]}"#
        )
    );
}

#[test]
fn annotated_spans_cover_every_byte() {
    let s = to_string(
        &apiversions_pdu(),
        JsonOptions {
            annotate: true,
            show_secrets: false,
        },
    );
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["offset"], 0);
    assert_eq!(v["length"], 40);
    assert_eq!(
        v["size_prefix"],
        serde_json::json!({"offset":0,"length":4,"value":36})
    );
    assert_eq!(v["header"]["offset"], 4);
    assert_eq!(v["header"]["length"], 18);
    assert_eq!(
        v["header"]["value"]["ClientId"],
        serde_json::json!({"offset":12,"length":9,"value":"rdkafka"})
    );
    assert_eq!(
        v["body"]["value"]["ClientSoftwareVersion"],
        serde_json::json!({"offset":33,"length":6,"value":"2.0.2"})
    );
    // Leaves tile the frame except the two tagged-section count bytes (21 and 39).
    let mut covered = [0u8; 40];
    fn leaves(v: &serde_json::Value, covered: &mut [u8]) {
        if let Some(o) = v.as_object() {
            if let (Some(off), Some(len), Some(val)) =
                (o.get("offset"), o.get("length"), o.get("value"))
            {
                if !val.is_object() && !val.is_array() {
                    for i in off.as_u64().unwrap()..off.as_u64().unwrap() + len.as_u64().unwrap() {
                        covered[i as usize] += 1;
                    }
                    return;
                }
                return leaves(val, covered);
            }
            o.values().for_each(|x| leaves(x, covered));
        }
    }
    leaves(&v, &mut covered);
    let holes: Vec<usize> = (0..40).filter(|&i| covered[i] != 1).collect();
    assert_eq!(holes, vec![21, 39]);
}

#[test]
fn strings_escape_like_a_json_parser_reads_them() {
    for s in [
        "plain",
        "quote\" back\\slash",
        "tab\tnl\ncr\r",
        "\u{0}\u{1}\u{1f}\u{7f}",
        "é 日本 🎉",
        "\u{8}\u{c}",
    ] {
        let mut v = Vec::new();
        write_str(&mut v, s).unwrap();
        let back: String = serde_json::from_slice(&v).unwrap();
        assert_eq!(back, s);
    }
}

/// Every byte is escaped, or not, as JSON (RFC 8259: control characters, `"`, `\\`) and the
/// plain-ASCII path (nothing from DEL on) require: `special`'s one-compare range test included.
#[test]
fn the_bytes_that_need_escaping_are_exactly_these() {
    for b in 0..=255u8 {
        let json = b < 0x20 || b == b'"' || b == b'\\';
        assert_eq!(special::<false>(b), json || b == 0x7f, "{b:#04x}");
        assert_eq!(special::<true>(b), json || b >= 0x7f, "{b:#04x}");
        let chunk = [b'a', b, b'z'];
        assert_eq!(clean_chunk::<true>(&chunk), !special::<true>(b), "{b:#04x}");
    }
}

/// The word-at-a-time test of a short string says clean exactly when no byte needs escaping
/// (RFC 8259's control characters, `"`, `\\`, and DEL), whatever the byte, its place and the
/// length: every byte value at every place of every length up to 32, between clean ASCII and
/// between the bytes of multi-byte UTF-8 (whose high bits must not hide a special byte).
#[test]
fn short_strings_are_clean_exactly_when_no_byte_needs_escaping() {
    for filler in [b'a', 0xc3, 0x80, 0xff, 0x7e, 0x21] {
        for len in 0..=SHORT_KEY {
            assert!(clean_short(&vec![filler; len]) == (len == 0 || !special::<false>(filler)));
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![filler; len];
                    s[at] = b;
                    let want = !s
                        .iter()
                        .any(|&x| x < 0x20 || x == b'"' || x == b'\\' || x == 0x7f);
                    assert_eq!(
                        clean_short(&s),
                        want,
                        "{filler:#04x} x{len}, {b:#04x} at {at}"
                    );
                }
            }
        }
    }
}

/// Member names, short and long, clean or needing escapes, with and without the comma, read
/// back by a JSON parser as the members of an object.
#[test]
fn keys_read_back_as_the_names_they_were() {
    let long = "N".repeat(32);
    let longer = "L".repeat(33);
    let names = [
        "",
        "a",
        "Name",
        long.as_str(),
        longer.as_str(),
        "quo\"te",
        "back\\slash in a name longer than thirty-two bytes",
        "ctl\u{1}",
        "del\u{7f}",
        "日本",
    ];
    let mut v = b"{".to_vec();
    for (i, name) in names.iter().enumerate() {
        write_key(&mut v, name, i > 0).unwrap();
        write_int(&mut v, i as i64).unwrap();
    }
    v.push(b'}');
    let back: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&v).unwrap();
    let got: Vec<(&str, i64)> = back
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_i64().unwrap()))
        .collect();
    // (serde_json keeps the members' order here: feature `preserve_order`.)
    let want: Vec<(&str, i64)> = names.iter().copied().zip(0..).collect();
    assert_eq!(got, want);
}

#[test]
fn base64_matches_rfc4648_vectors_across_chunk_boundaries() {
    // RFC 4648 §10 test vectors.
    for (i, o) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foobar", "Zm9vYmFy"),
    ] {
        let mut v = Vec::new();
        write_base64(&mut v, i.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), format!("\"{o}\""));
    }
    let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut v = Vec::new();
    write_base64(&mut v, &big).unwrap();
    assert_eq!(
        v[1..v.len() - 1],
        base64::engine::general_purpose::STANDARD
            .encode(&big)
            .into_bytes()[..]
    );
}

#[test]
fn uuids_print_as_kafka_does() {
    // Kafka's Uuid.ZERO_UUID and Uuid.METADATA_TOPIC_ID (most 0, least 1).
    assert_eq!(uuid_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
    let mut one = [0u8; 16];
    one[15] = 1;
    assert_eq!(uuid_string(&one), "AAAAAAAAAAAAAAAAAAAAAQ");
}

#[test]
fn floats_nulls_tags_errors_and_data() {
    let mut frame = [0u8; 32];
    // The unknown tag's header: tag 7, 2 bytes.
    frame[18] = 7;
    frame[19] = 2;
    let mut t = Tree::new();
    t.reset(&frame);
    let root = t.open("", Kind::Struct, 0, 0);
    let b = t.open("body", Kind::Struct, 0, 0);
    t.leaf("F", Value::Float(f64::NAN), 0, 0, 8);
    t.leaf("G", Value::Float(f64::NEG_INFINITY), 0, 8, 1);
    t.leaf("H", Value::Float(0.1), 0, 9, 1);
    t.leaf("I", Value::Int(i64::MIN), 0, 10, 1);
    t.leaf("S", Value::Null, 0, 11, 1);
    let a = t.open("A", Kind::Array, 0, 12);
    t.node_mut(a).value = Value::Null;
    t.close(a, 13);
    let e = t.open("E", Kind::Array, 0, 13);
    t.close(e, 14);
    let ts = t.open("", Kind::TaggedSection, 0, 14);
    t.leaf("Known", Value::Bool(true), 0, 15, 3);
    let u = t.leaf("", Value::Bytes(Span { start: 20, len: 2 }), 0, 18, 4);
    t.node_mut(u).kind = Kind::UnknownTag;
    t.node_mut(u).hdr = 2;
    t.close(ts, 22);
    t.leaf("D", Value::Data(Span { start: 22, len: 1 }), 0, 22, 1);
    t.tree_err(23);
    t.close(b, 32);
    t.close(root, 32);
    let pdu = Pdu {
        tree: t,
        ..Pdu::default()
    };
    let s = to_string(&pdu, JsonOptions::default());
    assert_eq!(
        s,
        concat!(
            r#"{"index":0,"body":{"F":"NaN","G":"-Infinity","H":0.1,"I":-9223372036854775808,"S":null,"A":null,"E":[],"#,
            r#""Known":true,"D":{"text":"\u0000"},"R":{"_error":"truncated","_data":"AAAAAAAAAAAA"},"#,
            r#""_unknown_tagged_fields":[{"tag":7,"data":"AAA="}]},"#,
            r#""diagnostics":[{"severity":"error","code":"truncated","path":"body.R","offset":23,"message":"9 bytes missing"}]}"#
        )
    );
}

trait ErrNode {
    fn tree_err(&mut self, at: u32);
}
impl ErrNode for Tree {
    fn tree_err(&mut self, at: u32) {
        let d = crate::diag::Diagnostic::error("truncated", "body.R", at as u64, "9 bytes missing");
        self.error_node("R", 0, at, 9, d);
    }
}

#[test]
fn latency_is_exact_microseconds() {
    let mut v = Vec::new();
    for ns in [123_400i64, 5_000, 1, -2_500] {
        write_micros(&mut v, ns).unwrap();
        v.push(b' ');
    }
    assert_eq!(String::from_utf8(v).unwrap(), "123.4 5 0.001 -2.5 ");
}

#[test]
fn sasl_plain_token_is_masked_unless_asked() {
    let tok = b"\0alice\0hunter2";
    let mut t = Tree::new();
    let mut frame = vec![0, 0, 0, tok.len() as u8];
    frame.extend_from_slice(tok);
    t.reset(&frame);
    let root = t.open("", Kind::Struct, 0, 0);
    t.node_mut(root).hdr = 4;
    t.leaf(
        "token",
        Value::Bytes(Span {
            start: 4,
            len: tok.len() as u32,
        }),
        0,
        4,
        tok.len() as u32,
    );
    t.close(root, frame.len() as u32);
    let pdu = Pdu {
        tree: t,
        ..Pdu::default()
    };
    let masked = to_string(&pdu, JsonOptions::default());
    assert!(
        masked.contains(r#""token":"AGFsaWNlACoqKioqKio=""#),
        "{masked}"
    ); // "\0alice\0*******" (same length)
    let shown = to_string(
        &pdu,
        JsonOptions {
            annotate: false,
            show_secrets: true,
        },
    );
    assert!(
        shown.contains(r#""token":"AGFsaWNlAGh1bnRlcjI=""#),
        "{shown}"
    ); // "\0alice\0hunter2"
}

#[test]
fn tree_view_matches_the_hand_annotation() {
    let o = crate::output::Options {
        format: crate::output::Format::Tree,
        annotate: false,
        color: false,
        show_secrets: false,
    };
    let mut v = Vec::new();
    crate::output::tree::write_pdu(&mut v, &apiversions_pdu(), None, &o).unwrap();
    let want = "\
#0 frame 4 2024-05-01T10:00:00.123456789Z 127.0.0.1:41548 → 127.0.0.1:19094 request ApiVersions v3 correlation_id=1 [4.3.1]
  0x0000 | 00 00 00 24             | size = 36
  0x0004 |                         | header
  0x0004 | 00 12                   |   RequestApiKey = 18 (ApiVersions)
  0x0006 | 00 03                   |   RequestApiVersion = 3
  0x0008 | 00 00 00 01             |   CorrelationId = 1
  0x000c | 00 07 72 64 6b 61 66 6b |   ClientId = \"rdkafka\"
         | 61                      |
  0x0015 | 00                      |   0 tagged fields
  0x0016 |                         | body
  0x0016 | 0b 6c 69 62 72 64 6b 61 |   ClientSoftwareName = \"librdkafka\"
         | 66 6b 61                |
  0x0021 | 06 32 2e 30 2e 32       |   ClientSoftwareVersion = \"2.0.2\"
  0x0027 | 00                      |   0 tagged fields

";
    assert_eq!(String::from_utf8(v).unwrap(), want);
}

#[test]
fn summary_line_and_color_switch() {
    let mut o = crate::output::Options {
        format: crate::output::Format::Summary,
        annotate: false,
        color: false,
        show_secrets: false,
    };
    let mut v = Vec::new();
    let mut st = crate::output::summary::State::default();
    st.write_pdu(&mut v, &apiversions_pdu(), &o).unwrap();
    assert_eq!(
        String::from_utf8(v).unwrap(),
        "     4    0.000000 127.0.0.1:41548 → 127.0.0.1:19094 request  ApiVersions v3 corr=1 client=rdkafka\n"
    );
    o.color = true;
    let mut v = Vec::new();
    st.write_pdu(&mut v, &apiversions_pdu(), &o).unwrap();
    assert!(
        v.windows(4).any(|w| w == b"\x1b[1m"),
        "no escape with color on"
    );
}

#[test]
fn capture_notes_are_objects_without_header_or_body() {
    let mut o = crate::pdu::Origin {
        index: 7,
        frame: Some(9),
        ..Default::default()
    };
    o.stream_offset = Some(104);
    let d =
        crate::diag::Diagnostic::warning("frame-incomplete", "capture", 0, "only 62 of 116 bytes");
    let mut v = Vec::new();
    write_note(&mut v, &o, &d, None).unwrap();
    assert_eq!(
        String::from_utf8(v).unwrap(),
        concat!(
            r#"{"index":7,"frame":9,"last_frame":9,"stream_offset":104,"note":"frame-incomplete","#,
            r#""diagnostics":[{"severity":"warning","code":"frame-incomplete","path":"capture","offset":0,"message":"only 62 of 116 bytes"}]}"#
        )
    );
}

#[test]
fn integers_and_uuids_match_the_standard_formatting() {
    for v in [
        0i64,
        1,
        -1,
        9,
        10,
        99,
        100,
        12345,
        i64::MAX,
        i64::MIN,
        i32::MIN as i64,
        -1000,
    ] {
        let mut b = Vec::new();
        write_int(&mut b, v).unwrap();
        assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
    }
    let u: [u8; 16] = core::array::from_fn(|i| (i * 37 + 5) as u8);
    let mut b = Vec::new();
    write_uuid(&mut b, &u).unwrap();
    assert_eq!(
        String::from_utf8(b).unwrap(),
        format!("\"{}\"", uuid_string(&u))
    );
}

/// A JSON string literal escaped one character at a time: the oracle for the chunked scan.
fn bytewise(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                o.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The chunked scan in `write_str` must escape exactly what a byte-by-byte escaper does,
/// wherever the special byte falls in a chunk and whatever surrounds it (multi-byte UTF-8 too).
#[test]
fn write_str_chunk_scan_matches_bytewise_escaping() {
    let alphabet = [
        'a', 'Z', ' ', '~', '"', '\\', '\n', '\u{0}', '\u{1f}', '\u{7f}', 'é', '€', '𝄞', '\t',
        '\u{c}',
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    // Past 64 bytes so that whole 32-byte chunks and the tail after them are both exercised.
    for len in 0..100 {
        for _ in 0..50 {
            let s: String = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            let mut out = Vec::new();
            write_str(&mut out, &s).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), bytewise(&s), "input {s:?}");
        }
    }
}

/// One byte to escape in an otherwise clean string, at every place of every length around the
/// one-piece path's 32 bytes: `write_str` escapes it as a byte-by-byte escaper does, and a
/// member name holding it reads back as itself.
#[test]
fn one_special_byte_is_escaped_wherever_it_falls() {
    for len in 1..=70 {
        for at in 0..len {
            for c in ['"', '\\', '\n', '\u{1}', '\u{7f}'] {
                let s: String = (0..len).map(|i| if i == at { c } else { 'k' }).collect();
                let mut out = Vec::new();
                write_str(&mut out, &s).unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), bytewise(&s), "input {s:?}");
                let mut v = b"{".to_vec();
                write_key(&mut v, &s, false).unwrap();
                v.extend_from_slice(b"1}");
                let back: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_slice(&v).unwrap();
                assert_eq!(back.keys().next().map(String::as_str), Some(s.as_str()));
            }
        }
    }
}

/// Record data prints as `{"text":…}` exactly when it is valid UTF-8 (escaped as a byte-by-byte
/// escaper would), else as base64 — whether the first non-ASCII or escaped byte comes early,
/// late, after whole chunks, or never.
#[test]
fn data_is_text_exactly_when_utf8() {
    let pieces: [&[u8]; 9] = [
        b"abcdefgh",
        b"/+=09AZ~",
        "é".as_bytes(),
        "𝄞".as_bytes(),
        b"\"",
        b"\n",
        b"\x7f",
        &[0xff],
        &[0xe2, 0x82],
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for n in 0..60 {
        for _ in 0..40 {
            let mut data = Vec::new();
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Mostly plain pieces, so that long clean runs come before the odd byte.
                let k = (seed % 64) as usize;
                data.extend_from_slice(pieces[if k < 55 { k % 2 } else { k - 55 }]);
            }
            let want = match std::str::from_utf8(&data) {
                Ok(t) => format!("{{\"text\":{}}}", bytewise(t)),
                Err(_) => format!("{{\"base64\":\"{}\"}}", STANDARD.encode(&data)),
            };
            let mut got = Vec::new();
            write_text_or_base64(&mut got, &data).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), want, "data {data:?}");
        }
    }
}

#[test]
fn integers_print_as_fmt_does() {
    let mut cases = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, i64::MAX, i64::MIN];
    cases.extend((0..19).map(|e| 10i64.pow(e)));
    cases.extend((1..19).map(|e| 10i64.pow(e) - 1));
    cases.extend(cases.clone().iter().map(|v| v.saturating_neg()));
    for v in cases {
        let mut got = Vec::new();
        write_int(&mut got, v).unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), v.to_string());
    }
}
