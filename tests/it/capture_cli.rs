//! `kinspect capture` exists in every build: without the `live` feature it says how to build
//! with live capture (exit 2) instead of clap's "unrecognized subcommand"; and `-w` means the
//! same thing in the help text and the README (it writes the packets instead of printing them,
//! as `tshark -w` does).

use crate::common;

#[cfg(not(feature = "live"))]
#[test]
fn capture_without_the_live_feature_says_how_to_build_it() {
    for args in [
        &["capture"][..],
        &["capture", "-i", "lo"],
        &["capture", "-i", "lo", "-w", "x.pcap"],
    ] {
        let o = common::kinspect(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "kinspect {args:?}: {err}");
        assert!(
            !err.contains("unrecognized subcommand"),
            "kinspect {args:?}: {err}"
        );
        assert!(
            err.contains("cargo install --path . --features live") && err.contains("libpcap-dev"),
            "kinspect {args:?} must say how to build live capture: {err}"
        );
        assert!(
            o.stdout.is_empty(),
            "kinspect {args:?} printed {:?}",
            o.stdout
        );
    }
    assert!(
        !common::repo().join("x.pcap").exists(),
        "no file is written"
    );
}

#[test]
fn capture_is_listed_in_every_build() {
    let help = common::stdout(&common::kinspect(&["--help"]));
    assert!(
        help.contains("capture "),
        "kinspect --help lists capture:\n{help}"
    );
    let o = common::kinspect(&["capture", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(common::stdout(&o).contains("--interface <IFACE>"));
}

#[test]
fn capture_write_is_documented_as_instead_of_printing_in_help_and_readme() {
    let help = common::stdout(&common::kinspect(&["capture", "--help"]));
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("instead of printing PDUs"),
        "capture --help on -w:\n{help}"
    );
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    let section = readme
        .split("\n## Live capture")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a Live capture section");
    let flat = section.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("instead of printing") && !flat.contains("also writes"),
        "README's Live capture section must say -w writes instead of printing:\n{section}"
    );
}
