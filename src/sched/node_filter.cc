#include "sched/node_filter.h"

namespace draplane::sched {

std::optional<std::string> filter_node(const api::Pod& pod, const api::Node& node, int pods_on_node) {
  if (auto r = node_unschedulable(pod, node)) return r;
  if (auto r = node_affinity(pod, node)) return r;
  if (auto r = taint_toleration(pod, node)) return r;
  return too_many_pods(node, pods_on_node);
}

}  // namespace draplane::sched
