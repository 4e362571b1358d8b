// ReplicaSetController: kube-controller-manager's ReplicaSet controller
// (pkg/controller/replicaset) over the Kubernetes REST API.
//
// It watches ReplicaSets and pods (informers) and, for each ReplicaSet:
// - adopts the orphan pods its selector matches and releases the pods it
//   controls that the selector no longer matches (ownerReferences, PUT with
//   the cached resourceVersion);
// - creates pods from the template (replica_set_logic.h: pod_from_template)
//   in slow-start batches of 1, 2, 4, ... or deletes the surplus in upstream's
//   order (pods_to_delete), at most kBurstReplicas a sync;
// - writes status (replicas, fullyLabeledReplicas, readyReplicas,
//   availableReplicas, observedGeneration, ReplicaFailure) through /status,
//   and syncs again when a ready pod reaches minReadySeconds.
// The informers may lag behind the controller's own writes; like upstream's
// expectations, the pods it created that the cache does not show yet count as
// present and those it deleted that the cache still shows count as gone (for
// at most kExpectationTtl). Pod claims from templates are left to the
// resource-claim controller, as upstream.
// Events as upstream's (component replicaset-controller): SuccessfulCreate,
// SuccessfulDelete, FailedCreate.
//
// Thread-safety: start()/stop() from one thread; sync() from any thread.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "controllers/claim_controller.h"
#include "controllers/informers.h"
#include "controllers/queue_controller.h"

namespace draplane::controllers {

class ReplicaSetController : public QueueController {
 public:
  ReplicaSetController(client::RestClient& rest, ControllerOptions options);
  ~ReplicaSetController() { stop(); }

  // One reconciliation of the ReplicaSet "namespace/name"; an error means
  // "retry later".
  Result<void> sync(const std::string& key);

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kExpectationTtl{30};
  struct Expectations {
    std::map<std::string, Clock::time_point> creates;  // pod uid -> when created
    std::map<std::string, Clock::time_point> deletes;  // pod uid -> when deleted
  };

  void on_pod(const api::Pod* old_pod, const api::Pod& pod, bool deleted);
  void enqueue_matching(const api::Pod& pod);
  // The active pods `rs` controls after adopting and releasing.
  Result<std::vector<api::Pod>> claim_pods(const api::ReplicaSet& rs, const std::vector<api::Pod>& all);
  Result<void> set_owner(const api::Pod& pod, const std::optional<api::OwnerReference>& ref,
                         const std::string& remove_uid);
  Status manage(const api::ReplicaSet& rs, const std::vector<api::Pod>& controlled, const std::vector<api::Pod>& all,
                int pending_creates);
  Result<void> write_status(const api::ReplicaSet& rs, const api::ReplicaSetStatus& st);

  client::Informer<api::ReplicaSet>& sets_;
  client::Informer<api::Pod>& pods_;

  std::mutex mu_;
  std::map<std::string, Expectations> expect_;  // RS key -> its writes the cache may not show yet
};

}  // namespace draplane::controllers
