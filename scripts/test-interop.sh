#!/usr/bin/env bash
# Interop suites, both directions. The official MCP SDK clients (TypeScript and Python, exact
# versions pinned in interop/ts/package.json and interop/py/requirements.txt) drive two example
# servers: the
# calculator over stdio (client.mjs, test_client.py) and everything, the conformance fixtures
# (everything.mjs and test_everything.py, each over stdio and over Streamable HTTP; sse.mjs over
# the legacy HTTP+SSE transport, with SSEClientTransport and the Inspector's CLI, pinned in
# devDependencies), and the
# Python SDK against everything's authorization (test_auth.py, bearer JWTs over HTTP) and
# against the axum example, the MCP service mounted at /api/mcp of an axum app (test_axum.py,
# both eras), and the everything suites over Streamable HTTP against embedded-http (the same
# fixtures from mcp-embedded's heap-free HTTP server, every test; its server name expected). And our
# client (interop-client) drives the SDKs' reference servers (interop/REFERENCE.md: Python mcp,
# TypeScript SDK 1.x and 2.x, rmcp; each era and transport they serve). Run from anywhere; scripts/test.sh runs it. Needs only
# cargo, node/npm (20+) and python3 (3.10+); installs the SDKs into interop/ts/node_modules and
# interop/py/.venv (both gitignored) and reinstalls only when a pin changes. Fails when any
# test fails, is skipped, or any suite ran no tests at all. When `python3 -m
# venv` is unavailable (Debian ships it separately), installs python3-venv with apt-get.
#
#   MCP_SERVER_CMD=/path/to/server      test another calculator build (default: target/debug/calculator)
#   MCP_EVERYTHING_CMD=/path/to/server  test another everything build (default: target/debug/everything)
#   MCP_AXUM_CMD=/path/to/server        test another axum example build (default: target/debug/axum)
#   MCP_EMBEDDED_HTTP_CMD=/path/to/server  test another embedded-http build (default: target/debug/embedded-http)
#   MCP_INTEROP_VERBOSE=1               also print the servers' stderr logs (TypeScript suites)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

step() { printf '\n--> interop: %s\n' "$*"; }

# Debian's python3 ships `venv` without `ensurepip` (so `python3 -m venv` fails) unless the
# python3-venv package is installed.
venv_usable() { python3 -c 'import venv, ensurepip' >/dev/null 2>&1; }
install_python3_venv() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "interop: python3 -m venv is unavailable; installing python3-venv needs root or sudo" >&2
      return 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "interop: python3 -m venv is unavailable and there is no apt-get to install python3-venv" >&2
    return 1
  fi
  echo "interop: python3 -m venv is unavailable; installing python3-venv"
  "${sudo[@]}" apt-get update -q &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
}

step "build the example servers (calculator, everything, embedded-http, axum, interop-client)"
cargo build -q -p mcp-examples --bins
bin_dir=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/debug
export MCP_SERVER_CMD="${MCP_SERVER_CMD:-$bin_dir/calculator}"
export MCP_SERVER_ARGS='["--extra-tools","120"]'
export MCP_EVERYTHING_CMD="${MCP_EVERYTHING_CMD:-$bin_dir/everything}"
export MCP_AXUM_CMD="${MCP_AXUM_CMD:-$bin_dir/axum}"
MCP_EMBEDDED_HTTP_CMD="${MCP_EMBEDDED_HTTP_CMD:-$bin_dir/embedded-http}"

step "TypeScript SDK (interop/ts)"
(
  cd interop/ts
  # Every pinned dependency must be installed at its pinned version.
  stale=$(node -e '
    const pkg = require("./package.json");
    const deps = { ...pkg.dependencies, ...pkg.devDependencies };
    const off = Object.entries(deps).filter(([name, want]) => {
      try { return require(`./node_modules/${name}/package.json`).version !== want; } catch { return true; }
    });
    console.log(off.map(([n]) => n).join(" "));')
  if [ -n "$stale" ]; then
    NPM_CONFIG_UPDATE_NOTIFIER=false npm install --no-package-lock --no-audit --no-fund --loglevel=error
  fi
  node -e 'const p = require("./package.json"); const d = { ...p.dependencies, ...p.devDependencies }; console.log(Object.entries(d).map(([n, v]) => `${n} ${v}`).join(", "))'
  echo "node $(node --version)"
)

step "Python SDK (interop/py/.venv)"
(
  cd interop/py
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "interop: python3 >= 3.10 is needed (mcp requires it); found $(python3 --version)" >&2
    exit 1
  }
  stamp=.venv/.requirements.sha256
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    if ! venv_usable || ! python3 -m venv --clear .venv; then
      install_python3_venv || exit 1
      python3 -m venv --clear .venv || {
        echo "interop: python3 -m venv still fails after installing python3-venv" >&2
        exit 1
      }
    fi
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    echo "$want" >"$stamp"
  fi
  echo "$(.venv/bin/python -m pip list --disable-pip-version-check 2>/dev/null | awk '$1=="mcp"{print "mcp " $2}'), $(.venv/bin/python --version)"
)

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

status=0
# One entry per suite: "label|log file", in run order.
suites=()

# $suite_tag names the server in the labels and logs when it is not the default (embedded-http).
suite_tag=""

ts_suite() { # $1 = file in interop/ts, $2 = transport (stdio or http), $3 = the SDK package it uses
  local transport=${2:-stdio} sdk=${3:-@modelcontextprotocol/sdk}
  local log="$logs/ts-$1-$transport$suite_tag.log"
  step "TypeScript suite: node --test interop/ts/$1 over $transport$suite_tag"
  (cd interop/ts && MCP_TRANSPORT=$transport timeout --kill-after=10 300 \
    node --test --test-reporter=spec "$1") 2>&1 \
    | tee "$log" || status=1
  suites+=("typescript $1 over $transport$suite_tag ($sdk)|$log")
}

py_suite() { # $1 = file in interop/py, $2 = transport (stdio or http; default stdio), then extra pytest arguments
  local file=$1 transport=${2:-stdio}
  local log="$logs/py-$file-$transport$suite_tag.log"
  shift $(($# < 2 ? $# : 2))
  step "Python suite: pytest interop/py/$file over $transport$suite_tag"
  (cd interop/py && MCP_TRANSPORT=$transport PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 300 \
    .venv/bin/python -m pytest -q -rfEs -p no:cacheprovider "$file" "$@") 2>&1 \
    | tee "$log" || status=1
  suites+=("python $file over $transport$suite_tag (mcp)|$log")
}

ts_suite client.mjs
ts_suite everything.mjs
ts_suite everything.mjs http
ts_suite modern.mjs http @modelcontextprotocol/client
# The legacy HTTP+SSE transport (everything --legacy-sse): SSEClientTransport and the Inspector CLI.
ts_suite sse.mjs http "@modelcontextprotocol/sdk SSEClientTransport, @modelcontextprotocol/inspector --cli --transport sse"
py_suite test_client.py
py_suite test_everything.py
py_suite test_everything.py http
py_suite test_auth.py http
py_suite test_axum.py http

# embedded-http (examples/src/bin/embedded-http/: the same conformance fixtures through
# mcp-embedded's heap-free HTTP server) under the everything suites over Streamable HTTP, the
# Python suite in both eras, the TypeScript one in the handshake era (SDK 1.x), every test
# (its server name differs).
suite_tag=" against embedded-http"
MCP_EVERYTHING_CMD="$MCP_EMBEDDED_HTTP_CMD" MCP_EXPECT_SERVER_NAME=mcp-rs-embedded-http \
  ts_suite everything.mjs http
MCP_EVERYTHING_CMD="$MCP_EMBEDDED_HTTP_CMD" MCP_EXPECT_SERVER_NAME=mcp-rs-embedded-http \
  py_suite test_everything.py http
suite_tag=""

# Our client (examples/src/bin/interop-client.rs) against the official SDKs' reference servers
# (interop/REFERENCE.md): every era and transport each one serves in full.
client_suite() { # $1 = era (legacy or modern), $2 = label, then the server command (its last argument is the transport)
  local era=$1 label=$2
  shift 2
  step "mcp-rs client ($era) against $label"
  timeout --kill-after=10 300 "$bin_dir/interop-client" "$era" -- "$@" 2>&1 \
    | tee "$logs/client-$label-$era.log" || status=1
  suites+=("mcp-rs client ($era) against $label|$logs/client-$label-$era.log")
}
py=interop/py/.venv/bin/python
for transport in stdio http; do
  client_suite legacy "python-$transport" "$py" interop/py/reference_server.py "$transport"
  client_suite modern "python-$transport" "$py" interop/py/reference_server.py "$transport"
  client_suite legacy "typescript-1.x-$transport" node interop/ts/reference-legacy.mjs "$transport"
  client_suite modern "typescript-2.x-$transport" node interop/ts/reference-modern.mjs "$transport"
done
client_suite legacy typescript-2.x-stdio node interop/ts/reference-modern.mjs stdio
# rmcp, the official Rust SDK (exact pins in interop/rmcp/Cargo.toml; its own lockfile and
# target dir, outside the workspace): the handshake era.
step "build the rmcp reference server (interop/rmcp)"
cargo build -q --manifest-path interop/rmcp/Cargo.toml --target-dir interop/rmcp/target
for transport in stdio http; do
  client_suite legacy "rmcp-$transport" interop/rmcp/target/debug/rmcp-reference "$transport"
done

# Every suite's summary again, then one plain closing line over all of them.
count() { grep -Eo "$1" "$2" | tail -1 | grep -Eo '[0-9]+' || echo 0; }
step "summary"
total_pass=0
total_fail=0
for suite in "${suites[@]}"; do
  label=${suite%%|*}
  log=${suite#*|}
  case $label in
    typescript*)
      pass=$(count 'ℹ pass [0-9]+' "$log")
      fail=$(( $(count 'ℹ fail [0-9]+' "$log") + $(count 'ℹ cancelled [0-9]+' "$log") ))
      skip=$(( $(count 'ℹ skipped [0-9]+' "$log") + $(count 'ℹ todo [0-9]+' "$log") ))
      ;;
    *)
      pass=$(count '[0-9]+ passed' "$log")
      fail=$(( $(count '[0-9]+ failed' "$log") + $(count '[0-9]+ errors?' "$log") ))
      skip=$(( $(count '[0-9]+ skipped' "$log") + $(count '[0-9]+ xfailed' "$log") ))
      ;;
  esac
  note=""
  if [ $((pass + fail)) -eq 0 ]; then
    status=1
    note=" (no tests ran)"
  fi
  if [ "$fail" -ne 0 ]; then status=1; fi
  # Every suite fails rather than skips, by design: a skip is a failure here.
  if [ "$skip" -ne 0 ]; then
    status=1
    note="$note ($skip skipped)"
  fi
  echo "$label: $pass passed, $fail failed$note"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
done
echo "interop: $total_pass passed, $total_fail failed"
exit "$status"
