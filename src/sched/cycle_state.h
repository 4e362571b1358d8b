// The typed state of one scheduling cycle (kube-scheduler's CycleState for
// the DynamicResources plugin): what PreFilter resolved once for the pod, and
// per feasible node what Filter found. Internal to the scheduler's .cc files.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/types.h"
#include "sched/pod_claims.h"
#include "sched/scheduler.h"

namespace draplane::sched {

struct Scheduler::CycleState {
  std::string pod_key;
  api::Pod pod;  // a copy: assume calls change what cache pointers show
  // Claims already allocated (by the API or assumed); each must suit the node.
  std::vector<api::ResourceClaim> allocated;
  // Claims to allocate in this cycle, in the pod's order.
  std::vector<api::ResourceClaim> pending;
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
  // The remembered failures this pod reads and adds to (Scheduler::fail_memo_),
  // set by find_node.
  PodFailMemo* memo = nullptr;
  // Set by prefilter: waiting for a claim generated from a template (no
  // Unschedulable condition for that; ResolvedClaims::awaiting_generated_claim).
  bool awaiting_generated_claim = false;
};

struct Scheduler::NodeFit {
  std::string node;
  int64_t score = 0;   // upstream: sum of (8 - chosen subrequest index)
  int free_after = 0;  // devices of the node still free afterwards (packing)
  // One per pending claim, then one for the extended claim when `extended_mask` has a '1'.
  std::vector<api::AllocationResult> results;
  std::string extended_mask;
};

struct ClaimWrite {
  api::ResourceClaim claim;  // desired object (status with allocation / reservedFor)
  bool newly_allocated = false;
  bool extended = false;  // the pod's extended-resource claim
};

struct Scheduler::Reservation {
  std::vector<ClaimWrite> writes;
  std::vector<std::string> reserved_keys;  // assumed in the cache
  std::string extended_placeholder;        // cache key holding the extended claim's devices
};

}  // namespace draplane::sched
