// The paper's figure as SVG: GPU allocation ratio (y, %) against arrived
// workload (x, % of GPU capacity), one curve per policy (the mean over its
// seeds), and the fragmented share dashed in the same colour.
#pragma once

#include <string>
#include <vector>

#include "sim/simulator.h"

namespace draplane::sim {

std::string curves_svg(const std::vector<FillResult>& runs, const std::string& title);

}  // namespace draplane::sim
