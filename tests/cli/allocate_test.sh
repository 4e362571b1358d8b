#!/bin/bash
# `draplane allocate` end to end (DESIGN.md's CLI contract, issue 5, and the
# comment at the top of src/cmd/allocate_cmd.cc):
#  1. --policy first-fit vs packing on partitionable GPUs (SPEC §4 dynamic MIG:
#     one counter set per GPU, MIG placements consuming its counters): with a MIG
#     device of gpu-1 in use, first-fit takes the first placement in upstream order
#     (gpu-0), packing a placement on the partly used gpu-1; the same for
#     shareable (allowMultipleAllocations) GPUs, where packing joins the GPU that
#     is already shared; the exact YAML output of first-fit;
#  2. without --node every Node of the input is tried in input order and the chosen
#     one is printed on stderr as "node: NAME"; no Node in the input is exit 2;
#  3. pending claims are allocated together in file order, all or nothing (-o json
#     gives one {"kind":"List","items":[...]}), tolerations reach tainted devices;
#  4. an unsatisfiable claim exits 1 with the per-request explanation on stderr and
#     nothing on stdout (per node when --node is absent);
#  5. invalid input exits 2 naming the file, document, object and field; unknown
#     class, CEL runtime error, bad --policy / -o, unreadable file likewise.
# Usage: allocate_test.sh DRAPLANE_BINARY SOURCE_DIR
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")   # absolute: the test cd's below
src=$(cd "$2" && pwd)
. "$src/tests/cli/lib.sh"
cd "$tmp" || exit 2   # file names in messages are the relative names below
# devices NAME: "claim=device,device claim=device" from YAML output (in order).
devices() {
  awk '/^  name: /{if(c!=""){printf "%s%s=%s", sep, c, d; sep=" "}; c=$2; d=""; n=""}
       /^      - device: /{d = d n $3; n=","}
       END{if(c!="")printf "%s%s=%s\n", sep, c, d}' "$tmp/out"
}
expect_devices() { local got; got=$(devices); [ "$got" = "$2" ] || bad "$1: allocated devices" "want: $2" "got:  $got"; }

# ---------------------------------------------------------------- inventories
# mig_inventory WITH_SHARED_COUNTER: node-1 with two H100s as partitionable devices
# (SPEC §4 layout: slice 0 holds the counter sets, then one slice per GPU; each GPU
# has its full device and two 1g.10gb placements). With WITH_SHARED_COUNTER=1
# every device also consumes the GPU's `multiprocessors` counter, as real MIG
# devices do; with 0 the placements of one GPU share no counter, only the set.
mig_inventory() {
  local mp=$1 g
  cat <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels:
    kubernetes.io/hostname: node-1
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: mig.nvidia.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu.nvidia.com-0-counters
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 3}
  sharedCounters:
EOF
  for g in 0 1; do
    echo "  - name: gpu-$g-counter-set"
    echo "    counters:"
    [ "$mp" = 1 ] && echo "      multiprocessors: {value: \"132\"}"
    echo "      memory-slice-0: {value: \"1\"}"
    echo "      memory-slice-1: {value: \"1\"}"
  done
  for g in 0 1; do
    cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu.nvidia.com-$((g + 1))-gpu-$g
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 3}
  devices:
  - name: gpu-$g
    attributes:
      type: {string: gpu}
      productName: {string: NVIDIA H100 80GB HBM3}
    consumesCounters:
    - counterSet: gpu-$g-counter-set
      counters:
$([ "$mp" = 1 ] && echo "        multiprocessors: {value: \"132\"}")
        memory-slice-0: {value: "1"}
        memory-slice-1: {value: "1"}
EOF
    for start in 0 1; do
      cat <<EOF
  - name: gpu-$g-mig-1g10gb-19-$start
    attributes:
      type: {string: mig}
      profile: {string: 1g.10gb}
      productName: {string: NVIDIA H100 80GB HBM3}
    consumesCounters:
    - counterSet: gpu-$g-counter-set
      counters:
$([ "$mp" = 1 ] && echo "        multiprocessors: {value: \"16\"}")
        memory-slice-$start: {value: "1"}
EOF
    done
  done
  # gpu-1-mig-1g10gb-19-0 is in use; one more 1g.10gb is pending.
  cat <<'EOF'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: mig-in-use
  namespace: inference
spec:
  devices:
    requests:
    - name: mig
      exactly:
        deviceClassName: mig.nvidia.com
status:
  allocation:
    devices:
      results:
      - {request: mig, driver: gpu.nvidia.com, pool: node-1, device: gpu-1-mig-1g10gb-19-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [node-1]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: mig-1g10gb
  namespace: inference
spec:
  devices:
    requests:
    - name: mig
      exactly:
        deviceClassName: mig.nvidia.com
        selectors:
        - cel:
            expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
EOF
}
mig_inventory 1 >mig.yaml
mig_inventory 0 >mig-slices-only.yaml

# gpus.yaml: node-a (no devices), node-b with four GPUs: gpu-0 in use, gpu-2 an
# A100 40Gi, gpu-3 tainted by XID 79. Pending claims are appended per case.
cat >gpus.yaml <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: node-a
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nvidia-gpu
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com'"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-b-gpus
spec:
  driver: gpu.nvidia.com
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-1
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-2
    attributes:
      productName: {string: NVIDIA A100-SXM4-40GB}
    capacity:
      memory: {value: 40Gi}
  - name: gpu-3
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
    capacity:
      memory: {value: 80Gi}
    taints:
    - {key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: used
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: nvidia-gpu
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: node-b, device: gpu-0}
EOF
# claim NAME COUNT [CLASS] [EXTRA_LINES]: a pending claim for COUNT 80Gi GPUs.
claim() {
  cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $1
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: ${3:-nvidia-gpu}
        count: $2
        selectors:
        - cel:
            expression: "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
${4:-}
EOF
}
# A pending claim without selectors.
any_claim() {
  cat <<EOF
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: $1
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: nvidia-gpu
EOF
}

# ---------------------------------------------------------------- 1. policies on MIG
run allocate --node node-1 -f mig.yaml
expect_rc "mig first-fit (default)" 0
expect_err "mig first-fit (default)" ""
expect_out "mig first-fit (default)" "apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: mig-1g10gb
  namespace: inference
spec:
  devices:
    requests:
    - exactly:
        allocationMode: ExactCount
        count: 1
        deviceClassName: mig.nvidia.com
        selectors:
        - cel:
            expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
      name: mig
status:
  allocation:
    devices:
      results:
      - device: gpu-0-mig-1g10gb-19-0
        driver: gpu.nvidia.com
        pool: node-1
        request: mig
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - key: metadata.name
          operator: In
          values:
          - node-1"
run allocate --node node-1 --policy first-fit -f mig.yaml
expect_rc "mig --policy first-fit" 0
expect_devices "mig --policy first-fit" "mig-1g10gb=gpu-0-mig-1g10gb-19-0"
run allocate --node node-1 --policy packing -f mig.yaml
expect_rc "mig --policy packing" 0
expect_err "mig --policy packing" ""
expect_devices "mig --policy packing (MIG on the partly used gpu-1)" "mig-1g10gb=gpu-1-mig-1g10gb-19-1"
# Plus a pending whole GPU after the MIG claim: gpu-1 is partly used, so the whole
# GPU can only be gpu-0, and the MIG claim (first in file order) must give up
# gpu-0's placements, by backtracking under first-fit and directly under packing.
any_claim whole | sed 's/nvidia-gpu/gpu.nvidia.com/' | cat mig.yaml - >mig-whole.yaml
for p in first-fit packing; do
  run allocate --node node-1 --policy $p -f mig-whole.yaml
  expect_rc "mig + whole GPU ($p)" 0
  expect_devices "mig + whole GPU ($p)" "mig-1g10gb=gpu-1-mig-1g10gb-19-1 whole=gpu-0"
done

# Packing judges "partly used" per counter set, not per counter the candidate
# consumes: a GPU whose placements share no counter (only memory slices) still
# counts as partly used, so the untouched gpu-0 is kept whole.
run allocate --node node-1 --policy packing -f mig-slices-only.yaml
expect_rc "mig packing, slice-only counters" 0
expect_devices "mig packing, slice-only counters (set gpu-1-counter-set is partly used)" "mig-1g10gb=gpu-1-mig-1g10gb-19-1"
run allocate --node node-1 --policy first-fit -f mig-slices-only.yaml
expect_devices "mig first-fit, slice-only counters" "mig-1g10gb=gpu-0-mig-1g10gb-19-0"

# Shareable GPUs: gpu-1 already has a share; packing joins it, first-fit takes gpu-0.
cat >share.yaml <<'EOF'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nvidia-gpu
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com'"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpus
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
  - name: gpu-1
    allowMultipleAllocations: true
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: shared
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: nvidia-gpu
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: node-1, device: gpu-1, shareID: 4a1f3c2e-9b7d-4e61-8f25-0c3d6a7b8e90}
EOF
any_claim new >>share.yaml
run allocate --node node-1 --policy first-fit -f share.yaml
expect_rc "shared first-fit" 0
expect_devices "shared first-fit" "new=gpu-0"
run allocate --node node-1 --policy packing -f share.yaml
expect_rc "shared packing" 0
expect_devices "shared packing (joins the shared gpu-1)" "new=gpu-1"
share=$(sed -n 's/^        shareID: //p' "$tmp/out")
if ! grep -qE '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' <<<"$share" ||
   [ "$share" = 4a1f3c2e-9b7d-4e61-8f25-0c3d6a7b8e90 ]; then
  bad "shared packing: want a fresh UUID-shaped shareID" "got: $share"
fi

# ---------------------------------------------------------------- 2. without --node
any_claim one | cat gpus.yaml - >one.yaml
run allocate -f one.yaml
expect_rc "no --node" 0
expect_err "no --node: chosen node on stderr" "node: node-b"
expect_devices "no --node" "one=gpu-1"
grep -qxF "          - node-b" "$tmp/out" || bad "no --node: nodeSelector names node-b"
grep -q "^node:" "$tmp/out" && bad "no --node: stdout must stay a plain object stream"
# With --node nothing extra on stderr.
run allocate --node node-b -f one.yaml
expect_rc "--node node-b" 0
expect_err "--node node-b" ""
expect_devices "--node node-b" "one=gpu-1"
# A node that is not in the input still matches slices by name.
sed '1,/^---$/d' one.yaml | sed '1,/^---$/d' >no-nodes.yaml   # drop the two Nodes
run allocate --node node-b -f no-nodes.yaml
expect_rc "--node not in the input" 0
expect_devices "--node not in the input" "one=gpu-1"
# Several Nodes fit: the first in input order is chosen (node-c before node-b).
{ printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-c\n---\n'
  cat <<'EOF2'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-c-gpus
spec:
  driver: gpu.nvidia.com
  nodeName: node-c
  pool: {name: node-c, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
---
EOF2
  cat one.yaml; } >two-nodes.yaml
run allocate -f two-nodes.yaml
expect_rc "two fitting nodes" 0
expect_err "two fitting nodes: first Node of the input" "node: node-c"
expect_devices "two fitting nodes" "one=gpu-0"
grep -qxF "          - node-c" "$tmp/out" || bad "two fitting nodes: nodeSelector names node-c"
run allocate -f no-nodes.yaml
expect_rc "no Node and no --node" 2
expect_err "no Node and no --node" "no Node in the input: pass --node NAME or add Node objects"
expect_out "no Node and no --node" ""

# ---------------------------------------------------------------- 3. several claims
{ cat gpus.yaml; any_claim claim-a; any_claim claim-b; } >two.yaml
run allocate --node node-b -f two.yaml -o json
expect_rc "two claims -o json" 0
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["kind"], " ".join("%s=%s" % (i["metadata"]["name"], ",".join(r["device"] for r in i["status"]["allocation"]["devices"]["results"])) for i in d["items"]))
' "$tmp/out" 2>&1)
[ "$got" = "List claim-a=gpu-1 claim-b=gpu-2" ] || bad "two claims -o json: want List claim-a=gpu-1 claim-b=gpu-2" "got: $got"
{ cat gpus.yaml; any_claim claim-a; any_claim claim-b; any_claim claim-c; } >three.yaml
run allocate --node node-b -f three.yaml
expect_rc "three claims, two usable devices (all or nothing)" 1
expect_out "three claims, two usable devices (all or nothing)" ""
expect_err_has "three claims" "claims do not fit:"
# A toleration makes the tainted gpu-3 usable.
{ cat gpus.yaml; claim tol 2 nvidia-gpu '        tolerations:
        - {key: gpu.nvidia.com/xid, operator: Exists, effect: NoSchedule}'; } >tol.yaml
run allocate --node node-b -f tol.yaml
expect_rc "toleration" 0
expect_devices "toleration" "tol=gpu-1,gpu-3"

# A DeviceTaintRule taints gpu-1 as if the driver had: no 80Gi GPU is left,
# and a toleration of the rule's taint gets it back.
rule='---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: maint
spec:
  deviceSelector: {driver: gpu.nvidia.com, device: gpu-1}
  taint: {key: example.com/maintenance, effect: NoSchedule}'
{ cat gpus.yaml; echo "$rule"; claim one 1; } >ruled.yaml
run allocate --node node-b -f ruled.yaml
expect_rc "DeviceTaintRule" 1
expect_err_has "DeviceTaintRule: explanation" "1 is in use, 2 are tainted example.com/maintenance:NoSchedule; only 0 usable"
{ cat gpus.yaml; echo "$rule"; claim one 1 nvidia-gpu '        tolerations:
        - {key: example.com/maintenance, operator: Exists}'; } >ruled-tol.yaml
run allocate --node node-b -f ruled-tol.yaml
expect_rc "DeviceTaintRule tolerated" 0
expect_devices "DeviceTaintRule tolerated" "one=gpu-1"

# ---------------------------------------------------------------- 4. does not fit
{ cat gpus.yaml; claim big 2; } >big.yaml
run allocate --node node-b -f big.yaml
expect_rc "unsatisfiable" 1
expect_out "unsatisfiable" ""
expect_err "unsatisfiable: explanation" "claims do not fit:
  claim default/big: request gpu: 2 devices needed; 4 match class nvidia-gpu, 3 of them match the selectors, 1 is in use, 1 is tainted gpu.nvidia.com/xid=79:NoSchedule; only 1 usable"
run allocate -f big.yaml
expect_rc "unsatisfiable, every node" 1
expect_out "unsatisfiable, every node" ""
expect_err "unsatisfiable, every node: one line per node" "claims do not fit:
  node node-a: claim default/big: request gpu: 2 devices needed; 0 match class nvidia-gpu, 0 of them match the selectors; only 0 usable
  node node-b: claim default/big: request gpu: 2 devices needed; 4 match class nvidia-gpu, 3 of them match the selectors, 1 is in use, 1 is tainted gpu.nvidia.com/xid=79:NoSchedule; only 1 usable"

# The repository's examples: node-1 has two H100s on one NVLink clique, the
# nvlink claim wants four (and with count 2 gets both, without --node).
ex=$src/examples/gpu
run allocate --node node-1 -f "$ex/deviceclasses.yaml" -f "$ex/node-1-slice.yaml" -f "$ex/resourceclaim-nvlink-4gpu.yaml"
expect_rc "examples: nvlink-4gpu on node-1" 1
expect_out "examples: nvlink-4gpu on node-1" ""
expect_err "examples: nvlink-4gpu on node-1" "claims do not fit:
  claim training/nvlink-4gpu: request gpus: 4 devices needed; 2 match class gpu.nvidia.com, 2 of them match the selectors; only 2 usable"
sed 's/count: 4/count: 2/' "$ex/resourceclaim-nvlink-4gpu.yaml" >nvlink-2gpu.yaml
run allocate -f "$ex/deviceclasses.yaml" -f "$ex/node-1-slice.yaml" -f nvlink-2gpu.yaml
expect_rc "examples: nvlink claim for 2 GPUs" 0
expect_err "examples: nvlink claim for 2 GPUs" "node: node-1"
expect_devices "examples: nvlink claim for 2 GPUs" "nvlink-4gpu=gpu-0,gpu-1"

# ---------------------------------------------------------------- 5. errors (exit 2)
{ cat gpus.yaml; claim neg -1; } >neg.yaml
run allocate --node node-b -f neg.yaml
expect_rc "invalid count" 2
expect_out "invalid count" ""
expect_err "invalid count: file, document, object, field" \
  "neg.yaml: document 5: ResourceClaim/neg: spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"
{ cat gpus.yaml; claim typo 1 | sed 's/^        count: 1$/        cout: 1/'; } >typo.yaml
run allocate --node node-b -f typo.yaml
expect_rc "unknown field" 2
expect_out "unknown field" ""
expect_err "unknown field" \
  "typo.yaml: document 5: ResourceClaim/typo: strict decoding error: unknown field \"spec.devices.requests[0].exactly.cout\""
{ cat gpus.yaml; claim nocls 1 no-such-class; } >nocls.yaml
run allocate --node node-b -f nocls.yaml
expect_rc "unknown class" 2
expect_out "unknown class" ""
expect_err "unknown class" \
  "error: claim default/nocls, request gpu: could not retrieve device class no-such-class: deviceclass.resource.k8s.io \"no-such-class\" not found"
# A class selector that raises on the node's devices (no device.driver guard).
{ cat gpus.yaml; cat <<'EOF'
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: broken
spec:
  selectors:
  - cel:
      expression: "device.attributes['gpu.nvidia.com'].model == 'H100'"
EOF
  claim celerr 1 broken; } >celerr.yaml
run allocate --node node-b -f celerr.yaml
expect_rc "CEL runtime error" 2
expect_out "CEL runtime error" ""
expect_err_has "CEL runtime error" "no such key: model"
expect_err_has "CEL runtime error names the class" "broken"
run allocate --node node-b -f one.yaml --policy best-fit
expect_rc "bad --policy" 2
expect_err "bad --policy" '--policy: unknown policy "best-fit": supported values: "first-fit", "packing"'
run allocate --node node-b -f one.yaml -o xml
expect_rc "bad -o" 2
expect_err "bad -o" 'invalid value "xml" for -o: supported values: "yaml", "json"'
run allocate --node node-b -f missing.yaml
expect_rc "missing file" 2
expect_err_has "missing file" "missing.yaml: cannot open file"

[ "$fail" = 0 ] && echo "allocate CLI: all checks passed"
exit $fail
