// ClaimController: the resource-claim controller of kube-controller-manager
// (pkg/controller/resourceclaim), over the Kubernetes REST API.
//
// It watches pods, ResourceClaims and ResourceClaimTemplates (informers) and
// keeps them consistent:
// - for every pod claim that names a ResourceClaimTemplate it creates one
//   ResourceClaim (claim_logic.h: claim_from_template; the API server completes
//   generateName) and records it in pod.status.resourceClaimStatuses (PUT
//   pods/<name>/status, read-modify-write);
// - a pod bound to a node without the scheduler (spec.nodeName set by the user)
//   gets its allocated claims reserved for it;
// - for every claim it drops stale status.reservedFor entries, deallocates a
//   claim nothing reserves and removes the delete-protection finalizer, and
//   deletes generated claims whose pod is done or gone (claim_logic.h:
//   decide_claim).
// - PodGroups (KEP-5729, api/pod_group_claims.h): a claim per template entry
//   of spec.resourceClaims, controlled by the group and recorded in the
//   group's status.resourceClaimStatuses; a member pod whose entry equals the
//   group's gets that claim's name in its own status.resourceClaimStatuses
//   (so the kubelet needs no PodGroup), and a reservation for a group is kept
//   until the group is gone.
// Failed syncs are retried with exponential backoff (5 ms .. 10 s). A claim
// that cannot be created from its template is reported on the pod as a
// FailedResourceClaimCreation Warning event, as upstream's controller does.
//
// Thread-safety: start()/stop() from one thread; sync_* may be called from any
// thread (the workers call them).
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "api/codec.h"
#include "client/event_recorder.h"
#include "client/get_optional.h"
#include "client/informer.h"
#include "client/resource_path.h"
#include "client/rest_client.h"
#include "common/result.h"
#include "common/reverse_index.h"
#include "common/uid_memo.h"
#include "controllers/informers.h"
#include "controllers/queue_controller.h"

namespace draplane::controllers {

struct ControllerOptions {
  int workers = 8;  // 0: none (tests call the sync functions themselves)
  // The process's shared informers, started and stopped by their owner;
  // nullptr: the controller's own, started and stopped with it.
  Informers* informers = nullptr;
  // Logger; nullptr logs nothing.
  std::shared_ptr<spdlog::logger> logger;
};

class ClaimController : public QueueController {
 public:
  // `rest` must outlive the controller.
  ClaimController(client::RestClient& rest, ControllerOptions options);
  ~ClaimController() { stop(); }

  // One reconciliation of the pod / claim with this "namespace/name" key.
  // OK when done (also when the object is gone); an error means "retry later".
  Result<void> sync_pod(const std::string& key);
  Result<void> sync_claim(const std::string& key);
  Result<void> sync_pod_group(const std::string& key);

 private:
  // The work queue's keys: "pod:NS/NAME", "claim:NS/NAME" or "podgroup:NS/NAME".
  Status sync(const std::string& key);
  void on_pod(const api::Pod& pod, bool deleted);
  void on_claim(const api::ResourceClaim& claim, bool deleted);
  void on_pod_group(const api::PodGroup& group, bool deleted);
  // The claim made for `gc` of `group`: its status entry, one this controller
  // created, or one controlled by the group with the entry's annotation; with
  // `verify`, a status entry counts only for a claim that exists (cache, else
  // the server) controlled by the group.
  Result<std::optional<std::string>> group_claim_name(const api::PodGroup& group, const api::PodGroupResourceClaim& gc,
                                                      bool verify);
  Result<std::string> ensure_group_template_claim(const api::PodGroup& group, const api::PodGroupResourceClaim& gc);
  Result<void> record_group_claim_statuses(const api::PodGroup& group, const std::map<std::string, std::string>& names);
  // The object from the informer's cache, else (not there yet) from the
  // server, as upstream asks before dropping a reservation on the cache's
  // word; nullopt when the server has none.
  template <class T>
  Result<std::optional<T>> lookup(client::Informer<T>& cache, const client::Path& path, const std::string& key) {
    if (auto o = cache.get(key)) return std::optional<T>(std::move(*o));
    return client::get_optional<T>(rest_, path);
  }
  Result<std::string> ensure_template_claim(const api::Pod& pod, const api::PodResourceClaim& pc);
  Result<void> record_claim_statuses(const api::Pod& pod, const std::map<std::string, std::string>& names);
  // Reserves an allocated claim for `consumer` (the pod, or its PodGroup).
  Result<void> reserve_for_pod(const api::Pod& pod, const std::string& claim_name,
                               const api::ResourceClaimConsumerReference& consumer);

  client::Informer<api::Pod>& pods_;
  client::Informer<api::ResourceClaim>& claims_;
  client::Informer<api::ResourceClaimTemplate>& templates_;
  client::Informer<api::PodGroup>& groups_;

  std::mutex mu_;
  // Claim key -> the UIDs of the pods and PodGroups that own it or that it
  // reserves; and back, the claims of such a UID.
  common::ReverseIndex<std::string, std::string> pod_uids_of_claims_;
  // Claim key -> the UID of the pod that controls it (ownerReference); and
  // back, the claims a pod owns.
  common::ReverseIndex<std::string, std::string> owners_of_claims_;
  // Pod key -> keys of the claims it names; and back, the pods that name a
  // claim (a bound pod waits for its claim to appear in the cache before it is
  // reserved). Events need not decode the previous pod to unindex it.
  common::ReverseIndex<std::string, std::string> claims_named_by_pods_;
  // (pod UID, pod claim name) -> created claim name, kept while the pod runs:
  // the informers may lag behind our own writes, even after the status write
  // succeeded, and a sync that read a lagging pod must find the name here even
  // when another sync has already seen the caught-up pod. Dropped when the pod
  // ends or goes away, so it holds one entry per live pod claim at most.
  std::map<std::pair<std::string, std::string>, std::string> created_;
  // The same for PodGroups: (group UID, group claim name) -> claim name, until
  // the group goes away.
  std::map<std::pair<std::string, std::string>, std::string> group_created_;
  // Pod key -> "NS/NAME" of the PodGroup it names; and back, a group's members
  // (a group's status naming its claims brings them back).
  common::ReverseIndex<std::string, std::string> groups_of_pods_;
  // UIDs of claims this controller deleted: the cache may still show them, and
  // deleting them again would only draw a 404 (their reservations and
  // finalizer are still released: a delete that met the finalizer only marked
  // the claim). Entries outlive the claim's
  // delete event on purpose: a sync that read the claim from the cache just
  // before that event must still see it deleted. The newest 4096 are kept.
  common::UidMemo deleted_uids_{4096};
  // UIDs of pods the informer reported deleted: a claim still reserved for
  // one, or owned by one, needs no GET to learn that the pod is gone (upstream
  // asks the server about a pod its cache lacks; that was four 404s a pod).
  common::UidMemo gone_pod_uids_{4096};
  // UIDs of claims being deleted whose reservations and finalizer this
  // controller released: the server deletes them; later syncs from a cache
  // that still shows them have nothing to do.
  common::UidMemo released_uids_{4096};
};

// Runs the controllers (this one, the device taint eviction controller,
// device_taint_controller.h, the Job controller, job_controller.h, and the
// ReplicaSet and Deployment controllers) until `stop` becomes true (for `draplane controllers`
// and in-process use by `draplane up`). Returns OK after a clean stop.
Status run_controllers(client::RestClient& rest, const ControllerOptions& options, const std::atomic<bool>& stop);

}  // namespace draplane::controllers
