// Conversions from what NVML reports to what a ResourceSlice publishes.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::node {

// A dotted version ("550.54.15", "535.104.05", "9.0", "12") as strict semver
// MAJOR.MINOR.PATCH: missing parts are 0 and leading zeros are dropped, since the
// API rejects "535.104.05" (semver forbids leading zeros). Error kInvalid when a
// part is not a decimal number or there are more than three parts.
Result<std::string> to_semver(std::string_view dotted);

// nvmlSystemGetCudaDriverVersion's integer (1000*major + 10*minor) as semver:
// 12040 -> "12.4.0", 11080 -> "11.8.0". Error kInvalid for values <= 0.
Result<std::string> cuda_driver_version_semver(int version);

// Compute capability major/minor as semver: (9, 0) -> "9.0.0".
std::string compute_capability_semver(int major, int minor);

// NVML's PCI bus id ("00000000:65:00.0", upper or lower case) in the Linux sysfs
// form "0000:65:00.0", lower case: the 8-digit domain is cut to its last 4 digits.
// Error kInvalid when the text is not DOMAIN:BUS:DEVICE.FUNCTION in hex.
Result<std::string> normalize_pci_bus_id(std::string_view nvml_bus_id);

// The PCIe root of a device from its resolved sysfs path: the first element under
// /sys/devices ("/sys/devices/pci0000:64/0000:64:01.0/0000:65:00.0" -> "pci0000:64").
// Error kNotFound when the path is not under /sys/devices/pci*.
Result<std::string> pcie_root_from_sysfs_path(std::string_view resolved_path);

// Reads /sys/bus/pci/devices/<bus id> (a symlink) under `sysfs_root` ("/sys" on a
// real node) and returns pcie_root_from_sysfs_path of its target.
Result<std::string> pcie_root_for_bus_id(std::string_view sysfs_root, std::string_view bus_id);

// A MIG profile name as a DNS-label fragment: dots dropped, lower-cased, anything
// outside [a-z0-9-] turned into '-', leading/trailing '-' trimmed
// ("1g.10gb+me" -> "1g10gb-me").
std::string mig_profile_label(std::string_view profile_name);

}  // namespace draplane::node

namespace draplane::node {

// The nvidia-smi name of a GPU-instance profile ("1g.10gb", "1g.18gb+me") from
// NVML's profile info, as go-nvlib derives it: the memory share of the GPU,
// rounded up to eighths, times the GPU's memory in whole GB (rounded up), rounded
// to the nearest integer. `media_extensions` adds "+me" (profile *_REV1).
std::string mig_profile_name(int slice_count, int64_t memory_mib, int64_t total_memory_bytes,
                             bool media_extensions);

}  // namespace draplane::node
