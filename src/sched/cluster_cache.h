// ClusterCache: the scheduler's typed picture of the cluster (nodes, pods,
// claims, slices, classes, templates), updated one event at a time, plus what
// the scheduler itself has written but not yet seen come back through a watch
// (kube-scheduler's assume cache).
//
// Device inventory: one immutable alloc::Snapshot. Slice, class and
// DeviceTaintRule events mark it stale and it is rebuilt on the next read (they
// are rare next to pods); the rules' taints are merged into the slices' devices
// then (alloc::apply_taint_rules), so the allocator sees them as driver taints.
// What is allocated lives beside it in one alloc::AllocatedState that this
// cache owns: claim allocations, real or assumed, are added to and removed
// from it in place, and the NodeViews of the pools they touch recount their
// counters (NodeView::refresh_allocations), so scheduling a pod neither copies
// nor rebuilds the inventory or a view. Nodes that see the same devices and
// nothing that names them (network-attached pools, slices selected by labels)
// share one view: an allocation in a pool 5,000 nodes see recounts one view,
// not 5,000, and is reported as one view change (take_node_changes).
//
// Assumed claims: after the scheduler writes (or is about to write) a claim's
// allocation/reservedFor it calls assume_claim(); claim() then returns the
// assumed object until an event with the same or a newer resourceVersion
// arrives, so two pods never get the same device while the watch lags.
// Assumed bindings likewise keep a bound pod counted on its node.
//
// Thread-safety: not synchronized; one thread (the scheduler's) owns it and
// makes every call, the snapshot(), allocated() and node_view() reads included.
// The scheduler's bind workers never touch it: they only write through the
// Binder and hand their outcome back to that thread (Scheduler::drain, via
// apply_completions), which then assumes or forgets claims here. Pointers and references returned stay
// valid until the next mutating call (a claim event may change what the
// allocated state and the views say; a slice or class event, once read,
// replaces the snapshot, the allocated state and every view).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "alloc/allocated.h"
#include "alloc/node_view.h"
#include "alloc/snapshot.h"
#include "api/types.h"
#include "cel/cel.h"
#include "common/result.h"
#include "common/uid_memo.h"

namespace draplane::sched {

// "namespace/name".
std::string object_key(const api::ObjectMeta& meta);
// Non-terminal: phase neither Succeeded nor Failed.
bool pod_is_active(const api::Pod& pod);

class ClusterCache {
 public:
  explicit ClusterCache(std::shared_ptr<cel::ProgramCache> programs = nullptr);

  // ---- events (upsert = added or modified)
  void upsert_node(api::Node node);
  void delete_node(const std::string& name);
  void upsert_pod(api::Pod pod);
  void delete_pod(const std::string& key);
  // delete_pod, handing the pod back (moved out) instead of destroying it: for
  // what-ifs that put it back with upsert_pod. Nullopt when absent.
  std::optional<api::Pod> take_pod(const std::string& key);
  void upsert_claim(api::ResourceClaim claim);
  // `last` is the claim as the deletion event carried it: its uid is
  // remembered, so that the answer of a write issued before the deletion (an
  // asynchronous binding's) does not bring the claim back as an assumption,
  // which would hold its devices with no event left to release them.
  void delete_claim(const std::string& key, const api::ResourceClaim& last);
  void upsert_slice(api::ResourceSlice slice);
  void delete_slice(const std::string& name);
  void upsert_class(api::DeviceClass cls);
  void delete_class(const std::string& name);
  // False when only the rule's status changed (its taint applies as before).
  bool upsert_rule(api::DeviceTaintRule rule);
  void delete_rule(const std::string& name);
  void upsert_template(api::ResourceClaimTemplate tmpl);
  void delete_template(const std::string& key);
  // PodGroups (the Workload API's gangs), by "namespace/name".
  void upsert_pod_group(api::PodGroup group) { pod_groups_[object_key(group.metadata)] = std::move(group); }
  void delete_pod_group(const std::string& key) { pod_groups_.erase(key); }

  // ---- assume cache
  // Makes `claim` (as written or about to be written) the cache's view of it
  // until an event at resourceVersion >= claim's arrives (an empty
  // resourceVersion: until forget_claim). Its allocation counts as in use at once.
  void assume_claim(api::ResourceClaim claim);
  // Drops the assumed view (unreserve); the last event's object counts again.
  void forget_claim(const std::string& key);
  // Records that `pod_key` was bound to `node` before the watch says so.
  void assume_bound(const std::string& pod_key, const std::string& node);
  // Drops an assumed binding (the bind failed or a gang was given up).
  void forget_bound(const std::string& pod_key);

  // ---- reads
  const std::map<std::string, api::Node>& nodes() const { return nodes_; }
  const api::Node* node(const std::string& name) const;
  const api::Pod* pod(const std::string& key) const;
  const std::map<std::string, api::Pod>& pods() const { return pods_; }
  // The last event's claim, ignoring assumptions; null when none arrived.
  const api::ResourceClaim* observed_claim(const std::string& key) const {
    auto it = claims_.find(key);
    return it == claims_.end() ? nullptr : &it->second;
  }
  // The assumed claim when there is one, else the last event's; null when unknown.
  const api::ResourceClaim* claim(const std::string& key) const;
  const std::map<std::string, api::DeviceClass>& classes() const { return classes_; }
  const api::ResourceClaimTemplate* claim_template(const std::string& key) const;
  const api::PodGroup* pod_group(const std::string& key) const {
    auto it = pod_groups_.find(key);
    return it == pod_groups_.end() ? nullptr : &it->second;
  }
  // Node a pod is bound to: spec.nodeName, or an assumed binding; "" when none.
  std::string bound_node(const std::string& pod_key) const;
  // Active pods bound (or assumed bound) to `node`.
  int pods_on_node(const std::string& node) const;
  // Keys of the pods of gang "namespace/name" (gang.h's gang_of: a PodGroup
  // or the gang annotation), bound or not, active or not; null when none.
  using PodsByKey = std::map<std::string, const api::Pod*>;  // key -> the cache's pod
  const PodsByKey* pods_in_gang(const std::string& gang_key) const {
    auto it = pods_by_gang_.find(gang_key);
    return it == pods_by_gang_.end() ? nullptr : &it->second;
  }
  // The pods bound (or assumed bound) to `node`, active or not; null when none.
  const PodsByKey* pods_bound_to(const std::string& node) const {
    auto it = pods_by_node_.find(node);
    return it == pods_by_node_.end() ? nullptr : &it->second;
  }
  // Keys of the pods that name claim "namespace/name" (spec.resourceClaims[].
  // resourceClaimName or status.resourceClaimStatuses); null when none.
  const std::set<std::string>* pods_naming_claim(const std::string& claim_key) const;
  // Sum of an extended resource's limits over the active pods on `node`.
  int64_t extended_in_use(const std::string& node, const std::string& resource) const;
  // Sum of the CPU and memory requests of the active pods on `node` (what
  // NodeResourcesFit counts; read by the placement policies' Score plugin).
  struct Requests {
    int64_t cpu_milli = 0;
    int64_t memory = 0;  // bytes
  };
  Requests requested(const std::string& node) const;

  // The inventory as published; rebuilt here when stale.
  const alloc::Snapshot& snapshot();
  // Every counted allocation (observed or assumed), on snapshot()'s devices;
  // rebuilt with it, else kept current claim by claim.
  const alloc::AllocatedState& allocated();
  // A slice or class changed since snapshot() last built.
  bool snapshot_stale() const { return snapshot_stale_ || !snapshot_; }
  // The node's view of the snapshot (cached, rebuilt when its pools change).
  // Error when a slice's node selector is broken (that node is unusable).
  Result<const alloc::NodeView*> node_view(const std::string& node);
  // Free device count of the node's view (devices not in use); for packing.
  int free_devices(const std::string& node);

  // Nodes whose scheduling inputs may have changed since the last call (the
  // node object, the pods bound there, its view); `all` after the snapshot was
  // rebuilt (every view changed). An allocation change in a view's pools is
  // reported once for the view, by its id (view_id), not once per node that
  // shares it: the node classes move a group of such nodes at once. For the
  // scheduler's node classes (node_classes.h), their only reader.
  struct NodeChanges {
    bool all = false;
    std::unordered_set<std::string> nodes;
    std::unordered_set<uint64_t> views;
  };
  NodeChanges take_node_changes() { return std::exchange(changes_, NodeChanges{}); }
  // The id of the view node_view(node) returned (never reused; nodes that
  // share a view have the same id); 0 when none is built.
  uint64_t view_id(const std::string& node) const {
    auto it = views_.find(node);
    return it == views_.end() ? 0 : it->second->id;
  }
  // The nodes sharing view `id`, by name; null when the view is gone.
  const std::set<std::string>* view_nodes(uint64_t id) const {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second->nodes;
  }

  // Counters for tests and benchmarks.
  int64_t snapshot_builds() const { return snapshot_builds_; }
  // Changes whenever what node_view(node) shows may have changed (the node's
  // labels, or an allocation in a pool its view uses, changed; or the snapshot
  // was rebuilt). Read after node_view(): a failed allocation on the node
  // stays failed while this is unchanged.
  uint64_t view_epoch(const std::string& node) const;
  // Changes whenever any node's view epoch does: while it is unchanged, every
  // view and the allocations they show are as they were.
  uint64_t views_generation() const { return epochs_; }
  int64_t view_builds() const { return view_builds_; }
  // Views kept (nodes sharing one count once).
  size_t views_kept() const { return entries_.size(); }

 private:
  struct Assumed {
    api::ResourceClaim claim;
    int64_t rv = -1;  // numeric resourceVersion written; -1 = until forgotten
  };
  // One view and the nodes that see it: one node, or every node with the
  // same node-independent selection (NodeView::selection).
  struct ViewEntry {
    std::unique_ptr<alloc::NodeView> view;
    int free = 0;
    std::vector<int> pool_free;  // per pool of the view: its part of `free`
    uint64_t id = 0;
    uint64_t epoch = 0;  // epochs_ when made; a fresh value at each allocation change
    uint64_t shape = 0;  // a hash of `selection` when shared; 0 for a view of its node alone
    std::vector<uint32_t> selection;
    std::set<std::string> nodes;
  };
  // Devices of the view's pool neither allocated nor assumed.
  int count_free(const alloc::NodeView& view, uint32_t pool) const;
  // The view's free devices, into e.free and e.pool_free.
  void count_free(ViewEntry& e) const;

  void sync_counted(const std::string& claim_key);
  void changed(const std::string& node) {
    if (changes_.all) return;
    changes_.nodes.insert(node);
    too_many_changes();
  }
  void changed_view(uint64_t id) {
    if (changes_.all) return;
    changes_.views.insert(id);
    too_many_changes();
  }
  // Unread (node groups off) or a burst: "all" says as much, in less room.
  void too_many_changes() {
    if (changes_.nodes.size() + changes_.views.size() > 2 * nodes_.size() + 64) changes_ = NodeChanges{true, {}, {}};
  }
  NodeChanges changes_{true, {}, {}};
  template <class T>
  void upsert_inventory(std::map<std::string, T>& objects, T obj);
  template <class T>
  void delete_inventory(std::map<std::string, T>& objects, const std::string& name);
  void invalidate_pools_of(const api::AllocationResult& allocation);
  void drop_view(const std::string& node);
  // Drops a view no node sees any more.
  void forget_view(ViewEntry& e);
  void index_pod(const std::string& key, bool add);
  std::vector<const api::Pod*> active_pods_on(const std::string& node) const;

  std::shared_ptr<cel::ProgramCache> programs_;
  std::map<std::string, api::Node> nodes_;
  std::map<std::string, api::Pod> pods_;
  std::map<std::string, api::ResourceClaim> claims_;
  std::map<std::string, Assumed> assumed_;
  std::map<std::string, std::string> assumed_bound_;  // pod key -> node
  // Node -> its pods (pointers into pods_, kept by index_pod: they stay valid
  // while the pod is in the map; a pod assumed bound before its event is null).
  std::map<std::string, PodsByKey> pods_by_node_;
  // Node -> how many of its pods are active (pod_is_active) and what they
  // request, kept by index_pod: counting them per node per cycle looked up
  // every pod the node ever ran.
  struct Active {
    int pods = 0;
    Requests requests;
  };
  std::unordered_map<std::string, Active> active_on_node_;
  std::map<std::string, std::set<std::string>> pods_by_claim_;  // claim key -> pod keys naming it
  void index_claim_names(const std::string& pod_key, bool add);
  std::unordered_map<std::string, PodsByKey> pods_by_gang_;  // gang key -> its pods
  void index_gang(const std::string& pod_key, bool add);
  std::map<std::string, api::ResourceSlice> slices_;
  std::map<std::string, api::DeviceClass> classes_;
  std::map<std::string, api::DeviceTaintRule> rules_;
  std::map<std::string, api::ResourceClaimTemplate> templates_;
  std::map<std::string, api::PodGroup> pod_groups_;

  // Allocation currently counted in allocated_, per claim key.
  std::map<std::string, api::AllocationResult> counted_;
  // UIDs of claims deleted lately, which assume_claim ignores.
  common::UidMemo deleted_uids_{4096};
  std::shared_ptr<const alloc::Snapshot> snapshot_;
  // What counted_ holds of snapshot_'s devices; set whenever snapshot_ is.
  std::optional<alloc::AllocatedState> allocated_;
  bool snapshot_stale_ = true;
  std::unordered_map<uint64_t, std::unique_ptr<ViewEntry>> entries_;  // by id
  std::unordered_map<std::string, ViewEntry*> views_;                 // by node
  std::unordered_multimap<uint64_t, ViewEntry*> shared_views_;        // shareable ones by shape
  std::map<std::string, std::set<uint64_t>> pool_views_;  // "driver/pool" -> ids of the views offering its devices
  uint64_t next_view_id_ = 0;
  // State of pools offering a node no devices, shared by all views of the snapshot.
  alloc::ForeignPoolStates foreign_pools_;
  int64_t snapshot_builds_ = 0;
  // Epochs: one counter, whose every new value goes to what changed (a view,
  // a node dropping its view, the snapshot); a node's epoch is the greatest of
  // its own, its view's and the snapshot's, so it changes when any of them does.
  uint64_t epochs_ = 0;
  uint64_t snapshot_epoch_ = 0;
  std::unordered_map<std::string, uint64_t> node_epochs_;
  int64_t view_builds_ = 0;
};

// The CPU (milli) and memory (bytes) requests of a pod's containers.
ClusterCache::Requests pod_requests(const api::Pod& pod);

}  // namespace draplane::sched
