// The correctness check at the end of every bench run: the final state of
// pods and claims must be what the workload implies.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::bench {

struct Expectation {
  std::string measured_namespace = "test";
  int bound = 0;          // measured pods bound (still existing) at the end
  int unschedulable = 0;  // measured pods left unbound
};

// Errors, empty when right: a device in two allocations (no workload shares
// devices), a bound pod whose claim is missing, unallocated, not reserved for
// it or allocated where the pod is not, and the counts of bound and unbound
// measured pods.
std::vector<std::string> check_state(const std::vector<api::Pod>& pods, const std::vector<api::ResourceClaim>& claims,
                                     const Expectation& expect);

}  // namespace draplane::bench
