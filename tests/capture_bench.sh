#!/usr/bin/env bash
# Throughput and memory of kinspect against tshark on one big capture, measured in one run.
#   usage: tests/capture_bench.sh BIG.pcap        (make one with ../shared/lab/make-big-capture.sh)
# Needs a release build (cargo build --release) and tshark. Prints wall seconds, peak RSS and
# the ratios the project targets: `decode --format summary` vs tshark's field dump, `decode
# --format jsonl` vs `tshark -T json`, plus `stats` and the capture reader alone.
set -u
PCAP=${1:?usage: capture_bench.sh BIG.pcap}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${KINSPECT:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kinspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or set KINSPECT=path)" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark is needed for the comparison" >&2; exit 2; }
PORTS='tcp.port==19092,kafka -d tcp.port==19093,kafka -d tcp.port==19094,kafka'

# run NAME CMD...: wall seconds and peak RSS (KiB) of CMD, output discarded.
run() {
  local name=$1; shift
  local t tf
  tf=$(mktemp)
  /usr/bin/time -o "$tf" -f "%e %M" "$@" >/dev/null 2>/dev/null
  t=$(tail -1 "$tf"); rm -f "$tf"
  printf '%-28s %8s s %10s KiB\n' "$name" ${t% *} ${t#* } >&2
  echo "$t"
}

echo "capture: $PCAP ($(du -h "$PCAP" | cut -f1))" >&2
K_STATS=$(run "kinspect stats" "$BIN" stats "$PCAP")
if "$BIN" decode --help >/dev/null 2>&1; then
  K_SUM=$(run "kinspect decode summary" "$BIN" decode --format summary "$PCAP")
  K_JSONL=$(run "kinspect decode jsonl" "$BIN" decode --format jsonl "$PCAP")
fi
T_FIELDS=$(run "tshark -T fields" tshark -r "$PCAP" -d $PORTS -Y kafka -T fields -e frame.number -e kafka.api_key -e kafka.api_version -e kafka.correlation_id)
T_JSON=$(run "tshark -T json" tshark -r "$PCAP" -d $PORTS -Y kafka -T json)
ratio() { awk -v a="${1% *}" -v b="${2% *}" 'BEGIN { if (a > 0) printf "%.1fx", b / a; else print "n/a" }'; }
echo "stats vs tshark fields:   $(ratio "$K_STATS" "$T_FIELDS")" >&2
[ -n "${K_SUM:-}" ] && echo "summary vs tshark fields: $(ratio "$K_SUM" "$T_FIELDS") (target >= 10x)" >&2
[ -n "${K_JSONL:-}" ] && echo "jsonl vs tshark json:     $(ratio "$K_JSONL" "$T_JSON") (target >= 50x)" >&2
exit 0
