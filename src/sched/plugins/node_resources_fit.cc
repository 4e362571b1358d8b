// NodeResourcesFit, for what draplane tracks: the node's pod count
// (allocatable "pods") and extended resources the node offers itself (device
// plugins). An extended resource the node lacks must be served by a
// DeviceClass (KEP-5004); DynamicResources allocates it.
#include "sched/cluster_cache.h"
#include "sched/node_filter.h"
#include "sched/plugins/plugins.h"

namespace draplane::sched {

std::optional<std::string> too_many_pods(const api::Node& node, int pods_on_node) {
  auto it = node.status.allocatable.find("pods");
  if (it != node.status.allocatable.end() && pods_on_node + 1 > it->second.value()) {
    return std::string(kReasonTooManyPods);
  }
  return std::nullopt;
}

namespace plugins {
namespace {

class NodeResourcesFit final : public framework::FilterPlugin {
 public:
  explicit NodeResourcesFit(framework::Handle h) : h_(h) {}
  std::string_view name() const override { return "NodeResourcesFit"; }
  framework::Status filter(framework::CycleState& cs, const framework::NodeInfo& n, framework::NodeFit&) override {
    if (auto r = too_many_pods(*n.node, n.pods_on_node)) return framework::Status::unschedulable(std::move(*r));
    const std::string& name = n.node->metadata.name;
    for (const auto& need : cs.dra.extended) {
      auto it = n.node->status.allocatable.find(need.resource);
      const bool fits = it != n.node->status.allocatable.end()
                            ? h_.cache->extended_in_use(name, need.resource) + need.count <= it->second.value()
                            : !need.served_by.empty();
      if (!fits) return framework::Status::unschedulable("Insufficient " + need.resource);
    }
    return {};
  }

 private:
  framework::Handle h_;
};

// Packing: among nodes DynamicResources scores equally, the one left with the
// fewest free devices, so whole devices and nodes stay free for larger pods.
class DevicePacking final : public framework::ScorePlugin {
 public:
  explicit DevicePacking(framework::Handle h) : h_(h) {}
  std::string_view name() const override { return "DevicePacking"; }
  int64_t score(const framework::CycleState&, const framework::NodeInfo& n, const framework::NodeFit& fit) override {
    int64_t free_after = h_.cache->free_devices(n.node->metadata.name);
    return -(free_after - fit.devices_chosen);
  }

 private:
  framework::Handle h_;
};

}  // namespace

std::unique_ptr<framework::Plugin> new_node_resources_fit(framework::Handle h) {
  return std::make_unique<NodeResourcesFit>(h);
}
std::unique_ptr<framework::Plugin> new_device_packing(framework::Handle h) { return std::make_unique<DevicePacking>(h); }

}  // namespace plugins
}  // namespace draplane::sched
