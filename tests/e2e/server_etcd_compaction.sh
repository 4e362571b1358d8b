#!/usr/bin/env bash
# `draplane server --store etcd://...` compacting etcd every second: a watch and
# an exact list from a resourceVersion older than the compaction answer 410
# ("too old resource version"), as kube-apiserver on etcd does, so informers relist;
# a watch from the current resourceVersion still works.
# Usage: server_etcd_compaction.sh DRAPLANE_BINARY
BIN="$1"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
command -v kubectl >/dev/null || { echo "kubectl not on PATH: skipped"; exit 77; }
work=$(mktemp -d)
export HOME="$work/home"
trap 'stop_server; rm -rf "$work"' EXIT
start_etcd "$work/etcd"
start_server "$BIN" "$work/data" --no-scheduler --no-controllers --store "etcd://$ETCD_ENDPOINT" \
  --etcd-compaction-interval 1s || exit 1

kubectl create configmap first --from-literal=k=v >/dev/null
old=$(kubectl get configmap first -o jsonpath='{.metadata.resourceVersion}')
kubectl create configmap second --from-literal=k=v >/dev/null
kubectl create configmap third --from-literal=k=v >/dev/null
# The compactor compacts to the revision it saw one interval earlier: after a few
# intervals `old` is below the compacted revision.
sleep 3.5

expect "watch from a compacted resourceVersion is 410" '"code":410' \
  timeout 10 kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$old"
expect "its reason names it" 'too old resource version' \
  timeout 10 kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$old"
expect "an exact list at it is 410 too" 'Expired' \
  kubectl get --raw "/api/v1/namespaces/default/configmaps?resourceVersion=$old&resourceVersionMatch=Exact"
now=$(kubectl get configmaps -o jsonpath='{.metadata.resourceVersion}')
expect "a relist answers every object" 'third' kubectl get configmaps -o name
( sleep 1; kubectl create configmap fourth --from-literal=k=v >/dev/null ) &
writer=$!
expect "a watch from the relist's resourceVersion sees the next write" '"fourth"' \
  timeout 5 kubectl get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$now"
wait "$writer"
echo "$FAILURES failure(s)"
[ "$FAILURES" -eq 0 ]
