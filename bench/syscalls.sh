#!/usr/bin/env bash
# System calls, context switches and CPU per call of HTTP bench servers, with `perf stat` on
# the server's process (all threads): the kernel side of a call, which bench/instructions.sh
# does not count. As there, each server runs twice (DURATION and 4x DURATION seconds of
# load) and the difference of the counts is divided by the difference of the calls
# answered: start-up, connecting and shutdown cancel out. Servers run one after the other,
# ROUNDS times, in alternating order. See bench/README.md.
#
#   bench/syscalls.sh [stateless|session] [CLIENTS] SERVER_CMD...
#   bench/syscalls.sh stateless 64 ./old-server ./new-server "bench-rmcp-http --stateless"
#
# Each SERVER_CMD must accept `--addr 127.0.0.1:0` and print `listening on <addr>` to stderr.
# Needs perf with tracepoint access (root, or kernel.perf_event_paranoid <= 1) and a release
# build of mcp-httpload (LOAD=path to override). Knobs: WARMUP [0.5], DURATION [1], ROUNDS [2].
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
mode="${1:?usage: syscalls.sh stateless|session CLIENTS SERVER_CMD...}"
clients="${2:?usage: syscalls.sh stateless|session CLIENTS SERVER_CMD...}"
shift 2
LOAD="${LOAD:-${OURS_TARGET:-$HERE/.work/target}/release/mcp-httpload}"
WARMUP="${WARMUP:-0.5}"
DURATION="${DURATION:-1}"
ROUNDS="${ROUNDS:-2}"
command -v perf >/dev/null || { echo "syscalls.sh: perf is not installed" >&2; exit 2; }
[ -x "$LOAD" ] || { echo "syscalls.sh: no load generator at $LOAD (run bench/http.sh build)" >&2; exit 2; }
ulimit -n 8192 2>/dev/null || true
TMP="$(mktemp -d)"
SP=""
cleanup() { [ -z "$SP" ] || kill "$SP" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
EVENTS=task-clock,context-switches,raw_syscalls:sys_enter
for s in recvfrom read writev write sendto epoll_wait epoll_ctl futex clock_gettime; do
  EVENTS="$EVENTS,syscalls:sys_enter_$s"
done

# run CMD SECONDS: the server under `perf stat` (from its start to its end) with SECONDS of
# load; "<answered calls> <calls/s>" in $TMP/calls, perf's counts in $TMP/perf
run() {
  local cmd=$1 secs=$2 addr="" pp
  : >"$TMP/err"
  perf stat -x, -e "$EVENTS" -o "$TMP/perf" -- $cmd --addr 127.0.0.1:0 2>"$TMP/err" </dev/null &
  pp=$!
  for _ in $(seq 200); do
    addr="$(while IFS= read -r l; do case $l in "listening on "*) echo "${l#listening on }"; break ;; esac; done <"$TMP/err")"
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "syscalls.sh: $cmd did not start" >&2; cat "$TMP/err" >&2; exit 1; }
  SP="$(pgrep -P "$pp" | head -n 1)"
  "$LOAD" load --url "http://$addr/mcp" --mode "$mode" --clients "$clients" \
    --warmup "$WARMUP" --duration "$secs" --timeout 30 >"$TMP/json" 2>"$TMP/lerr" </dev/null \
    || { echo "syscalls.sh: the load had errors:" >&2; cat "$TMP/lerr" >&2; exit 1; }
  kill "$SP" 2>/dev/null || true
  wait "$pp" 2>/dev/null || true
  SP=""
  python3 -c 'import json, sys; v = json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(v["answered"], v["calls_per_s"])' "$TMP/json" >"$TMP/calls"
}

# one CMD: two runs (DURATION and 4x DURATION of load); the differences of the counts over
# the difference of the calls answered, so that start-up, connecting and shutdown cancel out
one() {
  local cmd=$1
  run "$cmd" "$DURATION"; cp "$TMP/perf" "$TMP/perf1"; cp "$TMP/calls" "$TMP/calls1"
  run "$cmd" "$((DURATION * 4))"
  python3 - "$TMP/perf1" "$TMP/calls1" "$TMP/perf" "$TMP/calls" "$cmd" <<'PY'
import sys
def counts(path):
    c = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) < 3 or not f[0].replace(".", "").isdigit():
            continue
        c[f[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")] = float(f[0])
    return c
c1, c2 = counts(sys.argv[1]), counts(sys.argv[3])
a1, r1 = open(sys.argv[2]).read().split()
a2, r2 = open(sys.argv[4]).read().split()
calls = int(a2) - int(a1)
per = lambda k: (c2.get(k, 0.0) - c1.get(k, 0.0)) / calls
parts = [f"{float(r2):.0f} calls/s", f"CPU {per('task-clock') * 1000:.1f} us/call"]
parts += [f"{k} {per(k):.2f}" for k in ["syscalls", "context-switches", "recvfrom", "read", "writev", "write",
                                          "sendto", "epoll_wait", "epoll_ctl", "futex", "clock_gettime"]]
print(f"{sys.argv[5]}: {', '.join(parts)} per call")
PY
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round/$ROUNDS: $mode, $clients clients" >&2
  if [ $((round % 2)) -eq 1 ]; then
    for cmd in "$@"; do one "$cmd"; done
  else
    for ((i = $#; i >= 1; i--)); do one "${!i}"; done
  fi
done
