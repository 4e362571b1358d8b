// The default profile: the plugins and their order at each extension point.
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/plugins/plugins.h"
#include "sched/plugins/preemption.h"
#include "sched/plugins/queues.h"
#include "sched/scheduler.h"

namespace draplane::sched::plugins {
namespace {

class NodeCheckFilter final : public framework::FilterPlugin {
 public:
  NodeCheckFilter(std::string_view name, NodeCheck check) : name_(name), check_(check) {}
  std::string_view name() const override { return name_; }
  framework::Status filter(framework::CycleState& cs, const framework::NodeInfo& n, framework::NodeFit&) override {
    if (auto r = check_(cs.pod, *n.node)) return framework::Status::unresolvable(std::move(*r));
    return {};
  }

 private:
  std::string_view name_;
  NodeCheck check_;
};

}  // namespace

std::unique_ptr<framework::Plugin> new_node_check_filter(std::string_view name, NodeCheck check) {
  return std::make_unique<NodeCheckFilter>(name, check);
}

void register_defaults(framework::Framework& fw) {
  const framework::Handle& h = fw.handle();
  fw.add(new_priority_sort());
  // PreFilter first: a queue over its fair share waits before any allocator run.
  fw.add(std::make_unique<KaiQueues>(h));
  // Filters run in this order; the first rejection names the node's reason.
  fw.add(new_node_unschedulable());
  fw.add(new_node_affinity());
  fw.add(new_taint_toleration());
  fw.add(new_node_resources_fit(h));
  fw.add(std::make_unique<DynamicResources>(h));
  // Scores: DynamicResources' decides, the placement policy (--policy) breaks its ties.
  if (h.options != nullptr && h.options->node_policy) {
    fw.add(new_placement_score(h, *h.options->node_policy));
  } else {
    fw.add(new_device_packing(h));
  }
  fw.add(std::make_unique<GangScheduling>());
  // PostFilter: evicts lower-priority pods to make room (and holds nominations).
  fw.add(std::make_unique<DefaultPreemption>(fw));
}

}  // namespace draplane::sched::plugins
