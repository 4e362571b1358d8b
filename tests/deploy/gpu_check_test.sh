#!/bin/bash
# scripts/gpu-check where there is no GPU (exit 0 and the reason), and its whole
# path against the fake libnvidia-ml.so.1 with a stand-in nvidia-smi (not root:
# the GPU is selected with -i), so that a GPU machine runs a script whose
# discovery, prepare, CDI parsing and unprepare steps already ran here.
# Usage: gpu_check_test.sh DRAPLANE_BINARY SOURCE_DIR FAKE_LIBNVIDIA_ML
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
fake=$3
. "$src/tests/cli/lib.sh"
check() {
  "$src/scripts/gpu-check" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  out=$(cat "$tmp/out")
}

# 1. No nvidia-smi.
NVIDIA_SMI=/nonexistent/nvidia-smi check
expect_rc "no nvidia-smi" 0
expect_out "no nvidia-smi" "gpu-check: no NVIDIA GPU here: nvidia-smi not found; nothing to check"
# On this machine as it is (when it has no nvidia-smi): the same.
if ! command -v nvidia-smi >/dev/null; then
  check
  expect_rc "plain" 0
  expect_out "plain" "gpu-check: no NVIDIA GPU here: nvidia-smi not found; nothing to check"
fi

# A stand-in nvidia-smi for the fake's GPUs: -L lists them, -i selects one.
cat >"$tmp/nvidia-smi" <<'SMI'
#!/bin/bash
sel=""
while [ $# -gt 0 ]; do case $1 in -i) sel=$2; shift;; esac; shift; done
for i in 0 1 2 3 4 5 6 7; do
  u=$(printf 'GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a%04x' $i)
  [ -z "$sel" ] || [ "$sel" = "$u" ] || continue
  echo "GPU $i: NVIDIA H100 80GB HBM3 (UUID: $u)"
done
SMI
chmod +x "$tmp/nvidia-smi"

# 2. nvidia-smi but no library.
NVIDIA_SMI=$tmp/nvidia-smi DRAPLANE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 check
expect_rc "no library" 0
expect_out "no library" \
  "gpu-check: no NVIDIA GPU here: libnvidia-ml.so.1 not found (/nonexistent/libnvidia-ml.so.1); nothing to check"

# 3. The fake GPUs: discovery, prepare of gpu-0, nvidia-smi -i, unprepare.
# (No mount namespace: the fake GPUs have no device nodes to bind.)
NVIDIA_SMI=$tmp/nvidia-smi DRAPLANE_NVML_LIB=$fake DRAPLANE_BIN=$bin TMPDIR=$tmp GPU_CHECK_ISOLATE=0 check
expect_rc "fake" 0
expect_out_has "fake" "gpu-check: preparing a claim for gpu-0 (GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a0000)"
expect_out_has "fake" "cdi-device: k8s.gpu.nvidia.com/claim=gpu-check-gpu-0"
expect_out_has "fake" "device-node: /dev/nvidia0"
expect_out_line "fake" "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a0000)"
expect_out_has "fake" "gpu-check: OK: gpu-0 (GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a0000) discovered, prepared"
n=$(grep -c '^kind: ResourceSlice' "$tmp/out")
[ "$n" = 9 ] || bad "fake: printed slices" "want 9, got $n"
exit $fail
