#!/bin/bash
# `draplane agent --gpus nvml` loads libnvidia-ml.so.1 the way a real node does:
# through dlopen's search (LD_LIBRARY_PATH here, pointing at the fake library of
# tests/node/fake_nvml), DRAPLANE_NVML_LIB, or the path in `--gpus nvml:PATH`;
# without the library it fails naming it.
# Usage: agent_nvml_test.sh DRAPLANE_BINARY FAKE_LIBNVIDIA_ML
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fake=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/cli/lib.sh"
unset DRAPLANE_NVML_LIB DRAPLANE_SYSFS_ROOT FAKE_NVML_MIG FAKE_NVML_GPUS

# 1. LD_LIBRARY_PATH: 9 slices (counter sets + one per GPU), the fake's identities.
export LD_LIBRARY_PATH=$(dirname "$fake")
run agent --node gpu-node --gpus nvml --print-slices
expect_rc "ld path" 0
n=$(grep -c '^kind: ResourceSlice' "$tmp/out")
[ "$n" = 9 ] || bad "ld path: slice count" "want 9, got $n"
expect_out_has "ld path" "GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a0007"
expect_out_has "ld path" "NVIDIA H100 80GB HBM3"
expect_out_has "ld path" "0000:db:00.0"
expect_out_has "ld path" "name: gpu-7-mig-1g10gb-me-20-6"
expect_out_has "ld path" "cliqueID"
unset LD_LIBRARY_PATH

# 2. --mig none and the library named in the flag: full GPUs only.
FAKE_NVML_GPUS=2 run agent --node gpu-node --gpus "nvml:$fake" --mig none --print-slices
expect_rc "flag" 0
n=$(grep -c '^    name: gpu-[0-9]' "$tmp/out")
[ "$n" = 2 ] || bad "flag: device count" "want 2, got $n"

# 3. DRAPLANE_NVML_LIB.
DRAPLANE_NVML_LIB=$fake FAKE_NVML_GPUS=1 run agent --node gpu-node --gpus nvml --mig none --print-slices
expect_rc "env" 0
expect_out_has "env" "GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a0000"

# 4. No library: exit 2, the library named.
run agent --node gpu-node --gpus nvml:/nonexistent/libnvidia-ml.so.1 --print-slices
expect_rc "missing" 2
expect_err_has "missing" "NVML: cannot load /nonexistent/libnvidia-ml.so.1"
exit $fail
