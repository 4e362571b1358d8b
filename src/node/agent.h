// The node agent (`draplane agent`): GPU driver gpu.nvidia.com plus kubelet for
// one node, over the Kubernetes REST API. run_agent():
//  1. discovers the GPUs (make_backend: sim:<spec> | nvml | inventory file);
//  2. registers the Node (agent_node.h) and creates the DeviceClasses if missing;
//  3. publishes the pool's ResourceSlices (new generation when they change) and
//     republishes when health taints change (HealthMonitor), when someone
//     else deletes or changes them (it watches its slices) or when the
//     DeviceClasses change which GPUs are shared (it watches the classes:
//     slices.h class_sharing; not with --consumable-shares, which decides alone);
//  4. serves container logs (kubelet_logs.h) and runs the Kubelet (kubelet.h)
//     with DeviceState (checkpoint under <state dir>/plugin, CDI specs under
//     <state dir>/cdi);
//  5. heartbeats the Node every heartbeat_seconds until `stop`.
// Health: the HealthMonitor's taints (simulated GPUs also take the events of
// `draplane agent inject-xid` through <state dir>/health, sim.h) reach the
// slices (3.) and the device health the Kubelet reports in its pods' and
// claims' status (Kubelet::device_health_changed).
//
// Thread-safety: run_agent blocks the calling thread; several agents (one per
// simulated node) may run in one process with different state dirs.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "client/rest_client.h"
#include "common/clock.h"
#include "common/result.h"
#include "node/slices.h"

namespace draplane::node {

struct AgentOptions {
  std::string node_name;              // required
  std::string gpus = "sim:8xH100";    // --gpus
  std::string state_dir;              // required: checkpoint, CDI specs, pod logs
  std::string host_ip = "127.0.0.1";  // Node InternalIP, pod hostIP, log endpoint address
  int log_port = 0;                   // log endpoint port; 0 picks one, < 0 disables it
  int heartbeat_seconds = 10;
  bool dynamic_mig = true;                 // --mig dynamic (false: --mig none)
  ConsumableShares consumable_shares = {};  // --consumable-shares
  std::map<std::string, std::string> labels;
  int64_t cpu = 0;           // Node capacity override (0: this machine's)
  int64_t memory_bytes = 0;
  int max_grace_seconds = 30;
  std::shared_ptr<const common::Clock> clock = common::real_clock();  // API timestamps
  std::shared_ptr<spdlog::logger> logger;    // nullptr: silent
};

// Runs the agent until `stop` becomes true. Errors: kInvalid for bad options or
// --gpus, startup failures (discovery, checkpoint, registration after retries).
Result<void> run_agent(client::RestClient& rest, const AgentOptions& options, const std::atomic<bool>& stop);

// The ResourceSlices run_agent would publish at start for options.gpus and these
// DeviceClasses (`draplane agent --print-slices`): no server, no state. Classes
// skipped for their sharing are appended to `warnings`. Errors: discovery, --gpus.
Result<std::vector<api::ResourceSlice>> offline_slices(const AgentOptions& options,
                                                       const std::vector<api::DeviceClass>& classes,
                                                       std::vector<std::string>& warnings);

}  // namespace draplane::node
