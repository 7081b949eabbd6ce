#!/usr/bin/env bash
# Runs every fuzz target for MINUTES minutes each (JOBS at a time, default 2) and prints one row
# per target: executions/s, coverage (libFuzzer's final cov/ft), corpus size, crashes.
#   bash fuzz/run-all.sh 15                 # all six targets
#   bash fuzz/run-all.sh 1 decode schema    # some of them
# Stable toolchain, no sanitizer (`-s none`); for AddressSanitizer use a nightly toolchain and
# `cargo +nightly fuzz run TARGET` by hand. The working corpus grows in fuzz/corpus/TARGET
# (git-ignored; the committed seeds in fuzz/seeds/TARGET are read, never written); crash, leak,
# timeout and OOM reproducers land in fuzz/artifacts/TARGET; logs in fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")"
minutes=${1:?usage: run-all.sh MINUTES [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode stream pcap records schema roundtrip)
jobs=${JOBS:-2}
secs=$((minutes * 60))

# One build for all targets; `cargo fuzz run` would check the build again per target.
cargo fuzz build -s none >&2
bin=target/$(rustc -vV | sed -n 's/^host: //p')/release

run_one() {
  local t=$1
  mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t" logs
  # The same as `cargo fuzz run -s none $t seeds/$t -- ...` but with the corpus first, so new
  # inputs go to corpus/ and seeds/ stays as committed.
  "$bin/$t" "corpus/$t" "seeds/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"logs/$t.log" 2>&1 || true
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

printf '%-10s %8s %9s %7s %8s %9s %8s %s\n' target minutes execs exec/s cov ft corpus crashes
for t in "${targets[@]}"; do
  log=logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "corpus/$t" -type f | wc -l)
  crashes=$(find "artifacts/$t" -type f | wc -l)
  printf '%-10s %8s %9s %7s %8s %9s %8s %s\n' "$t" "$minutes" "${execs:-?}" "${eps:-?}" \
    "${cov:-?}" "${ft:-?}" "$corpus" "$crashes"
done
