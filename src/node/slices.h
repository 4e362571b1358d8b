// The ResourceSlices and DeviceClasses of the gpu.nvidia.com driver, built from
// discovered GPUs exactly as SPEC §4 describes the NVIDIA DRA driver's:
//
// - one pool per node, named after the node;
// - full GPUs `gpu-<minor>` with attributes type, uuid, productName, brand,
//   architecture, cudaComputeCapability, driverVersion, cudaDriverVersion,
//   addressingMode (when known), resource.kubernetes.io/{pciBusID,pcieRoot,numaNode}
//   and cliqueID (when on a fabric), and capacity memory;
// - with dynamic MIG (partitionable devices, KEP 4815): per MIG-capable GPU a
//   counter set `gpu-<minor>-counter-set`, the full GPU consuming the
//   per-dimension maximum over all profiles plus every memory slice, and one
//   device per possible placement `gpu-<minor>-mig-<profile>-<profileID>-<start>`;
//   slices: first the sharedCounters-only slices (<= 8 counter sets each), then
//   per GPU (by PCI bus id) the devices sorted by name (<= 64 per slice when they
//   consume counters, else <= 128);
// - without dynamic MIG: full GPUs only, <= 128 per slice, by PCI bus id;
// - shared devices (consumable capacity, KEP 5075) in the shapes of the NVIDIA
//   driver's --consumable-shares (cmd/gpu-kubelet-plugin/consumable_shares.go):
//   allowMultipleAllocations, the `memory` capacity rounded down to 1Mi with a
//   request policy (unlimited: default 0, 0..max by 1Mi; memory: default max,
//   1Mi..max by 1Mi; N: as unlimited plus capacity `shares` = N, default 1,
//   1..N by 1). Either for every device (the flag) or per device (derived from
//   DeviceClass config by class_sharing below, an extension).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "common/result.h"
#include "node/gpu_info.h"

namespace draplane::node {

inline constexpr const char* kDriverName = "gpu.nvidia.com";
inline constexpr const char* kGpuClassName = "gpu.nvidia.com";
inline constexpr const char* kMigClassName = "mig.nvidia.com";
inline constexpr const char* kSharesCapacity = "shares";
inline constexpr const char* kMemoryCapacity = "memory";

// How a device is shared through consumable capacity: the values of the NVIDIA
// driver's --consumable-shares flag.
struct ConsumableShares {
  enum class Mode { kDisabled, kUnlimited, kMemory, kShares };
  Mode mode = Mode::kDisabled;
  int64_t shares = 0;  // kShares: N >= 1
  bool enabled() const { return mode != Mode::kDisabled; }
  bool operator==(const ConsumableShares&) const = default;
};

// Parses "disabled" | "unlimited" | "memory" | N (a positive integer). Error
// kInvalid with the driver's message.
Result<ConsumableShares> parse_consumable_shares(std::string_view value);
// "disabled", "unlimited", "memory" or N.
std::string to_string(const ConsumableShares& shares);

struct SliceOptions {
  std::string node_name = "";  // pool name and spec.nodeName; required
  bool dynamic_mig = true;     // publish MIG placements as partitionable devices
  int64_t generation = 1;      // spec.pool.generation; bump when the inventory changes
  // --consumable-shares: every device (full GPUs and MIG devices) is shared so;
  // when enabled, `sharing` is ignored (the node's flag wins over classes).
  ConsumableShares consumable_shares = {};
  // Extension: device name ("gpu-0", "gpu-0-mig-1g10gb-19-0") -> how it is
  // shared, derived from DeviceClass config (class_sharing).
  std::map<std::string, ConsumableShares> sharing = {};
  // Device name -> taints (health.h); a slice with tainted devices holds <= 64.
  std::map<std::string, std::vector<api::DeviceTaint>> taints = {};
  // Limits of a slice (upstream: 8 counter sets, 64 counter-consuming devices,
  // 128 devices); smaller values exist for tests.
  int max_counter_sets_per_slice = 8;
  int max_counter_devices_per_slice = 64;
  int max_devices_per_slice = 128;
};

// Builds the pool. Slice i is named "<node>-gpu.nvidia.com-<i>" and carries
// pool {name: node, generation, resourceSliceCount: total}. Error kInvalid when
// node_name is empty, two GPUs share a minor, or a `sharing` entry names no
// device or has kShares with N < 1.
Result<std::vector<api::ResourceSlice>> build_slices(const std::vector<GpuInfo>& gpus, const SliceOptions& options);

// `gpu-<minor>`.
std::string gpu_device_name(int minor);
// `gpu-<minor>-counter-set`.
std::string counter_set_name(int minor);
// `gpu-<minor>-mig-<profile label>-<profile id>-<start>` ("gpu-0-mig-1g10gb-me-20-0").
std::string mig_device_name(int minor, const MigProfile& profile, int start);

// What a device name of this driver refers to.
struct DeviceRef {
  const GpuInfo* gpu = nullptr;
  const MigProfile* profile = nullptr;  // null for a full GPU
  MigPlacement placement;
};
// Resolves a published device name against the GPUs. Error kNotFound when no
// GPU, profile or placement matches.
Result<DeviceRef> resolve_device(const std::vector<GpuInfo>& gpus, const std::string& device_name);

// Extension: the per-device sharing DeviceClasses ask for. A class shares the
// devices its selectors select (evaluated on the devices as published without
// sharing) when its config for this driver (the last one, as at prepare) is
//   - a GpuConfig (full GPUs) or MigDeviceConfig (MIG devices) of the device's kind,
//   - with sharing.strategy TimeSlicing and timeSlicingConfig.replicas N: the
//     shape of --consumable-shares=N;
//   - with sharing.strategy MPS: the shape of --consumable-shares=memory.
// A device selected by several such classes takes the first class by name;
// every class passed over, and every class whose config or selectors fail, is
// reported in `warnings` (the class is skipped; publishing goes on).
struct ClassSharing {
  std::map<std::string, ConsumableShares> devices;  // SliceOptions::sharing
  std::map<std::string, std::string> by_class;      // device -> class it follows
  std::vector<std::string> warnings;
};
Result<ClassSharing> class_sharing(const std::vector<GpuInfo>& gpus, const SliceOptions& options,
                                   const std::vector<api::DeviceClass>& classes);

// The DeviceClasses gpu.nvidia.com (extendedResourceName nvidia.com/gpu) and
// mig.nvidia.com.
std::vector<api::DeviceClass> device_classes();

}  // namespace draplane::node
