#!/bin/bash
# `draplane driver` flags (issue 31): bad values exit 2 naming the flag, before
# any connection; without --kubeconfig it needs the pod's environment
# (in-cluster configuration) and says so.
# Usage: driver_test.sh DRAPLANE_BINARY SOURCE_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$src/tests/cli/lib.sh"

run driver --node n1 --mig some
expect_rc "bad --mig" 2
expect_err "bad --mig" 'error: --mig: Unsupported value: "some": supported values: "dynamic", "none"'

unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
run driver --node n1
expect_rc "not in a pod" 2
expect_err "not in a pod" "error: in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined (not running in a pod? use --kubeconfig)"

run driver --node n1 --kubeconfig "$tmp/none"
expect_rc "missing kubeconfig" 2
expect_err "missing kubeconfig" "error: --kubeconfig: cannot read $tmp/none"

run driver --help
expect_rc "help" 0
for flag in --node --kubeconfig --plugin-dir --registry-dir --cdi-root --gpus; do
  expect_out_has "help" "$flag"
done
expect_out_has "help" "/var/lib/kubelet/plugins/gpu.nvidia.com"
expect_out_has "help" "/var/lib/kubelet/plugins_registry"
exit $fail
