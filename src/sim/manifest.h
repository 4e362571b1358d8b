// A cluster and a workload given as Kubernetes manifests (YAML or JSON streams,
// read with the API codec), turned into the simulator's nodes and tasks:
//
// Cluster: each Node gives CPU and memory (status.allocatable, else
// status.capacity); the ResourceSlices whose spec.nodeName names it give its
// GPUs (one per device, at most 8) and their model (the device attribute
// productName, any domain; one model per node). DeviceClasses are accepted and
// ignored (the simulator's own class selects every GPU).
//
// Workload: each Pod is a task: CPU and memory are the sum of its containers'
// requests; its spec.resourceClaims (a ResourceClaim by name, or a
// ResourceClaimTemplate) give the GPUs: one request, `exactly`, count N whole
// GPUs (default 1), or with capacity.requests.milli (any domain) of 1..999 a
// share of one GPU; a CEL selector that mentions productName allows the models
// quoted after it (`...productName == "T4"`, `... in ["T4", "P100"]`): an
// approximation, since the simulator's own selector is built from those names. Annotations:
//   draplane.io/sim-arrival   seconds from the start when the pod arrives (replay)
//   draplane.io/sim-duration  seconds it runs; absent: it never leaves
// Every error names the document and the field.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "sim/trace.h"

namespace draplane::sim {

inline constexpr const char* kArrivalAnnotation = "draplane.io/sim-arrival";
inline constexpr const char* kDurationAnnotation = "draplane.io/sim-duration";

Result<std::vector<NodeSpec>> load_cluster_manifests(const std::string& path);
Result<std::vector<TaskSpec>> load_workload_manifests(const std::string& path);

}  // namespace draplane::sim
