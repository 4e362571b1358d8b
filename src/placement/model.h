// The placement policies' compact view of a node: CPU and memory left and the
// milli-GPU left on each GPU, as the FGD paper's simulator keeps it
// (NodeResource). Policies score nodes from this view. Both the simulator
// (src/sim, which builds it from the trace and keeps it equal to the
// allocator's AllocatedState) and the live scheduler's PlacementScore plugin
// (src/sched/plugins/placement_score.cc, which builds it from the node's
// allocatable CPU/memory, its pods and its devices) use this module, so a
// policy scores the same in both.
//
// Also the FGD paper's fragmentation measure: a node's idle GPU milli counted as
// fragmented for each "typical" task (the trace's most frequent task shapes,
// weighted by frequency) that could not use it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>


namespace draplane::placement {

constexpr int kMaxGpus = 8;
constexpr int32_t kMilli = 1000;  // one whole GPU

// GPU models by name -> bit; a task's allowed models become a mask.
class ModelTable {
 public:
  int id(const std::string& model);  // adds when new (at most 63 models)
  int find(const std::string& model) const;  // -1 when unknown
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

// What a task asks for, in the units the scheduler compares.
struct Demand {
  int64_t cpu = 0;     // milli CPU
  int64_t memory = 0;  // MiB
  int num = 0;         // GPUs
  int32_t milli = 0;   // per GPU, 1..1000 (0 when num == 0)
  uint64_t models = 0;  // allowed GPU models (bit per ModelTable id); 0 = any
  std::string model_text;  // gpu_spec as given ("V100M16|V100M32"), part of the shape's identity
  int shape = -1;       // dense id of (cpu, memory, num, milli, model_text)

  bool shares_gpu() const { return num == 1 && milli < kMilli; }
  int64_t total_milli() const { return int64_t{num} * milli; }
  // GPU-affinity tag of the FGD simulator's GpuClustering: 0 = a GPU share,
  // k = k whole GPUs, -1 = no GPU.
  int affinity() const { return num == 0 ? -1 : (shares_gpu() ? 0 : num); }
};

struct NodeState {
  int64_t cpu_cap = 0, cpu_left = 0;
  int64_t mem_cap = 0, mem_left = 0;
  int model = -1;  // ModelTable id; -1 for CPU-only nodes
  int gpus = 0;
  std::array<int32_t, kMaxGpus> left{};  // milli-GPU left per GPU (index = device index)
  std::array<int32_t, kMaxGpus + 1> affinity{};  // tasks on the node per Demand::affinity() tag
  uint32_t version = 1;  // bumped on every change (score caches key on it)

  int64_t total_left() const;
  int fully_free() const;
  // GPUs with at least `milli` left.
  int gpus_with(int32_t milli) const;
  bool accessible(const Demand& d) const { return d.models == 0 || (model >= 0 && ((d.models >> model) & 1)); }
  // The FGD simulator's filter (Open-Gpu-Share plus NodeResourcesFit for CPU
  // and memory): the task fits here.
  bool fits(const Demand& d) const;
  // The used share of GPU milli (capacity minus left).
  int64_t used_milli() const { return int64_t{gpus} * kMilli - total_left(); }
};

// The node after a GPU share lands on GPU `gpu` (CPU and that GPU's milli).
NodeState after_share(const NodeState& node, const Demand& d, int gpu);
// The node after a task of whole GPUs (or none) lands: CPU, then each GPU from
// the one with the least left that fits (the FGD simulator's NodeResource.Sub).
NodeState after_whole(const NodeState& node, const Demand& d);

// A task shape and how often it occurs among "typical" tasks (frequencies sum to 1).
struct TypicalShape {
  Demand demand;
  double frequency = 0;
};

// The FGD simulator's typical pods: task shapes (CPU, per-GPU milli, GPU count,
// models; memory is not part of a shape there) by decreasing count, the most
// frequent ones until they cover `coverage` of the tasks, frequencies
// renormalized over those. CPU-only tasks are included.
std::vector<TypicalShape> typical_shapes(const std::vector<Demand>& tasks, double coverage = 0.95);

// Fragmented GPU milli of a node for the typical shapes (the FGD paper's F_n(M)):
// for each shape, the idle GPU milli it cannot use -- all of it when the shape
// cannot run on the node (no GPU asked, not enough CPU, model, not enough GPUs),
// otherwise the GPUs with less left than the shape's per-GPU milli.
double node_fragmentation(const NodeState& node, const std::vector<TypicalShape>& shapes);

// node_fragmentation with a memo keyed by what it depends on (model, CPU left,
// the multiset of GPU milli left): nodes repeat states a lot.
class FragmentationMemo {
 public:
  explicit FragmentationMemo(const std::vector<TypicalShape>* shapes) : shapes_(shapes) {}
  double operator()(const NodeState& node);
  size_t size() const { return memo_.size(); }
  // Forget every value (the shapes it points at changed).
  void clear() { memo_.clear(); }
  // draplane's measure (sim/draplane_policy.h) adds the idle GPU milli the
  // node's CPU cannot feed: weight * max(0, idle milli - cpu_left / cpu_per_milli).
  void set_stranding(double weight, double cpu_per_milli) {
    strand_weight_ = weight;
    cpu_per_milli_ = cpu_per_milli;
    memo_.clear();
  }

 private:
  struct Key {
    int64_t cpu_left;
    int32_t model;
    std::array<int32_t, kMaxGpus> left;  // sorted, descending, zero-padded
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const;
  };
  const std::vector<TypicalShape>* shapes_;
  double strand_weight_ = 0, cpu_per_milli_ = 0;
  std::unordered_map<Key, double, Hash> memo_;
};

}  // namespace draplane::placement
