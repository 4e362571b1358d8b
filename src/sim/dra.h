// The trace's cluster the DRA way, and every placement through the real
// structured allocator (alloc::allocate):
// - one ResourceSlice per GPU node (pool = node name, driver gpu.sim.draplane.io)
//   with one device per GPU: attributes productName (the trace's model) and
//   index, a consumable capacity "milli" of 1000 and allowMultipleAllocations,
//   so that several GPU-share claims can hold one GPU (KEP-5075);
// - one DeviceClass, gpu.sim.draplane.io;
// - a task asking for N whole GPUs is a claim for N devices of the class
//   without a capacity request: on a multi-allocatable device that consumes the
//   whole capacity (upstream's default), so the GPU is the task's alone; a
//   GPU-share task is a claim for one device with capacity request milli=X;
//   allowed models become a CEL selector on productName.
// The policy picks the node and the GPUs; the GPU choice reaches the allocator
// as one more selector on the index attribute (first-fit picks none and takes
// the allocator's own choice). The allocator then checks everything again --
// class, models, capacity, what other claims hold -- and its AllocationResult
// is what the simulator records (AllocatedState) and applies to its view.
// CPU and memory are not DRA resources: the simulator checks them itself.
//
// Thread-safety: none; one simulation at a time per DraCluster.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "alloc/allocated.h"
#include "alloc/node_view.h"
#include "alloc/snapshot.h"
#include "api/types.h"
#include "common/result.h"
#include "sim/trace.h"

namespace draplane::sim {

inline constexpr std::string_view kDriver = "gpu.sim.draplane.io";
inline constexpr std::string_view kGpuClass = "gpu.sim.draplane.io";
inline constexpr std::string_view kMilliCapacity = "milli";

// The ResourceSlices and the DeviceClass of a node list.
std::vector<api::ResourceSlice> gpu_slices(const std::vector<NodeSpec>& nodes);
api::DeviceClass gpu_class();
// The claim of a task; `pinned` (device indices) restricts it to those GPUs.
api::ResourceClaim task_claim(const TaskSpec& task, const std::vector<int>& pinned);

class DraCluster {
 public:
  explicit DraCluster(const std::vector<NodeSpec>& nodes);
  DraCluster(const DraCluster&) = delete;
  DraCluster& operator=(const DraCluster&) = delete;

  // Runs the allocator for `task` on node `node` (index into the node list).
  // nullopt: does not fit. Error: the allocator rejected the input.
  Result<std::optional<api::AllocationResult>> allocate(size_t node, const TaskSpec& task,
                                                        const std::vector<int>& pinned);
  // Records an allocation (as the scheduler's cache does once a claim is allocated).
  void commit(size_t node, const api::AllocationResult& result);
  // Releases a committed allocation (the claim's pod left).
  void release(size_t node, const api::AllocationResult& result);

  const alloc::Snapshot& snapshot() const { return *snapshot_; }
  const alloc::AllocatedState& allocated() const { return *allocated_; }
  // Milli-GPU that allocated claims consume of GPU `gpu` on node `node`.
  int64_t consumed_milli(size_t node, int gpu) const;
  const std::vector<api::Node>& nodes() const { return nodes_; }
  int64_t allocations() const { return allocations_; }

 private:
  alloc::NodeView& view(size_t node);

  std::vector<api::Node> nodes_;
  std::shared_ptr<const alloc::Snapshot> snapshot_;
  std::unique_ptr<alloc::AllocatedState> allocated_;
  std::vector<std::unique_ptr<alloc::NodeView>> views_;
  alloc::ForeignPoolStates foreign_;
  int64_t allocations_ = 0;
};

// GPU index of a device this cluster publishes ("gpu3" -> 3); -1 otherwise.
int gpu_index(const std::string& device);

}  // namespace draplane::sim
