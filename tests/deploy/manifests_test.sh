#!/bin/bash
# The manifests of deploy/ (docs/deploy.md) as a cluster admin applies them:
#  1. `draplane validate` decodes, defaults and validates the kinds draplane
#     serves (Namespace, ServiceAccount, DeviceClass) and refuses the others
#     (DaemonSet, ClusterRole, ClusterRoleBinding) only for their kind;
#  2. kubectl's client-side dry run (`apply --dry-run=client` and `create
#     --dry-run=client`, --validate=false) accepts every object. kubectl needs an
#     API server's discovery even for a client dry run (without one: "unable to
#     recognize ... connection refused"), so tests/deploy/discovery_stub.py
#     stands in for it; nothing is sent but GETs.
#  3. the image's entrypoint (deploy/entrypoint.sh) finds libnvidia-ml.so.1 under
#     the mounted driver root (here the fake library of tests/node/fake_nvml).
# Usage: manifests_test.sh DRAPLANE_BINARY SOURCE_DIR FAKE_LIBNVIDIA_ML
fake=$3
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$src/tests/cli/lib.sh"
deploy=$src/deploy

# 1. draplane validate.
run validate -f "$deploy/namespace.yaml" -f "$deploy/serviceaccount.yaml" -f "$deploy/deviceclasses.yaml"
expect_rc "validate" 0
expect_out "validate" "Namespace/draplane-system valid
ServiceAccount/draplane-kubelet-plugin valid
DeviceClass/gpu.nvidia.com valid
DeviceClass/mig.nvidia.com valid"
for f in daemonset.yaml rbac.yaml admission-policy.yaml; do
  run validate -f "$deploy/$f"
  expect_rc "validate $f" 2
  other=$(grep -v 'no kind "\(DaemonSet\|ClusterRole\|ClusterRoleBinding\|ValidatingAdmissionPolicy\|ValidatingAdmissionPolicyBinding\)" is registered' "$tmp/err")
  [ -z "$other" ] || bad "validate $f: an error other than the unserved kind" "$other"
done

# 2. kubectl client dry run against the discovery stand-in.
kubectl=${KUBECTL:-kubectl}
command -v "$kubectl" >/dev/null || { echo "SKIP: no kubectl"; exit 77; }
python3 "$src/tests/deploy/discovery_stub.py" "$tmp/port" &
stub=$!
trap 'kill $stub 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: stub, cluster: {server: "http://127.0.0.1:$(cat "$tmp/port")"}}]
users: [{name: stub, user: {}}]
contexts: [{name: stub, context: {cluster: stub, user: stub}}]
current-context: stub
KC
export KUBECONFIG=$tmp/kubeconfig
want="namespace/draplane-system
serviceaccount/draplane-kubelet-plugin
clusterrole.rbac.authorization.k8s.io/draplane-kubelet-plugin
clusterrolebinding.rbac.authorization.k8s.io/draplane-kubelet-plugin
daemonset.apps/draplane-kubelet-plugin
validatingadmissionpolicy.admissionregistration.k8s.io/draplane-resourceslices-own-node
validatingadmissionpolicybinding.admissionregistration.k8s.io/draplane-resourceslices-own-node
deviceclass.resource.k8s.io/gpu.nvidia.com
deviceclass.resource.k8s.io/mig.nvidia.com"
sorted_want=$(echo "$want" | sort)
for verb in apply create; do
  "$kubectl" $verb --dry-run=client --validate=false --cache-dir "$tmp/cache" -o name -f "$deploy/" \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  out=$(sort "$tmp/out")
  expect_rc "kubectl $verb" 0
  [ "$out" = "$sorted_want" ] || bad "kubectl $verb --dry-run=client: objects" "want:" "$sorted_want"
done
# The DaemonSet as kubectl decodes it: the downward-API node name and the host paths.
"$kubectl" create --dry-run=client --validate=false --cache-dir "$tmp/cache" -o yaml -f "$deploy/daemonset.yaml" \
  >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
expect_rc "kubectl create daemonset" 0
for want_line in "- \$(NODE_NAME)" "fieldPath: spec.nodeName" "path: /var/lib/kubelet/plugins" \
  "path: /var/lib/kubelet/plugins_registry" "path: /var/run/cdi" "path: /dev" "privileged: true"; do
  expect_out_has "daemonset" "$want_line"
done

# 3. The entrypoint with a driver root holding the library, and with none.
mkdir -p "$tmp/root/usr/lib/x86_64-linux-gnu" "$tmp/root/usr/bin"
cp "$fake" "$tmp/root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"
entry() {
  env -u DRAPLANE_NVML_LIB PATH="$(dirname "$bin"):$PATH" NVIDIA_DRIVER_ROOT="$1" DRAPLANE_NVML_LINK_DIR="$tmp/link" \
    FAKE_NVML_GPUS=1 sh "$deploy/entrypoint.sh" agent --node n --gpus nvml --mig none --print-slices \
    >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
}
entry "$tmp/root"
expect_rc "entrypoint" 0
expect_out_has "entrypoint" "productName"
[ "$(readlink "$tmp/link/libnvidia-ml.so.1")" = "$tmp/root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1" ] ||
  bad "entrypoint: link to the driver's library"
# (On a machine with an NVIDIA driver the loader finds the real library.)
if ! /sbin/ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 '; then
  mkdir -p "$tmp/empty"
  entry "$tmp/empty"
  expect_rc "entrypoint without a driver" 2
  expect_err_has "entrypoint without a driver" "NVML: cannot load libnvidia-ml.so.1"
fi
exit $fail
