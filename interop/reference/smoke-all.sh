#!/usr/bin/env bash
# Runs both SDK-client smoke checks (smoke_py.py, smoke_ts.mjs) against every reference server in
# every era and transport it serves in full (interop/REFERENCE.md): 18 runs. Needs the SDKs
# installed as scripts/test-interop.sh installs them (interop/ts/node_modules, interop/py/.venv).
# Not part of any suite. Exits non-zero if any run fails.
set -uo pipefail
cd "$(dirname "$0")/.."
interop=$(pwd)
py="$interop/py/.venv/bin/python"
py_server="$py $interop/py/reference_server.py"
ts_legacy="node $interop/ts/reference-legacy.mjs"
ts_modern="node $interop/ts/reference-modern.mjs"

status=0
run() { # $1 era, $2 transport, rest: server command
  local era=$1 transport=$2
  shift 2
  for smoke in "node reference/smoke_ts.mjs" "$py reference/smoke_py.py"; do
    echo "--> ${smoke##*/} $era $transport -- ${*##*/}"
    timeout 180 $smoke "$era" "$transport" -- "$@" >"${TMPDIR:-/tmp}/reference-smoke.log" 2>&1 || status=1
    grep -E '^(FAIL|smoke )' "${TMPDIR:-/tmp}/reference-smoke.log" || { status=1; tail -20 "${TMPDIR:-/tmp}/reference-smoke.log"; }
  done
}

for transport in stdio http; do
  run handshake "$transport" $py_server
  run modern "$transport" $py_server
  run handshake "$transport" $ts_legacy
  run modern "$transport" $ts_modern
done
# @modelcontextprotocol/server serves the handshake era in full over stdio only (its HTTP entry's
# legacy fallback is stateless: no server-to-client requests, no session notifications).
run handshake stdio $ts_modern
exit "$status"
