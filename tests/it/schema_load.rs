//! The loader against Kafka's own spec files (every one must load cleanly) and against broken
//! specs written here, each expecting its diagnostic code, position and suggestion.

use crate::common;

use kinspect::schema::{load_dir, load_spec, FieldType, Prim, SchemaDiag, SpecType, Versions};

fn errors(d: &[SchemaDiag]) -> Vec<&SchemaDiag> {
    d.iter().filter(|d| d.is_error()).collect()
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn every_kafka_spec_file_loads_without_errors() {
    let Some(shared) = common::shared_or_skip("every_kafka_spec_file_loads_without_errors") else {
        return;
    };
    for release in ["4.3.1", "3.9.0"] {
        let dir = shared.join("kafka-schemas").join(release);
        let (specs, diags) = load_dir(&dir);
        let shown: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        // Upstream writes `"ignorable": "false"` (SubscriptionInfoData) and `"tag": "0"` (3.9.0
        // BrokerHeartbeatRequest, BrokerRegistrationChangeRecord): warnings, never errors.
        assert!(
            diags
                .iter()
                .all(|d| !d.is_error() && d.code == "coerced-value"),
            "{release}: {}",
            shown.join("\n")
        );
        assert!(diags.len() <= 4, "{release}: {}", shown.join("\n"));
        // Independent count: every .json file under the folder, found with a plain walk.
        let n = common::json_files(&dir).len();
        assert_eq!(specs.len(), n, "{release}: one spec per file");
        assert!(specs
            .iter()
            .all(|s| !s.path.starts_with('/') && s.path.ends_with(".json")));
    }
}

#[test]
#[cfg_attr(
    not(kinspect_shared),
    ignore = "needs ../shared (the Kafka spec folders): set KINSPECT_SHARED"
)]
fn fetch_request_model_matches_the_file() {
    let Some(shared) = common::shared_or_skip("fetch_request_model_matches_the_file") else {
        return;
    };
    let p = shared
        .join("kafka-schemas/4.3.1/clients/src/main/resources/common/message/FetchRequest.json");
    let text = std::fs::read_to_string(&p).unwrap();
    let (spec, diags) = load_spec("FetchRequest.json", &text);
    assert!(diags.is_empty(), "{diags:?}");
    let spec = spec.unwrap();
    // Facts read off the file by hand.
    assert_eq!(&*spec.name, "FetchRequest");
    assert_eq!(spec.spec_type, SpecType::Request);
    assert_eq!(spec.api_key, Some(1));
    assert_eq!(spec.flexible_versions, Versions::from(12));
    let cluster = spec
        .fields
        .iter()
        .find(|f| &*f.name == "ClusterId")
        .unwrap();
    assert_eq!(cluster.tag, Some(0));
    assert_eq!(cluster.tagged_versions, Versions::from(12));
    assert_eq!(cluster.default.as_deref(), Some("null"));
    let topics = spec.fields.iter().find(|f| &*f.name == "Topics").unwrap();
    assert_eq!(
        topics.ty,
        FieldType::Array(Box::new(FieldType::Struct("FetchTopic".into())))
    );
    let line = text
        .lines()
        .position(|l| l.contains("\"name\": \"Topics\""))
        .unwrap() as u32
        + 1;
    assert_eq!(topics.pos.line, line);
    assert_eq!(topics.prop_pos("type").line, line);
}

#[test]
fn tagged_versions_default_versions_and_null_default_is_absent() {
    let (spec, d) = load_spec(
        "t.json",
        r#"{"type": "data", "name": "T", "validVersions": "0-3", "flexibleVersions": "0+",
            "fields": [
              {"name": "A", "type": "int32", "taggedVersions": "2+", "tag": 0},
              {"name": "B", "type": "S", "versions": "0+", "default": null, "fields": []},
              {"name": "C", "type": "int64", "versions": "0+", "default": -1}]}"#,
    );
    assert!(errors(&d).is_empty(), "{d:?}");
    let spec = spec.unwrap();
    assert_eq!(spec.fields[0].versions, Versions::from(2));
    assert!(!spec.fields[0].has_prop("versions"));
    assert_eq!(spec.fields[1].default, None);
    assert!(spec.fields[1].has_prop("default"));
    assert_eq!(spec.fields[2].default.as_deref(), Some("-1"));
}

#[test]
fn blank_flexible_versions_is_given_and_none() {
    let (spec, d) = load_spec(
        "e.json",
        r#"{"type": "data", "name": "T", "validVersions": "0", "flexibleVersions": " "}"#,
    );
    assert!(d.is_empty(), "{d:?}");
    let spec = spec.unwrap();
    // Kafka refuses only a missing or null flexibleVersions; a blank one parses as none.
    assert!(spec.has_prop("flexibleVersions"));
    assert!(spec.flexible_versions.is_empty());
}

#[test]
fn jackson_coercions_are_accepted_with_a_warning() {
    let (spec, d) = load_spec(
        "c.json",
        r#"{"type": "request", "name": "XRequest", "apiKey": "200", "validVersions": 2,
            "flexibleVersions": "0+", "listeners": "broker",
            "fields": {"name": "A", "type": "[]int32", "versions": "0+", "ignorable": "true", "mapKey": 0}}"#,
    );
    assert!(errors(&d).is_empty(), "{d:?}");
    assert!(d.iter().all(|d| d.code == "coerced-value"), "{d:?}");
    let spec = spec.unwrap();
    assert_eq!(spec.api_key, Some(200));
    assert_eq!(spec.valid_versions, Versions::exactly(2));
    assert_eq!(spec.listeners.len(), 1);
    assert_eq!(spec.fields.len(), 1);
    assert!(spec.fields[0].ignorable);
    assert!(!spec.fields[0].map_key);
    assert_eq!(
        spec.fields[0].ty,
        FieldType::Array(Box::new(FieldType::Prim(Prim::Int32)))
    );
}

/// Broken specs: (what, text, code, line, column, suggestion). Each row breaks one thing.
#[test]
fn broken_specs_report_code_place_and_suggestion() {
    const HEAD: &str = "{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"0-2\", \"flexibleVersions\": \"0+\",\n";
    type Row = (
        &'static str,
        String,
        &'static str,
        u32,
        u32,
        Option<&'static str>,
    );
    let rows: &[Row] = &[
        ("misspelled ignorable", format!("{HEAD}\"fields\": [\n  {{\"name\": \"A\", \"type\": \"int8\", \"versions\": \"0+\", \"ignoreable\": true}}]}}"), "unknown-property", 3, 51, Some("ignorable")),
        ("lower-case validVersions", "{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"0\", \"flexibleversion\": \"0\"}".into(), "unknown-property", 1, 53, Some("flexibleVersions")),
        ("unknown struct property", format!("{HEAD}\"commonStructs\": [{{\"name\": \"S\", \"versions\": \"0+\", \"about\": \"x\"}}]}}"), "unknown-property", 2, 51, None),
        ("booleanbool", format!("{HEAD}\"fields\": [\n  {{\"name\": \"A\", \"type\": \"booleanbool\", \"versions\": \"0+\"}}]}}"), "invalid-type", 3, 25, Some("bool")),
        ("boolean", format!("{HEAD}\"fields\": [\n  {{\"name\": \"A\", \"type\": \"boolean\", \"versions\": \"0+\"}}]}}"), "invalid-type", 3, 25, Some("bool")),
        ("int", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"int\", \"versions\": \"0+\"}}]}}"), "invalid-type", 2, 34, Some("int32")),
        ("[] alone", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"[]\", \"versions\": \"0+\"}}]}}"), "invalid-type", 2, 34, None),
        ("array of arrays", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"[][]int8\", \"versions\": \"0+\"}}]}}"), "invalid-type", 2, 34, Some("[]int8")),
        ("lower-case struct", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"[]item\", \"versions\": \"0+\", \"fields\": []}}]}}"), "invalid-type", 2, 34, Some("[]Item")),
        ("spec type case", "{\"type\": \"Request\", \"name\": \"T\", \"validVersions\": \"0\"}".into(), "unknown-enum-value", 1, 10, Some("request")),
        ("listener case", format!("{HEAD}\"listeners\": [\"Broker\"]}}"), "unknown-enum-value", 2, 15, Some("broker")),
        ("entity type case", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"string\", \"versions\": \"0+\", \"entityType\": \"TopicName\"}}]}}"), "unknown-enum-value", 2, 76, Some("topicName")),
        ("apiKey past i16", "{\"type\": \"request\", \"name\": \"TRequest\", \"apiKey\": 40000, \"validVersions\": \"0\"}".into(), "api-key-range", 1, 51, None),
        ("inner space in range", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"int8\", \"versions\": \"0 - 2\"}}]}}"), "invalid-versions", 2, 54, None),
        ("negative version", "{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"-1\"}".into(), "invalid-versions", 1, 48, None),
        ("version past i16", "{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"0-40000\"}".into(), "invalid-versions", 1, 48, None),
        ("missing name", "{\"type\": \"data\", \"validVersions\": \"0\"}".into(), "missing-property", 1, 1, None),
        ("missing validVersions", "{\"type\": \"data\", \"name\": \"T\"}".into(), "missing-property", 1, 1, None),
        ("missing field versions", format!("{HEAD}\"fields\": [\n {{\"name\": \"A\", \"type\": \"int8\"}}]}}"), "missing-property", 3, 2, None),
        ("missing field type", format!("{HEAD}\"fields\": [\n {{\"name\": \"A\", \"versions\": \"0+\"}}]}}"), "missing-property", 3, 2, None),
        ("missing struct versions", format!("{HEAD}\"commonStructs\": [\n {{\"name\": \"S\", \"fields\": []}}]}}"), "missing-property", 3, 2, None),
        ("negative tag", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"int8\", \"versions\": \"0+\", \"taggedVersions\": \"0+\", \"tag\": -1}}]}}"), "invalid-tag", 2, 91, None),
        ("bool not a bool", format!("{HEAD}\"fields\": [{{\"name\": \"A\", \"type\": \"int8\", \"versions\": \"0+\", \"ignorable\": \"yes\"}}]}}"), "wrong-json-type", 2, 73, None),
        ("name is an object", "{\"type\": \"data\", \"name\": {}, \"validVersions\": \"0\"}".into(), "wrong-json-type", 1, 26, None),
        ("root is an array", "// x\n[]".into(), "not-an-object", 2, 1, None),
        ("non-breaking space", "{\"type\":\u{a0}\"data\", \"name\": \"T\", \"validVersions\": \"0\"}".into(), "non-json-whitespace", 1, 9, None),
        ("hash comment", "{\"type\": \"data\", \"name\": \"T\",\n# c\n\"validVersions\": \"0\"}".into(), "hash-comment", 2, 1, None),
        ("trailing content", "{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"0\"}\n}".into(), "trailing-content", 2, 1, None),
        ("missing comma", "{\"type\": \"data\" \"name\": \"T\"}".into(), "json-syntax", 1, 17, None),
        ("unterminated string", "{\"type\": \"data\", \"name\": \"T}".into(), "json-syntax", 1, 26, None),
    ];
    for (what, text, code, line, col, sugg) in rows {
        let (_, diags) = load_spec("x.json", text);
        let hit = diags.iter().find(|d| d.code == *code);
        let Some(d) = hit else {
            panic!("{what}: expected {code}, got {diags:?}")
        };
        assert!(d.is_error(), "{what}: {d}");
        assert_eq!((d.pos.line, d.pos.col), (*line, *col), "{what}: {d}");
        assert_eq!(d.suggestion.as_deref(), *sugg, "{what}: {d}");
        assert_eq!(
            errors(&diags).len(),
            1,
            "{what}: exactly one error expected, got {diags:?}"
        );
    }
}

/// An object or array that stops wrong says what was expected there and where it opened.
#[test]
fn a_broken_object_or_array_names_where_it_opened() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, (u32, u32), &str)] = &[
        ("a value where ',' or '}' belongs", "{\"type\": \"data\",\n  \"name\": \"T\" 5}", (2, 15),
         "unexpected '5': expected ',' or '}' (object opened at 1:1)"),
        ("an object cut after a member", "{\"type\": \"data\"", (1, 1),
         "unterminated object: expected '}' before the end of the file"),
        ("an object cut after a comma", "{\"type\": \"data\",  ", (1, 1),
         "unterminated object: expected '}' before the end of the file"),
        ("a value where ',' or ']' belongs", "{\"listeners\": [\"broker\"\n  \"zkBroker\"]}", (2, 3),
         "unexpected '\"': expected ',' or ']' (array opened at 1:15)"),
        ("an array cut after an item", "{\"listeners\": [\"broker\"", (1, 15),
         "unterminated array: expected ']' before the end of the file"),
        ("an array cut after a comma", "{\"listeners\": [\"broker\", ", (1, 15),
         "unterminated array: expected ']' before the end of the file"),
    ];
    for (what, text, at, message) in rows {
        let (_, diags) = load_spec("x.json", text);
        let e = errors(&diags);
        assert_eq!(e.len(), 1, "{what}: one error expected, got {diags:?}");
        assert_eq!(
            (
                e[0].code,
                (e[0].pos.line, e[0].pos.col),
                e[0].message.as_str()
            ),
            ("json-syntax", *at, *message),
            "{what}"
        );
    }
}

#[test]
fn misspelled_required_property_is_both_unknown_and_missing() {
    let (_, d) = load_spec(
        "x.json",
        "{\"type\": \"data\", \"name\": \"T\", \"validversion\": \"0\"}",
    );
    assert_eq!(d.len(), 2, "{d:?}");
    // Sorted by position: the missing property is reported at the object's start.
    assert_eq!(
        (d[0].code, d[0].path.as_str(), d[0].pos.col),
        ("missing-property", "validVersions", 1)
    );
    assert_eq!(
        (d[1].code, d[1].pos.col, d[1].suggestion.as_deref()),
        ("unknown-property", 31, Some("validVersions"))
    );
}

#[test]
fn all_problems_reported_at_once() {
    let (spec, d) = load_spec(
        "many.json",
        r#"{"type": "data", "name": "T", "validVersions": "0-2", "flexibleVersions": "0+", "bogus": 1,
            "fields": [
              {"name": "A", "type": "strng", "versions": "0+"},
              {"name": "B", "type": "int8", "versions": "x"},
              {"name": "C", "type": "[]S", "versions": "0+", "fields": [
                 {"name": "D", "type": "int8", "versions": "0+", "nullableversions": "0+"}]}]}"#,
    );
    let codes: Vec<&str> = d.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "unknown-property",
            "invalid-type",
            "invalid-versions",
            "unknown-property",
        ],
        "{d:?}"
    );
    assert_eq!(d[3].path, "C.D");
    assert_eq!(d[3].suggestion.as_deref(), Some("nullableVersions"));
    assert_eq!(d[1].suggestion.as_deref(), Some("string"));
    // The model is still built so the validator can keep looking.
    assert_eq!(spec.unwrap().fields.len(), 3);
}

#[test]
fn problems_before_a_syntax_error_are_still_reported() {
    // A wiki draft elides part of the file with "...": the type error above it still counts.
    let text = "{\"type\": \"request\", \"name\": \"VoteRequest\", \"fields\": [\n  {\"name\": \"PreVote\", \"type\": \"boolean\", \"versions\": \"1+\"}\n...\n}";
    let (spec, d) = load_spec("draft.json", text);
    assert!(spec.is_none(), "no model from half a file");
    let got: Vec<(&str, u32)> = d.iter().map(|d| (d.code, d.pos.line)).collect();
    // Nothing is called missing (validVersions may come after the cut).
    assert_eq!(got, [("invalid-type", 2), ("json-syntax", 3)], "{d:?}");
    assert_eq!(d[0].suggestion.as_deref(), Some("bool"));
}

#[test]
fn hostile_inputs_fail_cleanly() {
    for text in [
        "",
        "{",
        "\"",
        "{\"type\": \"data\", \"fields\": [[[[[[",
        "\u{0}",
        "{\"a\":1}\u{0}",
    ] {
        let (spec, d) = load_spec("h.json", text);
        assert!(spec.is_none() || !d.is_empty(), "{text:?}");
    }
    let deep = format!(
        "{{\"type\": \"data\", \"name\": \"T\", \"validVersions\": \"0\", \"fields\": {}",
        "[{\"name\": \"A\", \"type\": \"S\", \"versions\": \"0\", \"fields\": ".repeat(40)
    );
    let (_, d) = load_spec("deep.json", &deep);
    assert!(d.iter().any(|d| d.code == "json-syntax"), "{d:?}");
}

#[test]
fn load_dir_walks_folders_and_names_unreadable_files() {
    let dir = std::env::temp_dir().join(format!("kinspect-load-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    let ok = r#"{"type": "data", "name": "T", "validVersions": "0"}"#;
    std::fs::write(dir.join("a/b/T.json"), ok).unwrap();
    std::fs::write(dir.join("README.md"), "not a spec").unwrap();
    // Latin-1 bytes: the second line holds an invalid UTF-8 byte after 3 good characters.
    std::fs::write(dir.join("bad.json"), b"{\n  \"\xe9\": 1}").unwrap();
    let (specs, diags) = load_dir(&dir);
    assert_eq!(specs.len(), 1);
    assert_eq!(&*specs[0].path, "a/b/T.json");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].code, "invalid-utf8");
    assert!(diags[0].file.ends_with("bad.json"));
    assert_eq!((diags[0].pos.line, diags[0].pos.col), (2, 4));
    let (specs, diags) = load_dir(&dir.join("missing"));
    assert!(specs.is_empty() && diags.len() == 1 && diags[0].code == "io-error");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Links back to a folder are followed once: three links to `.` were 3^32 folders for the
/// validator and 3^64 for `--schemas`, whose walk never ended.
#[cfg(unix)]
#[test]
fn folders_linked_to_themselves_are_read_once() {
    let dir = std::env::temp_dir().join(format!("kinspect-load-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let ok = r#"{"type": "data", "name": "T", "validVersions": "0", "fields": []}"#;
    std::fs::write(dir.join("sub/T.json"), ok).unwrap();
    for l in ["a", "b", "c"] {
        std::os::unix::fs::symlink(".", dir.join(l)).unwrap();
        std::os::unix::fs::symlink("..", dir.join("sub").join(l)).unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || {
        let loaded = load_dir(&d);
        let inputs = kinspect::schema::files::read_inputs(&[d]).map(|i| i.files.len());
        let _ = tx.send((loaded, inputs));
    });
    let ((specs, diags), inputs) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the walk ends within a minute");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(specs.len(), 1, "one spec, read once");
    assert_eq!(&*specs[0].path, "sub/T.json");
    assert_eq!(inputs, Ok(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mutated_specs_never_panic_and_positions_stay_in_the_file() {
    let base = r#"// c
{ "apiKey": 1, "type": "request", "name": "FetchRequest", "validVersions": "0-3", "flexibleVersions": "2+",
  /* block */ "listeners": ["broker"], "latestVersionUnstable": false,
  "fields": [
    { "name": "A", "type": "[]Topic", "versions": "0+", "nullableVersions": "1+", "fields": [
      { "name": "B", "type": "string", "versions": "0+", "entityType": "topicName", "default": "x" },
      { "name": "C", "type": "int32", "taggedVersions": "2+", "tag": 0, "ignorable": true } ]},
    { "name": "D", "type": "Common", "versions": "1+" } ],
  "commonStructs": [ { "name": "Common", "versions": "0+", "fields": [
      { "name": "E", "type": "uuid", "versions": "0+", "mapKey": true } ] } ] }"#;
    let pieces = [
        "\u{a0}", "#", "}", "]", "{", "[", "\"", ",", ":", "//", "/*", "\\", "-", "0", "[]",
        "null", "\u{0}", "é",
    ];
    let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15);
    let lines = base.lines().count() as u32;
    for round in 0..3000 {
        let mut chars: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(chars.len());
            match rng.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => {
                    let p = pieces[rng.below(pieces.len())];
                    for (k, c) in p.chars().enumerate() {
                        chars.insert(at + k, c);
                    }
                }
                _ => chars.truncate(at),
            }
        }
        let text: String = chars.into_iter().collect();
        let (_, diags) = load_spec("m.json", &text);
        for d in &diags {
            assert!(
                d.pos.line >= 1 && d.pos.line <= lines + 4,
                "round {round}: {d}\n{text}"
            );
            assert!(!d.message.is_empty());
        }
    }
}
