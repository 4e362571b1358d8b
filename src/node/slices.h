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
// - extension: time-slicing replicas (from DeviceClass config) turn a full GPU
//   into a shareable device with capacity `shares` = N (requestPolicy default 1).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/result.h"
#include "node/gpu_info.h"

namespace draplane::node {

inline constexpr const char* kDriverName = "gpu.nvidia.com";
inline constexpr const char* kGpuClassName = "gpu.nvidia.com";
inline constexpr const char* kMigClassName = "mig.nvidia.com";
inline constexpr const char* kSharesCapacity = "shares";

struct SliceOptions {
  std::string node_name = "";  // pool name and spec.nodeName; required
  bool dynamic_mig = true;     // publish MIG placements as partitionable devices
  int64_t generation = 1;      // spec.pool.generation; bump when the inventory changes
  // Extension: full GPU device name ("gpu-0") -> time-slicing replicas (> 1).
  std::map<std::string, int64_t> shares = {};
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
// node_name is empty, two GPUs share a minor, or a shares value is < 2 or names
// no full GPU.
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

// The DeviceClasses gpu.nvidia.com (extendedResourceName nvidia.com/gpu) and
// mig.nvidia.com.
std::vector<api::DeviceClass> device_classes();

}  // namespace draplane::node
