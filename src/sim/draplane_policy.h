// draplane's own policy lives in placement/draplane_policy.h (shared with the
// live scheduler); the simulator uses it by these names.
#pragma once

#include "placement/draplane_policy.h"
#include "sim/model.h"

namespace draplane::sim {

using placement::apply_learned;
using placement::draplane_score;
using placement::draplane_share_gpu;
using placement::kStrandWeight;
using placement::ShapeLearner;

}  // namespace draplane::sim
