// Gang scheduling (SPEC §6): pods that carry annotation draplane.io/gang: NAME
// (same namespace) form a gang with draplane.io/gang-min-member: N (default 1).
// A gang is placed together (Scheduler::schedule_group, gang.cc; Permit is
// plugins/gang_scheduling.h): the members are reserved one after another in
// the cache (each sees the devices of those before it taken); when fewer than
// N fit, every reservation is dropped and nothing is written or bound. Only
// when at least N are reserved are their claims written and pods bound.
// Members already bound count towards N: late members join a placed gang.
//
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>

#include "api/types.h"

namespace draplane::sched {

inline constexpr const char* kGangAnnotation = "draplane.io/gang";
inline constexpr const char* kGangMinMemberAnnotation = "draplane.io/gang-min-member";

struct GangSpec {
  std::string name;
  int min_member = 1;  // a missing or non-positive / non-integer value counts as 1
};

// The pod's gang, or nullopt when it has none.
std::optional<GangSpec> gang_of(const api::Pod& pod);

}  // namespace draplane::sched
