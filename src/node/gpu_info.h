// What discovery knows about one physical GPU and its MIG profiles: the input of
// the slice builder and of prepare. Filled by a GpuBackend (sim.cc, nvml.cc).
//
// Strings are already in the form the ResourceSlice publishes (strict semver
// versions, normalised PCI bus id), so the slice builder does no conversion.
// Plain values; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace draplane::node {

// One possible GPU-instance placement: memory slices [start, start+size).
struct MigPlacement {
  int start = 0;
  int size = 0;
  bool operator==(const MigPlacement&) const = default;
};

// One GPU-instance profile as NVML reports it (nvmlGpuInstanceProfileInfo_t plus
// nvmlDeviceGetGpuInstancePossiblePlacements_v2).
struct MigProfile {
  std::string name;        // nvidia-smi form: "1g.10gb", "1g.10gb+me"
  int profile_index = 0;   // NVML_GPU_INSTANCE_PROFILE_* (argument of GetGpuInstanceProfileInfo)
  int id = 0;              // info.id: 19, 20, 15, 14, 9, 5, 0
  int slice_count = 0;     // compute slices (the "1g" of the name)
  int instance_count = 0;  // most instances of this profile at once
  int64_t memory_mib = 0;  // memorySizeMB (NVML's MB are MiB)
  int multiprocessors = 0;
  int copy_engines = 0;
  int decoders = 0;
  int encoders = 0;
  int jpeg_engines = 0;
  int ofa_engines = 0;
  std::vector<MigPlacement> placements;  // ascending start
  bool operator==(const MigProfile&) const = default;
};

struct GpuInfo {
  int index = 0;  // NVML index
  int minor = 0;  // /dev/nvidia<minor>; names the device gpu-<minor>
  std::string uuid;           // "GPU-..."
  std::string product_name;   // "NVIDIA H100 80GB HBM3"
  std::string brand;          // "Nvidia", "Tesla", ...
  std::string architecture;   // "Hopper", "Ampere"
  std::string cuda_compute_capability;  // strict semver, "9.0.0"
  std::string driver_version;           // strict semver, "550.54.15"
  std::string cuda_driver_version;      // strict semver, "12.4.0"
  std::string addressing_mode;          // "" (unknown) | "ATS" | "HMM" | "None"
  std::string pci_bus_id;               // "0000:65:00.0", lower case
  std::string pcie_root;                // "pci0000:64", "" when unknown
  std::optional<int64_t> numa_node;
  std::string clique_id;                // "<clusterUUID>.<cliqueId>", "" when not attached
  int64_t memory_bytes = 0;             // nvmlDeviceGetMemoryInfo total
  bool mig_capable = false;
  bool mig_enabled = false;
  int memory_slice_count = 8;           // MIG memory slices (8 on A100/H100/H200)
  std::vector<MigProfile> mig_profiles; // empty when not MIG capable
  bool operator==(const GpuInfo&) const = default;
};

// A created MIG device (GPU instance + compute instance).
struct MigInstance {
  std::string parent_uuid;
  int parent_minor = 0;
  int profile_id = 0;  // GI profile info.id
  MigPlacement placement;
  int gi_id = 0;
  int ci_id = 0;
  std::string uuid;  // "MIG-..."
  bool operator==(const MigInstance&) const = default;
};

// An asynchronous GPU event (NVML event set). kRecovered is not an NVML event:
// an operator declares the GPU repaired (`draplane agent inject-xid --recover`)
// and its health taints are cleared.
struct GpuEvent {
  enum class Kind { kXid, kGpuLost, kRecovered };
  Kind kind = Kind::kXid;
  std::string uuid;  // the GPU it happened on ("" = unknown: applies to all)
  uint64_t xid = 0;  // for kXid
  bool operator==(const GpuEvent&) const = default;
};

}  // namespace draplane::node
