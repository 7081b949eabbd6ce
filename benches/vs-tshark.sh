#!/usr/bin/env bash
# Throughput and memory of kinspect against tshark on one big capture, measured in one run.
#   usage: benches/vs-tshark.sh BIG.pcap        (make one with ../shared/lab/make-big-capture.sh)
# Needs a release build (cargo build --release) and tshark. Prints wall seconds, peak RSS and
# the ratios the project targets: `decode --format summary` vs tshark's field dump, `decode
# --format jsonl` vs `tshark -T json`, plus `stats`, and `cat` reading the file as the floor.
# kinspect's runs are the median of five; tshark's (half a minute for -T json) run once.
set -u
PCAP=${1:?usage: benches/vs-tshark.sh BIG.pcap}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${KINSPECT:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kinspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or set KINSPECT=path)" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark is needed for the comparison" >&2; exit 2; }
PORTS='tcp.port==19092,kafka -d tcp.port==19093,kafka -d tcp.port==19094,kafka'

# run NAME CMD...: wall seconds and peak RSS (KiB) of CMD, output discarded. With REPS=n in
# the environment, the run with the median time of n (kinspect's runs are short and the
# machine is shared; tshark's take half a minute and run once).
run() {
  local name=$1; shift
  local t tf i all=()
  tf=$(mktemp)
  for ((i = 0; i < ${REPS:-1}; i++)); do
    /usr/bin/time -o "$tf" -f "%e %M" "$@" >/dev/null 2>/dev/null
    all+=("$(tail -1 "$tf")")
  done
  rm -f "$tf"
  t=$(printf '%s\n' "${all[@]}" | sort -n | sed -n "$(( (${#all[@]} + 1) / 2 ))p")
  printf '%-28s %8s s %10s KiB%s\n' "$name" ${t% *} ${t#* } \
    "$([ ${#all[@]} -gt 1 ] && echo " (median of ${#all[@]})")" >&2
  echo "$t"
}

echo "capture: $PCAP ($(du -h "$PCAP" | cut -f1))" >&2
CAT=$(REPS=5 run "cat (reading the file)" cat "$PCAP")
K_STATS=$(REPS=5 run "kinspect stats" "$BIN" stats "$PCAP")
K_SUM=$(REPS=5 run "kinspect decode summary" "$BIN" decode --format summary "$PCAP")
K_JSONL=$(REPS=5 run "kinspect decode jsonl" "$BIN" decode --format jsonl "$PCAP")
T_FIELDS=$(run "tshark -T fields" tshark -r "$PCAP" -d $PORTS -Y kafka -T fields -e frame.number -e kafka.api_key -e kafka.api_version -e kafka.correlation_id)
T_JSON=$(run "tshark -T json" tshark -r "$PCAP" -d $PORTS -Y kafka -T json)
ratio() { awk -v a="${1% *}" -v b="${2% *}" 'BEGIN { if (a > 0) printf "%.1fx", b / a; else print "n/a" }'; }
echo "stats vs tshark fields:   $(ratio "$K_STATS" "$T_FIELDS")" >&2
echo "summary vs tshark fields: $(ratio "$K_SUM" "$T_FIELDS") (target >= 10x)" >&2
echo "jsonl vs tshark json:     $(ratio "$K_JSONL" "$T_JSON") (target >= 50x)" >&2
echo "cat vs summary, jsonl:    $(ratio "$K_SUM" "$CAT"), $(ratio "$K_JSONL" "$CAT") (cat's time / kinspect's)" >&2
exit 0
