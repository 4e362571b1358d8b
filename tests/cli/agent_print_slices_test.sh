#!/bin/bash
# `draplane agent --print-slices` (issue 25): the ResourceSlices the agent would
# publish for an inventory and DeviceClasses, without a server, fed to
# `draplane allocate` with claims, give the answers the running system gives
# (tests/e2e/up_sharing.py, same scenarios, same packing policy as `draplane up`):
#  1. the 000 seed's time-slicing class (replicas 4): 4 claims share gpu-0, the
#     5th takes gpu-1; the shape equals --consumable-shares 4's;
#  2. an MPS class: three 20Gi claims share gpu-0, a 30Gi one takes gpu-1;
#  3. --mig dynamic: 7 MIG 1g.10gb claims fit one H100, then no full GPU does;
#     --mig none publishes no MIG device;
#  4. --consumable-shares shapes and bad flag values (exit 2 with the reason).
# Usage: agent_print_slices_test.sh DRAPLANE_BINARY SOURCE_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$src/tests/cli/lib.sh"
cd "$tmp" || exit 2
seed="$src/examples/seed-000/deviceclass-nvidia-gpu-timeslicing.yaml"

# claims N CLASS [MEMORY] [SELECTOR] PREFIX: N pending claims.
claims() {
  local n=$1 cls=$2 mem=$3 sel=$4 prefix=$5 i
  for i in $(seq 1 "$n"); do
    cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $prefix-$i, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: $cls
EOF
    [ -n "$mem" ] && printf '        capacity: {requests: {memory: %s}}\n' "$mem"
    [ -n "$sel" ] && printf '        selectors: [{cel: {expression: "%s"}}]\n' "$sel"
  done
}
# devices: the devices of the allocated claims, in order, space separated.
devices() { awk '/^ +(- )?device: /{printf "%s%s", sep, $NF; sep=" "} END{print ""}' "$tmp/out"; }
expect_devices() { local got; got=$(devices); [ "$got" = "$2" ] || bad "$1: allocated devices" "want: $2" "got:  $got"; }
classes="$src/examples/gpu/deviceclasses.yaml"

# 1. Time-slicing from the seed's class.
run agent --node node-1 --gpus sim:2xH100 --mig none -f "$seed" --print-slices
expect_rc "print-slices with the seed class" 0
cp "$tmp/out" ts.yaml
expect_out_has "seed class: gpu-0 shareable" "allowMultipleAllocations: true"
grep -c "allowMultipleAllocations: true" ts.yaml | grep -qx 2 || bad "seed class: both GPUs shareable"
claims 5 nvidia-gpu "" "" ts >ts-claims.yaml
run allocate --node node-1 --policy packing -f ts.yaml -f "$seed" -f ts-claims.yaml
expect_rc "allocate 5 time-sliced claims" 0
expect_devices "allocate 5 time-sliced claims" "gpu-0 gpu-0 gpu-0 gpu-0 gpu-1"
claims 9 nvidia-gpu "" "" ts >ts9.yaml
run allocate --node node-1 --policy packing -f ts.yaml -f "$seed" -f ts9.yaml
expect_rc "9 claims on 2 GPUs of 4 shares" 1
run agent --node node-1 --gpus sim:2xH100 --mig none --consumable-shares 4 --print-slices
expect_rc "print-slices --consumable-shares 4" 0
[ "$(cat "$tmp/out")" = "$(cat ts.yaml)" ] || bad "--consumable-shares 4 publishes what the seed class derives"

# 2. MPS by memory.
cat >mps-class.yaml <<'EOF'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-mps}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
  config:
  - opaque:
      driver: gpu.nvidia.com
      parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: MPS}}
EOF
run agent --node node-1 --gpus sim:2xH100 -f mps-class.yaml --print-slices
expect_rc "print-slices with an MPS class" 0
cp "$tmp/out" mps.yaml
expect_out_has "MPS: memory default is the whole GPU" "default: 81152Mi"
{ claims 3 gpu-mps 20Gi "" mps; claims 1 gpu-mps 30Gi "" big; } >mps-claims.yaml
run allocate --node node-1 --policy packing -f mps.yaml -f mps-class.yaml -f mps-claims.yaml
expect_rc "allocate MPS claims" 0
expect_devices "allocate MPS claims" "gpu-0 gpu-0 gpu-0 gpu-1"
expect_out_has "MPS: consumed memory recorded" "memory: 20Gi"

# 3. MIG.
run agent --node node-1 --gpus sim:1xH100 --print-slices
expect_rc "print-slices --mig dynamic" 0
cp "$tmp/out" mig.yaml
claims 7 mig.nvidia.com "" "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'" mig >mig-claims.yaml
run allocate --node node-1 --policy packing -f mig.yaml -f "$classes" -f mig-claims.yaml
expect_rc "7 MIG 1g claims on one H100" 0
[ "$(devices | tr ' ' '\n' | sort -u | grep -c -- '-mig-1g10gb-')" = 7 ] || bad "7 distinct 1g.10gb placements"
{ cat mig-claims.yaml; claims 1 gpu.nvidia.com "" "" full; } >mig-full.yaml
run allocate --node node-1 --policy packing -f mig.yaml -f "$classes" -f mig-full.yaml
expect_rc "7 MIG 1g claims and a full GPU on one H100" 1
run agent --node node-1 --gpus sim:1xH100 --mig none --print-slices
expect_rc "print-slices --mig none" 0
grep -q -- "-mig-" "$tmp/out" && bad "--mig none publishes no MIG device"
grep -q "sharedCounters" "$tmp/out" && bad "--mig none publishes no counter set"

# 4. Flags.
run agent --node node-1 --gpus sim:1xH100 --mig none --consumable-shares memory --print-slices
expect_rc "--consumable-shares memory" 0
expect_out_has "--consumable-shares memory: min 1Mi" "min: 1Mi"
run agent --node node-1 --gpus sim:1xH100 --consumable-shares 0 --print-slices
expect_rc "--consumable-shares 0" 2
expect_err "--consumable-shares 0" \
  "error: invalid value for --consumable-shares: \"0\" (must be 'disabled', 'memory', 'unlimited', or a positive integer)"
run agent --node node-1 --gpus sim:1xH100 --mig static --print-slices
expect_rc "--mig static" 2
expect_err "--mig static" "error: --mig: Unsupported value: \"static\": supported values: \"dynamic\", \"none\""
run agent --node node-1 --gpus sim:1xNope --print-slices
expect_rc "unknown GPU model" 2

exit $fail
