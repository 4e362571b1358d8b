#!/usr/bin/env bash
# Server-side apply with kubectl (as installed) against `draplane server`:
# managedFields, no-op re-apply, conflicts with another manager and
# --force-conflicts, removal of fields dropped from the configuration,
# co-ownership, the client-side to server-side upgrade, --subresource=status,
# --dry-run=server, kubectl diff --server-side, and the examples applied
# server-side.
# Usage: server_apply.sh DRAPLANE_BINARY SOURCE_DIR
BIN="$1"
SRC="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
start_api_server_for_kubectl "$BIN"

# expect_fail NAME EXPECTED_SUBSTRING COMMAND...: COMMAND must fail and print the substring.
expect_fail() {
  local name="$1" want="$2"
  shift 2
  local out
  if out=$("$@" 2>&1); then
    echo "FAIL $name: succeeded:"; printf '%s\n' "$out" | sed 's/^/     /'; FAILURES=$((FAILURES + 1)); return
  fi
  if printf '%s' "$out" | grep -qF -- "$want"; then echo "ok   $name"; else
    echo "FAIL $name: wanted [$want] in:"; printf '%s\n' "$out" | sed 's/^/     /'; FAILURES=$((FAILURES + 1)); fi
}
claim() {  # claim NAME LABELS(flow map) -> a claim manifest
  cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $1
  namespace: default
  labels: $2
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
YAML
}
mf() { kubectl get resourceclaim "$1" -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation} {end}'; }

claim web '{app: web, tier: gold}' >"$work/web.yaml"
expect "apply creates" "resourceclaim.resource.k8s.io/web serverside-applied" kubectl apply --server-side -f "$work/web.yaml"
expect "kubectl owns by Apply" "kubectl/Apply" mf web
expect "fieldsV1 of the applier" '{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:devices":{"f:requests":{}}}}' \
  kubectl get resourceclaim web -o jsonpath='{.metadata.managedFields[0].fieldsV1}'
rv=$(kubectl get resourceclaim web -o jsonpath='{.metadata.resourceVersion}')
sleep 1.1  # a later second: a no-op apply must not even move the manager's time
expect "re-apply" "serverside-applied" kubectl apply --server-side -f "$work/web.yaml"
expect "re-apply writes nothing" "$rv" kubectl get resourceclaim web -o jsonpath='{.metadata.resourceVersion}'
expect "get -o yaml hides managedFields" "app: web" kubectl get resourceclaim web -o yaml
if kubectl get resourceclaim web -o yaml | grep -q managedFields; then
  echo "FAIL managedFields shown by default"; FAILURES=$((FAILURES + 1)); else echo "ok   managedFields hidden by default"; fi

# Another manager changes a field kubectl applied: kubectl's next apply conflicts.
expect "label by another manager" "labeled" kubectl label resourceclaim web tier=silver --overwrite
expect "kubectl-label owns by Update" "kubectl-label/Update" mf web
expect_fail "apply conflicts" 'Apply failed with 1 conflict: conflict with "kubectl-label" using resource.k8s.io/v1: .metadata.labels.tier' \
  kubectl apply --server-side -f "$work/web.yaml"
expect "conflict left the value" "silver" kubectl get resourceclaim web -o jsonpath='{.metadata.labels.tier}'
expect "force-conflicts" "serverside-applied" kubectl apply --server-side --force-conflicts -f "$work/web.yaml"
expect "forced value" "gold" kubectl get resourceclaim web -o jsonpath='{.metadata.labels.tier}'
# The Status object of a conflict, as kube-apiserver sends it.
kubectl label resourceclaim web tier=bronze --overwrite >/dev/null
expect_fail "409 with FieldManagerConflict cause" '\"reason\":\"FieldManagerConflict\",\"message\":\"conflict with \\\"kubectl-label\\\" using resource.k8s.io/v1\",\"field\":\".metadata.labels.tier\"' \
  kubectl apply --server-side -f "$work/web.yaml" -v=8
kubectl apply --server-side --force-conflicts -f "$work/web.yaml" >/dev/null

# Co-ownership: a second applier sets the same value; removal by one keeps the field.
claim web '{app: web}' | sed 's/^spec:$/spec:/' >"$work/web-app.yaml"
cat >"$work/web-ops.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: web
  namespace: default
  labels: {tier: gold}
  annotations: {owner: ops}
YAML
expect "second applier co-owns" "serverside-applied" kubectl apply --server-side --field-manager=ops -f "$work/web-ops.yaml"
expect "ops entry" "ops/Apply" mf web
expect "kubectl drops tier" "serverside-applied" kubectl apply --server-side -f "$work/web-app.yaml"
expect "tier kept (ops owns it)" "gold|ops" kubectl get resourceclaim web -o jsonpath='{.metadata.labels.tier}|{.metadata.annotations.owner}'
cat >"$work/web-ops2.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: web
  namespace: default
YAML
expect "ops drops its fields" "serverside-applied" kubectl apply --server-side --field-manager=ops -f "$work/web-ops2.yaml"
expect "fields nobody applies are gone" "web||" kubectl get resourceclaim web -o jsonpath='{.metadata.labels.app}|{.metadata.labels.tier}|{.metadata.annotations.owner}'

# Dry run and diff.
claim web '{app: web, extra: "1"}' >"$work/web-extra.yaml"
expect "dry-run=server" "serverside-applied (server dry run)" kubectl apply --server-side --dry-run=server -f "$work/web-extra.yaml"
expect "dry run stored nothing" "|" kubectl get resourceclaim web -o jsonpath='{.metadata.labels.extra}|'
kubectl diff --server-side -f "$work/web-app.yaml" >"$work/diff0.out" 2>&1
d0=$?
kubectl diff --server-side -f "$work/web-extra.yaml" >"$work/diff1.out" 2>&1
d1=$?
if [ "$d0" -eq 0 ] && [ "$d1" -eq 1 ] && grep -q '+    extra: "1"' "$work/diff1.out"; then echo "ok   diff --server-side"; else
  echo "FAIL diff --server-side ($d0, $d1)"; cat "$work/diff0.out" "$work/diff1.out"; FAILURES=$((FAILURES + 1)); fi

# Client-side apply first, then server-side: kubectl takes over through the last-applied annotation.
claim legacy '{app: legacy}' >"$work/legacy.yaml"
expect "client-side apply" "resourceclaim.resource.k8s.io/legacy created" kubectl apply -f "$work/legacy.yaml"
expect "client-side manager" "kubectl-client-side-apply/Update" mf legacy
claim legacy '{app: legacy2}' >"$work/legacy2.yaml"
expect "server-side upgrade" "serverside-applied" kubectl apply --server-side -f "$work/legacy2.yaml"
expect "upgraded value" "legacy2" kubectl get resourceclaim legacy -o jsonpath='{.metadata.labels.app}'
expect "last-applied follows" '"labels":{"app":"legacy2"}' kubectl get resourceclaim legacy \
  -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'
# kubectl create then apply: the creator owns the (atomic, defaulted) request list, as upstream.
claim made '{app: made}' >"$work/made.yaml"
kubectl create -f "$work/made.yaml" >/dev/null
expect_fail "created object conflicts on the atomic list" 'conflict with "kubectl-create" using resource.k8s.io/v1: .spec.devices.requests' \
  kubectl apply --server-side -f "$work/made.yaml"

# Status through the status subresource: owned by its own manager entry.
cat >"$work/node.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {zone: a}}
YAML
cat >"$work/node-status.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8"}
  conditions:
  - {type: Ready, status: "True", reason: KubeletReady, message: ok}
YAML
expect "apply node" "node/n1 serverside-applied" kubectl apply --server-side -f "$work/node.yaml"
expect "apply node status" "node/n1 serverside-applied" kubectl apply --server-side --subresource=status --field-manager=agent -f "$work/node-status.yaml"
expect "status applied" "8|True" kubectl get node n1 -o jsonpath='{.status.capacity.cpu}|{.status.conditions[0].status}'
expect "status entry" "agent/Apply/status" kubectl get node n1 -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource} {end}'
expect "status ignored on the main resource" "serverside-applied" kubectl apply --server-side --field-manager=other -f "$work/node-status.yaml"
expect "main resource did not take status" "agent/Apply/status" kubectl get node n1 -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource} {end}'

# The examples, server-side, twice.
kubectl apply --server-side -f "$SRC/examples/gpu/namespaces.yaml" >/dev/null
expect "examples server-side" "resourceclaim.resource.k8s.io/gpu-mps serverside-applied" kubectl apply --server-side -f "$SRC/examples/gpu/"
expect "examples again" "deviceclass.resource.k8s.io/gpu.nvidia.com serverside-applied" kubectl apply --server-side -f "$SRC/examples/gpu/"
expect "APPLY in metrics" 'verb="APPLY"' kubectl get --raw /metrics

echo "failures: $FAILURES"
[ "$FAILURES" -eq 0 ]
