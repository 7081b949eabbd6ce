//! `decode --format jsonl` and `--format json` on two threads (the default on a two-core machine
//! writing to a file or pipe) print exactly what one thread prints, with every filter, several inputs at once,
//! annotations and each records mode, and exits with the same code. `KINSPECT_THREADS` picks.

use crate::common;

use std::process::{Command, Output};

fn run(threads: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(args)
        .current_dir(common::repo())
        .env("KINSPECT_THREADS", threads)
        .output()
        .expect("run kinspect")
}

#[test]
fn two_threads_print_what_one_does_through_the_cli() {
    let caps: Vec<String> = common::bundled_captures()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let all: Vec<&str> = caps.iter().map(String::as_str).collect();
    let flag_sets: [&[&str]; 6] = [
        &[],
        &["--errors-only"],
        &["--api-filter", "Produce,Fetch,Metadata"],
        &["--stream", "0,2"],
        &["--annotate", "--records", "raw"],
        &["--records", "checked", "--show-secrets"],
    ];
    let mut inputs: Vec<Vec<&str>> = all.iter().map(|c| vec![*c]).collect();
    inputs.push(all.clone());
    // A JSON array on two threads: every element after `,\n`, the output's first made `[\n`.
    for (files, format) in inputs
        .iter()
        .flat_map(|f| ["jsonl", "json"].map(|fmt| (f, fmt)))
    {
        for flags in flag_sets {
            let mut args = vec!["decode", "--format", format];
            args.extend_from_slice(flags);
            args.extend_from_slice(files);
            let one = run("1", &args);
            let two = run("2", &args);
            assert!(
                one.stdout == two.stdout,
                "{args:?}: the two-thread output differs"
            );
            assert_eq!(one.status.code(), two.status.code(), "{args:?}");
            assert_eq!(one.stderr, two.stderr, "{args:?}");
        }
    }
}

/// A reader that stops early (`| head -1`): the two-thread run ends quietly, without error.
#[test]
fn a_closed_pipe_ends_two_threads_quietly() {
    let caps = common::bundled_captures();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["decode", "--format", "jsonl"])
        .args(&caps)
        .current_dir(common::repo())
        .env("KINSPECT_THREADS", "2")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kinspect");
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_ne!(o.status.code(), Some(2), "a closed pipe is not a failure");
}

fn run_stdin(threads: &str, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kinspect"))
        .args(["decode", "--format", "jsonl", "-"])
        .current_dir(common::repo())
        .env("KINSPECT_THREADS", threads)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kinspect");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    o
}

/// Damaged captures (cut short at several places, bytes flipped throughout) read from a pipe:
/// two threads neither panic nor hang, and print and exit exactly as one thread does.
#[test]
fn damaged_captures_through_two_threads() {
    let caps = common::bundled_captures();
    let mut rng = common::Rng(0x7448_5245_4144);
    let mut with_errors = 0;
    for cap in caps.iter().step_by(3) {
        let bytes = std::fs::read(cap).unwrap();
        let mut cases = vec![
            bytes[..bytes.len() / 3].to_vec(),
            bytes[..bytes.len() * 2 / 3].to_vec(),
        ];
        let mut flipped = bytes.clone();
        // Past the file header, so that the capture is still read as one.
        for _ in 0..flipped.len() / 97 {
            let i = 24 + rng.below(flipped.len() - 24);
            flipped[i] ^= 1 << rng.below(8);
        }
        cases.push(flipped);
        for (k, case) in cases.iter().enumerate() {
            let one = run_stdin("1", case);
            let two = run_stdin("2", case);
            let what = format!("{} case {k}", cap.display());
            assert!(
                !String::from_utf8_lossy(&two.stderr).contains("panicked"),
                "{what}: {}",
                String::from_utf8_lossy(&two.stderr)
            );
            assert!(one.stdout == two.stdout, "{what}: the outputs differ");
            assert_eq!(one.status.code(), two.status.code(), "{what}");
            with_errors += usize::from(two.status.code() == Some(1));
        }
    }
    // The damage shows: most cases carry error diagnostics (exit code 1).
    assert!(
        with_errors >= 5,
        "only {with_errors} damaged cases had errors"
    );
}
