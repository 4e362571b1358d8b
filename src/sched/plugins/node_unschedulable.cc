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
namespace {

class NodeUnschedulable final : public framework::FilterPlugin {
 public:
  std::string_view name() const override { return "NodeUnschedulable"; }
  framework::Status filter(framework::CycleState& cs, const framework::NodeInfo& n, framework::NodeFit&) override {
    if (auto r = node_unschedulable(cs.pod, *n.node)) return framework::Status::unresolvable(std::move(*r));
    return {};
  }
};

}  // namespace

std::unique_ptr<framework::Plugin> new_node_unschedulable() { return std::make_unique<NodeUnschedulable>(); }

}  // namespace plugins
}  // namespace draplane::sched
