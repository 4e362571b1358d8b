#include "sched/node_filter.h"

#include "alloc/node_selector.h"

namespace draplane::sched {
namespace {

bool untolerated(const api::Pod& pod, const api::Taint& taint) {
  for (const auto& t : pod.spec.tolerations) {
    if (tolerates(t, taint)) return false;
  }
  return true;
}

}  // namespace

bool tolerates(const api::Toleration& toleration, const api::Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.operator_ == "Exists") return true;
  if (toleration.operator_.empty() || toleration.operator_ == "Equal") return toleration.value == taint.value;
  return false;
}

std::optional<std::string> filter_node(const api::Pod& pod, const api::Node& node, int pods_on_node) {
  // NodeUnschedulable: tolerated by a toleration of the unschedulable taint.
  if (node.spec.unschedulable) {
    api::Taint t{kUnschedulableTaintKey, "", "NoSchedule", ""};
    if (untolerated(pod, t)) return std::string(kReasonUnschedulable);
  }
  // NodeAffinity: nodeSelector labels, then the required terms.
  for (const auto& [k, v] : pod.spec.nodeSelector) {
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end() || it->second != v) return std::string(kReasonAffinity);
  }
  if (pod.spec.affinity && pod.spec.affinity->nodeAffinity &&
      pod.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    auto m = alloc::node_selector_matches(&node, *pod.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution);
    if (!m.has_value() || !*m) return std::string(kReasonAffinity);
  }
  // TaintToleration: the first untolerated NoSchedule/NoExecute taint.
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (untolerated(pod, taint)) return "node(s) had untolerated taint {" + taint.key + ": " + taint.value + "}";
  }
  // NodeResourcesFit, pods: allocatable "pods" when the node reports it.
  auto it = node.status.allocatable.find("pods");
  if (it != node.status.allocatable.end() && pods_on_node + 1 > it->second.value()) {
    return std::string(kReasonTooManyPods);
  }
  return std::nullopt;
}

}  // namespace draplane::sched
