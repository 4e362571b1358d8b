#include "sim/model.h"

#include <algorithm>

namespace draplane::sim {

NodeState make_node_state(const NodeSpec& spec, ModelTable& models) {
  NodeState n;
  n.cpu_cap = n.cpu_left = spec.cpu_milli;
  n.mem_cap = n.mem_left = spec.memory_mib;
  n.gpus = std::min(spec.gpus, kMaxGpus);
  n.model = spec.model.empty() ? -1 : models.id(spec.model);
  for (int i = 0; i < n.gpus; ++i) n.left[i] = kMilli;
  return n;
}

Demand make_demand(const TaskSpec& task, const ModelTable& models) {
  Demand d;
  // The FGD simulator counts a pod without CPU request as 100m (Kubernetes'
  // non-zero default) when it scores; none of the shipped tasks has 0.
  d.cpu = task.cpu_milli;
  d.memory = task.memory_mib;
  d.num = task.num_gpu;
  d.milli = static_cast<int32_t>(task.gpu_milli);
  for (size_t i = 0; i < task.models.size(); ++i) {
    if (i > 0) d.model_text += '|';
    d.model_text += task.models[i];
    int id = models.find(task.models[i]);
    // A model no node has still restricts the task: bit 63 is never a node's.
    d.models |= id >= 0 ? (uint64_t{1} << id) : (uint64_t{1} << 63);
  }
  return d;
}

}  // namespace draplane::sim
