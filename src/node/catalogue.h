// The simulated GPU catalogue: the models SimBackend can create, with the MIG
// profile tables NVML reports for them (SPEC §4). Real nodes read NVML instead.
// Immutable static data; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "node/gpu_info.h"

namespace draplane::node {

struct GpuModel {
  std::string key;            // canonical spec name: "H100-80GB"
  std::vector<std::string> aliases;  // other accepted spellings: "H100"
  std::string product_name;   // "NVIDIA H100 80GB HBM3"
  std::string brand;
  std::string architecture;
  int cc_major = 0;
  int cc_minor = 0;
  int64_t memory_mib = 0;     // nvmlDeviceGetMemoryInfo total
  bool nvlink_fabric = false; // HGX boards: all GPUs of a node share one NVLink clique
  std::vector<MigProfile> mig_profiles;
};

// All models, in a fixed order (H100-80GB, H200-141GB, A100-40GB, A100-80GB).
const std::vector<GpuModel>& gpu_catalogue();

// The model for a name or alias, case-insensitive; nullptr when unknown.
const GpuModel* find_gpu_model(std::string_view name);

// "H100-80GB (H100), H200-141GB (H200), ..." for error messages.
std::string gpu_model_names();

}  // namespace draplane::node
