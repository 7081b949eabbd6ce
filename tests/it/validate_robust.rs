//! The validator never panics and never stays silent on broken input: every truncation of a
//! real spec, and every spec with one structural character replaced, is validated without a
//! panic, and a truncated file always yields an error that names a place inside the file.

use kinspect::schema::validate::{validate_files, Release};

fn texts() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v = Vec::new();
    for dir in ["seeds", "schemas/valid"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "json") {
                v.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_truncation_is_an_error_at_a_real_place() {
    for (name, text) in texts() {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(17).collect();
        for cut in cuts {
            let part = &text[..cut];
            let lines = part.lines().count().max(1) as u32 + 1;
            for release in Release::ALL {
                let diags = validate_files(&[("t/x.json".into(), part.to_string())], release);
                let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
                assert!(!errors.is_empty(), "{name} cut at byte {cut}: no error");
                for d in errors {
                    assert!(
                        d.pos.line >= 1 && d.pos.line <= lines,
                        "{name} cut at {cut}: {d} is outside the text"
                    );
                }
            }
        }
    }
}

#[test]
fn replacing_any_structural_character_never_panics() {
    for (_, text) in texts() {
        let chars: Vec<char> = text.chars().collect();
        // Every seventh structural character keeps the run short; each kind still appears often.
        let structural = chars
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, '{' | '}' | '[' | ']' | ':' | ',' | '"'));
        for (i, _) in structural.step_by(7) {
            for with in ['{', ']', '"', '\u{a0}'] {
                let mut m = chars.clone();
                m[i] = with;
                let t: String = m.into_iter().collect();
                let files = [("t/x.json".to_string(), t)];
                // Must return (with whatever it finds) for both releases.
                let _ = validate_files(&files, Release::V4_3);
                let _ = validate_files(&files, Release::V3_9);
            }
        }
    }
}

#[test]
fn hostile_numbers_and_nesting_are_refused_cleanly() {
    let deep = format!("{{\"type\":\"data\",\"name\":\"D\",\"validVersions\":\"0\",\"flexibleVersions\":\"0+\",\"fields\":{}}}", "[".repeat(10_000));
    let huge_tag = r#"{"type":"data","name":"D","validVersions":"0","flexibleVersions":"0+","fields":[{"name":"A","type":"int32","versions":"0+","taggedVersions":"0+","tag":99999999999999999999}]}"#;
    let wide = r#"{"type":"data","name":"D","validVersions":"0-32767","flexibleVersions":"0+","fields":[{"name":"A","type":"int64","versions":"0+","default":"-99999999999999999999999999999999999999999999"}]}"#;
    for t in [deep.as_str(), huge_tag, wide] {
        let d = validate_files(&[("t/x.json".into(), t.to_string())], Release::V4_3);
        assert!(d.iter().any(|d| d.is_error()), "{}", &t[..60.min(t.len())]);
    }
}
