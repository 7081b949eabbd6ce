//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled captures (always present: they are part of the repository).
pub fn captures_dir() -> PathBuf {
    repo().join("captures")
}

/// Every bundled `.pcap`, sorted by name.
pub fn bundled_captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(captures_dir())
        .expect("captures/ is part of the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    v.sort();
    v
}

/// `../shared` next to the checkout (CI has it; a fresh clone elsewhere may not). Overridden by
/// `KINSPECT_SHARED`. Tests that need it print why they were skipped when it is missing.
pub fn shared_dir() -> Option<PathBuf> {
    let p = std::env::var_os("KINSPECT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("..").join("shared"));
    p.join("kafka-schemas").is_dir().then_some(p)
}

/// Returns `../shared`, or prints a skip notice naming the test and returns `None`.
pub fn shared_or_skip(test: &str) -> Option<PathBuf> {
    let d = shared_dir();
    if d.is_none() {
        eprintln!("SKIPPED {test}: ../shared (Kafka spec folders) is not beside this checkout; set KINSPECT_SHARED to run it");
    }
    d
}
