#!/usr/bin/env bash
# Runs server_python.py against a fresh `draplane server`.
BIN="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
/usr/bin/python3 -c 'import kubernetes' 2>/dev/null || { echo "python3-kubernetes missing: skipped"; exit 77; }
work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT
start_server "$BIN" "$work/data" || exit 1
/usr/bin/python3 "$here/server_python.py" "$KUBECONFIG"
