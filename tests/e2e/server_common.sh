# Shared helpers for the server e2e scripts: start `draplane server` on a free
# loopback port with a fresh data dir, wait for readiness, stop it by PID.
# Usage: source server_common.sh; start_server BIN DATA_DIR [extra flags...]
# (or start_api_server_for_kubectl BIN)
set -u

SERVER_PID=""
SERVER_URL=""

start_server() {
  local bin="$1" dir="$2"
  shift 2
  local log="$dir.log"
  "$bin" server --data-dir "$dir" --listen 127.0.0.1:0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    if grep -q '^ready$' "$log" 2>/dev/null; then
      SERVER_URL=$(sed -n 's/^draplane server listening on //p' "$log")
      export KUBECONFIG="$dir/kubeconfig"
      return 0
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "server exited early:"; cat "$log"; return 1
    fi
    sleep 0.1
  done
  echo "server did not become ready:"; cat "$log"; return 1
}

# start_api_server_for_kubectl BIN: the kubectl scripts' start. Skips (77)
# without kubectl, makes the scratch dir $work (removed on exit, with the
# server stopped) and starts the API server alone: no scheduler or controller
# writes into what the scripts check.
start_api_server_for_kubectl() {
  command -v kubectl >/dev/null || { echo "kubectl not on PATH: skipped"; exit 77; }
  work=$(mktemp -d)
  export HOME="$work/home"  # a fresh discovery cache
  trap 'stop_server; rm -rf "$work"' EXIT
  local store=()
  if [ "${DRAPLANE_E2E_STORE:-}" = etcd ]; then
    start_etcd "$work/etcd"
    store=(--store "etcd://$ETCD_ENDPOINT")
  fi
  start_server "$1" "$work/data" --no-scheduler --no-controllers "${store[@]}" || exit 1
}

# start_etcd DIR: a one-member etcd on free loopback ports, its data in DIR; sets
# ETCD_ENDPOINT (stop_server stops it). Skips (77) without the etcd binary.
ETCD_PID=""
start_etcd() {
  local dir="$1"
  command -v etcd >/dev/null || { echo "etcd not on PATH: skipped"; exit 77; }
  local ports
  ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
  set -- $ports
  ETCD_ENDPOINT="127.0.0.1:$1"
  local peer="http://127.0.0.1:$2"
  etcd --name e2e --data-dir "$dir" --listen-client-urls "http://$ETCD_ENDPOINT" \
    --advertise-client-urls "http://$ETCD_ENDPOINT" --listen-peer-urls "$peer" \
    --initial-advertise-peer-urls "$peer" --initial-cluster "e2e=$peer" \
    --logger=zap --log-level=error >"$dir.log" 2>&1 </dev/null &
  ETCD_PID=$!
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
  fi
  if [ -n "$ETCD_PID" ]; then
    kill "$ETCD_PID" 2>/dev/null
    wait "$ETCD_PID" 2>/dev/null
    ETCD_PID=""
  fi
}

FAILURES=0
# expect NAME EXPECTED_SUBSTRING COMMAND...: runs COMMAND, checks its combined output.
expect() {
  local name="$1" want="$2"
  shift 2
  local out
  out=$("$@" 2>&1)
  if printf '%s' "$out" | grep -qF -- "$want"; then
    echo "ok   $name"
  else
    echo "FAIL $name: wanted [$want] in:"
    printf '%s\n' "$out" | sed 's/^/     /'
    FAILURES=$((FAILURES + 1))
  fi
}
