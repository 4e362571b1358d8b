// The scheduling framework, after kube-scheduler's
// (staging/src/k8s.io/kube-scheduler/framework/interface.go): a scheduling
// cycle is a fixed sequence of extension points, and what the scheduler does
// at each is the work of plugins (src/sched/plugins/, one file each):
//
//   queue sort      which ready pod goes first (QueueSortPlugin::less)
//   pre-enqueue     whether a pod may enter the active queue at all
//   pre-filter      once per pod: resolve what the pod needs (claims, ...)
//   filter          per node: can the pod run there (NodeFit gets what was found)
//   post-filter     no node passed: make room (preemption) and nominate a node
//   score           per feasible node, one number per plugin
//   reserve         assume the chosen node's resources in the cache
//   unreserve       take a reservation back (a later step failed, a gang did not fit)
//   permit          allow, or Wait (a gang waits for its members)
//   bind            PreBind + Bind: the API writes (bind.cc, the binding cycle)
//
// Status codes tell the scheduler and its queue what to do with the pod (see
// Code). The cycle's data lives in a typed CycleState, one section per plugin
// that needs one (kube-scheduler's CycleState is a map of opaque values; here
// each section is a plain member, read without casts or locks).
//
// Thread-safety: a Framework and its plugins run on the scheduling thread; a
// CycleState travels to a bind worker after Reserve and is then read only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/types.h"
#include "sched/pod_claims.h"

namespace draplane::common {
class Clock;
}  // namespace draplane::common

namespace draplane::alloc {
class NodeView;
}  // namespace draplane::alloc

namespace draplane::sched {
class Binder;
class ClusterCache;
struct SchedulerOptions;
struct SchedulerStats;
}  // namespace draplane::sched

namespace draplane::sched::framework {

// What a plugin says about a pod (kube-scheduler's framework.Code).
enum class Code : uint8_t {
  kSuccess,
  // Something broke (an API error, a bug): the pod retries after a backoff.
  kError,
  // Does not fit now; may after a cluster change or after preemption: the pod
  // is parked until a relevant event, and PostFilter may evict for it.
  kUnschedulable,
  // Does not fit and evicting pods would not help (affinity, taints): parked;
  // PostFilter leaves such nodes out.
  kUnschedulableAndUnresolvable,
  // Permit: reserved, held until other pods (its gang) are placed.
  kWait,
  // PreFilter: nothing for this plugin to do; its Filter is skipped for the pod.
  kSkip,
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string reason, std::string detail = {})
      : code_(code), reason_(std::move(reason)), detail_(std::move(detail)) {}
  static Status unschedulable(std::string reason, std::string detail = {}) {
    return Status(Code::kUnschedulable, std::move(reason), std::move(detail));
  }
  static Status unresolvable(std::string reason) { return Status(Code::kUnschedulableAndUnresolvable, std::move(reason)); }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kSuccess; }
  bool skip() const { return code_ == Code::kSkip; }
  // Unschedulable either way.
  bool rejected() const { return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable; }
  // kube-scheduler's reason string: the key of the "0/N nodes are available:"
  // histogram (FitError), or a pre-filter's whole explanation.
  const std::string& reason() const { return reason_; }
  // Filter: the explanation listed after the histogram ("" when none).
  const std::string& detail() const { return detail_; }

 private:
  Code code_ = Code::kSuccess;
  std::string reason_, detail_;
};

// Scheduler-side view of one waiting pod, for queue sort.
struct QueuedPodInfo {
  const std::string* key = nullptr;
  int32_t priority = 0;
  uint64_t seq = 0;  // order in which it became active (age)
};

// A node as Filter and Score see it.
struct NodeInfo {
  const api::Node* node = nullptr;
  int pods_on_node = 0;  // active pods bound there
};

// DynamicResources' failures per node for one pod or one claim shape
// (plugins/dynamic_resources.h).
struct NodeFailures;

// DynamicResources' PreFilter result and scratch (kube-scheduler's stateData).
struct DynamicResourcesState {
  // Claims already allocated (by the API or assumed); each must suit the node.
  std::vector<api::ResourceClaim> allocated;
  // Claims to allocate in this cycle, in the pod's order.
  std::vector<api::ResourceClaim> pending;
  // Who each claim is reserved for (the pod, or its PodGroup for a shared
  // group claim): one entry per element of `allocated` and `pending`.
  std::vector<api::ResourceClaimConsumerReference> allocated_consumers, pending_consumers;
  // Extended resources of the containers; served by DRA where a node lacks them.
  std::vector<ExtendedNeed> extended;
  // The pod already has its extended-resource claim (status names it).
  bool extended_claim_exists = false;
  // Extended claims built so far, keyed by which needs DRA serves ('0'/'1' per need).
  std::map<std::string, api::ResourceClaim> extended_claims;
  std::map<std::string, std::vector<api::ContainerExtendedResourceRequest>> extended_mappings;
  // The pending claims' identities and versions: a node's remembered failure
  // holds only for the same claims.
  std::string claims_signature;
  // What the allocator sees of the pending claims apart from their names (their
  // specs, in order); empty when the pod shares no failures (extended needs).
  // Pods of one template have one shape and share remembered failures.
  std::string shape;
  std::vector<std::string> claim_names;  // "namespace/name" of `pending`, in order
  // Filter may leave results borrowed (NodeFit::borrowed): set by find_node only.
  bool lazy_results = false;
  // The remembered failures this pod reads and adds to; set by PreFilter.
  NodeFailures* memo = nullptr;
  // Waiting for a claim generated from a template (no Unschedulable condition
  // for that; ResolvedClaims::awaiting_generated_claim).
  bool awaiting_generated_claim = false;
};

struct CycleState {
  std::string pod_key;
  api::Pod pod;  // a copy: assume calls change what cache pointers show
  DynamicResourcesState dra;
};

// What Filter found on one node, kept for Score and Reserve of the chosen one.
struct NodeFit {
  std::string node;
  int64_t score = 0;       // DynamicResources: sum of (8 - chosen subrequest index)
  int devices_chosen = 0;  // devices in `results` (packing)
  // One per pending claim, then one for the extended claim when `extended_mask` has a '1'.
  std::vector<api::AllocationResult> results;
  std::string extended_mask;
  // While Scheduler::find_node compares nodes, DynamicResources leaves a
  // result computed on an equivalent node here instead of a renamed copy in
  // `results` (a copy per feasible node and pod cost more than the search);
  // DynamicResources::materialize() makes `results` of it for the node chosen.
  // Points into the plugin's per-pod answers: valid until the next Reserve.
  const std::vector<api::AllocationResult>* borrowed = nullptr;
  const alloc::NodeView* borrowed_from = nullptr;  // the view that computed them
  uint64_t borrowed_generation = 0;     // which answers: `borrowed` may be reused by later ones
};

struct ClaimWrite {
  api::ResourceClaim claim;  // desired object (status with allocation / reservedFor)
  bool newly_allocated = false;
  bool extended = false;  // the pod's extended-resource claim
  // The status.reservedFor entry this write adds: the pod, or its PodGroup
  // for a claim the group shares (api/pod_group_claims.h).
  api::ResourceClaimConsumerReference consumer;
};

// What Reserve assumed in the cache and what the binding cycle will write.
struct Reservation {
  std::vector<ClaimWrite> writes;
  std::vector<std::string> reserved_keys;  // assumed in the cache
  std::string extended_placeholder;        // cache key holding the extended claim's devices
};

// What plugins may use of the scheduler (kube-scheduler's framework.Handle).
struct Handle {
  ClusterCache* cache = nullptr;
  const SchedulerOptions* options = nullptr;
  SchedulerStats* stats = nullptr;
  // API writes outside the binding cycle (preemption's evictions).
  Binder* binder = nullptr;
  const common::Clock* clock = nullptr;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

class QueueSortPlugin : public virtual Plugin {
 public:
  // True when `a` is to be tried before `b`.
  virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

class PreEnqueuePlugin : public virtual Plugin {
 public:
  // Not Success: the pod is parked (not tried) until an event moves it.
  virtual Status pre_enqueue(const api::Pod& pod) = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Once per cycle. Unschedulable: the pod fails without looking at nodes
  // (reason() is the whole explanation); Skip: this plugin's Filter is not run.
  virtual Status pre_filter(CycleState& state) = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  // Whether the pod fits `node`; what it found goes into `fit`.
  virtual Status filter(CycleState& state, const NodeInfo& node, NodeFit& fit) = 0;
};

// Each node's Filter verdict, for PostFilter (kube-scheduler's NodeToStatusMap).
using NodeStatusMap = std::vector<std::pair<std::string, Status>>;

struct PostFilterResult {
  Status status;  // Success: room was made; the pod retries (on `nominated_node`)
  std::string nominated_node;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  // Runs when no node passed Filter, with every node's status (nodes whose
  // status is UnschedulableAndUnresolvable cannot be helped by evictions).
  // A preemption plugin chooses victims here, evicts them and names the node
  // the pod is to go to once they are gone; Success ends the post-filter
  // phase. Unschedulable: nothing to do (the pod stays parked).
  virtual PostFilterResult post_filter(CycleState& state, const NodeStatusMap& statuses) = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Higher is better. Scores are compared plugin by plugin in registration
  // order (the first plugin's score decides, later ones break ties), then the
  // first node by name wins.
  virtual int64_t score(const CycleState& state, const NodeInfo& node, const NodeFit& fit) = 0;
};

class ReservePlugin : public virtual Plugin {
 public:
  // Assumes what `fit` chose in the cache; what it assumed goes into `r`.
  virtual Status reserve(CycleState& state, const NodeFit& fit, Reservation& r) = 0;
  // Takes back what reserve() assumed (the cycle failed later).
  virtual void unreserve(CycleState& state, const NodeFit& fit, Reservation& r) = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  // Success: bind now. Wait: hold the reservation until allow() (see the gang
  // cycle, Scheduler::schedule_group). Unschedulable: unreserve.
  virtual Status permit(CycleState& state, const NodeFit& fit) = 0;
};

// The plugins of one scheduler, in order, and the extension points' drivers.
class Framework {
 public:
  explicit Framework(Handle handle) : handle_(handle) {}

  // Takes ownership; the plugin is registered at every extension point it implements.
  void add(std::unique_ptr<Plugin> plugin);
  const Handle& handle() const { return handle_; }
  const QueueSortPlugin* queue_sort() const { return queue_sort_; }
  template <typename T>
  T* plugin() const {
    for (const auto& p : owned_) {
      if (auto* t = dynamic_cast<T*>(p.get())) return t;
    }
    return nullptr;
  }

  // Success, or the first plugin's status that is not (Skip excepted: that
  // plugin's Filter is then left out for this cycle).
  Status run_pre_enqueue(const api::Pod& pod);
  Status run_pre_filter(CycleState& state);
  Status run_filter(CycleState& state, const NodeInfo& node, NodeFit& fit);
  bool has_post_filter() const { return !post_filter_.empty(); }
  PostFilterResult run_post_filter(CycleState& state, const NodeStatusMap& statuses);
  // True when `fit` scores better than `best` (see ScorePlugin); `scores`
  // receives `fit`'s scores, `best_scores` holds `best`'s.
  void run_score(const CycleState& state, const NodeInfo& node, const NodeFit& fit, std::vector<int64_t>& scores);
  static bool better(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
  // Reserve in order; on a failure the earlier plugins are unreserved.
  Status run_reserve(CycleState& state, const NodeFit& fit, Reservation& r);
  // Unreserve in reverse order.
  void run_unreserve(CycleState& state, const NodeFit& fit, Reservation& r);
  // Success, Wait (some plugin waits, none rejects) or the rejection.
  Status run_permit(CycleState& state, const NodeFit& fit);

 private:
  Handle handle_;
  std::vector<std::unique_ptr<Plugin>> owned_;
  const QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<ScorePlugin*> score_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  // Filters skipped for the current cycle (their PreFilter said Skip).
  std::vector<const Plugin*> skipped_;
};

}  // namespace draplane::sched::framework
