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
