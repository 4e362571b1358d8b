// TaintToleration: the first NoSchedule or NoExecute taint of the node that no
// toleration of the pod tolerates.
#include "sched/node_filter.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched {

bool tolerates(const api::Toleration& toleration, const api::Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.operator_ == "Exists") return true;
  if (toleration.operator_.empty() || toleration.operator_ == "Equal") return toleration.value == taint.value;
  return false;
}

std::optional<std::string> taint_toleration(const api::Pod& pod, const api::Node& node) {
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const auto& t : pod.spec.tolerations) tolerated = tolerated || tolerates(t, taint);
    if (!tolerated) return "node(s) had untolerated taint {" + taint.key + ": " + taint.value + "}";
  }
  return std::nullopt;
}

namespace plugins {

std::unique_ptr<framework::Plugin> new_taint_toleration() { return new_node_check_filter("TaintToleration", taint_toleration); }

}  // namespace plugins
}  // namespace draplane::sched
