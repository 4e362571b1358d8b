#!/bin/sh
# The image's entrypoint: finds the host driver's libnvidia-ml.so.1 and
# nvidia-smi under $NVIDIA_DRIVER_ROOT (the DaemonSet mounts the host's / or the
# GPU operator's /run/nvidia/driver there) and runs `draplane "$@"` with them.
# Without a driver the library stays unset and `--gpus nvml` fails naming it.
root=${NVIDIA_DRIVER_ROOT:-/driver-root}
if [ -z "${DRAPLANE_NVML_LIB:-}" ]; then
  for d in usr/lib/x86_64-linux-gnu usr/lib/aarch64-linux-gnu usr/lib64 usr/lib lib64 lib; do
    if [ -e "$root/$d/libnvidia-ml.so.1" ]; then
      export DRAPLANE_NVML_LIB="$root/$d/libnvidia-ml.so.1"
      break
    fi
  done
fi
# The tools below load libnvidia-ml.so.1 by name: a directory holding only it
# (not the host's whole library directory, whose libc would shadow the image's).
link=${DRAPLANE_NVML_LINK_DIR:-/run/draplane-nvml}
if [ -n "${DRAPLANE_NVML_LIB:-}" ] && mkdir -p "$link" 2>/dev/null \
    && ln -sf "$DRAPLANE_NVML_LIB" "$link/libnvidia-ml.so.1"; then
  export LD_LIBRARY_PATH="$link${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# nvidia-smi and nvidia-cuda-mps-control (time-slicing, MPS) from the host driver.
for d in usr/bin usr/local/bin bin; do
  [ -d "$root/$d" ] && PATH="$PATH:$root/$d"
done
export PATH
exec draplane "$@"
