//! The README's examples are real: every ```` ```console ```` block is run, command by command
//! (`$ ` lines, with `kinspect` the binary under test), and its output compared with the lines
//! that follow the command. A line that is only `...` stands for any number of lines (an
//! excerpt). `BLESS=1 cargo test readme` rewrites the outputs of blocks without `...` from the
//! commands.

use crate::common;
use std::process::Command;

struct Cmd {
    /// 0-based line of the `$ ` line in README.md.
    line: usize,
    text: String,
    /// Indexes into the README's lines of the expected output.
    expected: std::ops::Range<usize>,
}

/// The console blocks: their commands, each with the range of README lines it expects.
fn console_blocks(lines: &[&str]) -> Vec<Vec<Cmd>> {
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        let mut cmds: Vec<Cmd> = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim_end() != "```" {
            if let Some(text) = lines[i].strip_prefix("$ ") {
                cmds.push(Cmd {
                    line: i,
                    text: text.to_string(),
                    expected: i + 1..i + 1,
                });
            } else if let Some(c) = cmds.last_mut() {
                c.expected.end = i + 1;
            } else {
                panic!(
                    "README.md:{}: a console block must start with a `$ ` command",
                    i + 1
                );
            }
            i += 1;
        }
        blocks.push(cmds);
        i += 1;
    }
    blocks
}

/// Runs a block's commands in one shell (so `echo $?` sees the previous command), from the
/// repository root, with the binary under test first on PATH. Returns each command's output
/// (stdout and stderr together, in order).
fn run_block(cmds: &[Cmd]) -> Vec<String> {
    const SEP: &str = "\u{1e}";
    let mut script = String::from("exec 2>&1\n");
    for c in cmds {
        script.push_str(&c.text);
        script.push_str(&format!("\n__rc=$?; printf '{SEP}\\n'; (exit $__rc)\n"));
    }
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_kinspect"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(common::repo())
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .env_remove("KINSPECT_THREADS")
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts: Vec<String> = text
        .split(&format!("{SEP}\n"))
        .map(str::to_string)
        .collect();
    parts.truncate(cmds.len());
    parts
}

fn is_wildcard(line: &str) -> bool {
    line.trim() == "..."
}

/// Whether `actual` matches `expected`, where a `...` line matches any run of lines.
fn matches(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if is_wildcard(e) => {
            (0..=actual.len()).any(|k| matches(rest, &actual[k..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, arest)| e.trim_end() == a.trim_end() && matches(rest, arest)),
    }
}

#[test]
fn every_console_example_is_what_its_command_prints() {
    let path = common::repo().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let bless = std::env::var_os("BLESS").is_some();
    let mut replace: Vec<(std::ops::Range<usize>, Vec<String>)> = Vec::new();
    let mut failures = Vec::new();
    let blocks = console_blocks(&lines);
    assert!(
        blocks.len() >= 5,
        "README.md has {} console blocks",
        blocks.len()
    );
    for cmds in &blocks {
        // The Parquet examples query the tables with DuckDB (scripts/sql.py).
        if !cfg!(kinspect_duckdb) && cmds.iter().any(|c| c.text.contains("scripts/sql.py")) {
            eprintln!(
                "SKIPPED README.md:{}: needs python3 with duckdb (pip install duckdb); \
                 see readme_duckdb_examples, listed as ignored",
                cmds[0].line + 1
            );
            continue;
        }
        let outputs = run_block(cmds);
        for (c, out) in cmds.iter().zip(&outputs) {
            let expected = &lines[c.expected.clone()];
            let actual: Vec<&str> = out.lines().collect();
            if matches(expected, &actual) {
                continue;
            }
            if bless && !expected.iter().any(|l| is_wildcard(l)) {
                replace.push((
                    c.expected.clone(),
                    actual.iter().map(|s| s.to_string()).collect(),
                ));
                continue;
            }
            failures.push(format!(
                "README.md:{}: `{}`\n--- README\n{}\n--- printed\n{}",
                c.line + 1,
                c.text,
                expected.join("\n"),
                out.trim_end()
            ));
        }
        assert_eq!(
            outputs.len(),
            cmds.len(),
            "a command of the block at README.md:{} did not finish",
            cmds[0].line
        );
    }
    if !replace.is_empty() {
        let mut new: Vec<String> = Vec::new();
        let mut at = 0;
        for (range, with) in &replace {
            new.extend(lines[at..range.start].iter().map(|s| s.to_string()));
            new.extend(with.iter().cloned());
            at = range.end;
        }
        new.extend(lines[at..].iter().map(|s| s.to_string()));
        std::fs::write(&path, new.join("\n") + "\n").expect("write README.md");
        eprintln!(
            "BLESS: rewrote {} example outputs in README.md",
            replace.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Listed as ignored where DuckDB is missing, so that the skipped README examples show in the
/// test summary (the main test runs them when it is there).
#[test]
#[cfg_attr(
    not(kinspect_duckdb),
    ignore = "needs python3 with duckdb (pip install duckdb): the README's DuckDB examples"
)]
fn readme_duckdb_examples() {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).expect("README.md");
    assert!(readme.contains("scripts/sql.py"));
    let o = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "python3 cannot import duckdb");
}

#[test]
fn excerpt_lines_match_any_run_and_nothing_else() {
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a", "...", "d"], &["a", "d"]));
    assert!(!matches(&["a", "...", "d"], &["a", "b"]));
    assert!(!matches(&["a", "b"], &["a", "b", "c"]));
    assert!(matches(&["a  "], &["a"]));
}

/// The first command a newcomer runs (`cargo run --release -- decode FILE` in the README's
/// first `sh` block) succeeds: exit 0, output, no error diagnostics.
#[test]
fn the_first_command_in_the_readme_exits_0() {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).expect("README.md");
    let first = readme
        .lines()
        .find_map(|l| l.trim().strip_prefix("cargo run --release -- "))
        .expect("the README starts with a `cargo run --release -- …` command");
    let args: Vec<&str> = first
        .split('#')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let out = common::kinspect(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "kinspect {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stdout.is_empty(),
        "kinspect {} printed nothing",
        args.join(" ")
    );
}
