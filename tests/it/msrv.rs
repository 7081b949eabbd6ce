//! The stated minimum Rust (`rust-version` in Cargo.toml, "1.85+" in the README) is true of the
//! locked dependency graph: no locked package that this platform builds, for any feature, and
//! for the tests too, declares a newer `rust-version`. Our own code is held to it by clippy's
//! `incompatible_msrv` (denied in Cargo.toml). Cargo's view of the graph comes from
//! `cargo metadata --offline --locked`, which lists each package's declared `rust_version`;
//! Cargo.lock says which packages that view must cover.

use crate::common;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

/// "1.85", "1.85.0" → (1, 85, 0).
fn version(s: &str) -> (u64, u64, u64) {
    let mut it = s.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

/// `cargo metadata` for this package, every feature, this platform only (other platforms'
/// packages are not downloaded, so an offline run cannot read their manifests).
fn metadata() -> Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--offline", "--locked", "--format-version", "1"])
        .args([
            "--all-features",
            "--filter-platform",
            env!("KINSPECT_BUILD_TARGET"),
        ])
        .current_dir(common::repo())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "this test needs cargo ({}) to read the locked dependency graph: {e}",
                cargo.to_string_lossy()
            )
        });
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// (name, version) of every package in Cargo.lock.
fn locked_packages() -> BTreeSet<(String, String)> {
    let lock = std::fs::read_to_string(common::repo().join("Cargo.lock")).unwrap();
    let mut out = BTreeSet::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |k: &str| {
            block.lines().find_map(|l| {
                l.strip_prefix(k)
                    .and_then(|r| r.trim().strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"').to_string())
            })
        };
        if let (Some(n), Some(v)) = (field("name "), field("version ")) {
            out.insert((n, v));
        }
    }
    out
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_rust_version() {
    let meta = metadata();
    let packages: HashMap<&str, &Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let root = meta["resolve"]["root"].as_str().expect("a root package");
    let ours = packages[root]["rust_version"]
        .as_str()
        .expect("Cargo.toml states a rust-version");
    let bound = version(ours);

    // Everything this package's graph reaches: normal, build and dev dependencies, every
    // feature. The tests must build on the stated minimum as well as the library.
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let mut seen = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            stack.extend(
                nodes[id]["deps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d["pkg"].as_str().unwrap()),
            );
        }
    }

    let lock = locked_packages();
    let mut too_new = BTreeMap::new();
    let mut undeclared = Vec::new();
    for id in seen.iter().filter(|&&id| id != root) {
        let p = packages[id];
        let (name, ver) = (p["name"].as_str().unwrap(), p["version"].as_str().unwrap());
        assert!(
            lock.contains(&(name.to_string(), ver.to_string())),
            "{name} {ver} is in cargo's graph but not in Cargo.lock"
        );
        match p["rust_version"].as_str() {
            Some(rv) if version(rv) > bound => {
                too_new.insert(format!("{name} {ver}"), rv.to_string());
            }
            Some(_) => {}
            None => undeclared.push(format!("{name} {ver}")),
        }
    }
    eprintln!(
        "{} locked packages checked against rust-version {ours}; {} declare none ({}); {} in \
         Cargo.lock are for other platforms",
        seen.len() - 1,
        undeclared.len(),
        undeclared.join(", "),
        lock.len() + 1 - seen.len()
    );
    assert!(
        too_new.is_empty(),
        "Cargo.toml says rust-version = {ours:?}, but these locked packages need a newer Rust: {}. \
         Raise rust-version (and the README's minimum), or lock an older release with \
         `cargo update -p NAME --precise VERSION`",
        too_new
            .iter()
            .map(|(p, rv)| format!("{p} (rust-version {rv})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[test]
fn readme_states_the_same_minimum_rust_as_cargo_toml() {
    let toml = std::fs::read_to_string(common::repo().join("Cargo.toml")).unwrap();
    let rv = toml
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("Cargo.toml has rust-version")
        .trim_matches('"');
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("stable, {rv}+")),
        "README.md must state the minimum Rust as `stable, {rv}+`"
    );
}
