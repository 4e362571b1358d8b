// GpuBackend: the seam between the node driver and the GPUs, like LevelDB's Env.
// Everything the driver asks of the hardware (discovery, MIG create/destroy,
// events) goes through it, so the whole node side runs against SimBackend in
// tests and against NvmlBackend (libnvidia-ml.so.1 via dlopen) on real nodes.
//
// Thread-safety: every implementation is safe for concurrent calls.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "node/gpu_info.h"

namespace draplane::node {

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  // "sim" or "nvml".
  virtual std::string_view kind() const = 0;

  // All GPUs, ordered by NVML index. Error kUnavailable when the driver cannot
  // be reached (NVML init failure), kInternal on a broken answer.
  virtual Result<std::vector<GpuInfo>> discover() = 0;

  // Creates a GPU instance of profile `profile_id` (GI profile info.id) at
  // memory-slice `placement_start` on the GPU `parent_uuid`, and one full compute
  // instance inside it; enables MIG mode first when needed. Errors: kNotFound
  // (no such GPU, profile or placement), kFailedPrecondition (the placement
  // overlaps an existing instance, MIG not supported), kUnavailable (driver).
  virtual Result<MigInstance> create_mig_device(const std::string& parent_uuid, int profile_id,
                                                int placement_start) = 0;

  // Destroys the compute instance, then the GPU instance; disables MIG mode when
  // none are left. Destroying what does not exist is OK (idempotent).
  virtual Status destroy_mig_device(const MigInstance& instance) = 0;

  // The MIG devices that exist now on `parent_uuid` (all GPUs when empty),
  // ordered by parent then GI id.
  virtual Result<std::vector<MigInstance>> list_mig_devices(const std::string& parent_uuid) = 0;

  // Waits up to `timeout_ms` for the next critical GPU event. OK(nullopt) on
  // timeout. Error kUnavailable when events cannot be registered (the caller
  // then taints devices gpu.nvidia.com/unmonitored).
  virtual Result<std::optional<GpuEvent>> wait_event(int timeout_ms) = 0;

  // Makes wait_event also deliver the events appended to <dir>/events by
  // `draplane agent inject-xid` (fault injection, sim.h); writes <dir>/gpus for
  // that command. Only the simulated backend takes injected events: the
  // default does nothing (a real GPU's events come from NVML alone).
  virtual Status watch_injected_events(const std::string& dir) {
    (void)dir;
    return {};
  }
};

// Builds a backend from the --gpus flag: "nvml", "nvml:<library path>",
// "sim:<spec>" (see sim.h), or a path to a YAML inventory file ("sim:" prefix
// optional). NVML is loaded from, in this order: the path after "nvml:", the
// environment variable DRAPLANE_NVML_LIB, else dlopen's search for
// libnvidia-ml.so.1 (LD_LIBRARY_PATH, ld.so.cache); DRAPLANE_SYSFS_ROOT
// replaces /sys for the PCIe root and NUMA node (tests). `seed` makes the
// simulated identities (UUIDs, clique ids) deterministic; the agent passes a
// hash of the node name so nodes differ. Error kInvalid naming the flag value.
Result<std::unique_ptr<GpuBackend>> make_backend(std::string_view gpus_flag, uint64_t seed);

}  // namespace draplane::node
