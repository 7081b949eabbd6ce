//! A reader that goes away (`kinspect apis | head -1`) or a standard error that cannot be
//! written (`2>&-` on a pipe, `2>/dev/full`) must end the run quietly: exit 0 for a closed
//! output, the run's own exit code when only a message was lost, and never the
//! "failed printing to stdout: Broken pipe" panic (exit 101) `print!`/`eprintln!` give.
//!
//! The pipes are closed before kinspect starts (their reader is a process that has already
//! exited), so every write fails with EPIPE whatever the timing.
#![cfg(unix)]

use crate::common;
use std::process::{Command, Stdio};

/// The write end of a pipe whose only reader has exited: every write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut reader = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .arg("--version")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run kinspect --version");
    let w = reader.stdin.take().expect("piped stdin");
    reader.wait().expect("wait for the reader");
    Stdio::from(w)
}

/// Runs kinspect with standard output into a closed pipe; returns (exit code, stderr).
fn into_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    into_closed_stdout_with(args, &[])
}

/// The same, with environment variables `env` set.
fn into_closed_stdout_with(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(common::repo())
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .expect("run kinspect");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs kinspect with standard error `err` (output discarded); returns the exit code.
fn with_stderr(args: &[&str], err: Stdio) -> Option<i32> {
    Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .current_dir(common::repo())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .status()
        .expect("run kinspect")
        .code()
}

fn assert_quiet_exit_0(args: &[&str]) {
    let (code, err) = into_closed_stdout(args);
    assert!(
        !err.contains("panicked") && !err.contains("failed printing"),
        "kinspect {args:?} into a closed pipe panicked: {err}"
    );
    assert_eq!(
        code,
        Some(0),
        "kinspect {args:?} into a closed pipe; stderr: {err}"
    );
    assert!(
        err.is_empty(),
        "kinspect {args:?}: a closed pipe is not news: {err}"
    );
}

#[test]
fn apis_listing_into_a_closed_pipe_exits_0_without_a_panic() {
    assert_quiet_exit_0(&["apis"]);
}

#[test]
fn apis_json_into_a_closed_pipe_exits_0_without_a_panic() {
    assert_quiet_exit_0(&["apis", "--format", "json"]);
}

#[test]
fn apis_fields_at_a_version_into_a_closed_pipe_exits_0_without_a_panic() {
    assert_quiet_exit_0(&["apis", "Produce", "--version", "13"]);
}

#[test]
fn validate_schema_report_into_a_closed_pipe_exits_0() {
    // It used to end with exit 2, as if the schema could not be read.
    assert_quiet_exit_0(&["validate-schema", "tests/fixtures/schemas/valid"]);
}

#[test]
fn bundle_into_a_closed_pipe_exits_0_without_an_error_message() {
    // It used to say "cannot write standard output: Broken pipe" and exit 2.
    assert_quiet_exit_0(&["bundle", "--release", "4.3.1=tests/fixtures/schemas/valid"]);
}

#[test]
fn completions_man_and_report_into_a_closed_pipe_exit_0_without_a_panic() {
    // clap_complete panicked on a failed write before its script went through a buffer.
    assert_quiet_exit_0(&["completions", "bash"]);
    assert_quiet_exit_0(&["man"]);
    assert_quiet_exit_0(&["report", "captures/mock-kcat-none.pcap", "-o", "-"]);
}

#[test]
fn corpus_counts_into_a_closed_pipe_exit_0_without_a_panic() {
    let out = std::env::temp_dir().join(format!("kinspect-closed-pipe-{}", std::process::id()));
    let dir = out.to_str().unwrap();
    assert_quiet_exit_0(&["corpus", "captures/mock-kcat-none.pcap", "-o", dir]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn decode_error_to_a_closed_stderr_keeps_exit_2_without_a_panic() {
    // decode still reports with eprintln!; the panic hook of main.rs catches its failure.
    let code = with_stderr(&["decode", "/nonexistent"], closed_pipe());
    assert_eq!(
        code,
        Some(2),
        "decode /nonexistent with stderr a closed pipe"
    );
}

#[test]
fn apis_error_to_a_closed_stderr_keeps_exit_2_without_a_panic() {
    let code = with_stderr(&["apis", "NoSuchApi"], closed_pipe());
    assert_eq!(code, Some(2), "apis NoSuchApi with stderr a closed pipe");
}

#[cfg(target_os = "linux")]
#[test]
fn decode_error_to_a_full_stderr_keeps_exit_2_without_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let code = with_stderr(&["decode", "/nonexistent"], Stdio::from(full));
    assert_eq!(code, Some(2), "decode /nonexistent 2>/dev/full");
}

/// The records table written to standard output (`-o -`) ends quietly when its reader goes away,
/// on both threads and on one: the parquet crate's wrapped `BrokenPipe`, and the writer thread's,
/// reach the run as `BrokenPipe` (they were "parquet: External: Broken pipe", exit 2).
#[test]
fn a_parquet_table_into_a_closed_pipe_exits_0() {
    for threads in ["2", "1"] {
        let (code, err) = into_closed_stdout_with(
            &[
                "records",
                "-f",
                "parquet",
                "-o",
                "-",
                "captures/mock-kcat-zstd.pcap",
            ],
            &[("KINSPECT_THREADS", threads)],
        );
        assert_eq!(code, Some(0), "threads {threads}: {err}");
        assert!(err.is_empty(), "threads {threads}: {err}");
    }
}
