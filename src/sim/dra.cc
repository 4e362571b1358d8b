#include "sim/dra.h"

#include <charconv>

#include "alloc/allocator.h"

namespace draplane::sim {
namespace {

std::string attribute(std::string_view name) {
  return "device.attributes[\"" + std::string(kDriver) + "\"]." + std::string(name);
}

api::DeviceSelector cel(std::string expression) {
  return api::DeviceSelector{api::CELDeviceSelector{std::move(expression)}};
}

}  // namespace

std::vector<api::ResourceSlice> gpu_slices(const std::vector<NodeSpec>& nodes) {
  std::vector<api::ResourceSlice> out;
  for (const auto& n : nodes) {
    if (n.gpus == 0) continue;
    api::ResourceSlice s;
    s.metadata.name = n.name + "-gpus";
    s.spec.driver = std::string(kDriver);
    s.spec.pool = api::ResourcePool{n.name, 1, 1};
    s.spec.nodeName = n.name;
    for (int i = 0; i < n.gpus; ++i) {
      api::Device d;
      d.name = "gpu" + std::to_string(i);
      api::DeviceAttribute model, index;
      model.string_ = n.model;
      index.int_ = i;
      d.attributes["productName"] = model;
      d.attributes["index"] = index;
      d.capacity[std::string(kMilliCapacity)] = api::DeviceCapacity{api::Quantity::from_int(1000), std::nullopt};
      d.allowMultipleAllocations = true;
      s.spec.devices.push_back(std::move(d));
    }
    out.push_back(std::move(s));
  }
  return out;
}

api::DeviceClass gpu_class() {
  api::DeviceClass c;
  c.metadata.name = std::string(kGpuClass);
  c.spec.selectors.push_back(cel("device.driver == \"" + std::string(kDriver) + "\""));
  return c;
}

api::ResourceClaim task_claim(const TaskSpec& task, const std::vector<int>& pinned) {
  api::ResourceClaim c;
  c.metadata.name = task.name;
  c.metadata.namespace_ = "sim";
  api::DeviceRequest r;
  r.name = "gpu";
  api::ExactDeviceRequest e;
  e.deviceClassName = std::string(kGpuClass);
  e.allocationMode = api::kAllocationModeExactCount;
  e.count = task.num_gpu;
  if (!task.models.empty()) {
    std::string list;
    for (const auto& m : task.models) list += (list.empty() ? "\"" : ", \"") + m + "\"";
    e.selectors.push_back(cel(attribute("productName") + " in [" + list + "]"));
  }
  if (!pinned.empty()) {
    std::string list;
    for (int i : pinned) list += (list.empty() ? "" : ", ") + std::to_string(i);
    e.selectors.push_back(cel(attribute("index") + " in [" + list + "]"));
  }
  if (task.shares_gpu()) {
    api::CapacityRequirements cap;
    cap.requests[std::string(kMilliCapacity)] = api::Quantity::from_int(task.gpu_milli);
    e.capacity = std::move(cap);
  }
  r.exactly = std::move(e);
  c.spec.devices.requests.push_back(std::move(r));
  return c;
}

int gpu_index(const std::string& device) {
  if (!device.starts_with("gpu")) return -1;
  int v = -1;
  auto [p, ec] = std::from_chars(device.data() + 3, device.data() + device.size(), v);
  if (ec != std::errc() || p != device.data() + device.size()) return -1;
  return v;
}

DraCluster::DraCluster(const std::vector<NodeSpec>& nodes) {
  nodes_.reserve(nodes.size());
  for (const auto& n : nodes) {
    api::Node node;
    node.metadata.name = n.name;
    nodes_.push_back(std::move(node));
  }
  snapshot_ = alloc::Snapshot::build(gpu_slices(nodes), {gpu_class()});
  allocated_ = std::make_unique<alloc::AllocatedState>(*snapshot_);
  views_.resize(nodes.size());
}

alloc::NodeView& DraCluster::view(size_t node) {
  if (!views_[node]) {
    auto v = alloc::NodeView::build(*snapshot_, *allocated_, nodes_[node], &foreign_);
    // The node list is ours and has no selectors: building cannot fail.
    views_[node] = std::make_unique<alloc::NodeView>(std::move(*v));
  }
  return *views_[node];
}

Result<std::optional<api::AllocationResult>> DraCluster::allocate(size_t node, const TaskSpec& task,
                                                                  const std::vector<int>& pinned) {
  api::ResourceClaim claim = task_claim(task, pinned);
  alloc::Options options;
  options.explain = false;
  options.share_id_seed = static_cast<uint64_t>(allocations_) + 1;
  ASSIGN_OR_RETURN(alloc::Allocation a, alloc::allocate(view(node), {&claim}, options));
  if (!a.fits) return std::optional<api::AllocationResult>();
  return std::optional<api::AllocationResult>(std::move(a.results.front()));
}

void DraCluster::commit(size_t node, const api::AllocationResult& result) {
  allocated_->add(result);
  view(node).refresh_allocations();
  ++allocations_;
}

void DraCluster::release(size_t node, const api::AllocationResult& result) {
  allocated_->remove(result);
  view(node).refresh_allocations();
}

int64_t DraCluster::consumed_milli(size_t node, int gpu) const {
  auto key = snapshot_->find_key(kDriver, nodes_[node].metadata.name, "gpu" + std::to_string(gpu));
  if (!key) return 0;
  const auto* use = allocated_->in_use(*key);
  if (use == nullptr) return 0;
  auto it = use->capacity.find(std::string(kMilliCapacity));
  if (it == use->capacity.end()) return use->dedicated ? 1000 : 0;
  return static_cast<int64_t>(it->second / 1'000'000'000);
}

}  // namespace draplane::sim
