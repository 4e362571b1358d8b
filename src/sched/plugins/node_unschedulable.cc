// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that
// tolerate the node.kubernetes.io/unschedulable:NoSchedule taint.
#include "sched/node_filter.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched {

std::optional<std::string> node_unschedulable(const api::Pod& pod, const api::Node& node) {
  if (!node.spec.unschedulable) return std::nullopt;
  api::Taint t{kUnschedulableTaintKey, "", "NoSchedule", ""};
  for (const auto& tol : pod.spec.tolerations) {
    if (tolerates(tol, t)) return std::nullopt;
  }
  return std::string(kReasonUnschedulable);
}

namespace plugins {

std::unique_ptr<framework::Plugin> new_node_unschedulable() { return new_node_check_filter("NodeUnschedulable", node_unschedulable); }

}  // namespace plugins
}  // namespace draplane::sched
