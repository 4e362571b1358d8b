#include "sched/cluster_cache.h"

#include <charconv>
#include <utility>

#include "alloc/taint_rules.h"
#include "sched/gang.h"

namespace draplane::sched {
namespace {

// resourceVersions of draplane's server (and etcd's) are decimal revisions;
// anything else compares as "unknown" (-1).
int64_t parse_rv(const std::string& rv) {
  int64_t v = -1;
  auto [ptr, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || ptr != rv.data() + rv.size()) return -1;
  return v;
}

}  // namespace

std::string object_key(const api::ObjectMeta& meta) {
  return meta.namespace_.empty() ? meta.name : meta.namespace_ + "/" + meta.name;
}

bool pod_is_active(const api::Pod& pod) {
  return pod.status.phase != "Succeeded" && pod.status.phase != "Failed";
}

ClusterCache::ClusterCache(std::shared_ptr<cel::ProgramCache> programs)
    : programs_(programs ? std::move(programs) : std::make_shared<cel::ProgramCache>()) {}

// ---------------------------------------------------------------- nodes and pods

void ClusterCache::upsert_node(api::Node node) {
  std::string name = node.metadata.name;
  auto it = nodes_.find(name);
  // Labels decide which slices select the node; other changes (heartbeats,
  // taints, conditions) leave its view, and failures remembered on it, valid.
  bool relabeled = it == nodes_.end() || it->second.metadata.labels != node.metadata.labels;
  nodes_.insert_or_assign(name, std::move(node));
  changed(name);
  if (relabeled) drop_view(name);
}

void ClusterCache::delete_node(const std::string& name) {
  drop_view(name);
  nodes_.erase(name);
}

void ClusterCache::index_pod(const std::string& key, bool add) {
  std::string node = bound_node(key);
  if (node.empty()) return;
  changed(node);
  const api::Pod* p = pod(key);
  bool active = p != nullptr && pod_is_active(*p);
  if (add) {
    auto [it, fresh] = pods_by_node_[node].emplace(key, p);
    if (!fresh) it->second = p;
    if (fresh && active) {
      Active& a = active_on_node_[node];
      ++a.pods;
      const Requests r = pod_requests(*p);
      a.requests.cpu_milli += r.cpu_milli;
      a.requests.memory += r.memory;
    }
  } else {
    auto it = pods_by_node_.find(node);
    if (it != pods_by_node_.end() && it->second.erase(key) > 0 && active) {
      auto a = active_on_node_.find(node);
      if (a != active_on_node_.end()) {
        const Requests r = pod_requests(*p);
        a->second.requests.cpu_milli -= r.cpu_milli;
        a->second.requests.memory -= r.memory;
        if (--a->second.pods <= 0) active_on_node_.erase(a);
      }
    }
  }
}

void ClusterCache::index_claim_names(const std::string& pod_key, bool add) {
  const api::Pod* p = pod(pod_key);
  if (p == nullptr) return;
  auto each = [&](const std::optional<std::string>& name) {
    if (!name || name->empty()) return;
    const std::string claim_key = p->metadata.namespace_ + "/" + *name;
    if (add) {
      pods_by_claim_[claim_key].insert(pod_key);
    } else if (auto it = pods_by_claim_.find(claim_key); it != pods_by_claim_.end()) {
      it->second.erase(pod_key);
      if (it->second.empty()) pods_by_claim_.erase(it);
    }
  };
  for (const auto& rc : p->spec.resourceClaims) each(rc.resourceClaimName);
  for (const auto& st : p->status.resourceClaimStatuses) each(st.resourceClaimName);
}

void ClusterCache::index_gang(const std::string& pod_key, bool add) {
  const api::Pod* p = pod(pod_key);
  if (p == nullptr) return;
  auto g = gang_of(*p);
  if (!g) return;
  const std::string gang_key = p->metadata.namespace_ + "/" + g->name;
  if (add) {
    pods_by_gang_[gang_key].insert_or_assign(pod_key, p);
  } else if (auto it = pods_by_gang_.find(gang_key); it != pods_by_gang_.end()) {
    it->second.erase(pod_key);
    if (it->second.empty()) pods_by_gang_.erase(it);
  }
}

const std::set<std::string>* ClusterCache::pods_naming_claim(const std::string& claim_key) const {
  auto it = pods_by_claim_.find(claim_key);
  return it == pods_by_claim_.end() ? nullptr : &it->second;
}

void ClusterCache::upsert_pod(api::Pod pod) {
  std::string key = object_key(pod.metadata);
  index_pod(key, false);
  index_claim_names(key, false);
  index_gang(key, false);
  if (!pod.spec.nodeName.empty()) assumed_bound_.erase(key);
  pods_.insert_or_assign(key, std::move(pod));
  index_pod(key, true);
  index_claim_names(key, true);
  index_gang(key, true);
}

void ClusterCache::delete_pod(const std::string& key) { (void)take_pod(key); }

std::optional<api::Pod> ClusterCache::take_pod(const std::string& key) {
  index_pod(key, false);
  index_claim_names(key, false);
  index_gang(key, false);
  assumed_bound_.erase(key);
  auto it = pods_.find(key);
  if (it == pods_.end()) return std::nullopt;
  std::optional<api::Pod> out(std::move(it->second));
  pods_.erase(it);
  return out;
}

void ClusterCache::assume_bound(const std::string& pod_key, const std::string& node) {
  index_pod(pod_key, false);
  assumed_bound_[pod_key] = node;
  index_pod(pod_key, true);
}

void ClusterCache::forget_bound(const std::string& pod_key) {
  if (assumed_bound_.count(pod_key) == 0) return;
  index_pod(pod_key, false);
  assumed_bound_.erase(pod_key);
  index_pod(pod_key, true);
}

const api::Node* ClusterCache::node(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const api::Pod* ClusterCache::pod(const std::string& key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

std::string ClusterCache::bound_node(const std::string& pod_key) const {
  auto it = pods_.find(pod_key);
  if (it != pods_.end() && !it->second.spec.nodeName.empty()) return it->second.spec.nodeName;
  auto a = assumed_bound_.find(pod_key);
  return a == assumed_bound_.end() ? std::string() : a->second;
}

int ClusterCache::pods_on_node(const std::string& node) const {
  auto it = active_on_node_.find(node);
  return it == active_on_node_.end() ? 0 : it->second.pods;
}

std::vector<const api::Pod*> ClusterCache::active_pods_on(const std::string& node) const {
  std::vector<const api::Pod*> out;
  auto it = pods_by_node_.find(node);
  if (it == pods_by_node_.end()) return out;
  for (const auto& [key, p] : it->second) {
    if (p != nullptr && pod_is_active(*p)) out.push_back(p);
  }
  return out;
}

int64_t ClusterCache::extended_in_use(const std::string& node, const std::string& resource) const {
  int64_t sum = 0;
  for (const api::Pod* p : active_pods_on(node)) {
    for (const auto& c : p->spec.containers) {
      auto l = c.resources.limits.find(resource);
      if (l != c.resources.limits.end()) {
        sum += l->second.value();
        continue;
      }
      auto r = c.resources.requests.find(resource);
      if (r != c.resources.requests.end()) sum += r->second.value();
    }
  }
  return sum;
}

ClusterCache::Requests ClusterCache::requested(const std::string& node) const {
  auto it = active_on_node_.find(node);
  return it == active_on_node_.end() ? Requests{} : it->second.requests;
}

ClusterCache::Requests pod_requests(const api::Pod& pod) {
  ClusterCache::Requests r;
  for (const auto& c : pod.spec.containers) {
    if (auto it = c.resources.requests.find("cpu"); it != c.resources.requests.end()) r.cpu_milli += it->second.milli_value();
    if (auto it = c.resources.requests.find("memory"); it != c.resources.requests.end()) r.memory += it->second.value();
  }
  return r;
}

// ---------------------------------------------------------------- claims

void ClusterCache::upsert_claim(api::ResourceClaim claim) {
  std::string key = object_key(claim.metadata);
  auto a = assumed_.find(key);
  if (a != assumed_.end()) {
    int64_t rv = parse_rv(claim.metadata.resourceVersion);
    if (a->second.rv >= 0 && rv >= a->second.rv) assumed_.erase(a);
  }
  claims_.insert_or_assign(key, std::move(claim));
  sync_counted(key);
}

void ClusterCache::delete_claim(const std::string& key, const api::ResourceClaim& last) {
  deleted_uids_.add(last.metadata.uid);
  claims_.erase(key);
  assumed_.erase(key);
  sync_counted(key);
}

void ClusterCache::assume_claim(api::ResourceClaim claim) {
  // A claim deleted since (UIDs are never reused): its write's answer is stale.
  if (!claim.metadata.uid.empty() && deleted_uids_.contains(claim.metadata.uid)) return;
  std::string key = object_key(claim.metadata);
  int64_t rv = parse_rv(claim.metadata.resourceVersion);
  assumed_.insert_or_assign(key, Assumed{std::move(claim), rv});
  sync_counted(key);
}

void ClusterCache::forget_claim(const std::string& key) {
  if (assumed_.erase(key) > 0) sync_counted(key);
}

const api::ResourceClaim* ClusterCache::claim(const std::string& key) const {
  auto a = assumed_.find(key);
  if (a != assumed_.end()) return &a->second.claim;
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

// Brings the allocated state's records for one claim in line with its current
// view: remove what was counted, add what is allocated now. Without a current
// snapshot only counted_ changes: the next build counts it.
void ClusterCache::sync_counted(const std::string& claim_key) {
  const api::ResourceClaim* c = claim(claim_key);
  const api::AllocationResult* now = (c != nullptr && c->status.allocation) ? &*c->status.allocation : nullptr;
  auto it = counted_.find(claim_key);
  if (it != counted_.end() && now != nullptr && it->second == *now) return;
  const bool live = allocated_ && !snapshot_stale_;
  if (it != counted_.end()) {
    if (live) {
      allocated_->remove(it->second);
      invalidate_pools_of(it->second);
    }
    counted_.erase(it);
  }
  if (now != nullptr) {
    if (live) {
      allocated_->add(*now);
      invalidate_pools_of(*now);
    }
    counted_.emplace(claim_key, *now);
  }
}

void ClusterCache::invalidate_pools_of(const api::AllocationResult& allocation) {
  std::set<std::string> pools;
  for (const auto& r : allocation.devices.results) pools.insert(r.driver + "/" + r.pool);
  std::set<uint64_t> ids;
  for (const auto& p : pools) {
    auto it = pool_views_.find(p);
    if (it != pool_views_.end()) ids.insert(it->second.begin(), it->second.end());
  }
  // The views' candidates do not depend on allocations: recount their counters
  // and free devices rather than rebuild them; a view shared by many nodes once.
  for (uint64_t id : ids) {
    auto v = entries_.find(id);
    if (v == entries_.end()) continue;
    ViewEntry& e = *v->second;
    e.epoch = ++epochs_;
    changed_view(id);
    // Only the changed pools' candidates are recounted.
    for (uint32_t pi : e.view->refresh_allocations(pools)) {
      const int now = count_free(*e.view, pi);
      e.free += now - e.pool_free[pi];
      e.pool_free[pi] = now;
    }
  }
}

// ---------------------------------------------------------------- inventory

// Slices, classes and taint rules are inventory: any change makes the snapshot stale.
template <class T>
void ClusterCache::upsert_inventory(std::map<std::string, T>& objects, T obj) {
  std::string name = obj.metadata.name;
  objects.insert_or_assign(std::move(name), std::move(obj));
  snapshot_stale_ = true;
}

template <class T>
void ClusterCache::delete_inventory(std::map<std::string, T>& objects, const std::string& name) {
  if (objects.erase(name) > 0) snapshot_stale_ = true;
}

void ClusterCache::upsert_slice(api::ResourceSlice slice) { upsert_inventory(slices_, std::move(slice)); }
void ClusterCache::delete_slice(const std::string& name) { delete_inventory(slices_, name); }
void ClusterCache::upsert_class(api::DeviceClass cls) { upsert_inventory(classes_, std::move(cls)); }
void ClusterCache::delete_class(const std::string& name) { delete_inventory(classes_, name); }
bool ClusterCache::upsert_rule(api::DeviceTaintRule rule) {
  // Status writes (the eviction controller's conditions) leave the taints as they are.
  auto it = rules_.find(rule.metadata.name);
  if (it != rules_.end() && it->second.spec == rule.spec) {
    it->second = std::move(rule);
    return false;
  }
  upsert_inventory(rules_, std::move(rule));
  return true;
}
void ClusterCache::delete_rule(const std::string& name) { delete_inventory(rules_, name); }

void ClusterCache::upsert_template(api::ResourceClaimTemplate tmpl) {
  std::string key = object_key(tmpl.metadata);
  templates_.insert_or_assign(key, std::move(tmpl));
}

void ClusterCache::delete_template(const std::string& key) { templates_.erase(key); }

const api::ResourceClaimTemplate* ClusterCache::claim_template(const std::string& key) const {
  auto it = templates_.find(key);
  return it == templates_.end() ? nullptr : &it->second;
}

const alloc::Snapshot& ClusterCache::snapshot() {
  if (snapshot_stale_ || !snapshot_) {
    std::vector<api::ResourceSlice> slices;
    slices.reserve(slices_.size());
    for (const auto& [name, s] : slices_) slices.push_back(s);
    std::vector<api::DeviceTaintRule> rules;
    rules.reserve(rules_.size());
    for (const auto& [name, r] : rules_) rules.push_back(r);
    slices = alloc::apply_taint_rules(std::move(slices), rules);
    std::vector<api::DeviceClass> classes;
    classes.reserve(classes_.size());
    for (const auto& [name, c] : classes_) classes.push_back(c);
    // The views and the allocated state borrow the old snapshot: drop them first.
    views_.clear();
    entries_.clear();
    shared_views_.clear();
    pool_views_.clear();
    foreign_pools_.clear();
    allocated_.reset();
    snapshot_ = alloc::Snapshot::build(std::move(slices), std::move(classes), programs_);
    allocated_.emplace(*snapshot_);
    for (const auto& [key, a] : counted_) allocated_->add(a);
    snapshot_stale_ = false;
    ++snapshot_builds_;
    snapshot_epoch_ = ++epochs_;
    changes_ = NodeChanges{true, {}, {}};
  }
  return *snapshot_;
}

const alloc::AllocatedState& ClusterCache::allocated() {
  snapshot();
  return *allocated_;
}

int ClusterCache::count_free(const alloc::NodeView& view, uint32_t pool) const {
  const alloc::Snapshot& snap = view.snapshot();
  const auto [first, last] = view.pool_candidates(pool);
  int free = 0;
  for (uint32_t i = first; i < last; ++i) {
    const alloc::Candidate& c = view.candidates()[i];
    if (c.node_ok && view.allocated().in_use(snap.devices()[c.device].key) == nullptr) ++free;
  }
  return free;
}

void ClusterCache::count_free(ViewEntry& e) const {
  e.pool_free.assign(e.view->pools().size(), 0);
  e.free = 0;
  for (uint32_t pi = 0; pi < e.pool_free.size(); ++pi) {
    e.pool_free[pi] = count_free(*e.view, pi);
    e.free += e.pool_free[pi];
  }
}

uint64_t ClusterCache::view_epoch(const std::string& node) const {
  uint64_t epoch = snapshot_epoch_;
  if (auto it = node_epochs_.find(node); it != node_epochs_.end()) epoch = std::max(epoch, it->second);
  if (auto it = views_.find(node); it != views_.end()) epoch = std::max(epoch, it->second->epoch);
  return epoch;
}

void ClusterCache::drop_view(const std::string& node) {
  node_epochs_[node] = ++epochs_;
  changed(node);
  auto it = views_.find(node);
  if (it == views_.end()) return;
  ViewEntry& e = *it->second;
  views_.erase(it);
  e.nodes.erase(node);
  if (e.nodes.empty()) {
    forget_view(e);
  } else if (const api::Node* n = this->node(node); n != nullptr && &e.view->node() == n) {
    // The node it was built for may be deleted next: a node that still sees it.
    e.view->set_node(*this->node(*e.nodes.begin()));
  }
}

void ClusterCache::forget_view(ViewEntry& e) {
  for (const auto& p : e.view->pools()) {
    auto pv = pool_views_.find(p.id());
    if (pv != pool_views_.end() && pv->second.erase(e.id) > 0 && pv->second.empty()) pool_views_.erase(pv);
  }
  if (e.shape != 0) {
    auto [first, last] = shared_views_.equal_range(e.shape);
    for (auto s = first; s != last; ++s) {
      if (s->second == &e) {
        shared_views_.erase(s);
        break;
      }
    }
  }
  entries_.erase(e.id);
}

Result<const alloc::NodeView*> ClusterCache::node_view(const std::string& node_name) {
  const alloc::Snapshot& snap = snapshot();
  auto it = views_.find(node_name);
  if (it != views_.end()) return it->second->view.get();
  const api::Node* n = node(node_name);
  if (n == nullptr) return not_found_error("node \"" + node_name + "\" not found");
  // A node that sees what another node sees shares its view, not built again:
  // one build, and one refresh per allocation, for all of them.
  std::optional<std::vector<uint32_t>> selection = alloc::NodeView::selection(snap, *n);
  uint64_t shape = 0;
  if (selection) {
    uint64_t h = 1469598103934665603ULL;
    for (uint32_t v : *selection) h = (h ^ v) * 1099511628211ULL;
    shape = h | 1;
    auto [first, last] = shared_views_.equal_range(shape);
    for (auto s = first; s != last; ++s) {
      if (s->second->selection == *selection) {
        s->second->nodes.insert(node_name);
        views_.emplace(node_name, s->second);
        return s->second->view.get();
      }
    }
  }
  ASSIGN_OR_RETURN(alloc::NodeView view, alloc::NodeView::build(snap, *allocated_, *n, &foreign_pools_));
  ++view_builds_;
  if (!view.node_independent()) shape = 0;
  auto owned = std::make_unique<ViewEntry>();
  ViewEntry& e = *owned;
  e.view = std::make_unique<alloc::NodeView>(std::move(view));
  e.id = ++next_view_id_;
  // No new epoch: the node's own epoch changed when its old view was dropped
  // (or the snapshot rebuilt), and the other views are as they were.
  e.epoch = epochs_;
  e.shape = shape;
  if (shape != 0) e.selection = std::move(*selection);
  e.nodes.insert(node_name);
  count_free(e);
  // Only pools that offer this node devices depend on what is allocated: the
  // counter-only slices of other nodes' pools (every view sees them, as Kubernetes
  // 1.36 does) must not make each allocation anywhere rebuild every node's view.
  std::set<uint32_t> offering;
  for (const auto& c : e.view->candidates()) offering.insert(c.pool);
  for (uint32_t pi : offering) pool_views_[e.view->pools()[pi].id()].insert(e.id);
  if (shape != 0) shared_views_.emplace(shape, &e);
  views_.emplace(node_name, &e);
  entries_.emplace(e.id, std::move(owned));
  return e.view.get();
}

int ClusterCache::free_devices(const std::string& node) {
  auto v = node_view(node);
  if (!v.has_value()) return 0;
  return views_.at(node)->free;
}

}  // namespace draplane::sched
