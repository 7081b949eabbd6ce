#!/usr/bin/env bash
# The hostile-input campaign: builds the release kinspect and the campaign harness
# (examples/hostile), then runs seeded hostile cases against the binary, each under
# `prlimit --as --cpu`, GNU time and `timeout`, and prints a table per category
# (cases, failures, mean and max seconds, max CPU seconds, max peak RSS).
#
# A failure is an exit code outside 0/1/2, a panic, a run over the wall or CPU limit, a peak
# RSS over the limit, or stdout that is not JSON under `-f jsonl` / `-f json` / `--format json`.
# Exit status: 0 when every case passed, 1 when any failed (each kept under --keep DIR with
# cmd.sh, the exact command, and why.txt), 2 for a usage or build failure.
#
#   scripts/hostile-campaign.sh                      # 100 cases per category (about 2 minutes)
#   scripts/hostile-campaign.sh --ci                 # CI: 90 seconds at most
#   scripts/hostile-campaign.sh --cases 5000         # the long run (>= 40,000 cases)
#   scripts/hostile-campaign.sh --only bombs,logs --keep /tmp/hostile --seed 0x1234
#   scripts/hostile-campaign.sh --case logs:100 --keep /tmp/h   # one case, regenerated
#
# Other options go to the harness: --seconds S, --jobs J (default 2), --rss-mib M (512),
# --as-mib M (1024), --time-limit S (20, wall), --cpu-limit S (8; the issue allows 10 s), --bin PATH. Both time
# limits apply per started 2 MiB of input (at most six times).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

for tool in prlimit timeout /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "hostile-campaign: $tool is needed (util-linux, coreutils, GNU time)" >&2; exit 2; }
done

args=()
keep_given=0
while [ $# -gt 0 ]; do
    case "$1" in
        --ci) args+=(--cases 300 --seconds 90); shift ;;
        --keep) keep_given=1; args+=("$1" "$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
if [ "$keep_given" = 0 ]; then
    keep="${TMPDIR:-/tmp}/kinspect-hostile-failures"
    rm -rf "$keep"
    args+=(--keep "$keep")
fi

cargo build --release --quiet --bin kinspect --example hostile || exit 2
exec "$root/target/release/examples/hostile" --bin "$root/target/release/kinspect" --root "$root" "${args[@]}"
