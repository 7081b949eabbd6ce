//! `kinspect validate-schema` as users run it: exit codes (0 clean, 1 errors, 2 usage or I/O),
//! the text format with help lines and a summary, color only when asked, JSON with every field,
//! and --baseline with a folder or the built-in protocol.

use crate::common;

use std::path::PathBuf;

fn fixture(p: &str) -> String {
    PathBuf::from("tests/fixtures")
        .join(p)
        .display()
        .to_string()
}

#[test]
fn a_valid_folder_exits_0_with_a_summary() {
    let o = common::kinspect(&["validate-schema", &fixture("schemas/valid")]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stdout(&o));
    assert_eq!(
        common::stdout(&o),
        "2 files checked under Kafka 4.3.1: 0 errors, 0 warnings, 0 info\n"
    );
}

#[test]
fn the_built_in_protocol_validates_under_each_release() {
    for (release, name) in [("4.3", "4.3.1"), ("3.9.0", "3.9.0")] {
        let o = common::kinspect(&["validate-schema", "--release", release]);
        assert_eq!(o.status.code(), Some(0), "{}", common::stdout(&o));
        let out = common::stdout(&o);
        let last = out.lines().last().unwrap_or("");
        assert!(
            last.contains(&format!("checked under Kafka {name}: 0 errors")),
            "{last}"
        );
    }
}

#[test]
fn the_seeds_exit_1_with_located_errors_and_help_lines() {
    let o = common::kinspect(&["validate-schema", &fixture("seeds")]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    let line = out
        .lines()
        .find(|l| {
            l.starts_with("tests/fixtures/seeds/AlterIsrRequest.json:24:")
                && l.contains("error[unknown-property]")
        })
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(" Topics.Partitions.IsLeaderRecovering: "),
        "{line}"
    );
    let next = out.lines().skip_while(|l| *l != line).nth(1).unwrap_or("");
    assert_eq!(next, "  help: did you mean `ignorable`?");
    assert!(
        !out.contains('\x1b'),
        "no color when stdout is not a terminal"
    );
    assert!(out
        .lines()
        .last()
        .unwrap()
        .starts_with("5 files checked under Kafka 4.3.1: "));
}

#[test]
fn color_only_when_asked() {
    let o = common::kinspect(&[
        "--color",
        "always",
        "validate-schema",
        &fixture("seeds/VoteRequest.json"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stdout(&o).contains("\x1b[1;31merror[invalid-type]\x1b[0m"),
        "{}",
        common::stdout(&o)
    );
    let o = common::kinspect(&[
        "--color",
        "never",
        "validate-schema",
        &fixture("seeds/VoteRequest.json"),
    ]);
    assert!(!common::stdout(&o).contains('\x1b'));
}

#[test]
fn json_output_carries_every_field() {
    let o = common::kinspect(&[
        "validate-schema",
        "--format",
        "json",
        "--release",
        "3.9",
        &fixture("seeds/PartitionRecord.json"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(v["release"], "3.9.0");
    assert_eq!(v["files"], 1);
    let diags = v["diagnostics"].as_array().unwrap();
    let errors = diags.iter().filter(|d| d["severity"] == "error").count();
    assert_eq!(v["errors"], errors);
    let t = diags
        .iter()
        .find(|d| d["code"] == "invalid-type")
        .expect("booleanbool");
    assert_eq!(t["line"], 23);
    assert_eq!(t["column"], 47);
    assert_eq!(t["path"], "IsLeaderRecovering");
    assert_eq!(t["suggestion"], "bool");
    assert_eq!(t["file"], fixture("seeds/PartitionRecord.json"));
    assert!(t["message"].as_str().unwrap().contains("booleanbool"));
    let nbsp = diags
        .iter()
        .find(|d| d["code"] == "non-json-whitespace")
        .expect("U+00A0");
    assert_eq!(
        (nbsp["line"].as_u64(), nbsp["column"].as_u64()),
        (Some(25), Some(3))
    );
    assert!(nbsp["suggestion"].is_null());
}

#[test]
fn usage_and_io_failures_exit_2() {
    for args in [
        &["validate-schema", "tests/fixtures/no-such-folder"][..],
        &[
            "validate-schema",
            "--release",
            "2.8",
            &fixture("schemas/valid"),
        ],
        &[
            "validate-schema",
            "--format",
            "xml",
            &fixture("schemas/valid"),
        ],
        &[
            "validate-schema",
            "--baseline",
            "tests/fixtures/no-such-folder",
            &fixture("schemas/valid"),
        ],
    ] {
        let o = common::kinspect(args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(!o.stderr.is_empty(), "{args:?}: the failure is explained");
    }
}

#[test]
fn baseline_folder_tells_renames_from_breaking_changes() {
    let base = fixture("schemas/compat/base");
    let o = common::kinspect(&[
        "validate-schema",
        "--baseline",
        &base,
        &fixture("schemas/compat/renamed"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "a rename keeps the wire: {}",
        common::stdout(&o)
    );
    assert!(
        common::stdout(&o)
            .contains("EchoRequest.json:13:7: info[compat-field-renamed] Remark: Remark was Note"),
        "{}",
        common::stdout(&o)
    );

    let o = common::kinspect(&[
        "validate-schema",
        "--baseline",
        &base,
        &fixture("schemas/compat/added"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    assert!(
        out.contains("EchoResponse.json:9:7: error[compat-field-added] ThrottleTimeMs: "),
        "{out}"
    );
    assert!(out.contains("version(s) 1-2"), "{out}");
}

/// `--baseline DIR` and `--schemas DIR` take a folder as a whole and refuse it the same way: every
/// error of every file listed at its place, not only the first; a folder without specs in one
/// line.
#[test]
fn a_baseline_folder_with_errors_is_refused_as_the_schemas_option_refuses_it() {
    let dir = scratch("refused-folder");
    // Two files, one mistake each, at places computed from the text written.
    let typo = "{\"apiKey\": 0, \"type\": \"request\", \"name\": \"ARequest\",\n\
                \"validVersions\": \"0\", \"flexibleVersions\": \"none\",\n\
                \"fields\": [\n  {\"name\": \"Flag\", \"type\": \"booleanbool\", \"versions\": \"0+\"}\n]}\n";
    let unknown = "{\"apiKey\": 1, \"type\": \"request\", \"name\": \"BRequest\",\n\
                   \"validVersions\": \"0\", \"flexibleVersions\": \"none\", \"fieldz\": [],\n\
                   \"fields\": []}\n";
    std::fs::write(dir.join("A.json"), typo).unwrap();
    std::fs::write(dir.join("B.json"), unknown).unwrap();
    let place = |text: &str, needle: &str| {
        let (n, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(needle))
            .unwrap();
        (n + 1, line.find(needle).unwrap() + 1)
    };
    let shown = dir.display().to_string();
    let (al, ac) = place(typo, "\"booleanbool\"");
    let (bl, bc) = place(unknown, "\"fieldz\"");
    let expected_a = format!("  {shown}/A.json:{al}:{ac}: error[invalid-type] Flag: ");
    let expected_b = format!("  {shown}/B.json:{bl}:{bc}: error[unknown-property]");

    let valid = fixture("schemas/valid");
    let capture = common::repo().join("captures/mock-kafkajs.pcap");
    let baseline = common::kinspect(&["validate-schema", "--baseline", &shown, &valid]);
    let schemas = common::kinspect(&[
        "--schemas",
        &shown,
        "decode",
        "-f",
        "summary",
        capture.to_str().unwrap(),
    ]);
    let mut listed = Vec::new();
    for (o, option, command) in [
        (&baseline, "--baseline", "validate-schema"),
        (&schemas, "--schemas", "decode"),
    ] {
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{option}: {err}");
        assert!(o.stdout.is_empty(), "{option}: nothing decoded or checked");
        let mut lines = err.lines();
        assert_eq!(
            lines.next(),
            Some(format!("kinspect {command}: {option} {shown}: the folder has errors:").as_str()),
            "{err}"
        );
        let rest: Vec<&str> = lines.collect();
        assert!(
            rest.iter().any(|l| l.starts_with(&expected_a)),
            "{option}: {expected_a}\n{err}"
        );
        assert!(
            rest.iter().any(|l| l.starts_with(&expected_b)),
            "{option}: {expected_b}\n{err}"
        );
        listed.push(rest.join("\n"));
    }
    assert_eq!(listed[0], listed[1], "both options list the same errors");

    // No spec at all: one line, for both.
    let empty = scratch("refused-empty");
    let e = empty.display().to_string();
    let o = common::kinspect(&["validate-schema", "--baseline", &e, &valid]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("kinspect validate-schema: --baseline {e}: no *.json spec files in this folder\n")
    );
    let o = common::kinspect(&["--schemas", &e, "decode", capture.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!("kinspect decode: --schemas {e}: no *.json spec files in this folder\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn baseline_builtin_flags_the_vote_draft() {
    let o = common::kinspect(&[
        "validate-schema",
        "--baseline",
        "builtin",
        &fixture("seeds/VoteRequest.json"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    assert!(
        out.contains(
            "VoteRequest.json:27:11: error[compat-field-added] Topics.Partitions.PreVote: "
        ),
        "{out}"
    );
}

#[test]
fn schemas_folder_is_validated_when_no_path_is_given() {
    let o = common::kinspect(&["--schemas", &fixture("seeds"), "validate-schema"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stdout(&o)
            .lines()
            .last()
            .unwrap()
            .starts_with("5 files checked under Kafka 4.3.1: "),
        "{}",
        common::stdout(&o)
    );
}

#[test]
fn a_file_that_is_not_utf8_is_an_error_at_its_place() {
    let dir = std::env::temp_dir().join(format!("kinspect-validate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("Latin1.json");
    // "café" in Latin-1 on line 2: the byte 0xE9 is not UTF-8.
    std::fs::write(&path, b"{\n  \"name\": \"caf\xe9\"\n}\n").unwrap();
    let o = common::kinspect(&[
        "validate-schema",
        "--format",
        "json",
        path.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "invalid-utf8");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(2), Some(15))
    );
}

#[test]
fn an_oversized_file_is_refused_without_reading_it() {
    let dir = std::env::temp_dir().join(format!("kinspect-validate-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("Huge.json");
    // A sparse 1 GiB file: refused on its size, so the run stays instant and small.
    std::fs::File::create(&path)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let o = common::kinspect(&["validate-schema", dir.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    assert!(
        out.contains("Huge.json:1:1: error[file-too-large]: file is 1073741824 bytes"),
        "{out}"
    );
}

/// Past the thousand diagnostics listed per file, the rest are one `diagnostics-suppressed`
/// line, and the summary and the JSON counts still count every one of them.
#[test]
fn diagnostics_past_the_listed_thousand_are_counted_in_the_summary() {
    let dir = std::env::temp_dir().join(format!("kinspect-many-diags-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 3,000 numbers where field objects belong: 3,000 `wrong-json-type` errors, one a line.
    let text = format!(
        "{{\n\"apiKey\": 40, \"type\": \"request\", \"name\": \"ExpireDelegationTokenRequest\",\n\
         \"validVersions\": \"0-2\", \"flexibleVersions\": \"2+\",\n\"fields\": [\n{}]\n}}\n",
        vec!["0"; 3000].join(",\n")
    );
    let spec = dir.join("ExpireDelegationTokenRequest.json");
    std::fs::write(&spec, text).unwrap();
    let spec = spec.display().to_string();

    let o = common::kinspect(&["validate-schema", &spec]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("error[wrong-json-type]"))
            .count(),
        1000
    );
    let s = lines
        .iter()
        .find(|l| l.contains("[diagnostics-suppressed]"))
        .unwrap_or_else(|| panic!("{out}"));
    // The first number is on line 5, so the 1,001st is on line 1,005.
    assert!(
        s.starts_with(&format!(
            "{spec}:1005:1: error[diagnostics-suppressed]: 2000 more"
        )),
        "{s}"
    );
    let listed_errors = lines
        .iter()
        .filter(|l| l.contains(": error[") && !l.contains("suppressed"))
        .count();
    let total = listed_errors + 2000;
    assert_eq!(
        *lines.last().unwrap(),
        format!(
            "1 file checked under Kafka 4.3.1: {total} errors, 0 warnings, 0 info (2000 of them not listed)"
        )
    );

    let o = common::kinspect(&["validate-schema", "--format", "json", &spec]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["errors"], total);
    assert_eq!(v["not_listed"], 2000);
    assert_eq!(
        v["diagnostics"].as_array().unwrap().len(),
        listed_errors + 1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kinspect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Over a run, at most 10,000 diagnostics are listed; one more counts the rest, and the summary
/// still counts them all.
#[test]
fn a_run_lists_at_most_ten_thousand_diagnostics_and_counts_the_rest() {
    use kinspect::limits::{MAX_DIAGNOSTICS_PER_SPEC_FILE, MAX_DIAGNOSTICS_PER_SPEC_RUN};
    let dir = scratch("run-cap");
    // Twelve files of 1,500 misplaced numbers: each lists its first thousand and one
    // `diagnostics-suppressed` for 500 more; the run lists the first 10,000 of those.
    let files = 12;
    for k in 0..files {
        let text = format!(
            "{{\"apiKey\": {k}, \"type\": \"request\", \"name\": \"M{k}Request\", \
             \"validVersions\": \"0\", \"flexibleVersions\": \"none\",\n\"fields\": [\n{}]\n}}\n",
            vec!["0"; 1500].join(",\n")
        );
        std::fs::write(dir.join(format!("M{k:02}Request.json")), text).unwrap();
    }
    // Each file's own diagnostics, counted one file at a time (under both caps by far).
    let mut total = 0;
    for k in 0..files {
        let f = dir
            .join(format!("M{k:02}Request.json"))
            .display()
            .to_string();
        let o = common::kinspect(&["validate-schema", "--format", "json", &f]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["not_listed"], 1500 - MAX_DIAGNOSTICS_PER_SPEC_FILE, "{f}");
        total += ["errors", "warnings", "infos"]
            .map(|k| v[k].as_u64().unwrap())
            .iter()
            .sum::<u64>();
    }
    let o = common::kinspect(&[
        "validate-schema",
        "--format",
        "json",
        &dir.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    let run: Vec<_> = diags
        .iter()
        .filter(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .ends_with("listed in one run")
        })
        .collect();
    assert_eq!(
        run.len(),
        1,
        "one diagnostic counts what the run does not list"
    );
    // What is listed: the first 10,000 in file order, then that one. The findings across files
    // (a request with no response, which each file alone has too) are among those counted.
    assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_SPEC_RUN + 1);
    let count = |v: &serde_json::Value| {
        ["errors", "warnings", "infos"]
            .map(|k| v[k].as_u64().unwrap())
            .iter()
            .sum::<u64>()
    };
    assert_eq!(count(&v), total, "the run counts what its files count");
    let listed = diags
        .iter()
        .filter(|d| d["code"] != "diagnostics-suppressed")
        .count() as u64;
    assert_eq!(v["not_listed"].as_u64().unwrap(), total - listed);
    // It stands at the first diagnostic not listed, in place order: nine files list 1,002 each
    // (the request with no response on line 1, a thousand numbers, the one counting their other
    // 500), the tenth its line-1 finding and its first 981 numbers, so the 982nd number of the
    // tenth file, on line 984 (the first is on line 3).
    assert!(
        run[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("M09Request.json"),
        "{}",
        run[0]
    );
    assert_eq!(run[0]["line"], 984, "{}", run[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Past 10,000 files, or 64 MiB of them, the rest are not read: one diagnostic says where the
/// reading stopped and why, and the files before it are checked as usual.
#[test]
fn files_past_the_limits_on_count_and_bytes_are_not_read() {
    use kinspect::limits::{MAX_SPEC_FILES, MAX_SPEC_FILE_BYTES, MAX_SPEC_INPUT_BYTES};
    let dir = scratch("many-files");
    // Ten more than the limit: the files read are the first 10,000 in name order, whatever
    // order the file system lists them in, and the first not read is named.
    for k in 0..MAX_SPEC_FILES + 10 {
        std::fs::write(dir.join(format!("f{k:05}.json")), "{}").unwrap();
    }
    let o = common::kinspect(&["validate-schema", &dir.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::stdout(&o);
    let stop: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("[too-many-files]"))
        .collect();
    assert_eq!(stop.len(), 1, "{out}");
    assert!(
        stop[0].contains(&format!("more than {MAX_SPEC_FILES} spec files given")),
        "{}",
        stop[0]
    );
    let first_not_read = dir.join(format!("f{MAX_SPEC_FILES:05}.json"));
    assert!(
        stop[0].starts_with(&format!("{}:1:1: ", first_not_read.display())),
        "{}",
        stop[0]
    );

    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with(&format!("{MAX_SPEC_FILES} files checked")),
        "{}",
        out.lines().last().unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);

    // Files of 15 MiB (under the per-file limit): four fit in 64 MiB, the fifth does not.
    let dir = scratch("many-bytes");
    let size = 15 << 20;
    assert!(size < MAX_SPEC_FILE_BYTES && 5 * size as u64 > MAX_SPEC_INPUT_BYTES);
    let text = format!("{{}}{}", " ".repeat(size - 2));
    for k in 0..6 {
        std::fs::write(dir.join(format!("f{k}.json")), &text).unwrap();
    }
    let o = common::kinspect(&["validate-schema", &dir.display().to_string()]);
    let out = common::stdout(&o);
    let stop: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("[input-too-large]"))
        .collect();
    assert_eq!(stop.len(), 1, "{out}");
    let f4 = dir.join("f4.json").display().to_string();
    assert!(
        stop[0].starts_with(&format!("{f4}:1:1: error[input-too-large]")),
        "{}",
        stop[0]
    );
    assert!(
        stop[0].contains(&format!("hold {} bytes and this one {size}", 4 * size))
            && stop[0].ends_with("this file and the 1 after it are not read"),
        "{}",
        stop[0]
    );
    assert!(
        out.lines().last().unwrap().starts_with("4 files checked"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// ExpireDelegationTokenRequest with 12,000 `int32` fields named `PREFIX0`, `PREFIX1`, …: two
/// prefixes make 12,000 renames.
fn renamed_fields_spec(prefix: &str) -> String {
    let fields: Vec<String> = (0..12_000)
        .map(|i| {
            format!("{{\"name\": \"{prefix}{i}\", \"type\": \"int32\", \"versions\": \"0+\"}}")
        })
        .collect();
    format!(
        "{{\"apiKey\": 40, \"type\": \"request\", \"name\": \"ExpireDelegationTokenRequest\", \
         \"validVersions\": \"0-2\", \"flexibleVersions\": \"2+\", \"fields\": [\n{}\n]}}\n",
        fields.join(",\n")
    )
}

/// A comparison with a baseline adds its findings after the run's own cap: the report as a whole
/// still lists at most 10,000 and counts the rest.
#[test]
fn baseline_findings_are_listed_within_the_run_cap_and_counted() {
    use kinspect::limits::MAX_DIAGNOSTICS_PER_SPEC_RUN;
    let dir = scratch("compat-cap");
    // 12,000 fields, each renamed in the baseline: 12,000 `compat-field-renamed` findings.
    for (sub, prefix) in [("new", "F"), ("base", "G")] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(
            dir.join(sub).join("ExpireDelegationTokenRequest.json"),
            renamed_fields_spec(prefix),
        )
        .unwrap();
    }
    let (new, base) = (
        dir.join("new").display().to_string(),
        dir.join("base").display().to_string(),
    );
    let o = common::kinspect(&[
        "validate-schema",
        "--format",
        "json",
        "--baseline",
        &base,
        &new,
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), MAX_DIAGNOSTICS_PER_SPEC_RUN + 1);
    let renamed = diags
        .iter()
        .filter(|d| d["code"] == "compat-field-renamed")
        .count() as u64;
    let others = diags
        .iter()
        .filter(|d| d["code"] != "compat-field-renamed" && d["code"] != "diagnostics-suppressed")
        .count() as u64;
    assert_eq!(
        v["not_listed"].as_u64().unwrap(),
        12_000 - renamed,
        "every rename is listed or counted"
    );
    assert_eq!(
        v["infos"].as_u64().unwrap()
            + v["errors"].as_u64().unwrap()
            + v["warnings"].as_u64().unwrap(),
        12_000 + others
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A comparison cut short by its work limit says so even when the report is past its cap: the
/// `compat-incomplete` warning is listed like `too-many-files`, not counted away.
#[test]
fn an_incomplete_comparison_is_listed_past_the_run_cap() {
    use crate::costly_spec::costly_spec;
    use kinspect::limits::MAX_DIAGNOSTICS_PER_SPEC_RUN;
    let dir = scratch("compat-incomplete");
    // 12,000 renamed fields first (ExpireDelegationTokenRequest sorts first): more findings
    // than the report lists. Then a pair whose comparison runs out of work.
    for (sub, prefix, reverse) in [("new", "F", true), ("base", "G", false)] {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("ExpireDelegationTokenRequest.json"),
            renamed_fields_spec(prefix),
        )
        .unwrap();
        std::fs::write(
            d.join("ZRequest.json"),
            costly_spec("ZRequest", reverse, true),
        )
        .unwrap();
    }
    let (new, base) = (dir.join("new"), dir.join("base"));
    let o = common::kinspect(&[
        "validate-schema",
        "--format",
        "json",
        "--baseline",
        base.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    assert!(
        v["not_listed"].as_u64().unwrap() > 0,
        "the report is past its cap"
    );
    let incomplete: Vec<&serde_json::Value> = diags
        .iter()
        .filter(|d| d["code"] == "compat-incomplete")
        .collect();
    assert_eq!(incomplete.len(), 1, "{incomplete:?}");
    assert!(
        incomplete[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("/ZRequest.json")
            && incomplete[0]["path"] == "validVersions",
        "{:?}",
        incomplete[0]
    );
    assert_eq!(
        diags.len(),
        MAX_DIAGNOSTICS_PER_SPEC_RUN + 2,
        "the cap, its count, and it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A folder whose listing is longer than the walk holds to sort is still read whole: the rest of
/// it comes in the file system's order (38,000 folders and 4,000 spec files: 42,000 entries,
/// 40,000 held). And past 40,000 folders in all the walk stops and says so.
#[test]
fn a_listing_too_long_to_sort_is_read_whole_and_folders_are_bounded() {
    let dir = scratch("long-listing");
    for k in 0..38_000 {
        std::fs::create_dir(dir.join(format!("d{k:05}"))).unwrap();
    }
    for k in 0..4_000 {
        std::fs::write(dir.join(format!("f{k:05}.json")), "{}").unwrap();
    }
    let o = common::kinspect(&["validate-schema", &dir.display().to_string()]);
    let out = common::stdout(&o);
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("4000 files checked"),
        "{}",
        out.lines().last().unwrap()
    );
    for k in 38_000..40_001 {
        std::fs::create_dir(dir.join(format!("d{k:05}"))).unwrap();
    }
    let o = common::kinspect(&["validate-schema", &dir.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("more than 40000 folders under the paths given"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
