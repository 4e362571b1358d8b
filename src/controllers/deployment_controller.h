// DeploymentController: kube-controller-manager's Deployment controller
// (pkg/controller/deployment) over the Kubernetes REST API.
//
// It watches Deployments and ReplicaSets (informers) and, for each Deployment:
// - adopts the orphan ReplicaSets its selector matches and releases those it
//   controls that no longer match;
// - finds the new ReplicaSet (its template equals the Deployment's but for the
//   pod-template-hash label) or creates it ("<name>-<hash>", revision
//   max(old)+1 in deployment.kubernetes.io/revision, the Deployment's own
//   annotations such as kubernetes.io/change-cause copied), and mirrors its
//   revision on the Deployment;
// - rolls out: RollingUpdate scales the new ReplicaSet up within
//   replicas+maxSurge and the old ones down keeping replicas-maxUnavailable
//   available (unhealthy old replicas first); Recreate scales the old ones to
//   0, waits until their pods are gone, then scales the new one up;
// - a resize (spec.replicas, /scale) while several ReplicaSets are active is
//   spread proportionally; a paused Deployment is only resized;
// - deletes old ReplicaSets beyond revisionHistoryLimit that have no pods;
// - writes status: replicas, updatedReplicas, readyReplicas,
//   availableReplicas, unavailableReplicas, observedGeneration, the
//   Available and Progressing conditions with upstream's reasons
//   (deployment_logic.h), checking progressDeadlineSeconds again when due.
// `kubectl rollout undo` works client-side (it copies an old ReplicaSet's
// template into the Deployment); the controller then finds that ReplicaSet
// as the new one and raises its revision (keeping the old in
// deployment.kubernetes.io/revision-history).
// Unlike upstream, Recreate waits on the old ReplicaSets' status.replicas
// rather than on a pod informer: draplane deletes pods at once (no graceful
// termination), so a pod that is gone from the count is gone from the node.
// Events as upstream's (component deployment-controller): ScalingReplicaSet.
//
// Thread-safety: start()/stop() from one thread; sync() from any thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
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

class DeploymentController : public QueueController {
 public:
  DeploymentController(client::RestClient& rest, ControllerOptions options);
  ~DeploymentController() { stop(); }

  // One reconciliation of the Deployment "namespace/name"; an error means
  // "retry later".
  Result<void> sync(const std::string& key);

 private:
  // The Deployment's ReplicaSets (`list`, oldest first) split into the new
  // one (an index, or -1) and the old ones.
  struct Split {
    int new_rs = -1;
    std::vector<int> old;
  };
  // One sync's view: the Deployment as last written and its ReplicaSets.
  struct State {
    api::Deployment d;
    std::vector<api::ReplicaSet> list;
  };

  void on_replica_set(const api::ReplicaSet* old_rs, const api::ReplicaSet& rs, bool deleted);
  Result<std::vector<api::ReplicaSet>> claim_replica_sets(const api::Deployment& d);
  Result<Split> get_all(State& s, bool create);
  Result<int> create_new(State& s, const Split& split, int64_t revision);
  Result<void> write_deployment(State& s, bool status);
  Result<bool> scale(State& s, int index, int32_t replicas, bool always_annotate);
  Result<void> scale_proportionally(State& s, const Split& split);
  Result<void> rollout_rolling(State& s);
  Result<void> rollout_recreate(State& s);
  Result<bool> reconcile_old(State& s, const Split& split);
  Result<void> cleanup(State& s, const Split& split);
  Result<void> sync_status(State& s, const Split& split, bool rollout);
  Result<void> check_paused_condition(State& s);
  std::vector<const api::ReplicaSet*> all_of(const State& s, const Split& split) const;

  client::Informer<api::Deployment>& deployments_;
  client::Informer<api::ReplicaSet>& sets_;
};

}  // namespace draplane::controllers
