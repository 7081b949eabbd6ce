#!/usr/bin/env bash
# Throughput and memory of kinspect against tshark on one big capture, measured in one run.
#   usage: benches/vs-tshark.sh BIG.pcap        (make one with ../shared/lab/make-big-capture.sh)
# Needs a release build (cargo build --release) and tshark. Prints wall seconds, peak RSS and
# the ratios the project targets: `decode --format summary` vs tshark's field dump, `decode
# --format jsonl` vs `tshark -T json`, `-f fields` vs the same field dump, `--filter` vs plain
# jsonl, plus `stats`, and `cat` reading the file as the floor.
# Each command runs several times, interleaved, and its median time is used (about 3 minutes).
set -u
PCAP=${1:?usage: benches/vs-tshark.sh BIG.pcap}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${KINSPECT:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kinspect}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or set KINSPECT=path)" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark is needed for the comparison" >&2; exit 2; }
PORTS='tcp.port==19092,kafka -d tcp.port==19093,kafka -d tcp.port==19094,kafka'

# The machine is shared and its speed drifts by a third from one minute to the next, so every
# command runs several times, kinspect's before, between and after tshark's two, and medians
# are compared.
DIR=$(mktemp -d); trap 'rm -rf "$DIR"' EXIT

# measure NAME N CMD...: runs CMD N times, output discarded; appends "seconds KiB" lines.
measure() {
  local name=$1 n=$2 i; shift 2
  for ((i = 0; i < n; i++)); do
    /usr/bin/time -o "$DIR/t" -f "%e %M" "$@" >/dev/null 2>/dev/null
    tail -1 "$DIR/t" >>"$DIR/$name"
  done
}

# report NAME LABEL: prints the median time and the highest peak RSS of the runs to stderr;
# echoes "seconds KiB".
report() {
  local n t kib
  n=$(wc -l <"$DIR/$1")
  t=$(sort -n "$DIR/$1" | sed -n "$(( (n + 1) / 2 ))p" | cut -d' ' -f1)
  kib=$(sort -n -k2 "$DIR/$1" | tail -1 | cut -d' ' -f2)
  printf '%-28s %8s s %10s KiB%s\n' "$2" "$t" "$kib" "$([ "$n" -gt 1 ] && echo " (median time, peak RSS of $n runs)")" >&2
  echo "$t $kib"
}

echo "capture: $PCAP ($(du -h "$PCAP" | cut -f1))" >&2
for k in 1 2 3; do
  measure cat 2 cat "$PCAP"
  measure stats 2 "$BIN" stats "$PCAP"
  measure summary 2 "$BIN" decode --format summary "$PCAP"
  measure jsonl 3 "$BIN" decode --format jsonl "$PCAP"
  measure jsonl1 2 env KINSPECT_THREADS=1 "$BIN" decode --format jsonl "$PCAP"
  measure fields 2 "$BIN" decode -f fields -e frame -e api_key -e api_version -e correlation_id "$PCAP"
  measure filter 2 "$BIN" decode --format jsonl --filter 'api == Produce' "$PCAP"
  [ $k = 3 ] && break
  measure tshark-fields 1 tshark -r "$PCAP" -d $PORTS -Y kafka -T fields -e frame.number -e kafka.api_key -e kafka.api_version -e kafka.correlation_id
  measure tshark-json 1 tshark -r "$PCAP" -d $PORTS -Y kafka -T json
done
CAT=$(report cat "cat (reading the file)")
K_STATS=$(report stats "kinspect stats")
K_SUM=$(report summary "kinspect decode summary")
K_JSONL=$(report jsonl "kinspect decode jsonl")
K_JSONL1=$(report jsonl1 "  the same on one thread")
K_FIELDS=$(report fields "kinspect -f fields (4 fields)")
K_FILTER=$(report filter "kinspect jsonl -Y 'api == Produce'")
T_FIELDS=$(report tshark-fields "tshark -T fields")
T_JSON=$(report tshark-json "tshark -T json")
ratio() { awk -v a="${1% *}" -v b="${2% *}" 'BEGIN { if (a > 0) printf "%.1fx", b / a; else print "n/a" }'; }
echo "stats vs tshark fields:   $(ratio "$K_STATS" "$T_FIELDS")" >&2
echo "summary vs tshark fields: $(ratio "$K_SUM" "$T_FIELDS") (target >= 10x)" >&2
echo "fields vs tshark fields:  $(ratio "$K_FIELDS" "$T_FIELDS") (target >= 10x)" >&2
echo "jsonl vs jsonl -Y:        $(ratio "$K_FILTER" "$K_JSONL") (target >= 1x: the filter is no slower)" >&2
echo "jsonl vs tshark json:     $(ratio "$K_JSONL" "$T_JSON") (target >= 50x; one thread $(ratio "$K_JSONL1" "$T_JSON"))" >&2
echo "cat vs summary, jsonl:    $(ratio "$K_SUM" "$CAT"), $(ratio "$K_JSONL" "$CAT") (cat's time / kinspect's)" >&2
exit 0
