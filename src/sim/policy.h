// The placement policies live in placement/policy.h (shared with the live
// scheduler, `draplane scheduler --policy`); the simulator uses them by these names.
#pragma once

#include "placement/policy.h"
#include "sim/model.h"

namespace draplane::sim {

using placement::all_policies;
using placement::choose_gpus;
using placement::fgd_score;
using placement::parse_policy;
using placement::policy_name;
using placement::PolicyKind;
using placement::Rng;
using placement::score_node;

}  // namespace draplane::sim
