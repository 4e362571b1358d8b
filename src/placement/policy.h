// Placement policies, after the FGD paper's public simulator
// (hkust-adsl/kubernetes-scheduler-simulator, pkg/simulator/plugin), with the
// settings its experiment scripts use:
//   random          RandomScore: a uniformly random feasible node, random GPU
//   dot-product     DotProductScore, dimExt merge, norm max (Tetris), best-fit GPU
//   gpu-clustering  GpuClusteringScore: same-kind tasks together, best-fit GPU
//   gpu-packing     GpuPackingScore: shared GPUs, then used nodes, then free nodes
//   best-fit        BestFitScore: least CPU+GPU left after placement, best-fit GPU
//   fgd             FGDScore: least growth of the node's fragmentation, GPU alike
// and
//   first-fit       what Kubernetes' DRA scheduler does without scoring: the
//                   first node (in node order) where the allocator finds devices,
//                   devices in the allocator's first-fit order.
//   draplane        draplane's own (sim/draplane_policy.h): FGD's gradient with
//                   CPU stranding and the distribution learned online; the default.
// Scores are the simulator's integers (0..100, truncated as it truncates), so
// ties -- broken uniformly at random, as kube-scheduler's selectHost does --
// come out as there. Every score is a function of (node state, task shape)
// only, which lets the simulator cache it per node version.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "placement/model.h"

namespace draplane::placement {

enum class PolicyKind { kFirstFit, kRandom, kDotProduct, kGpuClustering, kGpuPacking, kBestFit, kFgd, kDraplane };

Result<PolicyKind> parse_policy(std::string_view name);
std::string_view policy_name(PolicyKind kind);
// Every policy, in the order the paper lists them (first-fit first).
const std::vector<PolicyKind>& all_policies();

// Deterministic random numbers (same seed, same run, on every platform).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);

 private:
  std::mt19937_64 engine_;
};

// Node score for a task that fits the node (higher is better). `frag_now` is
// the policy's fragmentation measure of the node (FGD: node_fragmentation with the
// trace's typical shapes; draplane: its own measure, sim/draplane_policy.h).
int64_t score_node(PolicyKind kind, const NodeState& node, const Demand& d, FragmentationMemo& frag,
                   double frag_now);

// The GPUs (device indices) the policy gives the task on a node it fits; empty
// for tasks without GPU and for first-fit (the allocator chooses).
std::vector<int> choose_gpus(PolicyKind kind, const NodeState& node, const Demand& d, Rng& rng,
                             FragmentationMemo& frag, double frag_now);

// The FGD simulator's sigmoid-scaled fragmentation decrease, 0..100.
int64_t fgd_score(double frag_before, double frag_after);

}  // namespace draplane::placement
