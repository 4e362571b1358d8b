// The default profile: the plugins and their order at each extension point.
#include "sched/plugins/dynamic_resources.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched::plugins {

void register_defaults(framework::Framework& fw) {
  const framework::Handle& h = fw.handle();
  fw.add(new_priority_sort());
  // Filters run in this order; the first rejection names the node's reason.
  fw.add(new_node_unschedulable());
  fw.add(new_node_affinity());
  fw.add(new_taint_toleration());
  fw.add(new_node_resources_fit(h));
  fw.add(std::make_unique<DynamicResources>(h));
  // Scores: DynamicResources' decides, packing breaks its ties.
  fw.add(new_device_packing(h));
  fw.add(std::make_unique<GangScheduling>());
}

}  // namespace draplane::sched::plugins
