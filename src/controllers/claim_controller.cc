#include "controllers/claim_controller.h"


#include <algorithm>
#include <chrono>

#include "api/codec.h"
#include "api/pod_group_claims.h"
#include "api/workload.h"
#include "client/resource_path.h"
#include "controllers/claim_logic.h"
#include "controllers/device_taint_controller.h"
#include "controllers/deployment_controller.h"
#include "controllers/job_controller.h"
#include "controllers/replica_set_controller.h"

namespace draplane::controllers {
namespace {

constexpr const char* kPodPrefix = "pod:";
constexpr const char* kClaimPrefix = "claim:";
constexpr const char* kPodGroupPrefix = "podgroup:";
constexpr int kMaxReservedFor = 256;
// How long the claims a deleted pod owns wait for their own event (below).
constexpr std::chrono::milliseconds kOwnedClaimGrace{100};

using namespace client::resources;

client::Path pod_path(const std::string& ns, const std::string& name) { return kPods.ns(ns).name(name); }
client::Path claim_path(const std::string& ns, const std::string& name) { return kResourceClaims.ns(ns).name(name); }
std::string key_of(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }
std::pair<std::string, std::string> split_key(const std::string& key) {
  size_t s = key.find('/');
  return {key.substr(0, s), key.substr(s + 1)};
}

}  // namespace

ClaimController::ClaimController(client::RestClient& rest, ControllerOptions options)
    // kube-controller-manager's resource-claim controller records through
    // tools/record with source component "resource_claim".
    : QueueController(rest, {"resource_claim", "claim", options.workers, options.informers, std::move(options.logger)},
                      [this](const std::string& key) { return sync(key); }),
      pods_(informers_->pods()),
      claims_(informers_->claims()),
      templates_(informers_->claim_templates()),
      groups_(informers_->pod_groups()) {
  pods_.add_handler(
      [this](client::EventType t, const api::Pod*, const api::Pod& pod) {
        on_pod(pod, t == client::EventType::kDeleted);
      });
  claims_.add_handler(
      [this](client::EventType t, const api::ResourceClaim*, const api::ResourceClaim& claim) {
        on_claim(claim, t == client::EventType::kDeleted);
      });
  groups_.add_handler(
      [this](client::EventType t, const api::PodGroup*, const api::PodGroup& group) {
        on_pod_group(group, t == client::EventType::kDeleted);
      });
}

void ClaimController::on_pod(const api::Pod& pod, bool deleted) {
  const std::string key = key_of(pod.metadata);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (deleted) gone_pod_uids_.add(pod.metadata.uid);
    std::set<std::string> named;
    if (!deleted && !pod.spec.nodeName.empty() && !is_pod_done(pod)) {
      for (const auto& n : claim_names_of(pod)) named.insert(pod.metadata.namespace_ + "/" + n);
    }
    claims_named_by_pods_.set(key, named);
    std::set<std::string> group;
    if (const std::string* g = api::pod_group_name_of(pod); g && !deleted) {
      group.insert(pod.metadata.namespace_ + "/" + *g);
    }
    groups_of_pods_.set(key, group);
  }
  if (!deleted && !is_pod_done(pod) && pod.metadata.deletionTimestamp.empty() &&
      (!pod.spec.resourceClaims.empty())) {
    workers_.queue().add(kPodPrefix + key);
  }
  // A pod that ends or goes away releases its claims.
  bool ended = deleted || is_pod_done(pod) || !pod.metadata.deletionTimestamp.empty();
  if (!ended) return;
  std::set<std::string> claims, owned;
  for (const auto& n : claim_names_of(pod)) claims.insert(pod.metadata.namespace_ + "/" + n);
  {
    std::lock_guard<std::mutex> l(mu_);
    const auto& related = pod_uids_of_claims_.keys_of(pod.metadata.uid);
    claims.insert(related.begin(), related.end());
    if (deleted) owned = owners_of_claims_.keys_of(pod.metadata.uid);
    auto it = created_.lower_bound({pod.metadata.uid, ""});
    while (it != created_.end() && it->first.first == pod.metadata.uid) it = created_.erase(it);
  }
  for (const auto& c : claims) {
    // The garbage collector marks the claims a deleted pod owns for deletion
    // at once (draplane's API server in the DELETE itself): their own event
    // brings them here in that state. Synced at once from the cache instead,
    // their status write met a newer resourceVersion (409) for most pods. The
    // delayed add stands in where no such event comes.
    if (owned.count(c)) workers_.queue().add_after(kClaimPrefix + c, kOwnedClaimGrace);
    else workers_.queue().add(kClaimPrefix + c);
  }
}

void ClaimController::on_claim(const api::ResourceClaim& claim, bool deleted) {
  const std::string key = key_of(claim.metadata);
  std::set<std::string> uids;
  if (!deleted) {
    for (const auto& r : claim.status.reservedFor) uids.insert(r.uid);
    if (auto o = owning_pod(claim)) uids.insert(o->uid);
    if (auto o = api::owning_pod_group(claim)) uids.insert(o->uid);
  }
  std::set<std::string> owner;
  if (!deleted) {
    if (auto o = owning_pod(claim)) owner.insert(o->uid);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    pod_uids_of_claims_.set(key, uids);
    owners_of_claims_.set(key, owner);
    if (!deleted && claim.status.allocation) {
      for (const auto& p : claims_named_by_pods_.keys_of(key)) workers_.queue().add(kPodPrefix + p);
    }
  }
  if (!deleted) workers_.queue().add(kClaimPrefix + key);
}

Status ClaimController::sync(const std::string& key) {
  auto rest_of = [&](std::string_view prefix) { return key.substr(prefix.size()); };
  if (key.rfind(kPodPrefix, 0) == 0) return sync_pod(rest_of(kPodPrefix)).status();
  if (key.rfind(kPodGroupPrefix, 0) == 0) return sync_pod_group(rest_of(kPodGroupPrefix)).status();
  return sync_claim(rest_of(kClaimPrefix)).status();
}


Result<void> ClaimController::sync_claim(const std::string& key) {
  auto claim = claims_.get(key);
  if (!claim) return {};
  if (!claim->metadata.deletionTimestamp.empty()) {
    // Released by us while being deleted: nothing is left to do, whatever the
    // cache still shows (a write to it would only meet a 404).
    std::lock_guard<std::mutex> l(mu_);
    if (released_uids_.contains(claim->metadata.uid)) return {};
  }
  Status lookup_error;
  // On an error the object counts as existing, so nothing is dropped.
  auto pods = [&](const std::string& ns, const std::string& name, const std::string& uid) -> std::optional<api::Pod> {
    if (auto cached = pods_.get(ns + "/" + name)) return cached;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (gone_pod_uids_.contains(uid)) return std::nullopt;
    }
    auto p = lookup(pods_, pod_path(ns, name), ns + "/" + name);
    if (p.has_value()) return *p;
    lookup_error = p.error();
    return api::Pod{};
  };
  auto groups = [&](const std::string& ns, const std::string& name) -> std::optional<api::PodGroup> {
    auto g = lookup(groups_, kPodGroups.ns(ns).name(name), ns + "/" + name);
    if (g.has_value()) return *g;
    lookup_error = g.error();
    return api::PodGroup{};
  };
  auto decision = decide_claim(*claim, pods, groups);
  if (!lookup_error.ok()) return lookup_error;
  {
    // Deleted by us already: not again. The rest still applies: a claim read
    // from a cache that had not seen its finalizer yet was deleted with the
    // finalizer in place, and only its release lets the deletion finish.
    std::lock_guard<std::mutex> l(mu_);
    if (deleted_uids_.contains(claim->metadata.uid)) decision.delete_claim = false;
  }
  const auto& [ns, name] = split_key(key);
  api::ResourceClaim current = *claim;
  if (decision.update_status) {
    current.status = decision.status;
    // resourceVersion from the cache: the update fails if anything changed since.
    auto out = rest_.put(claim_path(ns, name).sub("status"), api::to_json(api::Object(current)));
    if (!out.has_value() && out.error().code() == Code::kNotFound) return {};  // gone meanwhile
    if (!out.has_value()) return out.error();
    ASSIGN_OR_RETURN(current, api::decode_as<api::ResourceClaim>(*out));
    logger_->debug("claim {}: reservedFor updated, dropped {}{}", key, decision.dropped.size(),
                           decision.status.allocation ? "" : ", deallocated");
  }
  if (decision.remove_finalizer) {
    auto& f = current.metadata.finalizers;
    f.erase(std::remove(f.begin(), f.end(), kDeleteProtectionFinalizer), f.end());
    auto out = rest_.put(claim_path(ns, name), api::to_json(api::Object(current)));
    if (!out.has_value() && out.error().code() != Code::kNotFound) return out.error();
    if (!current.metadata.deletionTimestamp.empty()) {
      std::lock_guard<std::mutex> l(mu_);
      released_uids_.add(claim->metadata.uid);
    }
  }
  if (decision.delete_claim) {
    std::string opts = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"" +
                       claim->metadata.uid + "\"}}";
    auto r = rest_.request("DELETE", claim_path(ns, name), opts);
    if (!r.has_value()) return r.error();
    if (r->status != 404 && (r->status < 200 || r->status >= 300)) return client::status_from_response(*r);
    {
      std::lock_guard<std::mutex> l(mu_);
      deleted_uids_.add(claim->metadata.uid);
    }
    logger_->info("deleted claim {}: its pod is done or gone", key);
  }
  return {};
}

Result<std::string> ClaimController::ensure_template_claim(const api::Pod& pod, const api::PodResourceClaim& pc) {
  const std::string& ns = pod.metadata.namespace_;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = created_.find({pod.metadata.uid, pc.name}); it != created_.end()) return it->second;
    // A claim we created earlier that the pod status does not show yet.
    for (const auto& ck : pod_uids_of_claims_.keys_of(pod.metadata.uid)) {
      auto c = claims_.get(ck);
      if (!c) continue;
      auto o = owning_pod(*c);
      auto a = c->metadata.annotations.find(kPodClaimNameAnnotation);
      if (o && o->uid == pod.metadata.uid && a != c->metadata.annotations.end() && a->second == pc.name) {
        return c->metadata.name;
      }
    }
  }
  std::optional<api::ResourceClaimTemplate> tmpl = templates_.get(ns + "/" + *pc.resourceClaimTemplateName);
  if (!tmpl) {
    auto body = rest_.get(kResourceClaimTemplates.ns(ns).name(*pc.resourceClaimTemplateName));
    if (!body.has_value()) {
      return Status(body.error().code(), "pod " + ns + "/" + pod.metadata.name + ": spec.resourceClaims[" + pc.name +
                                             "].resourceClaimTemplateName: resourceclaimtemplate \"" +
                                             *pc.resourceClaimTemplateName + "\": " + body.error().message());
    }
    ASSIGN_OR_RETURN(tmpl, api::decode_as<api::ResourceClaimTemplate>(*body));
  }
  api::ResourceClaim claim = claim_from_template(pod, pc, *tmpl);
  ASSIGN_OR_RETURN(std::string out, rest_.post(kResourceClaims.ns(ns),
                                               api::to_json(api::Object(claim))));
  ASSIGN_OR_RETURN(api::ResourceClaim created, api::decode_as<api::ResourceClaim>(out));
  logger_->info("created claim {}/{} for pod {} claim {}", ns, created.metadata.name, pod.metadata.name,
                        pc.name);
  std::lock_guard<std::mutex> l(mu_);
  created_[{pod.metadata.uid, pc.name}] = created.metadata.name;
  return created.metadata.name;
}

Result<void> ClaimController::record_claim_statuses(const api::Pod& pod, const std::map<std::string, std::string>& names) {
  const client::Path path = pod_path(pod.metadata.namespace_, pod.metadata.name);
  for (int attempt = 0; attempt < 8; ++attempt) {
    // First the informer's copy (its resourceVersion guards the update); after
    // a conflict, the server's.
    api::Pod cur;
    std::optional<api::Pod> cached = attempt == 0 ? pods_.get(pod.metadata.namespace_ + "/" + pod.metadata.name)
                                                  : std::nullopt;
    if (cached && !cached->metadata.resourceVersion.empty()) {
      cur = std::move(*cached);
    } else {
      ASSIGN_OR_RETURN(std::string body, rest_.get(path));
      ASSIGN_OR_RETURN(cur, api::decode_as<api::Pod>(body));
    }
    if (cur.metadata.uid != pod.metadata.uid) return {};  // replaced; the new pod gets its own sync
    bool changed = false;
    for (const auto& [claim, name] : names) {
      auto& st = cur.status.resourceClaimStatuses;
      auto it = std::find_if(st.begin(), st.end(), [&](const auto& s) { return s.name == claim; });
      if (it == st.end()) {
        st.push_back({claim, name});
        changed = true;
      }
    }
    if (!changed) return {};
    auto out = rest_.put(path.sub("status"), api::to_json(api::Object(cur)));
    // created_ keeps the names until the pod informer shows them (sync_pod):
    // dropping them here let a sync that read a lagging pod and claim cache
    // create a second claim for the same pod claim.
    if (out.has_value()) return {};
    if (out.error().code() != Code::kConflict) return out.error();
  }
  return conflict_error("pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                        ": status.resourceClaimStatuses: too many concurrent updates");
}

Result<void> ClaimController::reserve_for_pod(const api::Pod& pod, const std::string& claim_name,
                                              const api::ResourceClaimConsumerReference& consumer) {
  const std::string& ns = pod.metadata.namespace_;
  auto cached = claims_.get(ns + "/" + claim_name);
  if (!cached || !cached->status.allocation || api::reserved_for_pod_or_group(*cached, pod)) return {};
  ASSIGN_OR_RETURN(std::string body, rest_.get(claim_path(ns, claim_name)));
  ASSIGN_OR_RETURN(api::ResourceClaim claim, api::decode_as<api::ResourceClaim>(body));
  if (!claim.status.allocation || api::reserved_for_pod_or_group(claim, pod) ||
      !claim.metadata.deletionTimestamp.empty() ||
      claim.status.reservedFor.size() >= static_cast<size_t>(kMaxReservedFor)) {
    return {};
  }
  claim.status.reservedFor.push_back(consumer);
  auto out = rest_.put(claim_path(ns, claim_name).sub("status"), api::to_json(api::Object(claim)));
  return out.has_value() ? Status() : out.error();
}

Result<void> ClaimController::sync_pod(const std::string& key) {
  auto pod = pods_.get(key);
  if (!pod || is_pod_done(*pod) || !pod->metadata.deletionTimestamp.empty()) return {};
  // A member of a PodGroup: which of its entries are the group's (KEP-5729)
  // is known only once the group is.
  std::optional<api::PodGroup> group;
  if (const std::string* g = api::pod_group_name_of(*pod); g && !pod->spec.resourceClaims.empty()) {
    group = groups_.get(pod->metadata.namespace_ + "/" + *g);
    if (!group) {
      return Status(Code::kNotFound, "get PodGroup for Pod " + key + ": podgroup.scheduling.k8s.io \"" + *g +
                                         "\" not found (spec.schedulingGroup.podGroupName)");
    }
  }
  std::map<std::string, std::string> recorded;
  Status first_error;
  for (const auto& pc : pod->spec.resourceClaims) {
    std::optional<std::string> name = claim_name_for(*pod, pc);
    const api::PodGroupResourceClaim* gc = api::group_claim_for(*pod, group ? &*group : nullptr, pc);
    const api::ResourceClaimConsumerReference consumer =
        gc ? api::pod_group_consumer(*group)
           : api::ResourceClaimConsumerReference{"", "pods", pod->metadata.name, pod->metadata.uid};
    if (!name && gc && gc->resourceClaimTemplateName) {
      // The group's claim: its sync creates it; the group's status naming it
      // brings this pod back (on_pod_group).
      ASSIGN_OR_RETURN(auto made, group_claim_name(*group, *gc, /*verify=*/false));
      if (!made) continue;
      recorded[pc.name] = *made;
      name = *made;
    } else if (!name && pc.resourceClaimTemplateName) {
      auto created = ensure_template_claim(*pod, pc);
      if (!created.has_value()) {
        client::ObjectReference ref{"v1", "Pod", pod->metadata.namespace_, pod->metadata.name, pod->metadata.uid, "", ""};
        events_.record(ref, "Warning", "FailedResourceClaimCreation", "",
                       "PodResourceClaim " + pc.name + ": " + created.error().message());
        if (first_error.ok()) first_error = created.error();
        continue;
      }
      recorded[pc.name] = *created;
      name = *created;
    }
    if (name && !pod->spec.nodeName.empty()) {
      Status st = reserve_for_pod(*pod, *name, consumer).status();
      if (!st.ok() && first_error.ok()) first_error = st;
    }
  }
  if (!recorded.empty()) {
    RETURN_IF_ERROR(record_claim_statuses(*pod, recorded));
  }
  return first_error;
}

Status run_controllers(client::RestClient& rest, const ControllerOptions& options, const std::atomic<bool>& stop) {
  // One informer per collection for all of them (kube-controller-manager's
  // shared informer factory): pods are watched by four controllers, claims
  // by two. Declared first, so it outlives the controllers its handlers call.
  Informers informers(rest);
  ControllerOptions shared = options;
  shared.informers = &informers;
  DeviceTaintOptions taint_options;
  taint_options.logger = options.logger;
  taint_options.informers = &informers;
  // The taint controller asks for the inventory first: it starts first.
  DeviceTaintController taints(rest, taint_options);
  ClaimController controller(rest, shared);
  JobControllerOptions job_options;
  job_options.logger = options.logger;
  job_options.informers = &informers;
  JobController jobs(rest, job_options);
  ReplicaSetController replica_sets(rest, shared);
  DeploymentController deployments(rest, shared);
  informers.start();
  controller.start();
  taints.start();
  jobs.start();
  replica_sets.start();
  deployments.start();
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  deployments.stop();
  replica_sets.stop();
  jobs.stop();
  taints.stop();
  controller.stop();
  // No handler runs after this: the controllers may go.
  informers.stop();
  return {};
}

}  // namespace draplane::controllers
