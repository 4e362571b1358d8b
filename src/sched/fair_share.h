// Fair share of GPUs, CPU and memory among KAI Scheduler queues
// (scheduling.run.ai/v2 Queue), computed the way KAI's proportion plugin
// divides a cluster (pkg/scheduler/plugins/proportion/resource_division):
//
// 1. Every queue first gets what it is guaranteed: min(quota, requestable),
//    where requestable = min(limit, demand) and demand is what its running
//    and pending pods ask for. Quota -1 means "all of it"; limit -1 means no
//    limit.
// 2. What is left (idle beyond the quotas) is water-filled by over-quota
//    priority (higher first), then within a priority by over-quota weight:
//    each round offers every unsatisfied queue remaining * w / sum(w); a
//    queue that wants less takes what it wants and the rest is offered again
//    in the next round; a queue that wants more takes the offer rounded down
//    to whole units (KAI rounds to whole GPUs), so a round where nobody is
//    satisfied ends the filling. The units that rounding left over go, one
//    each, to the queues with the largest rounded-off remainder (priority
//    first, then remainder, then name). Weight 0 gets nothing over quota.
// 3. Each resource is divided on its own, as KAI does; dominant-resource
//    fairness enters where queues are compared: dominant_share() is the
//    largest fraction of its fair share a queue uses, the order in which
//    queues get the next placement and the first to give back.
// 4. Hierarchy: the top-level queues divide the cluster's capacity; the
//    children of a queue divide that queue's fair share by the same rules. A
//    parent's demand and allocation are its own plus its children's. A queue
//    whose parent does not exist (or that is on a parent cycle) is orphaned
//    (KAI's Orphan condition): it gets no share.
//
// Quotas above the capacity are still granted in step 1 (fair shares may then
// sum to more than the capacity), as KAI does.
//
// Units: GPU in milli-GPUs, CPU in millicores, memory in bytes. GPU counting
// rule (docs/compat.md): a whole device counts 1 GPU (1000 milli-GPUs); a
// partition (a MIG slice, a device that consumes a physical GPU's counters)
// counts the fraction of the GPU's memory counter it consumes; a share of a
// shared device counts the fraction of the device's capacity it consumes
// (consumable capacity), or 1/replicas for a time-slicing replica without
// capacity. gpu_fraction_milli() is that rule's arithmetic.
//
// Reclaim (KAI's reclaimable strategies): a queue may take resources from
// another queue's workload when, after the move,
// - the reclaimer stays within its quota in every resource and the victim
//   keeps at least its quota in every resource it gives up (a queue below
//   quota reclaims what others borrowed, never taking them below their own
//   quota), or
// - the reclaimer stays within its fair share in every resource and the victim
//   keeps at least its fair share in every resource it gives up (fair share
//   is restored, no further).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace draplane::sched::fair {

enum Resource : int { kGpu = 0, kCpu = 1, kMemory = 2 };
inline constexpr int kResources = 3;
inline constexpr const char* kResourceNames[kResources] = {"gpu", "cpu", "memory"};

// Per resource: milli-GPUs, millicores, bytes.
using Amounts = std::array<int64_t, kResources>;

inline constexpr int64_t kUnlimited = -1;

// The pod label that names a pod's queue (KAI's DefaultQueueLabel).
inline constexpr const char* kQueueLabel = "kai.scheduler/queue";

// One resource of a queue's spec.resources, in the units above.
struct ResourceSpec {
  int64_t quota = 0;             // kUnlimited: the whole of what the parent has
  int64_t limit = kUnlimited;    // kUnlimited: no cap
  double over_quota_weight = 1;  // 0: nothing beyond quota
  bool operator==(const ResourceSpec&) const = default;
};

struct QueueInput {
  std::string name;
  std::string parent;  // empty: a top-level queue
  int64_t priority = 100;  // KAI's default
  std::array<ResourceSpec, kResources> resources{};
  Amounts demand{};     // requested by its own running and pending pods
  Amounts allocated{};  // held by its own running pods
};

struct QueueShare {
  std::string name;
  bool orphaned = false;    // parent missing or on a cycle: no share
  Amounts fair_share{};
  Amounts demand{};         // own plus descendants'
  Amounts allocated{};      // own plus descendants'
  Amounts over_fair_share{};  // max(0, allocated - fair_share)
  Amounts over_quota{};       // max(0, allocated - quota); 0 under an unlimited quota
};

// Fair shares of `queues` (any order; names unique, a repeated name is ignored)
// on a cluster of `capacity`. Result: one entry per distinct queue, in input order.
std::vector<QueueShare> compute_fair_shares(const std::vector<QueueInput>& queues, const Amounts& capacity);

// One resource of a Queue's spec.resources in KAI's units (GPUs in fractions,
// CPU in millicores, memory in megabytes of 10^6 bytes; -1 unlimited) as a
// ResourceSpec in this module's units. Values are taken as KAI takes them: an
// unset limit is 0, which caps the queue at nothing (write -1 for no limit).
ResourceSpec from_kai_units(Resource r, double quota, double limit, double over_quota_weight);

// The largest fraction of its fair share that `share` allocates, over the
// resources it has a fair share of (a resource allocated without any fair
// share counts as infinitely over). 0 when nothing is allocated.
double dominant_share(const QueueShare& share);

// May `reclaimer` (its share, its spec's quotas) take `freed` from `victim` to
// run a workload that needs `request`? See the header comment for the two rules.
struct ReclaimSide {
  const QueueShare* share = nullptr;
  Amounts quota{};  // kUnlimited allowed
};
bool reclaim_allowed(const ReclaimSide& reclaimer, const Amounts& request, const ReclaimSide& victim,
                     const Amounts& freed);

// The GPU counting rule: `consumed` of a device's `total` (memory counter,
// capacity) as milli-GPUs, rounded down, at least 1 for a non-zero use.
// total <= 0 counts a whole GPU.
int64_t gpu_fraction_milli(int64_t consumed, int64_t total);

}  // namespace draplane::sched::fair
