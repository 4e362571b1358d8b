// NvmlBackend: real GPUs through NVML, loaded at run time with dlopen so that
// draplane builds and runs on machines without the NVIDIA driver. Every NVML
// function draplane uses (SPEC §4) is resolved by name with its C signature
// declared locally in nvml.cc; no NVML header is needed.
//
// Thread-safety: NVML itself is thread-safe; the backend's own state (the event
// set) is guarded by a mutex, so all methods may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "node/gpu_backend.h"

namespace draplane::node {

struct NvmlOptions {
  std::string library = "libnvidia-ml.so.1";  // dlopen name or path
  std::string sysfs_root = "/sys";            // for pcieRoot and NUMA node
};

// The options of `--gpus nvml` or `--gpus nvml:<library path>` (gpu_backend.h):
// the library from the flag, else $DRAPLANE_NVML_LIB, else libnvidia-ml.so.1
// through dlopen's search; sysfs_root from $DRAPLANE_SYSFS_ROOT, else /sys.
NvmlOptions nvml_options(std::string_view gpus_flag);

class NvmlLibrary;  // the resolved function table (nvml.cc)

class NvmlBackend final : public GpuBackend {
 public:
  // Loads the library, resolves every required symbol and calls nvmlInit.
  // Errors: kUnavailable "NVML: cannot load libnvidia-ml.so.1: ..." when the
  // library is missing (no driver: use --gpus sim:...), kUnavailable naming the
  // symbol when one is missing, kUnavailable with nvmlErrorString when init fails.
  static Result<std::unique_ptr<NvmlBackend>> open(const NvmlOptions& options = {});
  ~NvmlBackend() override;  // nvmlShutdown, dlclose

  std::string_view kind() const override { return "nvml"; }
  Result<std::vector<GpuInfo>> discover() override;
  Result<MigInstance> create_mig_device(const std::string& parent_uuid, int profile_id,
                                        int placement_start) override;
  Status destroy_mig_device(const MigInstance& instance) override;
  Result<std::vector<MigInstance>> list_mig_devices(const std::string& parent_uuid) override;
  Result<std::optional<GpuEvent>> wait_event(int timeout_ms) override;

 private:
  NvmlBackend(std::unique_ptr<NvmlLibrary> lib, NvmlOptions options);
  std::unique_ptr<NvmlLibrary> lib_;
  NvmlOptions options_;
};

}  // namespace draplane::node
