#include "placement/draplane_policy.h"

#include <cmath>

namespace draplane::placement {

void ShapeLearner::observe(const Demand& d) {
  demands_.push_back(d);
  ++seen_;
  if (d.num > 0) {
    gpu_cpu_ += d.cpu;
    gpu_milli_ += d.total_milli();
  }
}

bool ShapeLearner::refresh_due() const {
  if (seen_ == 0) return false;
  if (seen_ < 1024) return (seen_ & (seen_ - 1)) == 0;  // powers of two
  return seen_ % 1024 == 0;
}

std::vector<TypicalShape> ShapeLearner::shapes(double coverage) const { return typical_shapes(demands_, coverage); }

double ShapeLearner::cpu_per_milli() const {
  return gpu_milli_ > 0 ? static_cast<double>(gpu_cpu_) / static_cast<double>(gpu_milli_) : 0;
}

void apply_learned(const ShapeLearner& learner, std::vector<TypicalShape>& shapes, FragmentationMemo& memo) {
  shapes = learner.shapes();
  memo.set_stranding(kStrandWeight, learner.cpu_per_milli());  // also clears the memo
}

namespace {

// 1/16 milli: finer than any change a placement makes, so that scores tie only
// when the measure does.
constexpr double kResolution = 16;

int64_t decrease(double before, double after) {
  return static_cast<int64_t>(std::llround((before - after) * kResolution));
}

}  // namespace

int draplane_share_gpu(const NodeState& node, const Demand& d, FragmentationMemo& memo) {
  int best = -1;
  double best_frag = 0;
  for (int i = 0; i < node.gpus; ++i) {
    if (node.left[i] < d.milli) continue;
    double f = memo(after_share(node, d, i));
    if (best < 0 || f < best_frag) {
      best = i;
      best_frag = f;
    }
  }
  return best;
}

int64_t draplane_score(const NodeState& node, const Demand& d, FragmentationMemo& memo, double frag_now) {
  if (d.shares_gpu()) {
    int gpu = draplane_share_gpu(node, d, memo);
    if (gpu < 0) return INT64_MIN;
    return decrease(frag_now, memo(after_share(node, d, gpu)));
  }
  return decrease(frag_now, memo(after_whole(node, d)));
}

}  // namespace draplane::placement
