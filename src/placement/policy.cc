#include "placement/policy.h"

#include <algorithm>
#include <cmath>

#include "placement/draplane_policy.h"

namespace draplane::placement {
namespace {

constexpr int64_t kMaxScore = 100;
// The FGD simulator's normalization constants (a node's largest CPU and GPU).
constexpr double kMaxSpecCpu = 128000;
constexpr double kMaxSpecGpu = 8000;
constexpr int64_t kMaxSpecGpuInt = 8000;

struct NamedPolicy {
  PolicyKind kind;
  std::string_view name;
};
constexpr NamedPolicy kPolicies[] = {
    {PolicyKind::kFirstFit, "first-fit"},          {PolicyKind::kRandom, "random"},
    {PolicyKind::kDotProduct, "dot-product"},      {PolicyKind::kGpuClustering, "gpu-clustering"},
    {PolicyKind::kGpuPacking, "gpu-packing"},      {PolicyKind::kBestFit, "best-fit"},
    {PolicyKind::kFgd, "fgd"},                     {PolicyKind::kDraplane, "draplane"},
};

// First `num` whole free GPUs by index (the simulator's AllocateExclusiveGpuId).
std::vector<int> first_free(const NodeState& node, int num) {
  std::vector<int> out;
  for (int i = 0; i < node.gpus && static_cast<int>(out.size()) < num; ++i) {
    if (node.left[i] == kMilli) out.push_back(i);
  }
  return out;
}

// The GPU with the least milli left that still fits the share; lowest index on ties.
int tightest_gpu(const NodeState& node, int32_t milli) {
  int best = -1;
  for (int i = 0; i < node.gpus; ++i) {
    if (node.left[i] >= milli && (best < 0 || node.left[i] < node.left[best])) best = i;
  }
  return best;
}

int random_gpu(const NodeState& node, int32_t milli, Rng& rng) {
  int chosen = -1;
  uint64_t seen = 0;
  for (int i = 0; i < node.gpus; ++i) {
    if (node.left[i] >= milli && rng.below(++seen) == 0) chosen = i;
  }
  return chosen;
}

// FGD for a share: the best GPU and its score.
std::pair<int, int64_t> fgd_share(const NodeState& node, const Demand& d, FragmentationMemo& frag, double frag_now) {
  int best = -1;
  int64_t best_score = 0;
  for (int i = 0; i < node.gpus; ++i) {
    if (node.left[i] < d.milli) continue;
    int64_t s = fgd_score(frag_now, frag(after_share(node, d, i)));
    if (best < 0 || s > best_score) {
      best = i;
      best_score = s;
    }
  }
  return {best, best_score};
}

int64_t dot_product_score(const NodeState& node, const Demand& d) {
  double node_vec[2] = {static_cast<double>(node.cpu_left) / kMaxSpecCpu,
                        static_cast<double>(node.total_left()) / kMaxSpecGpu};
  double pod_vec[2] = {static_cast<double>(d.cpu) / kMaxSpecCpu, static_cast<double>(d.total_milli()) / kMaxSpecGpu};
  double dot = (node_vec[0] * pod_vec[0] + node_vec[1] * pod_vec[1]) / 2;
  return static_cast<int64_t>(static_cast<double>(kMaxScore) * (1 - dot));
}

int64_t best_fit_score(const NodeState& node, const Demand& d) {
  double s = (static_cast<double>(node.cpu_left - d.cpu) / kMaxSpecCpu) * 0.5 +
             (static_cast<double>(node.total_left() - d.total_milli()) / kMaxSpecGpu) * 0.5;
  return static_cast<int64_t>((1.0 - s) * static_cast<double>(kMaxScore));
}

int64_t gpu_clustering_score(const NodeState& node, const Demand& d) {
  int tag = d.affinity();
  if (tag < 0) return 0;
  int tags = 0;
  for (int32_t c : node.affinity) tags += c > 0;
  int64_t fill = kMaxScore / 4 * (kMaxSpecGpuInt - node.total_left()) / kMaxSpecGpuInt;
  if (node.affinity[tag] > 0) return fill + (tags == 1 ? kMaxScore * 3 / 4 : kMaxScore * 2 / 4);
  return fill + (tags == 0 ? kMaxScore / 4 : 0);
}

int64_t gpu_packing_score(const NodeState& node, const Demand& d) {
  if (d.num == 0) return 0;
  int free = node.fully_free();
  if (free == node.gpus) return std::max<int64_t>(kMaxScore / 3 - free, free);
  std::array<int, kMaxGpus> order{};
  for (int i = 0; i < node.gpus; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.begin() + node.gpus,
                   [&](int a, int b) { return node.left[a] < node.left[b]; });
  int want = d.num, whole_used = 0;
  int64_t free_ratio = 0;
  for (int k = 0; k < node.gpus && want > 0; ++k) {
    int32_t left = node.left[order[k]];
    if (d.milli <= left) {
      --want;
      whole_used += left == kMilli;
      free_ratio += left * 100 / kMilli;
    }
  }
  if (whole_used > 0) return std::max<int64_t>(kMaxScore / 2 - whole_used, kMaxScore / 3);
  return std::max<int64_t>(kMaxScore - free_ratio / 10, kMaxScore / 2);
}

}  // namespace

Result<PolicyKind> parse_policy(std::string_view name) {
  std::string accepted;
  for (const auto& p : kPolicies) {
    if (p.name == name) return p.kind;
    accepted += accepted.empty() ? "" : ", ";
    accepted += p.name;
  }
  return invalid_error("unknown policy \"" + std::string(name) + "\": accepted values are " + accepted);
}

std::string_view policy_name(PolicyKind kind) {
  for (const auto& p : kPolicies) {
    if (p.kind == kind) return p.name;
  }
  return "?";
}

const std::vector<PolicyKind>& all_policies() {
  static const std::vector<PolicyKind> all = [] {
    std::vector<PolicyKind> v;
    for (const auto& p : kPolicies) v.push_back(p.kind);
    return v;
  }();
  return all;
}

uint64_t Rng::below(uint64_t n) {
  // Rejection sampling: unbiased and the same on every standard library.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = 0;
  do {
    x = engine_();
  } while (x >= limit);
  return x % n;
}

int64_t fgd_score(double frag_before, double frag_after) {
  double x = (frag_before - frag_after) / 1000;
  return static_cast<int64_t>(1.0 / (1.0 + std::exp(-x)) * static_cast<double>(kMaxScore));
}

int64_t score_node(PolicyKind kind, const NodeState& node, const Demand& d, FragmentationMemo& frag,
                   double frag_now) {
  switch (kind) {
    case PolicyKind::kFirstFit:
    case PolicyKind::kRandom:
      return 0;
    case PolicyKind::kDotProduct:
      return dot_product_score(node, d);
    case PolicyKind::kGpuClustering:
      return gpu_clustering_score(node, d);
    case PolicyKind::kGpuPacking:
      return gpu_packing_score(node, d);
    case PolicyKind::kBestFit:
      return best_fit_score(node, d);
    case PolicyKind::kFgd:
      if (d.shares_gpu()) return fgd_share(node, d, frag, frag_now).second;
      return fgd_score(frag_now, frag(after_whole(node, d)));
    case PolicyKind::kDraplane:
      return draplane_score(node, d, frag, frag_now);
  }
  return 0;
}

std::vector<int> choose_gpus(PolicyKind kind, const NodeState& node, const Demand& d, Rng& rng,
                             FragmentationMemo& frag, double frag_now) {
  if (d.num == 0 || kind == PolicyKind::kFirstFit) return {};
  if (!d.shares_gpu()) return first_free(node, d.num);
  int gpu = -1;
  switch (kind) {
    case PolicyKind::kRandom:
      gpu = random_gpu(node, d.milli, rng);
      break;
    case PolicyKind::kFgd:
      gpu = fgd_share(node, d, frag, frag_now).first;
      break;
    case PolicyKind::kDraplane:
      gpu = draplane_share_gpu(node, d, frag);
      break;
    default:
      gpu = tightest_gpu(node, d.milli);
      break;
  }
  if (gpu < 0) return {};
  return {gpu};
}

}  // namespace draplane::placement
