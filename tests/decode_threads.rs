//! `decode --format jsonl` on two threads (the default on a two-core machine writing to a file
//! or pipe) prints exactly what one thread prints, with every filter, several inputs at once,
//! annotations and each records mode, and exits with the same code. `KINSPECT_THREADS` picks.

mod common;

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
    for files in &inputs {
        for flags in flag_sets {
            let mut args = vec!["decode", "--format", "jsonl"];
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
