// `--policy NAME` of `draplane scheduler`, `server` and `up`: the placement
// policies of `draplane simulate --policy` (placement/policy.h: first-fit,
// random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd, draplane)
// plus `packing` (the scheduler's policy before the simulator's existed: the
// node left with the fewest free devices). Each sets how a node is chosen
// (SchedulerOptions::node_policy) and how devices are chosen within it
// (SchedulerOptions::policy: the allocator's first fit for first-fit, which is
// Kubernetes' DRA scheduler without scoring; packing otherwise).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "sched/scheduler.h"

namespace draplane::sched {

// The live default: the policy that wins in the simulator (docs/simulation.md).
constexpr std::string_view kDefaultPolicy = "draplane";

// Every accepted name, comma-separated, in `simulate --policy`'s order then packing.
std::string policy_names();
// Sets `options` for `name`; an error naming the flag and the valid names.
Result<void> apply_policy(std::string_view name, SchedulerOptions& options);

}  // namespace draplane::sched
