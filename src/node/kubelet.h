// Kubelet: the node agent's stand-in for the kubelet. It watches the pods bound
// to its node (fieldSelector spec.nodeName=<node>) and for each one, on its own
// worker thread:
//  1. waits until every claim of the pod exists, is allocated and is reserved
//     for the pod (kubelet_pod.h), polling with backoff;
//  2. prepares the claims through DeviceState (idempotent, checkpointed; CDI
//     spec under the CDI dir) — a claim shared by several pods on the node is
//     prepared once and unprepared when the last of them ends;
//  3. runs the containers as local processes (kubelet_process.h) with the CDI
//     environment, logs in <state dir>/pods/<ns>_<pod>_<uid>/<container>/<n>.log;
//     restartPolicy Always / OnFailure restart them with backoff (10 s doubling
//     to 5 min), as the kubelet does;
//  4. reports status (phase, conditions, containerStatuses, startTime, hostIP)
//     through PUT pods/<name>/status; with a device_health function, each
//     container status lists the health of its claims' devices
//     (allocatedResourcesStatus, KEP-4680) and each prepared claim's
//     status.devices[] carries a Healthy condition per device of this node's
//     pool (KEP-4817); device_health_changed() updates both;
//  5. records each running container (pid = process group, start time, boot
//     ID) in <pod dir>/<container>/process.json until it exits; start() ends
//     the containers such records name, left behind by an agent that died
//     without stopping them (kill -9), before it runs any pod;
//  6. when the pod ends: unprepares its claims; when it is deleted (or gets a
//     deletionTimestamp): SIGTERM to the containers, SIGKILL after the grace
//     period (capped), unprepare, and for a graceful deletion the final DELETE
//     with gracePeriodSeconds=0, as the kubelet does.
// Steps 2 and 3 report Events as the kubelet does (FailedPrepareDynamicResources,
// Created, Started, Failed, BackOff, Killing; pkg/kubelet/events).
// Prepared claims that no pod on the node holds any more (e.g. their pods were
// deleted while the agent was down) are unprepared by a periodic sweep.
//
// Thread-safety: start()/stop() from one thread; log_path() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/clock.h"
#include "node/kubelet_pod.h"
#include "node/kubelet_process.h"
#include "node/prepare.h"

namespace draplane::node {

struct KubeletOptions {
  std::string node_name;
  std::string state_dir;        // pod logs and working directories under <state dir>/pods
  std::string cdi_dir;          // where DeviceState writes CDI specs (to read the edits back)
  std::string host_ip = "127.0.0.1";
  int max_grace_seconds = 30;   // cap of terminationGracePeriodSeconds
  int restart_backoff_ms = 10000;  // first container restart delay (doubles, max 5 min)
  int orphan_sweep_ms = 10000;  // period of the sweep of unheld prepared claims
  std::vector<std::string> base_env;  // e.g. PATH=...; HOSTNAME is set per pod
  std::string boot_id;                // of the process records; "" = read_boot_id()
  std::shared_ptr<const common::Clock> clock = common::real_clock();  // API timestamps
  std::shared_ptr<spdlog::logger> logger;  // nullptr: silent
  // The health of the driver's devices (pool = node name); unset: none reported.
  DeviceHealthFn device_health;
  std::string driver_name = "gpu.nvidia.com";
};

class Kubelet {
 public:
  // All references must outlive the Kubelet.
  Kubelet(client::RestClient& rest, DeviceState& devices, ProcessLauncher& launcher, KubeletOptions options);
  ~Kubelet();

  // Ends the containers an earlier run left behind (see 5.), then watches.
  void start();
  // Stops watching and kills the containers (without unpreparing: the
  // checkpoint keeps them for the next start).
  void stop();
  bool wait_synced(int timeout_ms);

  // The driver's device health changed: the running pods report their
  // allocatedResourcesStatus again and the prepared claims' device conditions
  // are updated (from the calling thread).
  void device_health_changed();

  // The log file of a container of a pod on this node (`previous`: the one
  // before the last restart); container "" = the pod's only container.
  // Error kNotFound naming what is missing, kInvalid when the container must be named.
  Result<std::string> log_path(const std::string& ns, const std::string& pod, const std::string& container,
                               bool previous) const;

 private:
  struct Worker;
  void on_pod(client::EventType type, const api::Pod& pod);
  void run_worker(std::shared_ptr<Worker> w);
  // Step 1-2; false when the pod went away (or the kubelet stops) meanwhile.
  bool prepare_claims(Worker& w, std::map<std::string, PreparedClaimInfo>& out);
  void release_claims(Worker& w);
  void run_containers(Worker& w, const std::map<std::string, PreparedClaimInfo>& claims);
  void start_container(Worker& w, size_t i, const std::map<std::string, PreparedClaimInfo>& claims);
  void kill_containers(Worker& w, int grace_seconds);
  // PUT status (read-modify-write). OK when written or the pod is gone.
  Status report(Worker& w, const std::string& phase, const std::string& message);
  void delete_pod(const std::string& ns, const std::string& name, const std::string& uid);
  // Writes the health conditions of the claim's devices into its status.devices.
  void update_claim_health(const std::string& ns, const std::string& name);
  void sweep_orphans();
  void end_previous_containers();
  std::string now() const;
  // An Event about the worker's pod (or, with `container`, one of its
  // containers), as the kubelet reports it: core/v1, source kubelet/<node>.
  void event(const Worker& w, const std::string& container, const char* type, const char* reason,
             std::string message);

  client::RestClient& rest_;
  DeviceState& devices_;
  ProcessLauncher& launcher_;
  KubeletOptions options_;
  client::Informer<api::Pod> pods_;
  client::EventRecorder events_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::thread sweeper_;

  mutable std::mutex mu_;
  std::condition_variable sweep_cv_;
  std::map<std::string, std::shared_ptr<Worker>> workers_;  // by pod UID
  std::map<std::string, std::set<std::string>> holders_;    // claim UID -> pod UIDs
};

}  // namespace draplane::node
