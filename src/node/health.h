// GPU health -> device taints (SPEC §4): NVML XID critical errors taint the GPU's
// devices `gpu.nvidia.com/xid=<code>` with effect NoSchedule (XIDs 13, 31, 43,
// 45, 68 and 109 are application errors: effect None, informational); a lost GPU
// (GPU_IS_LOST) taints every device `gpu.nvidia.com/gpu-lost:NoSchedule`; when
// events cannot be registered every device gets `gpu.nvidia.com/unmonitored`
// (effect None). A kRecovered event (the GPU was repaired; injected by
// `draplane agent inject-xid --recover`, NVML has no such event) removes the
// XID and gpu-lost taints of the GPU's devices.
//
// taints_for_event is a pure function; HealthMonitor keeps the current taints
// and is driven by the caller's loop (poll_once), so tests need no threads.
// Thread-safety: HealthMonitor is safe for concurrent calls.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/clock.h"
#include "node/gpu_backend.h"

namespace draplane::node {

inline constexpr const char* kXidTaintKey = "gpu.nvidia.com/xid";
inline constexpr const char* kGpuLostTaintKey = "gpu.nvidia.com/gpu-lost";
inline constexpr const char* kUnmonitoredTaintKey = "gpu.nvidia.com/unmonitored";

// True for the XIDs that indicate an application fault rather than a broken GPU.
bool is_application_xid(uint64_t xid);

// The device names the driver publishes for a GPU (the full GPU and, with
// dynamic MIG, every placement), sorted.
std::vector<std::string> device_names_of_gpu(const GpuInfo& gpu, bool dynamic_mig);

// Device name -> taint for one event. An XID for an unknown UUID (or "") applies
// to every GPU. `time_added` is the RFC 3339 timestamp to record. A kRecovered
// event adds no taint (empty).
std::map<std::string, api::DeviceTaint> taints_for_event(const GpuEvent& event, const std::vector<GpuInfo>& gpus,
                                                         bool dynamic_mig, const std::string& time_added);

// KEP-4680 health of a device from its taints: "Unhealthy" with an XID or
// gpu-lost taint that keeps pods off it (effect other than None), "Unknown"
// when it is not monitored, else "Healthy" (an application XID, effect None,
// says nothing about the GPU).
std::string device_health(const std::vector<api::DeviceTaint>& taints);

class HealthMonitor {
 public:
  // `clock` gives timeAdded; it must outlive the monitor.
  HealthMonitor(GpuBackend& backend, std::vector<GpuInfo> gpus, bool dynamic_mig, const common::Clock& clock);

  // Waits up to timeout_ms for one event and records its taints. Returns true
  // when the taints changed (the caller republishes the slices). An unavailable
  // event source adds the unmonitored taint (once: true the first time) and
  // still takes timeout_ms, so a caller's loop does not spin.
  bool poll_once(int timeout_ms);

  // Device name -> taints, sorted by key then value; feed to SliceOptions::taints.
  std::map<std::string, std::vector<api::DeviceTaint>> taints() const;

  // device_health() of a device of this node's pool ("Healthy" when untainted).
  std::string health(const std::string& device) const;

 private:
  bool add(const std::map<std::string, api::DeviceTaint>& t);
  // Removes the XID and gpu-lost taints of the devices of GPU `uuid` ("" = all).
  bool recover(const std::string& uuid);

  GpuBackend& backend_;
  const std::vector<GpuInfo> gpus_;
  const bool dynamic_mig_;
  const common::Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<api::DeviceTaint>> taints_;
};

}  // namespace draplane::node
