//! Packaging the command line: `kinspect completions SHELL` gives scripts the shells accept
//! (bash loads it and registers the completion; zsh and fish parse theirs when installed), and
//! `kinspect man` a roff page that man (or groff) renders without a warning and that names
//! every subcommand, each of which has its own page too.

use crate::common;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The visible subcommands, from `kinspect --help`.
fn subcommands() -> Vec<String> {
    let help = common::stdout(&common::kinspect(&["--help"]));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| *s != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_loads_the_completion_script() {
    let bin = env!("CARGO_BIN_EXE_kinspect");
    let o = Command::new("bash")
        .args([
            "-c",
            &format!("source <('{bin}' completions bash) && complete -p kinspect"),
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("kinspect"),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let script = common::stdout(&common::kinspect(&["completions", "bash"]));
    for s in subcommands() {
        assert!(script.contains(&s), "bash completion lacks {s}");
    }
}

#[test]
fn zsh_and_fish_scripts_parse() {
    for (shell, check) in [("zsh", "zsh -n"), ("fish", "fish --no-execute")] {
        let script = common::stdout(&common::kinspect(&["completions", shell]));
        assert!(
            script.contains("report") && script.contains("decode"),
            "{shell}"
        );
        if !have(shell) {
            eprintln!(
                "SKIPPED the {shell} parse of zsh_and_fish_scripts_parse: {shell} is not installed"
            );
            continue;
        }
        let path =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("kinspect.{shell}"));
        std::fs::write(&path, script).unwrap();
        let o = Command::new("sh")
            .args(["-c", &format!("{check} '{}'", path.display())])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The page rendered as text, and what the renderer said on stderr.
fn render(roff: &str, name: &str) -> Option<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.1"));
    std::fs::write(&path, roff).unwrap();
    let o = if have("man") {
        Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap()
    } else if have("groff") {
        Command::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .arg(&path)
            .output()
            .unwrap()
    } else {
        eprintln!("SKIPPED rendering {name}(1): neither man nor groff is installed");
        return None;
    };
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some((
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    ))
}

#[test]
fn the_man_page_renders_without_warnings_and_names_every_subcommand() {
    let roff = common::stdout(&common::kinspect(&["man"]));
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH kinspect"),
        "{}",
        &roff[..200.min(roff.len())]
    );
    let subs = subcommands();
    assert!(subs.len() >= 10, "{subs:?}");
    if let Some((text, warnings)) = render(&roff, "kinspect") {
        assert!(warnings.trim().is_empty(), "man warned:\n{warnings}");
        for s in &subs {
            assert!(text.contains(s.as_str()), "kinspect(1) does not name {s}");
        }
    }
    for s in &subs {
        let o = common::kinspect(&["man", s]);
        assert!(o.status.success(), "man {s}");
        let roff = common::stdout(&o);
        if let Some((text, warnings)) = render(&roff, &format!("kinspect-{s}")) {
            assert!(
                warnings.trim().is_empty(),
                "kinspect-{s}(1) warned:\n{warnings}"
            );
            assert!(text.contains(&format!("kinspect-{s}")), "{text}");
        }
    }
    assert_eq!(common::kinspect(&["man", "no-such"]).status.code(), Some(2));
}

#[test]
fn every_subcommand_names_its_output_with_dash_o() {
    let subs = subcommands();
    assert!(subs.len() > 10, "{subs:?}");
    for s in &subs {
        let help = common::stdout(&common::kinspect(&[s, "--help"]));
        assert!(
            help.contains("-o, --output <"),
            "kinspect {s} --help has no -o/--output:\n{help}"
        );
        if help.contains("-f, --format <") {
            assert!(
                help.contains("--format <FORMAT>"),
                "kinspect {s}: -f is not a format"
            );
        }
    }
}

/// `-o FILE` holds exactly what standard output gets without it, and `-o -` is standard output,
/// in every subcommand that prints (probe's is in `probe_fake`).
#[test]
fn dash_o_file_holds_what_standard_output_gets() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dash-o");
    std::fs::create_dir_all(&tmp).unwrap();
    let cap = common::captures_dir().join("mock-kcat-gzip.pcap");
    let cap = cap.to_str().unwrap();
    let jsonl = tmp.join("frames.jsonl");
    let decoded = common::kinspect(&["decode", "-f", "jsonl", cap]);
    std::fs::write(&jsonl, &decoded.stdout).unwrap();
    let jsonl = jsonl.to_str().unwrap();
    let runs: &[&[&str]] = &[
        &["decode", "-f", "jsonl", cap],
        &["decode", "-f", "tree", "--color", "never", cap],
        &["decode", "-f", "fields", "-e", "api", "-e", "topic", cap],
        &["records", cap],
        &["records", "-f", "jsonl", cap],
        &["stats", cap],
        &["stats", "-f", "json", cap],
        &["check", cap],
        &["apis"],
        &["apis", "Produce", "--version", "9", "-f", "json"],
        &["validate-schema", "--color", "never"],
        &["encode", "-f", "hex", jsonl],
        &["encode", jsonl],
        &["completions", "bash"],
        &["man", "records"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let plain = common::kinspect(args);
        assert!(!plain.stdout.is_empty(), "{args:?} printed nothing");
        let file = tmp.join(format!("out-{i}"));
        let f = file.to_str().unwrap();
        let to_file = common::kinspect(&[args, &["-o", f][..]].concat());
        assert!(to_file.stdout.is_empty(), "{args:?} -o FILE still printed");
        assert_eq!(
            (to_file.status.code(), std::fs::read(&file).unwrap()),
            (plain.status.code(), plain.stdout.clone()),
            "{args:?} -o FILE: {}",
            String::from_utf8_lossy(&to_file.stderr)
        );
        let dash = common::kinspect(&[args, &["-o", "-"][..]].concat());
        assert_eq!(
            (dash.status.code(), dash.stdout),
            (plain.status.code(), plain.stdout),
            "{args:?} -o -"
        );
    }
    // A file that cannot be created is a failure that names it, with nothing written.
    let bad = tmp.join("no-such-folder").join("x");
    for args in [&["stats", cap][..], &["apis"], &["check", cap]] {
        let o = common::kinspect(&[args, &["-o", bad.to_str().unwrap()][..]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(2) && err.contains("no-such-folder"),
            "{args:?}: {:?} {err}",
            o.status.code()
        );
    }
}

/// `-o FILE` over a large file already there (the last run's output, as a re-run finds it)
/// replaces it with the new output, permissions kept and no file left beside it; through a
/// symbolic link the link's target is written, and a file of two names gets the new content
/// under both, as truncating it would (`cli::io::replace`).
#[test]
#[cfg(unix)]
fn dash_o_over_a_large_file_holds_only_the_new_output() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dash-o-over");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let cap = common::captures_dir().join("mock-kcat-gzip.pcap");
    let cap = cap.to_str().unwrap();
    let want = common::kinspect(&["decode", "-f", "jsonl", cap]).stdout;
    assert!(!want.is_empty());
    // Larger than any file truncated rather than replaced (16 MiB).
    let last_run = vec![b'x'; 17 << 20];
    let (out, target, link, twin) = (
        tmp.join("out.jsonl"),
        tmp.join("target.jsonl"),
        tmp.join("link.jsonl"),
        tmp.join("twin.jsonl"),
    );
    for f in [&out, &target] {
        std::fs::write(f, &last_run).unwrap();
    }
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::fs::hard_link(&target, &twin).unwrap();
    use std::os::unix::fs::MetadataExt;
    let inode = |p: &std::path::Path| std::fs::metadata(p).unwrap().ino();
    let (out_was, target_was) = (inode(&out), inode(&target));
    for path in [&out, &link] {
        let o = common::kinspect(&["decode", "-f", "jsonl", cap, "-o", path.to_str().unwrap()]);
        assert!(o.status.code().is_some_and(|c| c < 2), "{path:?}");
    }
    assert_eq!(std::fs::read(&out).unwrap(), want);
    // Replaced (a new file), where the file of two names was written over.
    assert_ne!(inode(&out), out_was);
    assert_eq!(inode(&target), target_was);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), want);
    assert_eq!(std::fs::read(&twin).unwrap(), want);
    let mut names: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["link.jsonl", "out.jsonl", "target.jsonl", "twin.jsonl"]
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
