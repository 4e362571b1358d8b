#!/usr/bin/env bash
# kubectl (as installed) against `draplane server`: apply (client- and server-side),
# re-apply, get (table, yaml, wide, -l), selectors and query parameters, describe,
# get -w, patch, delete,
# wait --for=delete, an invalid claim's field error, 401 with a wrong token.
# Usage: server_kubectl.sh DRAPLANE_BINARY SOURCE_DIR
BIN="$1"
SRC="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
start_api_server_for_kubectl "$BIN"

cat >"$work/ns.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: inference}
---
apiVersion: v1
kind: Namespace
metadata: {name: training}
---
apiVersion: v1
kind: Namespace
metadata: {name: ml-training}
YAML
cat >"$work/bad.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: bad, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, count: -2}
YAML
cat >"$work/unknown.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: unknown-field, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, cout: 2}
YAML

expect "version" "Server Version: v1.36.0-draplane" kubectl version
expect "namespaces exist" "kube-system" kubectl get namespaces
# kubectl's typed commands send protobuf bodies (read for Namespace).
expect "create namespace (protobuf)" "namespace/foo created" kubectl create namespace foo
expect "protobuf namespace labelled" '"kubernetes.io/metadata.name":"foo"' kubectl get namespace foo -o jsonpath='{.metadata.labels}'
expect "protobuf for other kinds is 415" "send PriorityClass as JSON" kubectl create priorityclass high --value=1000
expect "apply namespaces" "namespace/inference created" kubectl apply -f "$work/ns.yaml"
expect "apply examples" "resourceclaim.resource.k8s.io/gpu-mps created" kubectl apply -f "$SRC/examples/gpu/"
# Claims come back "configured" rather than "unchanged": kubectl 1.32 does not know
# resource.k8s.io/v1 and sends a JSON merge patch whose lists lack the defaulted
# fields (as it would against Kubernetes).
expect "re-apply" "deviceclass.resource.k8s.io/gpu.nvidia.com unchanged" kubectl apply -f "$SRC/examples/gpu/"
sed 's/^  name: gpu-mps$/  name: gpu-mps\n  labels: {tier: gold}/' "$SRC/examples/gpu/resourceclaim-mps.yaml" >"$work/mps2.yaml"
expect "re-apply with a change" "resourceclaim.resource.k8s.io/gpu-mps configured" kubectl apply -f "$work/mps2.yaml"
expect "change visible" "gold" kubectl get resourceclaim -n inference gpu-mps -o jsonpath='{.metadata.labels.tier}'
expect "claims table" "gpu-mps      pending" kubectl get resourceclaims -n inference
expect "slices table" "node-1-gpu.nvidia.com-abcde   node-1   gpu.nvidia.com   node-1" kubectl get resourceslices
expect "pods wide" "NOMINATED NODE" kubectl get pods -A -o wide
expect "get yaml" "deviceClassName: gpu.nvidia.com" kubectl get resourceclaim -n inference gpu-mps -o yaml
expect "label" "labeled" kubectl label resourceclaim -n inference gpu-mps team=ml
expect "label selector" "gpu-mps" kubectl get resourceclaims -n inference -l team=ml
expect "label selector excludes" "No resources found" kubectl get resourceclaims -n inference -l team=none
# Query parameters as kube-apiserver parses them: set-based label selectors, field
# selectors with != and commas, errors as 400s naming the problem, watch=True.
expect "set-based label selector" "gpu-mps" kubectl get resourceclaims -n inference -l 'team in (ml,ops),tier'
expect "notin and !key" "gpu-mps" kubectl get resourceclaims -n inference -l 'team notin (none),!absent'
expect "bad label selector" "found 'ml' expected: '('" kubectl get resourceclaims -n inference -l 'team in ml'
expect "field selector != and commas" "gpu-mps" kubectl get resourceclaims -n inference --field-selector 'metadata.name!=x,metadata.name!=y'
expect "list resourceVersion is a uint64" 'invalid resource version: resourceVersion: Invalid value: "abc"' kubectl get --raw '/apis/resource.k8s.io/v1/resourceclaims?resourceVersion=abc'
expect "watch=True is a watch" '"type":"ADDED"' kubectl get --raw '/apis/resource.k8s.io/v1/namespaces/inference/resourceclaims?watch=True&timeoutSeconds=1'
expect "describe" "Device Class Name:  gpu.nvidia.com" kubectl describe resourceclaim -n inference gpu-mps
expect "merge patch" "patched" kubectl patch resourceclaim -n inference gpu-mps --type merge -p '{"metadata":{"annotations":{"a":"b"}}}'
expect "json patch" "patched" kubectl patch resourceclaim -n inference gpu-mps --type json -p '[{"op":"add","path":"/metadata/labels/j","value":"k"}]'
expect "strategic patch on pod" "patched" kubectl patch pod -n inference vllm-7d9c6b5f4-x2k8q -p '{"metadata":{"labels":{"s":"t"}}}'
expect "spec is immutable" "field is immutable" kubectl patch resourceclaim -n inference gpu-mps --type merge -p '{"spec":{"devices":{"requests":[{"name":"x","exactly":{"deviceClassName":"y"}}]}}}'
expect "invalid claim" 'The ResourceClaim "bad" is invalid: spec.devices.requests[0].exactly.count: Invalid value: -2: must be greater than zero' kubectl apply -f "$work/bad.yaml"
# resource.k8s.io/v1beta1 is served by conversion: stored as v1, shown in the version asked for.
beta="$SRC/examples/seed-000/resourceclaim-gpu-40gi-v1beta1.yaml"
expect "apply v1beta1" "resourceclaim.resource.k8s.io/gpu-claim-v1beta1 created" kubectl apply -f "$beta"
expect "re-apply v1beta1" "resourceclaim.resource.k8s.io/gpu-claim-v1beta1" kubectl apply -f "$beta"
expect "v1beta1 read flat" "nvidia-gpu 2" kubectl get resourceclaims.v1beta1.resource.k8s.io -n ml-training gpu-claim-v1beta1 -o jsonpath='{.spec.devices.requests[0].deviceClassName} {.spec.devices.requests[0].count}'
expect "v1 read with exactly" "resource.k8s.io/v1 2" kubectl get resourceclaims.v1.resource.k8s.io -n ml-training gpu-claim-v1beta1 -o jsonpath='{.apiVersion} {.spec.devices.requests[0].exactly.count}'
expect "v1beta2 read" "resource.k8s.io/v1beta2" kubectl get resourceclaims.v1beta2.resource.k8s.io -n ml-training -o jsonpath='{.items[0].apiVersion}'
expect "api-versions" "resource.k8s.io/v1beta1" kubectl api-versions
# fieldValidation: kubectl's default is Strict; --validate=warn gets the dropped field as a warning.
expect "unknown field is an error" 'strict decoding error: unknown field "spec.devices.requests[0].exactly.cout"' kubectl apply -f "$work/unknown.yaml"
expect "unknown field warns" 'Warning: unknown field "spec.devices.requests[0].exactly.cout"' kubectl apply --validate=warn -f "$work/unknown.yaml"
expect "unknown field dropped" "gpu.nvidia.com|" kubectl get resourceclaim unknown-field -o jsonpath='{.spec.devices.requests[0].exactly.deviceClassName}|{.spec.devices.requests[0].exactly.cout}'
expect "server-side apply" "serverside-applied" kubectl apply --server-side -f "$SRC/examples/gpu/resourceclaim-nvlink-4gpu.yaml"

# get -w: start a watch, change a claim, check the update arrives.
timeout 6 kubectl get resourceclaims -n inference -w >"$work/watch.out" 2>&1 &
wpid=$!
sleep 2
kubectl label resourceclaim -n inference mig-1g10gb watched=yes >/dev/null
kubectl delete resourceclaim -n inference mig-1g10gb >/dev/null
wait $wpid 2>/dev/null
n=$(grep -c mig-1g10gb "$work/watch.out")
if [ "$n" -ge 3 ]; then echo "ok   watch delivered $n lines"; else echo "FAIL watch delivered $n lines"; cat "$work/watch.out"; FAILURES=$((FAILURES + 1)); fi

expect "delete" 'resourceclaim.resource.k8s.io "gpu-mps" deleted' kubectl delete resourceclaim -n inference gpu-mps
kubectl wait --for=delete resourceclaim/nvlink-4gpu -n training --timeout=30s >"$work/wait.out" 2>&1 &
wpid=$!
sleep 1
kubectl delete resourceclaim -n training nvlink-4gpu >/dev/null
if wait $wpid; then echo "ok   wait --for=delete"; else echo "FAIL wait --for=delete:"; cat "$work/wait.out"; FAILURES=$((FAILURES + 1)); fi
expect "gone" 'NotFound' kubectl get resourceclaim -n training nvlink-4gpu
# DeviceTaintRule (resource.k8s.io/v1, cluster-scoped, /status): served, stamped, validated.
cat >"$work/taint-rule.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: gpu-0-maintenance}
spec:
  deviceSelector: {driver: gpu.nvidia.com, pool: node-1, device: gpu-0}
  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
YAML
expect "create taint rule" "devicetaintrule.resource.k8s.io/gpu-0-maintenance created" kubectl apply -f "$work/taint-rule.yaml"
expect "taint rule listed" "gpu-0-maintenance" kubectl get devicetaintrules
t0=$(kubectl get devicetaintrule gpu-0-maintenance -o jsonpath='{.spec.taint.timeAdded}')
if [ -n "$t0" ]; then echo "ok   taint stamped at $t0"; else echo "FAIL taint not stamped"; FAILURES=$((FAILURES + 1)); fi
expect "bad effect" 'spec.taint.effect: Unsupported value: "Evict": supported values: "NoExecute", "NoSchedule", "None"' kubectl patch devicetaintrule gpu-0-maintenance --type merge -p '{"spec":{"taint":{"effect":"Evict"}}}'
expect "status ignored on the main resource" "gpu-0-maintenance" kubectl patch devicetaintrule gpu-0-maintenance --type merge -p '{"status":{"conditions":[{"type":"EvictionInProgress","status":"True","reason":"X","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' -o name
expect "status not written" "[]" kubectl get devicetaintrule gpu-0-maintenance -o jsonpath='[{.status.conditions}]'
sleep 1  # timeAdded has a resolution of seconds
expect "effect change" "patched" kubectl patch devicetaintrule gpu-0-maintenance --type merge -p '{"spec":{"taint":{"effect":"NoExecute"}}}'
t1=$(kubectl get devicetaintrule gpu-0-maintenance -o jsonpath='{.spec.taint.timeAdded}')
if [ -n "$t1" ] && [ "$t1" != "$t0" ]; then echo "ok   effect change restamped ($t0 -> $t1)"; else echo "FAIL effect change kept timeAdded $t0 ($t1)"; FAILURES=$((FAILURES + 1)); fi
expect "generation follows the spec" "2" kubectl get devicetaintrule gpu-0-maintenance -o jsonpath='{.metadata.generation}'
expect "explain" "deviceSelector" kubectl explain devicetaintrule.spec
expect "delete taint rule" 'devicetaintrule.resource.k8s.io "gpu-0-maintenance" deleted' kubectl delete devicetaintrule gpu-0-maintenance

expect "wrong token is 401" "Unauthorized" kubectl --token=wrong get pods
expect "delete namespace" 'namespace "inference" deleted' kubectl delete namespace inference
expect "namespace contents gone" "No resources found" kubectl get resourceclaimtemplates -n inference

echo "failures: $FAILURES"
[ "$FAILURES" -eq 0 ]
