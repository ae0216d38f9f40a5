#!/usr/bin/env bash
# Three `everything --http` instances (a, b, c) sharing one keys file, behind HAProxy
# (haproxy.cfg: round robin, Mcp-Session-Id affinity, health checks, retries), all on
# loopback. No root needed (apt-get install haproxy aside).
#
#   examples/cluster/run.sh start         start what is not running (builds everything if needed)
#   examples/cluster/run.sh stop          stop HAProxy and every instance
#   examples/cluster/run.sh status        what runs, and HAProxy's view (UP/DOWN); exit 3 if not all
#   examples/cluster/run.sh kill NAME     SIGKILL instance a, b or c (a crash; `start` brings it back)
#   examples/cluster/run.sh rotate        new current key; the old one stays accepted for
#                                         CLUSTER_GRACE_SECONDS (two reloads: every instance
#                                         accepts the new key before any signs with it)
#   examples/cluster/run.sh retire        drop the previous key now; every instance reloads
#
# Environment:
#   CLUSTER_PORT        HAProxy's port (default 18080): the MCP endpoint is
#                       http://127.0.0.1:$CLUSTER_PORT/mcp; instances a, b, c listen on the
#                       next three ports, HAProxy's stats page on CLUSTER_PORT+9
#   CLUSTER_RUN_DIR     pid files, logs and the keys file (default examples/cluster/run)
#   CLUSTER_PAGE_SIZE   items per list page (default 5, so that lists have several pages)
#   CLUSTER_GRACE_SECONDS  how long `rotate` keeps the old key accepted (default 600)
#   EVERYTHING          the everything binary (default: built with cargo, debug profile)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
run_dir=${CLUSTER_RUN_DIR:-$here/run}
base=${CLUSTER_PORT:-18080}
page_size=${CLUSTER_PAGE_SIZE:-5}
grace=${CLUSTER_GRACE_SECONDS:-600}
names=(a b c)

export LB_PORT=$base A_PORT=$((base + 1)) B_PORT=$((base + 2)) C_PORT=$((base + 3))
export STATS_PORT=$((base + 9))

die() { echo "cluster: $*" >&2; exit 1; }
port_of() { case $1 in a) echo "$A_PORT" ;; b) echo "$B_PORT" ;; c) echo "$C_PORT" ;; *) die "no instance $1 (a, b or c)" ;; esac; }
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
# Something accepts connections on 127.0.0.1:$1.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

everything_bin() {
  if [ -n "${EVERYTHING:-}" ]; then
    [ -x "$EVERYTHING" ] || die "EVERYTHING=$EVERYTHING is not an executable"
    echo "$EVERYTHING"
    return
  fi
  local target
  target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
  (cd "$root" && cargo build -q -p mcp-examples --bin everything) >&2 || die "cargo build failed"
  echo "$target/debug/everything"
}

new_key() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }

# Writes the keys file atomically (readable by its owner only).
write_keys() { # $1 = current, [$2 = previous, $3 = previous_not_after]
  local tmp="$run_dir/keys.tmp"
  (
    umask 077
    {
      echo "# Shared by instances a, b and c (examples/cluster/run.sh); see mcp_rs_tokio::keys."
      echo "current = $1"
      if [ -n "${2:-}" ]; then
        echo "previous = $2"
        echo "previous_not_after = $3"
      fi
    } >"$tmp"
  )
  mv -f "$tmp" "$run_dir/keys"
}

key_of() { sed -n "s/^$1 *= *//p" "$run_dir/keys"; }

wait_listening() { # $1 = name
  local log="$run_dir/$1.log"
  for _ in $(seq 100); do
    grep -q '^listening on ' "$log" 2>/dev/null && return 0
    pid_alive "$run_dir/$1.pid" || break
    sleep 0.1
  done
  cat "$log" >&2 || true
  die "instance $1 did not start (log above)"
}

# HAProxy's CSV statistics: "server status" lines for the backend's servers.
server_states() {
  local csv
  csv=$(exec 3<>"/dev/tcp/127.0.0.1/$STATS_PORT" &&
    printf 'GET /;csv HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3) || return 1
  awk -F, '$1 == "everything" && $2 != "BACKEND" && $2 != "FRONTEND" { print $2, $18 }' <<<"$csv"
}

start() {
  command -v haproxy >/dev/null || die "haproxy is not installed (apt-get install haproxy)"
  mkdir -p "$run_dir"
  [ -f "$run_dir/keys" ] || write_keys "$(new_key)"
  local bin name port
  bin=$(everything_bin)
  for name in "${names[@]}"; do
    pid_alive "$run_dir/$name.pid" && continue
    port=$(port_of "$name")
    port_busy "$port" && die "port $port (instance $name) is in use; set CLUSTER_PORT"
    # Every client arrives from HAProxy's address: its session quota is the whole table.
    "$bin" --http "127.0.0.1:$port" --page-size "$page_size" --key-file "$run_dir/keys" \
      --instance "$name" --max-sessions-per-peer 1024 </dev/null >"$run_dir/$name.log" 2>&1 &
    echo $! >"$run_dir/$name.pid"
  done
  for name in "${names[@]}"; do wait_listening "$name"; done
  if ! pid_alive "$run_dir/haproxy.pid"; then
    for port in "$LB_PORT" "$STATS_PORT"; do
      port_busy "$port" && die "port $port (HAProxy) is in use; set CLUSTER_PORT"
    done
    haproxy -c -q -f "$here/haproxy.cfg" || die "haproxy.cfg does not check"
    haproxy -db -f "$here/haproxy.cfg" </dev/null >"$run_dir/haproxy.log" 2>&1 &
    echo $! >"$run_dir/haproxy.pid"
  fi
  # Ready when HAProxy sees every instance UP.
  local states=""
  for _ in $(seq 100); do
    states=$(server_states 2>/dev/null || true)
    [ "$(grep -c ' UP$' <<<"$states")" -eq 3 ] && break
    pid_alive "$run_dir/haproxy.pid" || { cat "$run_dir/haproxy.log" >&2; die "haproxy exited"; }
    sleep 0.1
  done
  [ "$(grep -c ' UP$' <<<"$states")" -eq 3 ] || die "HAProxy does not see every instance UP: $states"
  echo "cluster: http://127.0.0.1:$LB_PORT/mcp -> a :$A_PORT, b :$B_PORT, c :$C_PORT" \
    "(stats http://127.0.0.1:$STATS_PORT/, run dir $run_dir)"
}

stop_pid() { # $1 = pid file
  local pid
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

stop() {
  stop_pid "$run_dir/haproxy.pid"
  for name in "${names[@]}"; do stop_pid "$run_dir/$name.pid"; done
  echo "cluster: stopped"
}

status() {
  local all=0 name states
  states=$(server_states 2>/dev/null || true)
  local seen
  for name in "${names[@]}"; do
    seen=$(awk -v n="$name" '$1 == n { print $2 }' <<<"$states")
    if pid_alive "$run_dir/$name.pid"; then
      echo "$name: running (pid $(cat "$run_dir/$name.pid"), 127.0.0.1:$(port_of "$name")), HAProxy: ${seen:-?}"
    else
      echo "$name: not running, HAProxy: ${seen:-?}"
      all=3
    fi
  done
  if pid_alive "$run_dir/haproxy.pid"; then
    echo "haproxy: running (pid $(cat "$run_dir/haproxy.pid")), http://127.0.0.1:$LB_PORT/mcp"
  else
    echo "haproxy: not running"
    all=3
  fi
  return "$all"
}

kill_instance() { # $1 = name
  port_of "$1" >/dev/null
  pid_alive "$run_dir/$1.pid" || die "instance $1 is not running"
  kill -KILL "$(cat "$run_dir/$1.pid")"
  rm -f "$run_dir/$1.pid"
  echo "cluster: killed instance $1"
}

# Rewrites the keys file with `write_keys "$@"`, then waits until every running instance
# logged one more reload (SIGHUP makes it immediate; the instances also watch the file).
reload_keys() {
  local name before=()
  for name in "${names[@]}"; do before+=("$(grep -c 'keys reloaded' "$run_dir/$name.log" || true)"); done
  write_keys "$@"
  for name in "${names[@]}"; do
    pid_alive "$run_dir/$name.pid" && kill -HUP "$(cat "$run_dir/$name.pid")"
  done
  local i
  for i in "${!names[@]}"; do
    name=${names[$i]}
    pid_alive "$run_dir/$name.pid" || continue
    for _ in $(seq 100); do
      [ "$(grep -c 'keys reloaded' "$run_dir/$name.log" || true)" -gt "${before[$i]}" ] && continue 2
      sleep 0.05
    done
    die "instance $name did not reload its keys (see $run_dir/$name.log)"
  done
}

rotate() {
  [ -f "$run_dir/keys" ] || die "no keys file; start the cluster first"
  local old new until
  old=$(key_of current)
  new=$(new_key)
  until=$(($(date +%s) + grace))
  # 1. Every instance accepts the new key (in the `previous` slot: accepted, not signing)
  #    while still signing with the old one ...
  reload_keys "$old" "$new" "$until"
  # 2. ... then signs with it, accepting the old one for the grace period. Without step 1,
  #    an instance that reloads a moment later than another would refuse, for that moment,
  #    what the other already signed with the new key.
  reload_keys "$new" "$old" "$until"
  echo "cluster: new current key; the previous one is accepted for ${grace}s"
}

retire() {
  [ -f "$run_dir/keys" ] || die "no keys file; start the cluster first"
  reload_keys "$(key_of current)"
  echo "cluster: previous key retired"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  kill) kill_instance "${2:?usage: run.sh kill a|b|c}" ;;
  rotate) rotate ;;
  retire) retire ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
    exit 2
    ;;
esac
