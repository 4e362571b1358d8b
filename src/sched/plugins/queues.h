// KaiQueues: KAI Scheduler's queues (scheduling.run.ai/v2 Queue) in the
// scheduling cycle. A pod joins queue NAME with the label
// `kai.scheduler/queue: NAME`; pods without it are not in any queue.
//
// Fair shares come from sched/fair_share.h over every queue's allocation
// (its pods bound or assumed on a node) and demand (those plus its pending
// pods), on the cluster's capacity; they are recomputed when a pod, claim,
// node, slice or queue changed since the last cycle that read them.
//
// PreFilter (admission by fair share): a pod of a queue that does not exist,
// or of a queue with children (only leaf queues take pods), waits; a pod that
// would take its queue past the queue's limit waits; a pod that would take its
// queue past its fair share (and quota) waits while another leaf queue with
// pending pods is below its own fair share, so the idle capacity goes to the
// queue that is owed it. Otherwise the pod is tried as any other.
//
// Reclaim (DefaultPreemption asks may_reclaim): a pod of a queue may evict a
// pod of another queue of any priority when fair::reclaim_allowed says so: the
// reclaimer stays within its quota (or fair share) and the victim's queue
// keeps at least its quota (or fair share) in what it gives up. Each victim is
// judged on its own, then the victims a preemptor chooses on a node together
// (may_reclaim_all): several reclaims that each alone would pass may not take
// a queue below its share.
//
// GPU counting (the rule of fair_share.h): each DRA device counts as a GPU;
// an allocated whole device counts 1, a partition (a device consuming a
// counter set: MIG) the fraction of the set's "memory" counter (else of its
// first counter) it consumes, a share of a device (consumedCapacity) the
// fraction of the device's capacity it consumes. A pending claim counts its
// requests' device counts (the first subrequest of a firstAvailable list) as
// whole GPUs until it is allocated. A claim several pods use (named by each,
// resourceClaimName) is one set of devices: each active pod naming it carries
// its part (rounded up); a PodGroup's claim is divided by the group's
// minCount. Capacity: every device that consumes no
// counter set, plus every counter set (one physical GPU each). CPU and memory:
// the containers' requests against the nodes' allocatable.
//
// Thread-safety: scheduling thread only; statuses() returns a copy.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/result.h"
#include "sched/fair_share.h"
#include "sched/framework.h"
#include "sched/scheduler.h"

namespace draplane::sched::plugins {

// The spec of a Queue as the scheduler reads it.
struct QueueConfig {
  std::string name;
  std::string parent;
  int64_t priority = 100;
  std::array<fair::ResourceSpec, fair::kResources> resources{};
  bool operator==(const QueueConfig&) const = default;
};

// A Queue object (JSON) as a QueueConfig; the error names the field.
Result<QueueConfig> parse_queue(std::string_view json);

// What the scheduler reports in a Queue's status.
struct QueueReport {
  std::string name;
  fair::Amounts allocated{}, requested{}, fair_share{};
  std::vector<std::string> children;
};

// The status object ({"allocated":..., "requested":..., "fairShare":...,
// "childQueues":[...]}) in KAI's quantities (gpu as "nvidia.com/gpu", in
// whole or milli units).
std::string queue_status_json(const QueueReport& report);

class KaiQueues final : public framework::PreFilterPlugin, public framework::ReservePlugin {
 public:
  static constexpr std::string_view kName = "KaiQueues";
  explicit KaiQueues(framework::Handle handle) : h_(handle) {}
  std::string_view name() const override { return kName; }

  // False when the queue was known with the same spec (a status write).
  bool upsert(QueueConfig queue);
  void erase(const std::string& name);
  bool empty() const { return queues_.empty(); }
  // Pods (or their claims) changed in a way no event or Reserve tells (a
  // what-if took them out of the cache or put them back): they are counted
  // again at the next refresh.
  void changed(const std::vector<std::string>& pod_keys) {
    if (queues_.empty()) return;
    for (const auto& key : pod_keys) forget(key);
    dirty_ = true;
  }
  // An informer event (before the cache applies it): the shares are stale,
  // and so are the remembered amounts of the pods it concerns.
  void on_event(const Event& event);

  framework::Status pre_filter(framework::CycleState& state) override;
  // A pod assumed on a node (or taken back) moves its queue's allocation
  // before any event says so.
  framework::Status reserve(framework::CycleState& cs, const framework::NodeFit&, framework::Reservation&) override {
    forget(cs.pod_key);
    return {};
  }
  void unreserve(framework::CycleState& cs, const framework::NodeFit&, framework::Reservation&) override {
    forget(cs.pod_key);
  }

  // Whether `preemptor` may evict `victim` to reclaim for its queue.
  bool may_reclaim(const api::Pod& preemptor, const api::Pod& victim);
  // Whether it may evict all of `victims` (pods it may preempt only by
  // reclaim) together: per victim queue, what they free at once.
  bool may_reclaim_all(const api::Pod& preemptor, const std::vector<const api::Pod*>& victims);

  // One entry per queue, in name order (shares as of now).
  std::vector<QueueReport> reports();

  // What a pod counts for its queue (see the GPU rule above).
  fair::Amounts pod_amounts(const api::Pod& pod) const;
  // The queue's current share (nullopt: no such queue).
  std::optional<fair::QueueShare> share(const std::string& queue);

 private:
  // fair::reclaim_allowed for `preemptor` (queue qa) taking `freed` from queue qb,
  // the queues as they will stand once the nominations and evictions under way are done.
  bool reclaim_from(const api::Pod& preemptor, const std::string& qa, const std::string& qb,
                    const fair::Amounts& freed);
  void refresh();
  void forget(const std::string& pod_key) {
    if (queues_.empty()) return;  // nothing counted (amounts are dropped when a first queue comes)
    amounts_.erase(pod_key);
    dirty_pods_.insert(pod_key);
    // Unread for long (no queued pod scheduled): a recount costs less than the set.
    if (dirty_pods_.size() > kMaxDirtyPods) {
      dirty_pods_.clear();
      recount_all_ = true;
    }
  }
  // Forgets the pods that name a claim `pod` names (their parts of it move).
  void forget_sharers(const api::Pod& pod);
  static constexpr size_t kMaxDirtyPods = 4096;
  // What one pod adds to its queue's totals, as last counted.
  struct Counted {
    std::string queue;
    bool bound = false, terminating = false, nominated = false;
    fair::Amounts amounts{};
  };
  // Per queue: the sums over its counted pods, and how many pods each holds
  // (a queue with no pending pod has no entry in pending_, as before).
  struct Totals {
    fair::Amounts demand{}, allocated{}, pending{}, releasing{}, nominated{};
    int pending_pods = 0, releasing_pods = 0, nominated_pods = 0;
  };
  void count(const std::string& pod_key);
  void uncount(const std::string& pod_key);
  void add_to_totals(const Counted& c, int sign);  // sign -1: takes it off
  // pod_amounts, remembered per pod until an event about it or its claims
  // (a refresh per cycle recomputed every pod's: 10 ms a cycle at 2,000 pods).
  const fair::Amounts& amounts_of(const std::string& key, const api::Pod& pod);
  // What the cluster offers (nodes' CPU and memory, GPUs of the inventory),
  // kept until a node event or a new inventory snapshot (a walk over every
  // node and device per refresh was most of a what-if check with queues).
  const fair::Amounts& capacity();
  int64_t allocated_gpu_milli(const api::AllocationResult& allocation) const;

  framework::Handle h_;
  std::map<std::string, QueueConfig> queues_;
  std::map<std::string, fair::QueueShare> shares_;
  std::map<std::string, fair::Amounts> pending_;  // per queue: demand of its pending pods
  // Per queue: what its terminating bound pods hold (already given back as far
  // as reclaim is concerned), and what its nominated pending pods will take
  // (preemptors whose victims are leaving: already taken). Without them every
  // preemptor of a round evicted as if no victim were leaving yet.
  std::map<std::string, fair::Amounts> releasing_;
  std::map<std::string, fair::Amounts> nominated_;
  // The shares are recomputed from totals_ when anything changed; pods are
  // counted again one by one (dirty_pods_: events, Reserve), or all
  // (recount_all_: queues, inventory, what-ifs). A walk over every pod per
  // cycle was most of a cycle with queues (1 ms a pod at 2,000 pods).
  bool dirty_ = true;
  bool recount_all_ = true;
  std::unordered_set<std::string> dirty_pods_;
  std::unordered_map<std::string, Counted> counted_;
  std::map<std::string, Totals> totals_;
  std::unordered_map<std::string, fair::Amounts> amounts_;
  std::optional<fair::Amounts> capacity_;
  int64_t capacity_builds_ = -1;  // the snapshot it was counted on
};

// The pod's queue label ("" when none).
std::string queue_of(const api::Pod& pod);

}  // namespace draplane::sched::plugins
