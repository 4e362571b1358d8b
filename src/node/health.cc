#include "node/health.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "node/slices.h"

namespace draplane::node {

bool is_application_xid(uint64_t xid) {
  // The NVIDIA device plugin and DRA driver skip these by default.
  return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68 || xid == 109;
}

std::vector<std::string> device_names_of_gpu(const GpuInfo& gpu, bool dynamic_mig) {
  std::vector<std::string> out = {gpu_device_name(gpu.minor)};
  if (dynamic_mig) {
    for (const MigProfile& p : gpu.mig_profiles) {
      for (const MigPlacement& pl : p.placements) out.push_back(mig_device_name(gpu.minor, p, pl.start));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, api::DeviceTaint> taints_for_event(const GpuEvent& event, const std::vector<GpuInfo>& gpus,
                                                         bool dynamic_mig, const std::string& time_added) {
  if (event.kind == GpuEvent::Kind::kRecovered) return {};  // HealthMonitor removes taints instead
  api::DeviceTaint taint;
  taint.timeAdded = time_added;
  bool all = event.uuid.empty() || std::none_of(gpus.begin(), gpus.end(), [&](const GpuInfo& g) {
               return g.uuid == event.uuid;
             });
  if (event.kind == GpuEvent::Kind::kGpuLost) {
    taint.key = kGpuLostTaintKey;
    taint.effect = "NoSchedule";
  } else {
    taint.key = kXidTaintKey;
    taint.value = std::to_string(event.xid);
    taint.effect = is_application_xid(event.xid) ? "None" : "NoSchedule";
  }
  std::map<std::string, api::DeviceTaint> out;
  for (const GpuInfo& g : gpus) {
    if (!all && g.uuid != event.uuid) continue;
    for (const std::string& d : device_names_of_gpu(g, dynamic_mig)) out[d] = taint;
  }
  return out;
}

std::string device_health(const std::vector<api::DeviceTaint>& taints) {
  bool unmonitored = false;
  for (const api::DeviceTaint& t : taints) {
    if ((t.key == kXidTaintKey || t.key == kGpuLostTaintKey) && t.effect != "None") return "Unhealthy";
    if (t.key == kUnmonitoredTaintKey) unmonitored = true;
  }
  return unmonitored ? "Unknown" : "Healthy";
}

HealthMonitor::HealthMonitor(GpuBackend& backend, std::vector<GpuInfo> gpus, bool dynamic_mig,
                             const common::Clock& clock)
    : backend_(backend), gpus_(std::move(gpus)), dynamic_mig_(dynamic_mig), clock_(clock) {}

bool HealthMonitor::add(const std::map<std::string, api::DeviceTaint>& t) {
  std::lock_guard<std::mutex> lock(mu_);
  bool changed = false;
  for (const auto& [device, taint] : t) {
    auto& list = taints_[device];
    bool present = std::any_of(list.begin(), list.end(), [&](const api::DeviceTaint& x) {
      return x.key == taint.key && x.value == taint.value && x.effect == taint.effect;
    });
    if (present) continue;
    list.push_back(taint);
    std::sort(list.begin(), list.end(), [](const api::DeviceTaint& a, const api::DeviceTaint& b) {
      return a.key != b.key ? a.key < b.key : a.value < b.value;
    });
    changed = true;
  }
  return changed;
}

bool HealthMonitor::poll_once(int timeout_ms) {
  const auto started = std::chrono::steady_clock::now();
  auto event = backend_.wait_event(timeout_ms);
  if (!event) {
    // An unavailable event source fails at once, every time: wait out the
    // timeout as a working one would, or the callers' loops spin.
    std::this_thread::sleep_until(started + std::chrono::milliseconds(timeout_ms));
    api::DeviceTaint t;
    t.key = kUnmonitoredTaintKey;
    t.effect = "None";
    t.timeAdded = clock_.rfc3339();
    std::map<std::string, api::DeviceTaint> all;
    for (const GpuInfo& g : gpus_) {
      for (const std::string& d : device_names_of_gpu(g, dynamic_mig_)) all[d] = t;
    }
    return add(all);
  }
  if (!event->has_value()) return false;
  if ((*event)->kind == GpuEvent::Kind::kRecovered) return recover((*event)->uuid);
  return add(taints_for_event(**event, gpus_, dynamic_mig_, clock_.rfc3339()));
}

bool HealthMonitor::recover(const std::string& uuid) {
  std::lock_guard<std::mutex> lock(mu_);
  bool changed = false;
  for (const GpuInfo& g : gpus_) {
    if (!uuid.empty() && g.uuid != uuid) continue;
    for (const std::string& d : device_names_of_gpu(g, dynamic_mig_)) {
      auto it = taints_.find(d);
      if (it == taints_.end()) continue;
      auto& list = it->second;
      auto end = std::remove_if(list.begin(), list.end(), [](const api::DeviceTaint& t) {
        return t.key == kXidTaintKey || t.key == kGpuLostTaintKey;
      });
      changed = changed || end != list.end();
      list.erase(end, list.end());
      if (list.empty()) taints_.erase(it);
    }
  }
  return changed;
}

std::string HealthMonitor::health(const std::string& device) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = taints_.find(device);
  return it == taints_.end() ? "Healthy" : device_health(it->second);
}

std::map<std::string, std::vector<api::DeviceTaint>> HealthMonitor::taints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taints_;
}

}  // namespace draplane::node
