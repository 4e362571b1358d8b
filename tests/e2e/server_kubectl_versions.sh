#!/usr/bin/env bash
# Every kubectl version on the machine against `draplane server`: the versioned
# binaries kubectl.1.27 ... kubectl.1.33 (on PATH, or beside the file `kubectl`
# links to, where the image's kubectl package installs them) and `kubectl`
# itself. Each applies examples/gpu/ twice (1.27/1.28 fetch /openapi/v2 first)
# and the seed's v1beta1 claim, then applies, gets and deletes a claim of its own.
# Usage: server_kubectl_versions.sh DRAPLANE_BINARY SOURCE_DIR
BIN="$1"
SRC="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/server_common.sh"
command -v kubectl >/dev/null || { echo "kubectl not on PATH: skipped"; exit 77; }

binaries=()
add() { for b in "${binaries[@]}"; do [ "$b" -ef "$1" ] && return; done; binaries+=("$1"); }
beside="$(dirname "$(readlink -f "$(command -v kubectl)")")"
for v in 27 28 29 30 31 32 33; do
  if command -v "kubectl.1.$v" >/dev/null; then add "$(command -v "kubectl.1.$v")"
  elif [ -x "$beside/kubectl.1.$v" ]; then add "$beside/kubectl.1.$v"; fi
done
add "$(command -v kubectl)"

work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT
start_server "$BIN" "$work/data" --no-scheduler --no-controllers || exit 1
cat >"$work/ns.yaml" <<'YAML'
apiVersion: v1
kind: Namespace
metadata: {name: ml-training}
YAML
kubectl apply -f "$work/ns.yaml" -f "$SRC/examples/gpu/namespaces.yaml" >/dev/null || { echo "FAIL namespaces"; exit 1; }

for k in "${binaries[@]}"; do
  v=$("$k" version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\(v[0-9]*\.[0-9]*\).*/\1/p' | head -1)
  name="claim-${v//./-}"
  echo "== $(basename "$k") ($v)"
  expect "$v apply examples" "resourceclaim.resource.k8s.io/gpu-mps" "$k" apply -f "$SRC/examples/gpu/"
  expect "$v re-apply examples" "deviceclass.resource.k8s.io/gpu.nvidia.com unchanged" "$k" apply -f "$SRC/examples/gpu/"
  expect "$v apply v1beta1" "resourceclaim.resource.k8s.io/gpu-claim-v1beta1" "$k" apply -f "$SRC/examples/seed-000/resourceclaim-gpu-40gi-v1beta1.yaml"
  cat >"$work/$name.yaml" <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $name, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
YAML
  expect "$v apply" "resourceclaim.resource.k8s.io/$name created" "$k" apply -f "$work/$name.yaml"
  expect "$v get" "$name" "$k" get resourceclaims -n default
  expect "$v get yaml" "deviceClassName: gpu.nvidia.com" "$k" get resourceclaim "$name" -o yaml
  expect "$v delete" "resourceclaim.resource.k8s.io \"$name\" deleted" "$k" delete -f "$work/$name.yaml"
done

echo "failures: $FAILURES"
[ "$FAILURES" -eq 0 ]
