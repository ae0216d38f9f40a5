#!/usr/bin/env bash
# User-space instructions (and optionally heap allocations) per call of HTTP bench servers,
# under valgrind: a deterministic A/B figure for server changes on a machine too noisy for
# wall-clock CPU. For each server, two runs (1 s and 4 s of load) are counted and the
# difference of instructions is divided by the difference of calls answered, so start-up and
# shutdown cancel out. See bench/README.md.
#
#   bench/instructions.sh [stateless|session] [CLIENTS] SERVER_CMD...
#   bench/instructions.sh stateless 8 ./old-server ./new-server "bench-rmcp-http --stateless"
#   ALLOCS=1 bench/instructions.sh session 8 ./server     # DHAT: heap blocks per call too
#
# Each SERVER_CMD must accept `--addr 127.0.0.1:0` and print `listening on <addr>` to stderr.
# Needs valgrind (apt: valgrind) and a release build of mcp-httpload (LOAD=path to override).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
mode="${1:?usage: instructions.sh stateless|session CLIENTS SERVER_CMD...}"
clients="${2:?usage: instructions.sh stateless|session CLIENTS SERVER_CMD...}"
shift 2
LOAD="${LOAD:-${OURS_TARGET:-$HERE/.work/target}/release/mcp-httpload}"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
[ -x "$LOAD" ] || { echo "instructions.sh: no load generator at $LOAD (run bench/http.sh build)" >&2; exit 2; }
ulimit -n 8192 2>/dev/null || true
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# measure TOOL SECONDS CMD -> "<count> <calls answered> <errors>" in $TMP/out
measure() {
  local tool=$1 secs=$2 cmd=$3 sp addr="" count
  : >"$TMP/err"
  case $tool in
    cachegrind) valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null $cmd --addr 127.0.0.1:0 2>"$TMP/err" </dev/null & ;;
    dhat) valgrind --tool=dhat --dhat-out-file=/dev/null $cmd --addr 127.0.0.1:0 2>"$TMP/err" </dev/null & ;;
  esac
  sp=$!
  for _ in $(seq 400); do
    # Only a complete line (with its newline) is read.
    addr="$(while IFS= read -r l; do case $l in "listening on "*) echo "${l#listening on }"; break ;; esac; done <"$TMP/err")"
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "instructions.sh: $cmd did not start" >&2; cat "$TMP/err" >&2; exit 1; }
  timeout 150 "$LOAD" load --url "http://$addr/mcp" --mode "$mode" --clients "$clients" \
    --warmup 0.2 --duration "$secs" --timeout 30 >"$TMP/json" 2>"$TMP/lerr" </dev/null || true
  kill -TERM "$sp" 2>/dev/null || true
  wait "$sp" 2>/dev/null || true
  case $tool in
    cachegrind) count="$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$TMP/err" | tr -d ,)" ;;
    dhat) count="$(sed -n 's/.*Total: *[0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$TMP/err" | tr -d ,)" ;;
  esac
  [ -n "$count" ] && [ -s "$TMP/json" ] || { echo "instructions.sh: no figures from $cmd ($tool)" >&2; cat "$TMP/lerr" >&2; exit 1; }
  python3 - "$count" "$TMP/json" >"$TMP/out" <<'PY'
import json, sys
v = json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(sys.argv[1], v["answered"], v["errors"])
PY
}

per_call() { # tool cmd -> prints the per-call figure
  local n1 a1 e1 n2 a2 e2
  measure "$1" 1 "$2"; read -r n1 a1 e1 <"$TMP/out"
  measure "$1" 4 "$2"; read -r n2 a2 e2 <"$TMP/out"
  if [ "$e1" != 0 ] || [ "$e2" != 0 ]; then echo "instructions.sh: $2 had errors ($e1, $e2)" >&2; exit 1; fi
  python3 -c "print('%.1f' % (($n2 - $n1) / ($a2 - $a1)))"
}

for cmd in "$@"; do
  line="$cmd: $mode, $clients clients: $(per_call cachegrind "$cmd" | sed 's/\.[0-9]*$//') instructions/call"
  if [ "${ALLOCS:-0}" = 1 ]; then
    line="$line, $(per_call dhat "$cmd") allocations/call"
  fi
  echo "$line"
done
