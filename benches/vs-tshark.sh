#!/usr/bin/env bash
# Throughput and memory of kinspect against tshark and against `cat`, on one big capture, in one run.
#   usage: benches/vs-tshark.sh BIG.pcap        (make one with ../shared/lab/make-big-capture.sh)
#   NO_TSHARK=1 benches/vs-tshark.sh BIG.pcap   (only kinspect against cat)
# Needs a release build (cargo build --release) and tshark. Prints, for every output format,
# the median wall time as a multiple of `cat BIG.pcap > /dev/null` measured in the same run, the
# cores it kept busy ((user + system time) / wall time; the target is both of two for every
# format that decodes), the peak RSS on the capture given once and three times (memory must not grow with the input), and
# the ratios against tshark: `decode --format summary` vs its field dump, `decode --format
# jsonl` vs `tshark -T json`. Commands run several times, interleaved (rounds of every command),
# and medians are compared (about 5 minutes with tshark).
set -u
PCAP=${1:?usage: benches/vs-tshark.sh BIG.pcap}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${KINSPECT:-${CARGO_TARGET_DIR:-$ROOT/target}/release/kinspect}
ROUNDS=${ROUNDS:-3}
[ -x "$BIN" ] || { echo "build first: cargo build --release (or set KINSPECT=path)" >&2; exit 2; }
TSHARK=1
[ -n "${NO_TSHARK:-}" ] && TSHARK=0
[ $TSHARK = 1 ] && ! command -v tshark >/dev/null && { echo "tshark is needed for the comparison (NO_TSHARK=1 to skip it)" >&2; exit 2; }
PORTS='tcp.port==19092,kafka -d tcp.port==19093,kafka -d tcp.port==19094,kafka'

DIR=$(mktemp -d); trap 'rm -rf "$DIR" /tmp/kinspect-bench-parquet /tmp/kinspect-bench.jsonl' EXIT

# The formats, one per line: NAME|ARGUMENTS (after the binary; the capture comes last).
# FORMATS: one line per output format, NAME|ARGUMENTS (split on spaces: no quoting, so a
# filter is written without spaces). `fields` takes the same four fields as tshark's dump below.
FORMATS='jsonl|decode --format jsonl
annotated|decode --format json --annotate
tree|decode --format tree --color never
summary|decode --format summary
stats|stats
fields|decode -f fields -e frame -e api_key -e api_version -e correlation_id
filter|decode --format jsonl -Y api==Produce
check|check
records|records -f jsonl
rec-parquet|records -f parquet -o /dev/null
parquet|decode -f parquet -o /tmp/kinspect-bench-parquet
jsonl-file|decode --format jsonl -o /tmp/kinspect-bench.jsonl'

# measure NAME N CMD...: runs CMD N times, output discarded; appends "seconds KiB" lines. The
# wall time is bash's clock around the run, to the millisecond (GNU time's %e gives hundredths,
# which for a `cat` of 0.03-0.04 s made every multiple of it uncertain by a quarter), less
# $WRAP, GNU time's own cost; GNU time gives the peak RSS.
WRAP=0
measure() {
  local name=$1 n=$2 i t0 t1 TIMEFORMAT='%3U %3S'; shift 2
  for ((i = 0; i < n; i++)); do
    t0=$EPOCHREALTIME
    { time /usr/bin/time -o "$DIR/t" -f "%M" "$@" >/dev/null 2>/dev/null; } 2>"$DIR/cpu"
    t1=$EPOCHREALTIME
    # seconds, peak KiB, cores used: (user + system CPU time) / wall time, the CPU times from
    # bash's `time` to the millisecond (GNU time's are in hundredths).
    awk -v a="${t0/,/.}" -v b="${t1/,/.}" -v w="$WRAP" -v m="$(tail -1 "$DIR/t")" '{ s = b - a - w; printf "%.3f %s %.2f\n", s, m, (s > 0 ? ($1 + $2) / s : 0) }' "$DIR/cpu" >>"$DIR/$name"
  done
}
# GNU time's own cost: the median, over 9 pairs, of /bin/true under it less /bin/true without
# (so every run keeps the cost of starting its program, as it has when a user runs it).
for ((i = 0; i < 9; i++)); do
  t0=$EPOCHREALTIME; /usr/bin/time -o "$DIR/t" -f "%M" /bin/true; t1=$EPOCHREALTIME; /bin/true; t2=$EPOCHREALTIME
  echo "${t0/,/.} ${t1/,/.} ${t2/,/.}" >>"$DIR/wrap"
done
WRAP=$(awk '{ d = 2 * $2 - $1 - $3; printf "%.6f\n", (d > 0 ? d : 0) }' "$DIR/wrap" | sort -n | sed -n 5p)

# median NAME: the median time of the runs; peak NAME: the highest peak RSS (KiB); cores NAME:
# the median of the cores each run kept busy.
median() { local n; n=$(wc -l <"$DIR/$1"); sort -n "$DIR/$1" | sed -n "$(( (n + 1) / 2 ))p" | cut -d' ' -f1; }
cores() { local n; n=$(wc -l <"$DIR/$1"); cut -d' ' -f3 "$DIR/$1" | sort -n | sed -n "$(( (n + 1) / 2 ))p"; }
peak() { sort -n -k2 "$DIR/$1" | tail -1 | cut -d' ' -f2; }
times() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

echo "capture: $PCAP ($(du -h "$PCAP" | cut -f1)); $ROUNDS rounds, interleaved; GNU time's own $(awk -v w="$WRAP" 'BEGIN { printf "%.1f", w * 1000 }') ms taken off each run" >&2
for ((k = 1; k <= ROUNDS; k++)); do
  measure cat 2 cat "$PCAP"
  while IFS='|' read -r name args; do
    # shellcheck disable=SC2086 # the arguments are words
    measure "$name" 2 "$BIN" $args "$PCAP"
  done <<<"$FORMATS"
  measure jsonl1 1 env KINSPECT_THREADS=1 "$BIN" decode --format jsonl "$PCAP"
  if [ $TSHARK = 1 ] && [ $k -lt $ROUNDS ]; then
    measure tshark-fields 1 tshark -r "$PCAP" -d $PORTS -Y kafka -T fields -e frame.number -e kafka.api_key -e kafka.api_version -e kafka.correlation_id
    measure tshark-json 1 tshark -r "$PCAP" -d $PORTS -Y kafka -T json
  fi
done
# Peak RSS with the capture given three times (three inputs, one after the other): flat when
# memory does not grow with the input.
while IFS='|' read -r name args; do
  # One table to one file takes one input (several make a file each, in a folder).
  [[ $args == *"-o /dev/null"* ]] && continue
  # shellcheck disable=SC2086
  measure "$name-x3" 1 "$BIN" $args "$PCAP" "$PCAP" "$PCAP"
done <<<"$FORMATS"

CAT=$(median cat)
printf '%-12s %9s %9s %6s %11s %11s\n' format seconds "x cat" cores "RSS x1 MiB" "RSS x3 MiB" >&2
printf '%-12s %9s %9s %6s\n' cat "$CAT" 1.00x "$(cores cat)" >&2
while IFS='|' read -r name args; do
  t=$(median "$name")
  x3=-
  [ -s "$DIR/$name-x3" ] && x3=$(( $(peak "$name-x3") / 1024 ))
  printf '%-12s %9s %9s %6s %11d %11s   (%s)\n' "$name" "$t" "$(times "$t" "$CAT")" "$(cores "$name")" $(( $(peak "$name") / 1024 )) "$x3" "$args" >&2
done <<<"$FORMATS"
T1=$(median jsonl1)
printf '%-12s %9s %9s %6s %11d   (KINSPECT_THREADS=1)\n' jsonl-1thr "$T1" "$(times "$T1" "$CAT")" "$(cores jsonl1)" $(( $(peak jsonl1) / 1024 )) >&2
J=$(median jsonl); S=$(median summary)
echo "filter vs jsonl: $(times "$J" "$(median filter)") (target >= 1x: a filter is no slower than printing everything); check vs summary: $(times "$(median check)" "$S") (target <= 1.5x)" >&2
P=$(median parquet)
echo "parquet vs jsonl: $(times "$P" "$J") (target <= 1x); vs jsonl written to a file: $(times "$P" "$(median jsonl-file)")" >&2
echo "records: parquet to /dev/null vs jsonl to /dev/null: $(times "$(median rec-parquet)" "$(median records)") (the same rows, both discarded: no file written)" >&2
echo "targets: jsonl within 3x of cat ($(times "$J" "$CAT")), summary within 1.5x ($(times "$S" "$CAT")), annotated and tree within 2x of jsonl ($(times "$(median annotated)" "$J"), $(times "$(median tree)" "$J"))" >&2
if [ $TSHARK = 1 ]; then
  TF=$(median tshark-fields); TJ=$(median tshark-json)
  echo "tshark -T fields $TF s, -T json $TJ s" >&2
  echo "summary vs tshark fields: $(times "$TF" "$S") faster (target >= 10x); stats: $(times "$TF" "$(median stats)")" >&2
  echo "fields vs tshark fields:  $(times "$TF" "$(median fields)") faster (target >= 10x, the same four fields)" >&2
  echo "jsonl vs tshark json:     $(times "$TJ" "$J") faster (target >= 50x; one thread $(times "$TJ" "$T1"))" >&2
fi
exit 0
