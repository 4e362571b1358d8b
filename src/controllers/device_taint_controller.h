// DeviceTaintController: kube-controller-manager's device taint eviction
// controller (pkg/controller/devicetainteviction) over the REST API.
//
// It watches pods, ResourceClaims, ResourceSlices and DeviceTaintRules and
// keeps a plan of which pods must go when (device_taint_eviction_logic.h:
// plan_evictions, recomputed after changes; a pod that leaves the plan before
// its time, say because the taint was removed, is not evicted). When a pod's
// time comes it is evicted as upstream does it: an event on the pod naming the
// devices and taints, the DisruptionTarget condition (reason
// DeletionByDeviceTaintManager) through pods/status, then a DELETE with the
// pod's UID as precondition and its own grace period. The claim controller
// then releases the claim's reservation and deallocates it as for any pod that
// goes away. Every DeviceTaintRule's status gets the EvictionInProgress
// condition (at most one update per rule per status period while nothing about
// the rule changes, as upstream paces it).
//
// Thread-safety: start()/stop() from one thread. One worker thread does every
// sync, so plan and evictions never race each other.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "controllers/device_taint_eviction_logic.h"
#include "controllers/informers.h"
#include "controllers/work_queue.h"

namespace draplane::controllers {

struct DeviceTaintOptions {
  // Shortest time between two status updates of one rule (upstream ruleStatusPeriod).
  std::chrono::milliseconds rule_status_period{10000};
  std::shared_ptr<spdlog::logger> logger;  // nullptr logs nothing
  // The process's shared informers; nullptr: the controller's own.
  Informers* informers = nullptr;
};

class DeviceTaintController {
 public:
  // `rest` must outlive the controller.
  DeviceTaintController(client::RestClient& rest, DeviceTaintOptions options);
  ~DeviceTaintController();

  void start();
  void stop();
  bool wait_synced(int timeout_ms);

  // Pods evicted because of rule `uid` since start.
  int64_t evicted_by_rule(const std::string& uid) const;

 private:
  template <class F>
  void for_each_informer(F f) {
    f(rules_);
    f(slices_);
    f(claims_);
    f(pods_);
  }
  void worker();
  void sync_plan();
  // Evicts the pod when its time has come; a positive delay: look again then.
  Result<std::chrono::milliseconds> evict(const std::string& pod_key);
  Result<std::chrono::milliseconds> sync_rule_status(const std::string& name);
  // False when the pod was gone or replaced (not evicted by us).
  Result<bool> delete_pod(const PodEviction& e);

  DeviceTaintOptions options_;
  client::RestClient& rest_;
  client::EventRecorder events_;
  InformersRef informers_;
  client::Informer<api::DeviceTaintRule>& rules_;
  client::Informer<api::ResourceSlice>& slices_;
  client::Informer<api::ResourceClaim>& claims_;
  client::Informer<api::Pod>& pods_;
  WorkQueue queue_;
  std::thread worker_;
  bool started_ = false;

  mutable std::mutex mu_;
  // Copies of what the informers hold, read by the plan under mu_ as one set:
  // pods that name claims, every claim, slice and rule, by key. (The typed
  // informers keep the same objects; a const visitor on Informer<T> would let
  // the plan read theirs instead.)
  std::map<std::string, api::Pod> pod_objs_;
  std::map<std::string, api::ResourceClaim> claim_objs_;
  std::map<std::string, api::ResourceSlice> slice_objs_;
  std::map<std::string, api::DeviceTaintRule> rule_objs_;
  std::optional<TaintInventory> inventory_;  // of slice_objs_ and rule_objs_; reset when they change
  std::map<std::string, PodEviction> planned_;  // pod key -> when and why
  std::map<std::string, int64_t> evicted_;      // rule UID -> pods evicted
  std::map<std::string, int> failures_;
};

}  // namespace draplane::controllers
