#include "sched/plugins/preemption.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.h"
#include "common/rfc3339.h"
#include "sched/binder.h"
#include "sched/cluster_cache.h"
#include "sched/gang.h"
#include "sched/pod_claims.h"
#include "sched/plugins/queues.h"
#include "sched/preemption.h"
#include "sched/scheduler.h"

namespace draplane::sched::plugins {
namespace {

using framework::Status;

// The gang a victim belongs to ("" when none). Members of a PodGroup whose
// policy is basic are scheduled one by one and are victims one by one too;
// so are those of a PodGroup that is gone.
std::string gang_key(const api::Pod& pod, const ClusterCache& cache) {
  auto g = gang_of(pod);
  if (!g) return std::string();
  std::string key = pod.metadata.namespace_ + "/" + g->name;
  if (g->pod_group) {
    const api::PodGroup* group = cache.pod_group(key);
    if (group == nullptr || !gang_of_group(*group)) return std::string();
  }
  return key;
}

// Claim keys a pod uses: named claims, claims generated from templates (as its
// status records them) and its extended-resource claim.
std::vector<std::string> claim_keys(const api::Pod& pod) {
  std::vector<std::string> out;
  const std::string& ns = pod.metadata.namespace_;
  for (const auto& rc : pod.spec.resourceClaims) {
    if (rc.resourceClaimName && !rc.resourceClaimName->empty()) out.push_back(ns + "/" + *rc.resourceClaimName);
  }
  for (const auto& s : pod.status.resourceClaimStatuses) {
    if (s.resourceClaimName) out.push_back(ns + "/" + *s.resourceClaimName);
  }
  if (pod.status.extendedResourceClaimStatus) {
    out.push_back(ns + "/" + pod.status.extendedResourceClaimStatus->resourceClaimName);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The cache with some bound pods taken out, until destroyed: the pods are
// removed (slots, extended resources) and the claims no remaining pod uses are
// deallocated (their devices, counters and shares free). Restores exactly what
// was there, assumptions included. set() changes which pods are out, touching
// only the difference: the victim search's reprieve loop moves one pod at a
// time, and taking all of a node's pods out and back for each step was most of
// the search.
// The KAI queues (when given) count the pods as the cache has them after
// every change.
class WhatIf final : public DefaultPreemption::Removal {
 public:
  WhatIf(ClusterCache& cache, KaiQueues* queues) : cache_(cache), queues_(queues) {}
  ~WhatIf() override { set({}); }
  WhatIf(const WhatIf&) = delete;
  WhatIf& operator=(const WhatIf&) = delete;

  // Makes exactly the pods `keys` the ones taken out.
  void set(const std::vector<std::string>& keys) {
    // For the queues: the pods moved, and the other pods of their claims (a
    // claim's freed state or its division among its pods changes).
    std::vector<std::string> touched;
    std::set<std::string> moved_claims;
    std::set<std::string> want;
    for (const auto& key : keys) {
      if (pods_.count(key) || cache_.pod(key) != nullptr) want.insert(key);
    }
    // Pods back first, then their claims (as they were taken: claims, then pods).
    for (auto it = pods_.begin(); it != pods_.end();) {
      if (want.count(it->first)) {
        ++it;
        continue;
      }
      cache_.upsert_pod(std::move(it->second.pod));
      if (!it->second.assumed_node.empty()) cache_.assume_bound(it->first, it->second.assumed_node);
      touched.push_back(it->first);
      moved_claims.insert(it->second.claims.begin(), it->second.claims.end());
      it = pods_.erase(it);
    }
    std::vector<std::string> taking;
    for (const auto& key : want) {
      if (pods_.count(key)) continue;
      const api::Pod* p = cache_.pod(key);
      // The pod itself moves here when it is taken out (below).
      pods_.emplace(key, Saved{api::Pod{}, p->spec.nodeName.empty() ? cache_.bound_node(key) : std::string(),
                               p->metadata.uid, claim_keys(*p)});
      taking.push_back(key);
      touched.push_back(key);
      const auto& taken_claims = pods_.at(key).claims;
      moved_claims.insert(taken_claims.begin(), taken_claims.end());
    }
    std::set<std::string> gone_uids;
    std::set<std::string> claims;
    for (const auto& [key, saved] : pods_) {
      gone_uids.insert(saved.uid);
      claims.insert(saved.claims.begin(), saved.claims.end());
    }
    for (const auto& [k, saved] : freed_) claims.insert(k);
    for (const auto& k : claims) {
      auto was = freed_.find(k);
      const api::ResourceClaim* c = was != freed_.end() ? &was->second.claim : cache_.claim(k);
      // Shared with a pod that stays, or reserved for a PodGroup (KEP-5729:
      // held for the group, not its members, until the group goes): the
      // devices stay in use.
      const bool free = c != nullptr && c->status.allocation &&
                        std::all_of(c->status.reservedFor.begin(), c->status.reservedFor.end(), [&](const auto& r) {
                          return r.apiGroup.empty() && r.resource == "pods" && gone_uids.count(r.uid);
                        });
      if (free && was == freed_.end()) {
        SavedClaim saved{*c, c != cache_.observed_claim(k)};
        api::ResourceClaim freed = *c;
        freed.status.allocation.reset();
        freed.status.reservedFor.clear();
        freed.metadata.resourceVersion.clear();
        freed_.emplace(k, std::move(saved));
        cache_.assume_claim(std::move(freed));
      } else if (!free && was != freed_.end()) {
        if (was->second.assumed) cache_.assume_claim(std::move(was->second.claim));
        else cache_.forget_claim(k);
        freed_.erase(was);
      }
    }
    for (const auto& key : taking) {
      if (auto pod = cache_.take_pod(key)) pods_.at(key).pod = std::move(*pod);
    }
    if (queues_ == nullptr) return;
    for (const auto& k : moved_claims) {
      if (const auto* naming = cache_.pods_naming_claim(k)) touched.insert(touched.end(), naming->begin(), naming->end());
    }
    queues_->changed(touched);
  }

 private:
  struct Saved {
    api::Pod pod;
    std::string assumed_node;  // bound only in the cache's assumption
    std::string uid;
    std::vector<std::string> claims;  // claim_keys of the pod
  };
  struct SavedClaim {
    api::ResourceClaim claim;
    bool assumed = false;
  };
  ClusterCache& cache_;
  KaiQueues* queues_;
  std::map<std::string, Saved> pods_;        // by key
  std::map<std::string, SavedClaim> freed_;  // by claim key: as they were
};

// What the what-if checks on `node` read of its potential victims (units in
// order, their pods on the node), up to the node's and devices' names: each
// pod's CPU and memory requests, queue and whether it is leaving, and where in the node's view the
// devices of its claims are, with what they consume. With the node's group
// (equal node inputs, devices equal up to names and in the same state), equal
// shapes make the nodes answer every check alike. Nullopt when a claim is
// used by more than the pod (freeing it depends on who else goes) or holds a
// device the node does not see.
std::optional<std::string> victims_shape(ClusterCache& cache, const std::string& node, uint64_t group,
                                         const std::vector<std::vector<const preemption::PodInfo*>>& units) {
  std::string out;
  auto add = [&out](int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto add_text = [&](const std::string& t) {
    add(static_cast<int64_t>(t.size()));
    out += t;
  };
  add(static_cast<int64_t>(group));
  const alloc::NodeView* view = nullptr;
  // The device's place in the node's view (a node has a few devices: a scan).
  auto place = [&](const api::DeviceRequestAllocationResult& r) -> std::optional<int64_t> {
    if (view == nullptr) {
      auto v = cache.node_view(node);
      if (!v.has_value()) return std::nullopt;
      view = *v;
    }
    auto key = view->snapshot().find_key(r.driver, r.pool, r.device);
    if (!key) return std::nullopt;
    const auto& devices = view->snapshot().devices();
    const auto& candidates = view->candidates();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (devices[candidates[i].device].key == *key) return static_cast<int64_t>(i);
    }
    return std::nullopt;
  };
  for (const auto& unit : units) {
    add(static_cast<int64_t>(unit.size()));
    for (const preemption::PodInfo* info : unit) {
      const api::Pod* pod = cache.pod(info->key);
      if (pod == nullptr) return std::nullopt;
      ClusterCache::Requests r = pod_requests(*pod);
      add(r.cpu_milli);
      add(r.memory);
      add_text(queue_of(*pod));
      add(info->terminating ? 1 : 0);  // the queues count a leaving pod's devices as given back
      for (const auto& k : claim_keys(*pod)) {
        const api::ResourceClaim* c = cache.claim(k);
        if (c == nullptr || !c->status.allocation) {
          add(-1);
          continue;
        }
        const auto& by = c->status.reservedFor;
        if (by.size() != 1 || !by[0].apiGroup.empty() || by[0].resource != "pods" || by[0].uid != pod->metadata.uid) {
          return std::nullopt;
        }
        add(static_cast<int64_t>(c->status.allocation->devices.results.size()));
        for (const auto& result : c->status.allocation->devices.results) {
          auto at = place(result);
          if (!at) return std::nullopt;
          add(*at);
          add(result.adminAccess.value_or(false) ? 1 : 0);
          add(result.shareID ? 1 : 0);
          for (const auto& [name, q] : result.consumedCapacity) {
            add_text(name);
            add_text(q.to_string());
          }
          add(-2);
        }
      }
      add(-3);
    }
  }
  return out;
}

// `now`: the start of a pod that has not started (assumed or just bound), as
// upstream's GetPodStartTime says: the newest, so the first to go among equals.
preemption::PodInfo pod_info(const std::string& key, const std::string& node, const api::Pod& p, int64_t now,
                             const ClusterCache& cache) {
  preemption::PodInfo info;
  info.key = key;
  info.node = node;
  info.priority = p.spec.priority.value_or(0);
  info.start_time = common::parse_rfc3339(p.status.startTime).value_or(now);
  info.gang = gang_key(p, cache);
  info.terminating = !p.metadata.deletionTimestamp.empty();
  return info;
}

// The cache's bound pods as the victim search asks for them, read with no
// what-if applied (`restore` first).
class CachePods final : public preemption::PodSource {
 public:
  CachePods(const ClusterCache& cache, int64_t now, std::function<void()> restore)
      : cache_(cache), now_(now), restore_(std::move(restore)) {}

  std::vector<preemption::PodInfo> on_node(const std::string& node) override {
    restore_();
    std::vector<preemption::PodInfo> out;
    if (const ClusterCache::PodsByKey* pods = cache_.pods_bound_to(node)) {
      out.reserve(pods->size());
      for (const auto& [key, p] : *pods) {
        if (p != nullptr && pod_is_active(*p)) out.push_back(pod_info(key, node, *p, now_, cache_));
      }
    }
    return out;
  }

  std::vector<preemption::PodInfo> in_gang(const std::string& gang) override {
    restore_();
    std::vector<preemption::PodInfo> out;
    if (const ClusterCache::PodsByKey* pods = cache_.pods_in_gang(gang)) {
      for (const auto& [key, p] : *pods) {
        if (!pod_is_active(*p)) continue;
        std::string node = p->spec.nodeName.empty() ? cache_.bound_node(key) : p->spec.nodeName;
        if (node.empty()) continue;
        preemption::PodInfo info = pod_info(key, node, *p, now_, cache_);
        if (info.gang == gang) out.push_back(std::move(info));
      }
    }
    return out;
  }

 private:
  const ClusterCache& cache_;
  int64_t now_;
  std::function<void()> restore_;
};

// upstream's condition on a victim (reason PreemptionByScheduler); the message
// names the preemptor too (docs/compat.md).
void add_disruption_target(api::Pod& p, const std::string& message, const std::string& now) {
  auto it = std::find_if(p.status.conditions.begin(), p.status.conditions.end(),
                         [](const api::PodCondition& c) { return c.type == "DisruptionTarget"; });
  if (it == p.status.conditions.end()) {
    it = p.status.conditions.insert(p.status.conditions.end(), api::PodCondition{"DisruptionTarget", "", "", "", "", ""});
  }
  if (it->status != "True") it->lastTransitionTime = now;
  it->status = "True";
  it->reason = kPreemptionByScheduler;
  it->message = message;
}

}  // namespace

void DefaultPreemption::track(const std::string& key, const api::Pod* pending_pod) {
  if (pending_pod == nullptr) awaiting_release_.erase(key);
  if (pending_pod == nullptr || pending_pod->status.nominatedNodeName.empty()) {
    nominations_.erase(key);
    return;
  }
  nominations_[key] = Nomination{pending_pod->status.nominatedNodeName, pending_pod->spec.priority.value_or(0)};
}

DefaultPreemption::Hold::~Hold() {
  ClusterCache& cache = *fw_.handle().cache;
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    fw_.run_unreserve((*it)->cs, (*it)->fit, (*it)->r);
    cache.forget_bound((*it)->cs.pod_key);
  }
}

std::unique_ptr<DefaultPreemption::Hold> DefaultPreemption::hold_nominated(const std::string& pod_key,
                                                                           int32_t priority) {
  if (nominations_.empty()) return nullptr;
  ClusterCache& cache = *fw_.handle().cache;
  std::unique_ptr<Hold> hold;
  std::vector<std::string> own_claims;
  if (const api::Pod* self = cache.pod(pod_key)) own_claims = claim_keys(*self);
  // A held pod's Reserve assumes its claims and ~Hold forgets them. A claim
  // already assumed (another pod's binding in flight, a what-if) or one the
  // pod being scheduled uses too would lose that other assumption when the
  // hold ends, and its devices would look free: such a pod is not held.
  auto touches_shared_state = [&](const api::Pod& p) {
    for (const auto& k : claim_keys(p)) {
      if (std::binary_search(own_claims.begin(), own_claims.end(), k)) return true;
      if (const api::ResourceClaim* c = cache.claim(k); c != nullptr && c != cache.observed_claim(k)) return true;
    }
    return false;
  };
  for (const auto& [key, nom] : nominations_) {
    if (key == pod_key || nom.priority < priority) continue;
    const api::Pod* p = cache.pod(key);
    const api::Node* node = cache.node(nom.node);
    if (p == nullptr || node == nullptr || !cache.bound_node(key).empty()) continue;
    if (touches_shared_state(*p)) continue;
    auto h = std::make_unique<Hold::Held>();
    h->cs.pod_key = key;
    h->cs.pod = *p;
    h->fit.node = nom.node;
    if (!fw_.run_pre_filter(h->cs).ok()) continue;
    // Not (yet) fitting there: its victims are still going; nothing to hold.
    if (!fw_.run_filter(h->cs, framework::NodeInfo{node, cache.pods_on_node(nom.node)}, h->fit).ok()) continue;
    if (!fw_.run_reserve(h->cs, h->fit, h->r).ok()) continue;
    cache.assume_bound(key, nom.node);
    if (!hold) hold.reset(new Hold(fw_));
    hold->held_.push_back(std::move(h));
  }
  return hold;
}

framework::PostFilterResult DefaultPreemption::post_filter(framework::CycleState& state,
                                                           const framework::NodeStatusMap& statuses) {
  ClusterCache& cache = *fw_.handle().cache;
  if (auto it = awaiting_release_.find(state.pod_key); it != awaiting_release_.end()) {
    for (const auto& [key, uid] : it->second) {
      const api::ResourceClaim* c = cache.claim(key);
      if (c != nullptr && c->metadata.uid == uid && c->status.allocation) {
        return {Status::unschedulable("waiting for the claims of its preemption victims to be released"), ""};
      }
    }
    awaiting_release_.erase(it);
  }
  auto found = search(state, statuses);
  if (!found) return {Status(framework::Code::kError, found.error().message()), ""};
  if (found->outcome != preemption::Outcome::kNominated) return {Status::unschedulable(found->message), ""};
  std::vector<std::string> victims;
  for (const auto& v : found->victims.pods) victims.push_back(v.key);
  evict(state, found->victims.node, victims);
  return {Status(), found->victims.node};
}

Result<preemption::PostFilterResult> DefaultPreemption::search(framework::CycleState& state,
                                                               const framework::NodeStatusMap& statuses) {
  const framework::Handle& h = fw_.handle();
  common::ScopedSeconds timer(h.stats != nullptr ? &h.stats->preemption_seconds : nullptr);
  ClusterCache& cache = *h.cache;
  const api::Pod& pod = state.pod;
  preemption::Preemptor pr{state.pod_key, pod.spec.priority.value_or(0), pod.spec.preemptionPolicy.value_or(""),
                           pod.status.nominatedNodeName, nullptr, nullptr, nullptr};
  // KAI queues: a pod below its queue's share may take from queues over theirs.
  KaiQueues* queues = fw_.plugin<KaiQueues>();
  if (queues != nullptr && queues->empty()) queues = nullptr;
  // One what-if per node examined, changed step by step (WhatIf::set); the
  // cache as it is whenever anything else is asked of it.
  std::unique_ptr<WhatIf> what_if;
  std::string what_if_node;
  auto restore = [&] { what_if.reset(); };
  if (queues != nullptr) {
    // Asked for every pod on every candidate node: answered once per pod.
    auto memo = std::make_shared<std::map<std::string, bool>>();
    pr.reclaimable = [queues, &cache, &pod, memo, &restore](const preemption::PodInfo& v) {
      auto [it, fresh] = memo->emplace(v.key, false);
      if (fresh) {
        restore();
        const api::Pod* victim = cache.pod(v.key);
        it->second = victim != nullptr && queues->may_reclaim(pod, *victim);
      }
      return it->second;
    };
    // Those taken by reclaim alone (not of lower priority), together.
    pr.victims_allowed = [queues, &cache, &pod, &restore,
                          priority = pr.priority](const std::vector<preemption::PodInfo>& vs) {
      restore();
      std::vector<const api::Pod*> reclaimed;
      for (const auto& v : vs) {
        if (v.priority < priority || v.terminating) continue;
        if (const api::Pod* p = cache.pod(v.key)) reclaimed.push_back(p);
      }
      return reclaimed.empty() || queues->may_reclaim_all(pod, reclaimed);
    };
  }
  // Nodes alike answer alike (NodeClasses); nominated pods held per check
  // depend on the node they were nominated for: then node by node.
  std::unordered_set<std::string> seen_shapes;  // counted for the stats only
  if (node_group_ && nominations_.empty()) {
    pr.node_key = [this, &state, &cache, &restore, &seen_shapes, &h](const std::string& node,
                                                    const std::vector<std::vector<const preemption::PodInfo*>>& units)
        -> std::optional<std::string> {
      restore();  // the groups are read with the cache as it is
      auto group = node_group_(state, node);
      if (!group) return std::nullopt;
      auto shape = victims_shape(cache, node, *group, units);
      if (shape && !seen_shapes.insert(*shape).second && h.stats != nullptr) ++h.stats->preemption_reused_nodes;
      return shape;
    };
  }
  std::vector<preemption::NodeCandidate> nodes;
  for (const auto& [name, st] : statuses) {
    nodes.push_back({name, st.code() != framework::Code::kUnschedulableAndUnresolvable});
  }
  const int64_t now = h.clock != nullptr ? h.clock->unix_seconds() : common::real_clock()->unix_seconds();
  CachePods pods(cache, now, restore);
  // Each what-if check: the victims out, then the nominated pods of higher or
  // equal priority held (a pod nominated for a victim's devices keeps them),
  // then the preemptor's own PreFilter and Filter (holding runs PreFilter too).
  auto fits = [&](const std::string& node, const std::vector<const preemption::PodInfo*>& removed) -> Result<bool> {
    const api::Node* n = cache.node(node);
    if (n == nullptr) return false;
    // Nobody taken away: the cache is as Filter just saw it, where the pod fit
    // no node (or PreFilter refused it): no need to ask again on every node.
    if (removed.empty()) return false;
    if (what_if == nullptr || what_if_node != node) {
      restore();  // the previous node's pods back first
      what_if = std::make_unique<WhatIf>(cache, queues);
      what_if_node = node;
    }
    std::vector<std::string> keys;
    for (const auto* p : removed) keys.push_back(p->key);
    what_if->set(keys);
    if (h.stats != nullptr) ++h.stats->preemption_checks;
    auto hold = hold_nominated(state.pod_key, pr.priority);
    framework::CycleState cs;
    cs.pod_key = state.pod_key;
    cs.pod = pod;
    if (!fw_.run_pre_filter(cs).ok()) return false;
    framework::NodeFit fit;
    fit.node = node;
    return fw_.run_filter(cs, framework::NodeInfo{n, cache.pods_on_node(node)}, fit).ok();
  };
  auto found = preemption::post_filter(pr, nodes, pods, fits);
  restore();
  return found;
}

std::unique_ptr<DefaultPreemption::Removal> DefaultPreemption::remove(const std::vector<std::string>& pod_keys) {
  auto what_if = std::make_unique<WhatIf>(*fw_.handle().cache, fw_.plugin<KaiQueues>());
  what_if->set(pod_keys);
  return what_if;
}

void DefaultPreemption::evict(const framework::CycleState& state, const std::string& node,
                              const std::vector<std::string>& victims) {
  awaiting_release_[state.pod_key] = evict_pods(state.pod, state.pod_key, node, victims);
  nominate(state.pod_key, node);
}

void DefaultPreemption::evict_for_gang(const std::string& gang_id,
                                       const std::vector<std::pair<std::string, std::string>>& members,
                                       const std::vector<std::string>& victims) {
  ClusterCache& cache = *fw_.handle().cache;
  GangWait& wait = gang_awaiting_[gang_id];
  wait = {};
  for (const auto& key : victims) {
    if (const api::Pod* v = cache.pod(key)) wait.pods[key] = v->metadata.uid;
  }
  // Events and conditions name the member first in the gang's order.
  const api::Pod* first = members.empty() ? nullptr : cache.pod(members.front().first);
  if (first != nullptr) {
    wait.claims = evict_pods(*first, members.front().first, members.front().second, victims);
  }
  for (const auto& [key, node] : members) nominate(key, node);
}

bool DefaultPreemption::gang_waiting(const std::string& gang_id) {
  auto it = gang_awaiting_.find(gang_id);
  if (it == gang_awaiting_.end()) return false;
  ClusterCache& cache = *fw_.handle().cache;
  for (const auto& [key, uid] : it->second.pods) {
    const api::Pod* p = cache.pod(key);
    if (p != nullptr && p->metadata.uid == uid) return true;
  }
  for (const auto& [key, uid] : it->second.claims) {
    const api::ResourceClaim* c = cache.claim(key);
    if (c != nullptr && c->metadata.uid == uid && c->status.allocation) return true;
  }
  gang_awaiting_.erase(it);
  return false;
}

std::map<std::string, std::string> DefaultPreemption::evict_pods(const api::Pod& preemptor,
                                                                 const std::string& preemptor_key,
                                                                 const std::string& node,
                                                                 const std::vector<std::string>& victims) {
  const framework::Handle& h = fw_.handle();
  ClusterCache& cache = *h.cache;
  const std::string now = h.clock->rfc3339();
  const std::string scheduler = preemptor.spec.schedulerName.empty() ? "default-scheduler" : preemptor.spec.schedulerName;
  const std::string message = scheduler + ": preempting to accommodate a higher priority pod " + preemptor_key;
  // The claims only the victims hold: the preemptor waits for their release.
  std::set<std::string> victim_uids;
  for (const auto& key : victims) {
    if (const api::Pod* v = cache.pod(key)) victim_uids.insert(v->metadata.uid);
  }
  std::map<std::string, std::string> awaiting;
  for (const auto& key : victims) {
    const api::Pod* v = cache.pod(key);
    if (v == nullptr) continue;
    for (const auto& k : claim_keys(*v)) {
      const api::ResourceClaim* c = cache.claim(k);
      if (c == nullptr || !c->status.allocation) continue;
      bool victims_only = std::all_of(c->status.reservedFor.begin(), c->status.reservedFor.end(), [&](const auto& r) {
        return r.apiGroup.empty() && r.resource == "pods" && victim_uids.count(r.uid);
      });
      if (victims_only) awaiting[k] = c->metadata.uid;
    }
  }
  for (const auto& key : victims) {
    const api::Pod* v = cache.pod(key);
    // Already going (an earlier preemption or its owner): nothing to add.
    if (v == nullptr || !v->metadata.deletionTimestamp.empty()) continue;
    api::Pod victim = *v;
    spdlog::info("preempting pod {} on node {} for pod {}", key, cache.bound_node(key), preemptor_key);
    h.binder->record_event(victim, "Normal", "Preempted", "Preempting",
                           "Preempted by pod " + preemptor.metadata.uid + " on node " + node);
    auto st = h.binder->update_pod_status(victim, [&](api::Pod& p) { add_disruption_target(p, message, now); });
    if (!st.has_value() && st.error().code() != Code::kNotFound) {
      spdlog::warn("pod {}: DisruptionTarget not written: {}", key, st.error().message());
    }
    auto del = h.binder->delete_pod(victim);
    if (!del.has_value() && del.error().code() != Code::kNotFound) {
      spdlog::warn("pod {}: not deleted for preemption: {}", key, del.error().message());
    }
  }
  return awaiting;
}

void DefaultPreemption::nominate(const std::string& key, const std::string& node) {
  const framework::Handle& h = fw_.handle();
  const api::Pod* pod = h.cache->pod(key);
  if (pod == nullptr) return;
  const api::Pod preemptor = *pod;
  auto st = h.binder->update_pod_status(preemptor, [&](api::Pod& p) { p.status.nominatedNodeName = node; });
  if (!st.has_value()) spdlog::warn("pod {}: nominatedNodeName not written: {}", key, st.error().message());
  nominations_[key] = Nomination{node, preemptor.spec.priority.value_or(0)};
}

}  // namespace draplane::sched::plugins
