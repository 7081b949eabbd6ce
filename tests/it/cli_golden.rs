//! Golden CLI tests: each directory under tests/golden/ is one case, input and expected output
//! side by side (wasm-tools `tests/cli` style):
//! - `cmd`: the arguments (one line, whitespace-separated; `#` lines are comments), run in the
//!   case's directory with `--color never` unless the case sets `--color` itself;
//! - `env` (optional): `NAME=value` lines added to the environment;
//! - `stdin` (optional): fed to the command's standard input;
//! - `expected.stdout`, `expected.stderr`, `expected.code`: what must come out.
//!
//! `BLESS=1 cargo test --test cli_golden` rewrites the expected files from the current output;
//! review the diff (and each case's README) before committing: a golden file only blesses what
//! was checked against the bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// No case may take longer (hostile inputs must fail fast).
const TIMEOUT: Duration = Duration::from_secs(20);

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("cmd").is_file())
        .collect();
    v.sort();
    v
}

struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: i32,
    took: Duration,
}

fn run_case(dir: &Path) -> Outcome {
    let cmd = std::fs::read_to_string(dir.join("cmd")).unwrap();
    let mut args: Vec<String> = cmd
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect();
    if !args.iter().any(|a| a.starts_with("--color")) {
        args.insert(0, "--color=never".into());
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_kinspect"));
    let stdin = std::fs::read(dir.join("stdin")).ok();
    c.args(&args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    if let Ok(env) = std::fs::read_to_string(dir.join("env")) {
        for l in env.lines().filter(|l| !l.trim().is_empty()) {
            let (k, v) = l.split_once('=').expect("env lines are NAME=value");
            c.env(k, v);
        }
    }
    let start = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(data) = stdin {
        let mut si = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut si, &data);
        });
    }
    // Read the pipes on threads so a big output cannot block the child.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).unwrap();
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).unwrap();
        v
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("{}: still running after {TIMEOUT:?}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
        code: status.code().unwrap_or(-1),
        took: start.elapsed(),
    }
}

#[test]
fn golden_cases() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    let all = cases();
    assert!(!all.is_empty(), "no golden cases found");
    for dir in &all {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let out = run_case(dir);
        let code = format!("{}\n", out.code);
        let files = [
            ("expected.stdout", &out.stdout[..]),
            ("expected.stderr", &out.stderr[..]),
            ("expected.code", code.as_bytes()),
        ];
        for (file, got) in files {
            let p = dir.join(file);
            if bless {
                std::fs::write(&p, got).unwrap();
                continue;
            }
            let want = std::fs::read(&p)
                .unwrap_or_else(|_| panic!("{name}: {file} missing (run with BLESS=1 and review)"));
            if want != got {
                failures.push(format!(
                    "{name}: {file} differs\n--- expected\n{}\n--- got\n{}",
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(got)
                ));
            }
        }
        eprintln!("golden {name}: exit {} in {:?}", out.code, out.took);
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
