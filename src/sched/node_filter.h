// Node filters that do not involve devices, with kube-scheduler's plugin
// semantics and its reason strings (they show in PodScheduled messages):
// NodeUnschedulable, NodeAffinity (spec.nodeSelector and required node
// affinity), TaintToleration (NoSchedule and NoExecute), and the pod count of
// NodeResourcesFit.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "api/types.h"

namespace draplane::sched {

inline constexpr const char* kReasonUnschedulable = "node(s) were unschedulable";
inline constexpr const char* kReasonAffinity = "node(s) didn't match Pod's node affinity/selector";
inline constexpr const char* kReasonTooManyPods = "Too many pods";
inline constexpr const char* kUnschedulableTaintKey = "node.kubernetes.io/unschedulable";

// True when `toleration` tolerates `taint` (core/v1 Toleration.ToleratesTaint).
bool tolerates(const api::Toleration& toleration, const api::Taint& taint);

// Each plugin's check (src/sched/plugins/<plugin>.cc): why `pod` cannot run
// on `node`, or nullopt.
std::optional<std::string> node_unschedulable(const api::Pod& pod, const api::Node& node);
std::optional<std::string> node_affinity(const api::Pod& pod, const api::Node& node);
std::optional<std::string> taint_toleration(const api::Pod& pod, const api::Node& node);
std::optional<std::string> too_many_pods(const api::Node& node, int pods_on_node);

// The four in kube-scheduler's order: why `pod` cannot run on `node`, or
// nullopt when these filters pass.
// `pods_on_node` counts the active pods already bound there.
std::optional<std::string> filter_node(const api::Pod& pod, const api::Node& node, int pods_on_node);

}  // namespace draplane::sched
