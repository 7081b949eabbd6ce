//! Build-time facts for the integration tests, so a test that cannot run here is reported as
//! `ignored, needs …` in the test summary instead of passing without checking anything:
//!
//! - `kinspect_shared`: the Kafka spec folders (`../shared` beside the checkout, or the folder
//!   `KINSPECT_SHARED` names) are present;
//! - `kinspect_tshark`: `tshark` is on the `PATH`;
//! - `kinspect_duckdb`: `python3` on the `PATH` imports `duckdb` (the Parquet tables' oracle).
//!
//! The library and the binary never read these cfgs. Tests keep their runtime check
//! (`common::shared_or_skip`) for a folder that disappears after the build.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kinspect_shared)");
    println!("cargo::rustc-check-cfg=cfg(kinspect_tshark)");
    println!("cargo::rustc-check-cfg=cfg(kinspect_duckdb)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=KINSPECT_SHARED");
    println!("cargo::rerun-if-env-changed=PATH");
    // The target triple, for tests that ask cargo about this platform's dependency graph.
    if let Ok(t) = std::env::var("TARGET") {
        println!("cargo::rustc-env=KINSPECT_BUILD_TARGET={t}");
    }

    let shared = std::env::var_os("KINSPECT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
                .join("..")
                .join("shared")
        });
    // The same test as tests/it/common.rs `shared_dir`. Watched only when present: cargo scans
    // a watched folder recursively and treats a missing path as always changed (a rebuild on
    // every run). A folder added later is noticed by setting KINSPECT_SHARED or touching this
    // file; until then its tests are listed as ignored, never silently passed.
    let schemas = shared.join("kafka-schemas");
    if schemas.is_dir() {
        println!("cargo::rerun-if-changed={}", schemas.display());
        println!("cargo::rustc-cfg=kinspect_shared");
    }

    if let Some(python) = on_path("python3") {
        let duckdb = std::process::Command::new(&python)
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success());
        if duckdb {
            println!("cargo::rerun-if-changed={}", python.display());
            println!("cargo::rustc-cfg=kinspect_duckdb");
        }
    }

    if let Some(tshark) = on_path("tshark") {
        println!("cargo::rerun-if-changed={}", tshark.display());
        println!("cargo::rustc-cfg=kinspect_tshark");
    }
}

/// The first executable file called `name` in a `PATH` folder.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file() || p.with_extension("exe").is_file()
}
