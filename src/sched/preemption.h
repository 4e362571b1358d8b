// Preemption victim search: the PostFilter step of kube-scheduler's
// DefaultPreemption plugin (pkg/scheduler/framework/preemption and
// plugins/defaultpreemption), as a pure function a framework plugin calls
// when a pod fits no node.
//
// - Eligibility: a pod with preemptionPolicy Never never preempts; a pod that
//   already nominated a node where lower-priority pods are still terminating
//   waits for them instead of preempting again.
// - Per candidate node (those where preemption may help, in the caller's
//   order): every pod of lower priority than the preemptor is removed; if the
//   preemptor still does not fit, the node is no candidate. Then the removed
//   pods are reprieved one at a time, most important first (higher priority,
//   then earlier start), each kept back on the node if the preemptor still
//   fits with it there; the rest are the node's victims. Pods already being
//   deleted (an earlier preemption's victims) are reprieved last, so they are
//   counted out before any new victim is chosen.
// - Fit is the caller's callback: it gets the node and the pods taken off it
//   and answers whether the preemptor fits then. The scheduler's callback runs
//   the real filters and the DRA allocator on a snapshot where the removed
//   pods' claims are released, so freed devices, counters (MIG) and shares,
//   and node CPU, memory and pod slots all count.
// - Gangs are atomic: a victim's whole gang goes or none of it. A gang is
//   removed and reprieved as one unit; members on other nodes are victims too
//   (they are evicted with it) and count in the node's cost. A gang with any
//   member of equal or higher priority than the preemptor is never a victim,
//   nor is any single pod of equal or higher priority.
// - Candidates: the nodes are examined in the caller's order until
//   max(10% of them, 100) candidates are found (upstream's
//   minCandidateNodesPercentage and minCandidateNodesAbsolute defaults;
//   upstream starts at a random node, here at the first).
// - Alike nodes (Preemptor::node_key, optional): a node whose key an earlier
//   node had takes that node's reprieve outcome (which units go) without
//   checks; its victims are its own pods. The scheduler keys nodes by their
//   group of interchangeable nodes and the shape of their victims, so a
//   cluster of identical nodes costs one node's checks, not a hundred.
// - Pods are asked for per node examined and per gang met (PodSource), not
//   listed for the whole cluster.
// - Node choice, upstream's order: a node needing no victims at once; else
//   the lowest highest-victim priority, then the smallest sum of victim
//   priorities, then the fewest victims, then the latest start among the
//   highest-priority victims (the most recently started work loses least),
//   then the caller's node order.
//
// Not here (deliberate, see docs/compat.md): PodDisruptionBudgets (draplane
// serves none), the extenders, and the random offset upstream starts its
// examination at.
//
// Thread-safety: pure function; the callback is called on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace draplane::sched::preemption {

inline constexpr const char* kPreemptNever = "Never";

// A running (or assumed) pod that could be preempted.
struct PodInfo {
  std::string key;   // namespace/name
  std::string node;  // where it runs
  int32_t priority = 0;
  // status.startTime, seconds since the epoch; a pod not started yet counts as
  // starting now (the caller's clock), as upstream's GetPodStartTime.
  int64_t start_time = 0;
  std::string gang;        // gang key (namespace/name of its PodGroup or gang); empty: none
  bool terminating = false;  // deletionTimestamp set
};

struct Preemptor {
  std::string key;
  int32_t priority = 0;
  std::string preemption_policy;  // "Never" or "PreemptLowerPriority" (empty: the latter)
  std::string nominated_node;     // status.nominatedNodeName from an earlier preemption
  // A pod of equal or higher priority may still be a victim when this says so
  // (KAI queues: reclaiming what another queue borrowed). Null: never.
  std::function<bool(const PodInfo&)> reclaimable;
  // A node's victims, all together, once chosen: false makes the node no
  // candidate (KAI queues: reclaims that each alone pass may together take a
  // queue below its share). Null: always allowed.
  std::function<bool(const std::vector<PodInfo>&)> victims_allowed;
  // Nodes alike for the search: two nodes given equal keys must answer every
  // fits() question alike when the units at the same positions of their
  // potential-victim lists (each unit's pods on the node, most important unit
  // first) are taken out. A node whose key was seen takes the first node's
  // reprieve outcome without fits() calls (its own victims are still its own
  // pods). Nullopt: the node is examined on its own. Null: every node is.
  std::function<std::optional<std::string>(const std::string& node,
                                           const std::vector<std::vector<const PodInfo*>>& units)>
      node_key;
};

// Whether the preemptor fits on `node` with `removed` (pods of that node) gone.
// An error stops the search and is returned as is.
using FitFn = std::function<Result<bool>(const std::string& node, const std::vector<const PodInfo*>& removed)>;

struct NodeCandidate {
  std::string name;
  // False where the filters failed for reasons removing pods cannot cure
  // (upstream's UnschedulableAndUnresolvable: node affinity, taints, ...).
  bool preemption_may_help = true;
};

enum class Outcome {
  kNominated,    // victims chosen on `node`: evict them, nominate the node
  kNoCandidate,  // no node where removing lower-priority pods makes it fit
  kNotEligible,  // the preemptor may not preempt now (message says why)
};

struct Victims {
  std::string node;
  std::vector<PodInfo> pods;  // most important first; includes other nodes' gang members
  int32_t highest_priority = 0;
  int64_t priority_sum = 0;  // sum of (priority + 2^31), upstream's offset so negatives count
};

struct PostFilterResult {
  Outcome outcome = Outcome::kNoCandidate;
  Victims victims;      // when kNominated
  std::string message;  // when not kNominated: for the pod's FailedScheduling event
};

// The pods bound or assumed, as the search asks for them (each question once
// per search; the preemptor itself, if returned, is ignored).
class PodSource {
 public:
  virtual ~PodSource() = default;
  // The pods on `node`, in a fixed order (ties between equally important
  // victims keep it).
  virtual std::vector<PodInfo> on_node(const std::string& node) = 0;
  // Every member of gang `gang` (PodInfo::gang), on any node, in a fixed order.
  virtual std::vector<PodInfo> in_gang(const std::string& gang) = 0;
};

// The victim search.
Result<PostFilterResult> post_filter(const Preemptor& preemptor, const std::vector<NodeCandidate>& nodes,
                                     PodSource& pods, const FitFn& fits);
// The same over `pods`, all pods bound or assumed on any node, in that order.
Result<PostFilterResult> post_filter(const Preemptor& preemptor, const std::vector<NodeCandidate>& nodes,
                                     const std::vector<PodInfo>& pods, const FitFn& fits);

}  // namespace draplane::sched::preemption
