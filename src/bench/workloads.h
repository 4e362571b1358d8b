// The workloads of `draplane bench`: Kubernetes' scheduler_perf DRA shapes
// (test/integration/scheduler_perf/dra/performance-config.yaml and the
// configs beside it in kubernetes/kubernetes), as the objects a run creates.
//
// A workload is a Plan: the cluster (classes, nodes, slices, taint rules,
// claim templates), claims allocated before the run (upstream's
// allocResourceClaims), init pods scheduled before measuring, then the
// measured pods: either a fixed list (scheduler_perf's createPods with
// collectMetrics) or, for the SteadyState variants, rounds of `batch` pods that
// are deleted once bound, for `duration_s` (createPods with steadyState).
//
// Pure data; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/types.h"
#include "common/result.h"

namespace draplane::bench {

// What the measured phase creates and what a correct run ends with.
struct Plan {
  std::vector<api::Object> cluster;          // in creation order (namespaces first)
  std::vector<api::ResourceClaim> allocated;  // created, then status.allocation written
  std::vector<api::ResourceClaim> init_claims;  // created unallocated (shared claims)
  std::vector<api::Pod> init_pods;            // scheduled before the measured phase
  std::vector<api::ResourceClaim> claims;     // created before the measured pods
  std::vector<api::Pod> pods;                 // measured (one-shot workloads)
  // SteadyState: rounds of `batch` pods from steady_pod(i), each round deleted
  // once bound, until duration_s has passed.
  bool steady = false;
  int batch = 10;
  double duration_s = 10;
  std::function<api::Pod(int index)> steady_pod;
  // Measured pods that cannot be placed (the shape implies it).
  int expect_unschedulable = 0;
  int devices = 0;  // devices in the cluster (for the report)
};

struct WorkloadParams {
  int nodes = 500;
  int devices = 10;  // per node, template and SteadyState workloads (scale curves)
  double duration_s = 10;  // SteadyState variants
};

struct Workload {
  std::string name;
  std::string summary;   // one line for --list
  std::string upstream;  // the scheduler_perf config it follows
  int default_nodes = 500;
  std::function<Result<Plan>(const WorkloadParams&)> build;
};

// Every workload, in --list order.
const std::vector<Workload>& workloads();
// kNotFound naming the known ones.
Result<const Workload*> find_workload(const std::string& name);

}  // namespace draplane::bench
