#!/usr/bin/env bash
# The cluster suite: three `everything --http` instances behind HAProxy (examples/cluster),
# driven by the official Python SDK client (examples/cluster/test_cluster.py): a page walk
# and an input_required round trip spread over instances (round robin, shared keys), a
# legacy session with SSE held by affinity, a key rotation, and an instance killed under
# load. Loopback only, bounded in time. Run from anywhere; scripts/test.sh runs it.
#
# Installs what it needs: haproxy (Debian's package, apt-get) and the Python SDK pinned in
# interop/py/requirements.txt, in the same virtualenv scripts/test-interop.sh uses
# (interop/py/.venv; python3-venv from apt-get when Debian's python3 lacks it).
#
#   CLUSTER_PORT=N    HAProxy's port (default: a free one from 20000 up; the instances take
#                     the next three, the stats page N+9)
#   EVERYTHING=PATH   test another everything build (default: target/debug/everything)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

step() { printf '\n--> cluster: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "cluster: installing packages needs root or sudo: $*" >&2
    return 1
  fi
}

apt_install() {
  command -v apt-get >/dev/null 2>&1 || {
    echo "cluster: $* missing and there is no apt-get to install it" >&2
    return 1
  }
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

step "haproxy (Debian's package)"
command -v haproxy >/dev/null 2>&1 || apt_install haproxy
haproxy -v | sed -n 1p

step "build everything"
cargo build -q -p mcp-examples --bin everything
export EVERYTHING="${EVERYTHING:-$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/debug/everything}"

step "Python SDK (interop/py/.venv)"
(
  cd interop/py
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "cluster: python3 >= 3.10 is needed (mcp requires it); found $(python3 --version)" >&2
    exit 1
  }
  # The same stamp as scripts/test-interop.sh: either script installs for both.
  stamp=.venv/.requirements.sha256
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || ! python3 -m venv --clear .venv; then
      apt_install python3-venv
      python3 -m venv --clear .venv
    fi
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    echo "$want" >"$stamp"
  fi
  echo "$(.venv/bin/python -m pip list --disable-pip-version-check 2>/dev/null | awk '$1=="mcp"{print "mcp " $2}'), $(.venv/bin/python --version)"
)

# Ports: HAProxy on N, instances on N+1..N+3, stats on N+9, all free.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -z "${CLUSTER_PORT:-}" ]; then
  for base in $(seq 20000 20 20980); do
    busy=0
    for p in $base $((base + 1)) $((base + 2)) $((base + 3)) $((base + 9)); do
      if port_busy "$p"; then busy=1; break; fi
    done
    if [ "$busy" -eq 0 ]; then CLUSTER_PORT=$base; break; fi
  done
fi
export CLUSTER_PORT="${CLUSTER_PORT:?no free ports between 20000 and 21000}"

step "pytest examples/cluster/test_cluster.py (HAProxy on 127.0.0.1:$CLUSTER_PORT)"
log=$(mktemp)
export CLUSTER_RUN_DIR
CLUSTER_RUN_DIR=$(mktemp -d)
# Whatever happens to pytest (a timeout kills it before its own clean-up), nothing is left
# running; the logs are shown when the suite failed.
cleanup() {
  examples/cluster/run.sh stop >/dev/null 2>&1 || true
  rm -rf "$log" "$CLUSTER_RUN_DIR"
}
trap cleanup EXIT
status=0
PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 120 \
  interop/py/.venv/bin/python -m pytest -q -rfEs -p no:cacheprovider examples/cluster/test_cluster.py 2>&1 \
  | tee "$log" || status=1
# A suite that ran nothing, or skipped anything, fails.
passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
skipped=$(grep -Eo '[0-9]+ skipped' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
if [ "$passed" -eq 0 ] || [ "$skipped" -ne 0 ]; then status=1; fi
echo "cluster: $passed passed, status $status"
exit "$status"
