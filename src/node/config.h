// Opaque configuration of the gpu.nvidia.com driver (apiVersion
// resource.nvidia.com/v1beta1): GpuConfig (full GPUs) and MigDeviceConfig (MIG
// devices), carried as `opaque.parameters` in DeviceClass and ResourceClaim config
// and copied into status.allocation.devices.config by the scheduler.
//
//   {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
//    "sharing": {"strategy": "TimeSlicing" | "MPS",
//                "timeSlicingConfig": {"interval": "Default|Short|Medium|Long"},
//                "mpsConfig": {"defaultActiveThreadPercentage": 50,
//                              "defaultPinnedDeviceMemoryLimit": "10Gi",
//                              "defaultPerDevicePinnedMemoryLimit": {"0": "5Gi"}}}}
//
// MigDeviceConfig has the same shape without timeSlicingConfig. Decoding is strict:
// unknown fields and wrong types are errors naming their path. *Extension*:
// `timeSlicingConfig.replicas: N` (the 000 seed) is accepted in DeviceClass config
// only; the agent publishes matching GPUs as shareable (slices.h).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/quantity.h"
#include "api/types.h"
#include "common/result.h"

namespace draplane::node {

inline constexpr const char* kConfigApiVersion = "resource.nvidia.com/v1beta1";
// *Extension*: the 000 seed's DeviceClass writes `apiVersion: gpu.nvidia.com/v1`;
// it is read as kConfigApiVersion, in DeviceClass config only (like replicas).
inline constexpr const char* kSeedConfigApiVersion = "gpu.nvidia.com/v1";

struct TimeSlicingConfig {
  std::string interval = "Default";  // Default | Short | Medium | Long
  std::optional<int64_t> replicas;   // extension, DeviceClass config only
  bool operator==(const TimeSlicingConfig&) const = default;
};

struct MpsConfig {
  std::optional<int64_t> default_active_thread_percentage;      // 0..100
  std::optional<api::Quantity> default_pinned_device_memory_limit;
  std::map<std::string, api::Quantity> default_per_device_pinned_memory_limit;  // uuid or index
  bool operator==(const MpsConfig&) const = default;
};

struct Sharing {
  std::string strategy;  // TimeSlicing | MPS
  std::optional<TimeSlicingConfig> time_slicing;
  std::optional<MpsConfig> mps;
  bool operator==(const Sharing&) const = default;
};

struct DeviceConfig {
  std::string kind;  // GpuConfig | MigDeviceConfig
  std::optional<Sharing> sharing;
  bool operator==(const DeviceConfig&) const = default;
};

// Where a config comes from decides what it may contain.
enum class ConfigSource { kClass, kClaim };

// Decodes and validates one parameters object. `path` prefixes every error
// ("spec.config[0].opaque.parameters"). Errors (kInvalid), e.g.
//   <path>.sharing.strategy: Unsupported value: "Foo": supported values: "MPS", "TimeSlicing"
//   <path>.sharing.bogus: unknown field
//   <path>.sharing.timeSlicingConfig.replicas: Forbidden: only allowed in DeviceClass config
Result<DeviceConfig> parse_device_config(std::string_view json, std::string_view path, ConfigSource source);

// nvidia-smi's --set-timeslice value of an interval: Default 0, Short 1, Medium 2, Long 3.
int timeslice_value(std::string_view interval);

// The configuration in effect for result `result_index` of an allocation: among
// the allocation's configs for this driver whose `requests` is empty or names the
// result's request ("req" also matches "req/sub"), claim configs beat class
// configs and later beats earlier. Without one: the default (no sharing) of the
// device's kind. Errors (kInvalid, path status.allocation.devices.config[i]...):
// undecodable parameters, a GpuConfig for a MIG device or a MigDeviceConfig for a
// full GPU ("cannot apply MigDeviceConfig to GPU device gpu-0").
Result<DeviceConfig> effective_config(const api::AllocationResult& allocation, size_t result_index, bool is_mig);

// The configuration a DeviceClass gives its devices: its last gpu.nvidia.com
// config (the one effective_config applies when no claim config overrides it),
// nullopt when it has none. Every one of them must decode; errors name
// spec.config[i].opaque.parameters...
Result<std::optional<DeviceConfig>> class_device_config(const api::DeviceClass& device_class);

}  // namespace draplane::node
