//! Replays every seed in `fuzz/seeds/<target>/` (and, when present, the working corpus in
//! `fuzz/corpus/<target>/` and the crash reproducers in `fuzz/artifacts/<target>/`) through the
//! fuzz target bodies: what CI runs (`fuzz/replay.sh`) without needing libFuzzer or a nightly
//! toolchain. `FUZZ_REPLAY_DIRS=seeds` limits it to the committed seeds.

use kinspect::fuzzing::TARGETS;
use std::path::Path;

#[test]
fn every_seed_replays_through_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let dirs = std::env::var("FUZZ_REPLAY_DIRS").unwrap_or_else(|_| "seeds".into());
    let mut total = 0usize;
    let mut failed = Vec::new();
    for (name, run) in TARGETS {
        let mut n = 0usize;
        for kind in dirs.split(',') {
            let dir = root.join(kind).join(name);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut files: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            files.sort();
            for f in files.iter().filter(|f| f.is_file()) {
                let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                // Keep going after a failure so one run names every failing seed.
                if std::panic::catch_unwind(|| run(&data)).is_err() {
                    failed.push(f.display().to_string());
                }
                n += 1;
            }
        }
        eprintln!("{name}: {n} inputs replayed");
        assert!(n > 0, "no seeds for {name} under {}", root.display());
        total += n;
    }
    assert!(
        failed.is_empty(),
        "{} inputs failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(total > 100, "only {total} seeds replayed");
}
