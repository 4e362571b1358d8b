// Gang scheduling (SPEC §6). A pod joins a gang in one of two ways:
// - Kubernetes' Workload API (KEP-4671, scheduling.k8s.io/v1beta1): the pod's
//   spec.schedulingGroup.podGroupName names a PodGroup in its namespace; the
//   PodGroup's spec.schedulingPolicy says gang{minCount} (all or nothing) or
//   basic (no gang: each pod is scheduled alone). A pod whose PodGroup does
//   not exist yet waits for it. The scheduler writes the PodGroup's
//   PodGroupInitiallyScheduled condition (False/Unschedulable with why, True
//   once the gang was placed; terminal).
// - draplane's shorthand: annotation draplane.io/gang: NAME (same namespace)
//   with draplane.io/gang-min-member: N (default 1); no object, no condition.
// A gang is placed together (Scheduler::schedule_group, gang.cc; Permit is
// plugins/gang_scheduling.h): the members are reserved one after another in
// the cache (each sees the devices of those before it taken); when fewer than
// N fit, every reservation is dropped and nothing is written or bound. Only
// when at least N are reserved are their claims written and pods bound.
// Members already bound count towards N: late members join a placed gang.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "api/types.h"

namespace draplane::sched {

inline constexpr const char* kGangAnnotation = "draplane.io/gang";
inline constexpr const char* kGangMinMemberAnnotation = "draplane.io/gang-min-member";

struct GangSpec {
  std::string name;          // the PodGroup's or the annotation's name
  int min_member = 1;        // a missing or non-positive / non-integer value counts as 1
  bool pod_group = false;    // named by spec.schedulingGroup (min_member comes from the PodGroup)
  bool operator==(const GangSpec&) const = default;
};

// The pod's gang, or nullopt when it has none. For a pod with
// spec.schedulingGroup, min_member is 1 until resolved against its PodGroup
// (gang_of_group).
std::optional<GangSpec> gang_of(const api::Pod& pod);

// Whether two pods' gangs are the same gang (same kind of membership and name).
inline bool same_gang(const GangSpec& a, const GangSpec& b) { return a.pod_group == b.pod_group && a.name == b.name; }

// The gang of a pod in PodGroup `group` (its spec.schedulingGroup names it):
// min_member from spec.schedulingPolicy.gang.minCount; nullopt for basic.
std::optional<GangSpec> gang_of_group(const api::PodGroup& group);

}  // namespace draplane::sched
