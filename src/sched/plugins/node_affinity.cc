// NodeAffinity: spec.nodeSelector labels, then the required node affinity terms.
#include "alloc/node_selector.h"
#include "sched/node_filter.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched {

std::optional<std::string> node_affinity(const api::Pod& pod, const api::Node& node) {
  for (const auto& [k, v] : pod.spec.nodeSelector) {
    auto it = node.metadata.labels.find(k);
    if (it == node.metadata.labels.end() || it->second != v) return std::string(kReasonAffinity);
  }
  if (pod.spec.affinity && pod.spec.affinity->nodeAffinity &&
      pod.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    auto m = alloc::node_selector_matches(&node, *pod.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution);
    if (!m.has_value() || !*m) return std::string(kReasonAffinity);
  }
  return std::nullopt;
}

namespace plugins {

std::unique_ptr<framework::Plugin> new_node_affinity() { return new_node_check_filter("NodeAffinity", node_affinity); }

}  // namespace plugins
}  // namespace draplane::sched
