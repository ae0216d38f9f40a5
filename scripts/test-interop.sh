#!/usr/bin/env bash
# Interop suites: the official MCP SDK clients (TypeScript and Python, exact versions pinned
# in interop/ts/package.json and interop/py/requirements.txt) drive the calculator example
# over stdio. Run from anywhere; scripts/test.sh runs it. Needs only cargo, node/npm (20+)
# and python3 (3.10+); installs the SDKs into interop/ts/node_modules and interop/py/.venv
# (both gitignored) and reinstalls only when a pin changes. When `python3 -m venv` is
# unavailable (Debian/Ubuntu ship it separately), installs python3-venv with apt-get (as
# root, or through sudo). Fails if either suite fails, skips a test, or runs no test.
#
#   MCP_SERVER_CMD=/path/to/server  test another build (default: target/debug/calculator)
#   MCP_INTEROP_VERBOSE=1           also print the server's stderr log (TypeScript suite)
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

step "build the calculator"
cargo build -q -p mcp-examples --bins
export MCP_SERVER_CMD="${MCP_SERVER_CMD:-$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/debug/calculator}"
export MCP_SERVER_ARGS='["--extra-tools","120"]'

step "TypeScript SDK (interop/ts)"
(
  cd interop/ts
  want=$(node -p 'require("./package.json").dependencies["@modelcontextprotocol/sdk"]')
  have=$(node -p 'try { require("./node_modules/@modelcontextprotocol/sdk/package.json").version } catch { "" }')
  if [ "$want" != "$have" ]; then
    NPM_CONFIG_UPDATE_NOTIFIER=false npm install --no-package-lock --no-audit --no-fund --loglevel=error
  fi
  echo "@modelcontextprotocol/sdk $want, node $(node --version)"
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
step "TypeScript suite: node --test interop/ts/client.mjs"
(cd interop/ts && timeout --kill-after=10 240 node --test --test-reporter=spec client.mjs) 2>&1 \
  | tee "$logs/ts.log" || status=1

step "Python suite: pytest interop/py/test_client.py"
(cd interop/py && PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 240 \
  .venv/bin/python -m pytest -q -rfEs -p no:cacheprovider test_client.py) 2>&1 \
  | tee "$logs/py.log" || status=1

# Both summaries again, then one plain closing line over the two suites.
count() { grep -Eo "$1" "$2" | tail -1 | grep -Eo '[0-9]+' || echo 0; }
ts_pass=$(count 'ℹ pass [0-9]+' "$logs/ts.log"); ts_fail=$(count 'ℹ fail [0-9]+' "$logs/ts.log")
ts_cancelled=$(count 'ℹ cancelled [0-9]+' "$logs/ts.log")
ts_skip=$(($(count 'ℹ skipped [0-9]+' "$logs/ts.log") + $(count 'ℹ todo [0-9]+' "$logs/ts.log")))
py_pass=$(count '[0-9]+ passed' "$logs/py.log"); py_fail=$(count '[0-9]+ failed' "$logs/py.log")
py_error=$(count '[0-9]+ errors?' "$logs/py.log")
py_skip=$(($(count '[0-9]+ skipped' "$logs/py.log") + $(count '[0-9]+ xfailed' "$logs/py.log")))
ts_fail=$((ts_fail + ts_cancelled)); py_fail=$((py_fail + py_error))
# Each suite on its own must have run tests (a suite that ran none checked nothing), none
# failing and none skipped (both suites fail, never skip, by design).
for suite in "typescript:$ts_pass:$ts_fail:$ts_skip" "python:$py_pass:$py_fail:$py_skip"; do
  IFS=: read -r name pass fail skip <<<"$suite"
  if [ $((pass + fail)) -eq 0 ]; then
    echo "interop: FAILED: the $name suite ran no tests" >&2
    status=1
  fi
  if [ "$fail" -ne 0 ]; then status=1; fi
  if [ "$skip" -ne 0 ]; then
    echo "interop: FAILED: the $name suite skipped $skip test(s)" >&2
    status=1
  fi
done

step "summary"
echo "typescript (@modelcontextprotocol/sdk): $ts_pass passed, $ts_fail failed, $ts_skip skipped"
echo "python (mcp): $py_pass passed, $py_fail failed, $py_skip skipped"
echo "interop: $((ts_pass + py_pass)) passed, $((ts_fail + py_fail)) failed, $((ts_skip + py_skip)) skipped"
exit "$status"
