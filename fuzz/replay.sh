#!/usr/bin/env bash
# Replays the committed seed corpora (fuzz/seeds/<target>/) through the fuzz target bodies as an
# ordinary test binary: stable toolchain, no libFuzzer, a few seconds. CI runs this.
#   bash fuzz/replay.sh                                          # the committed seeds
#   FUZZ_REPLAY_DIRS=seeds,corpus,artifacts bash fuzz/replay.sh  # also local corpora and crashes
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --test it fuzz_replay:: -- --nocapture
