#!/usr/bin/env bash
# Streamable HTTP benchmark: the mcp-rs bench server (mcp-tokio, feature `http`) against
# rmcp's Streamable HTTP server, same machine, same run, interleaved repetitions.
# See bench/README.md for every figure and knob. Not run in CI (the smoke test of the load
# generator is bench/httpload/tests/smoke.rs, part of `cargo test --workspace`).
#
#   bench/http.sh                 # build both in release, REPS=3, print the tables
#   REPS=5 DURATION=5 bench/http.sh
#   bench/http.sh build           # build only
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
WORK="${WORK:-$HERE/.work}"
REPS="${REPS:-3}"
CLIENTS="${CLIENTS:-1,64,1000}"
WARMUP="${WARMUP:-1}"
DURATION="${DURATION:-3}"
MODES="${MODES:-stateless,session}"
IDLE_SESSIONS="${IDLE_SESSIONS:-1000}"
LOAD_THREADS="${LOAD_THREADS:-1}"
FLOOR_MODES="${FLOOR_MODES:-stateless}"
TIMEOUT="${TIMEOUT:-10}"
FD_LIMIT="${FD_LIMIT:-8192}"
OURS_TARGET="${OURS_TARGET:-$WORK/target}"
RMCP_TARGET="${RMCP_TARGET:-$WORK/target-rmcp}"
mkdir -p "$WORK/results"

say() { printf '==> %s\n' "$*" >&2; }

build() {
  say "building mcp-httpload and mcp-http-bench-server (release, target $OURS_TARGET)"
  (cd "$ROOT" && CARGO_TARGET_DIR="$OURS_TARGET" cargo build --release -p mcp-httpload)
  say "building the rmcp baseline (release, target $RMCP_TARGET)"
  CARGO_TARGET_DIR="$RMCP_TARGET" cargo build --release --manifest-path "$HERE/rmcp-http/Cargo.toml"
}

[ "${BUILD:-1}" = 0 ] || build
[ "${1:-}" = build ] && exit 0

LOAD="$OURS_TARGET/release/mcp-httpload"
OURS="${OURS_SERVER:-$OURS_TARGET/release/mcp-http-bench-server}"
FLOOR="$OURS_TARGET/release/http-floor-server"
RMCP="$RMCP_TARGET/release/bench-rmcp-http"

# 1,000 clients hold 1,000 sockets in the load generator and as many in the server.
ulimit -n "$FD_LIMIT" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt 2100 ]; then
  say "the open-file limit is $(ulimit -n); 1,000 clients need about 2,100 (raise the hard limit)"
  exit 2
fi

for mode in ${MODES//,/ }; do
  case $mode in stateless | session) ;; *) say "MODES: stateless and/or session, not $mode"; exit 2 ;; esac
done

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="$WORK/results/http-$STAMP.jsonl"
LOG="$WORK/results/http-$STAMP.log"
: >"$OUT"
declare -A PID ADDR

stop_servers() {
  local name
  for name in "${!PID[@]}"; do
    kill "${PID[$name]}" 2>/dev/null || true
    wait "${PID[$name]}" 2>/dev/null || true
  done
  PID=()
  ADDR=()
}
trap stop_servers EXIT

# The address of a complete `listening on <addr>` line of FILE (a line still being written,
# without its newline, is not read).
listening_addr() {
  local line
  while IFS= read -r line; do
    case $line in "listening on "*) echo "${line#listening on }"; return 0 ;; esac
  done <"$1"
}

# start_server NAME MODE: starts it on a free loopback port; sets PID[NAME] and ADDR[NAME].
start_server() {
  local name=$1 mode=$2 addr=""
  # A fresh file per start, emptied here: the child truncates it only once it runs, and a
  # previous server's "listening on" line must not be read in between.
  local errlog="$WORK/results/server-$STAMP-$name-$mode.err"
  : >"$errlog"
  case "$name" in
    mcp-rs) "$OURS" --addr 127.0.0.1:0 2>"$errlog" & ;;
    floor) "$FLOOR" --addr 127.0.0.1:0 2>"$errlog" & ;;
    rmcp)
      if [ "$mode" = stateless ]; then "$RMCP" --addr 127.0.0.1:0 --stateless 2>"$errlog" &
      else "$RMCP" --addr 127.0.0.1:0 2>"$errlog" &
      fi ;;
  esac
  PID[$name]=$!
  for _ in $(seq 100); do
    addr="$(listening_addr "$errlog")"
    if [ -n "$addr" ]; then ADDR[$name]=$addr; return 0; fi
    kill -0 "${PID[$name]}" 2>/dev/null || break
    sleep 0.05
  done
  say "$name did not start:"; cat "$errlog" >&2
  exit 1
}

# run_load NAME MODE CLIENTS REP: one client count against a running server.
run_load() {
  local name=$1 mode=$2 clients=$3 rep=$4 rc=0
  "$LOAD" load --url "http://${ADDR[$name]}/mcp" --mode "$mode" --clients "$clients" \
    --warmup "$WARMUP" --duration "$DURATION" --timeout "$TIMEOUT" --threads "$LOAD_THREADS" \
    --pid "${PID[$name]}" --label "$name" --rep "$rep" >>"$OUT" 2>>"$LOG" || rc=$?
  [ "$rc" -eq 0 ] || say "WARNING: $name $mode $clients clients rep $rep had errors (exit $rc; see $LOG)"
  tail -n 1 "$LOG" | sed 's/^/    /' >&2
}

# run_idle NAME REP: a fresh legacy-session server per measurement.
run_idle() {
  local name=$1 rep=$2 rc=0
  start_server "$name" session
  "$LOAD" idle --url "http://${ADDR[$name]}/mcp" --sessions "$IDLE_SESSIONS" --timeout "$TIMEOUT" \
    --pid "${PID[$name]}" --label "$name" --rep "$rep" >>"$OUT" 2>>"$LOG" || rc=$?
  stop_servers
  [ "$rc" -eq 0 ] || say "WARNING: $name idle rep $rep had errors (exit $rc; see $LOG)"
  tail -n 1 "$LOG" | sed 's/^/    /' >&2
}

steal() { awk '/^cpu /{print $9}' /proc/stat; }
say "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); REPS=$REPS CLIENTS=$CLIENTS WARMUP=$WARMUP DURATION=$DURATION MODES=$MODES FLOOR_MODES=$FLOOR_MODES IDLE_SESSIONS=$IDLE_SESSIONS LOAD_THREADS=$LOAD_THREADS"
say "mcp-rs server: $OURS"
say "versions: rmcp $(grep -m1 -o 'rmcp = { version = "=[^"]*' "$HERE/rmcp-http/Cargo.toml" | sed 's/.*=//'), $(rustc --version)"
steal0=$(steal)
began=$SECONDS
for rep in $(seq 1 "$REPS"); do
  # Alternate which server goes first, so that drift within a repetition cancels out.
  if [ $((rep % 2)) -eq 1 ]; then order="mcp-rs rmcp"; else order="rmcp mcp-rs"; fi
  for mode in ${MODES//,/ }; do
    servers=$order
    case ",$FLOOR_MODES," in *",$mode,"*) servers="$order floor" ;; esac
    # One process per server, mode and repetition, all started together (an idle server
    # uses no CPU); each client count runs against them one after the other, so that the
    # runs compared are seconds apart.
    for name in $servers; do start_server "$name" "$mode"; done
    for clients in ${CLIENTS//,/ }; do
      for name in $servers; do
        say "rep $rep/$REPS: $name $mode, $clients clients"
        run_load "$name" "$mode" "$clients" "$rep"
      done
    done
    stop_servers
  done
  if [ "$IDLE_SESSIONS" -gt 0 ]; then
    for name in $order; do
      say "rep $rep/$REPS: $name idle sessions"
      run_idle "$name" "$rep"
    done
  fi
done
steal1=$(steal)
say "done in $((SECONDS - began)) s; CPU steal during the run: $(( (steal1 - steal0) )) ticks; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
say "raw lines: $OUT"
echo
"$LOAD" report --subject mcp-rs --baseline rmcp --floor floor "$OUT"
