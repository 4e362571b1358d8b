// `draplane driver`: the gpu.nvidia.com node driver as a kubelet plugin, for
// real nodes where the kubelet runs the containers (SPEC §5). The second front
// end of the same node code `draplane agent` uses: discovery (GpuBackend),
// ResourceSlices (PoolPublisher), prepare/unprepare (DeviceState: CDI specs,
// checkpoint, sharing, MIG) and health (HealthMonitor).
//
// Over gRPC on unix sockets, insecure, as the kubelet expects:
//  - <registry dir>/gpu.nvidia.com-reg.sock: pluginregistration.Registration
//    (GetInfo -> type DRAPlugin, name gpu.nvidia.com, endpoint <plugin
//    dir>/dra.sock, versions v1.DRAPlugin, v1beta1.DRAPlugin,
//    v1alpha1.DRAResourceHealth; NotifyRegistrationStatus is recorded);
//  - <plugin dir>/dra.sock: k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin and
//    .v1beta1.DRAPlugin (NodePrepareResources / NodeUnprepareResources) and
//    v1alpha1.DRAResourceHealth (NodeWatchResources: the complete list of the
//    pool's devices with their health, again after every change).
// Prepare reads each claim from the API server (with the node's credentials)
// and checks its UID and allocation before DeviceState::prepare; every claim
// of a request gets an entry in the response, failures as its `error` (a gRPC
// error would make the kubelet drop the whole answer).
//
// Thread-safety: ClaimPreparer and KubeletPlugin are safe for concurrent
// calls (gRPC serves each call on its own thread).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "client/rest_client.h"
#include "common/clock.h"
#include "common/result.h"
#include "node/prepare.h"
#include "node/slices.h"

namespace draplane::node {

inline constexpr const char* kDraPluginType = "DRAPlugin";

struct DriverOptions {
  std::string node_name;  // required: the pool
  std::string gpus = "nvml";
  std::string plugin_dir = "/var/lib/kubelet/plugins/gpu.nvidia.com";  // dra.sock, checkpoint.json, mps/
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";      // gpu.nvidia.com-reg.sock
  std::string cdi_root = "/var/run/cdi";
  DriverRoot driver_root;  // the driver's files the CDI specs mount
  bool dynamic_mig = true;
  ConsumableShares consumable_shares = {};
  std::string boot_id;  // "" = read_boot_id()
  std::shared_ptr<const common::Clock> clock = common::real_clock();
  std::shared_ptr<spdlog::logger> logger;  // nullptr: silent
};

// One claim's answer: its devices, or why it could not be (un)prepared.
struct ClaimOutcome {
  std::vector<PreparedDeviceResult> devices;
  std::string error;  // "" = success
};

// NodePrepareResources / NodeUnprepareResources without the wire: the claims
// by UID. Prepare fetches each claim (namespace, name) and refuses one whose
// UID differs (the claim was deleted and created again under the same name) or
// that is not allocated; unprepare needs only the checkpoint (the claim may be
// gone from the API already).
class ClaimPreparer {
 public:
  ClaimPreparer(client::RestClient& rest, DeviceState& devices) : rest_(rest), devices_(devices) {}
  std::map<std::string, ClaimOutcome> prepare(const std::vector<ClaimRef>& claims);
  std::map<std::string, ClaimOutcome> unprepare(const std::vector<ClaimRef>& claims);

 private:
  ClaimOutcome prepare_one(const ClaimRef& claim);
  client::RestClient& rest_;
  DeviceState& devices_;
};

// One device of the health stream.
struct DeviceHealthReport {
  std::string device;
  std::string health;   // "Healthy", "Unhealthy" or "Unknown" (health.h device_health)
  std::string message;  // the taints that decided it, "" when none
};

struct PluginSockets {
  std::string node_name;     // the pool of the health reports
  std::string plugin_dir;    // dra.sock
  std::string registry_dir;  // gpu.nvidia.com-reg.sock
};

inline std::string dra_socket_path(const std::string& plugin_dir) { return plugin_dir + "/dra.sock"; }
inline std::string registration_socket_path(const std::string& registry_dir) {
  return registry_dir + "/" + std::string(kDriverName) + "-reg.sock";
}

// The gRPC servers. start() binds dra.sock, then the registration socket (the
// kubelet's plugin watcher reacts to that one appearing); stop() removes both.
class KubeletPlugin {
 public:
  using HealthFn = std::function<std::vector<DeviceHealthReport>()>;
  // `preparer` must outlive the plugin. Errors: kUnavailable when a socket
  // cannot be bound (its path named).
  static Result<std::unique_ptr<KubeletPlugin>> start(ClaimPreparer& preparer, HealthFn health,
                                                      std::shared_ptr<const common::Clock> clock,
                                                      const PluginSockets& sockets, spdlog::logger& log);
  ~KubeletPlugin();

  // The device health changed: every open health stream sends the list again.
  void health_changed();

  // What the kubelet said in its last NotifyRegistrationStatus (nullopt: none yet).
  struct Registration {
    bool registered = false;
    std::string error;
  };
  std::optional<Registration> registration() const;

  void stop();  // idempotent

  struct Impl;  // the gRPC services (driver.cc)

 private:
  explicit KubeletPlugin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Runs the driver until `stop`: discovers the GPUs, loads the checkpoint,
// creates the DeviceClasses when allowed, publishes the slices, serves the
// kubelet. Errors: kInvalid for bad options, startup failures.
Result<void> run_driver(client::RestClient& rest, const DriverOptions& options, const std::atomic<bool>& stop);

}  // namespace draplane::node
