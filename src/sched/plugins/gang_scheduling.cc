#include "sched/plugins/gang_scheduling.h"

#include <algorithm>
#include <charconv>

#include "sched/gang.h"

namespace draplane::sched {

std::optional<GangSpec> gang_of(const api::Pod& pod) {
  // The Workload API's membership comes first: the annotation is a shorthand.
  if (pod.spec.schedulingGroup && pod.spec.schedulingGroup->podGroupName &&
      !pod.spec.schedulingGroup->podGroupName->empty()) {
    return GangSpec{*pod.spec.schedulingGroup->podGroupName, 1, true};
  }
  auto it = pod.metadata.annotations.find(kGangAnnotation);
  if (it == pod.metadata.annotations.end() || it->second.empty()) return std::nullopt;
  GangSpec g{it->second, 1};
  auto m = pod.metadata.annotations.find(kGangMinMemberAnnotation);
  if (m != pod.metadata.annotations.end()) {
    int v = 0;
    const std::string& t = m->second;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && ptr == t.data() + t.size() && v > 0) g.min_member = v;
  }
  return g;
}

std::optional<GangSpec> gang_of_group(const api::PodGroup& group) {
  if (!group.spec.schedulingPolicy.gang) return std::nullopt;
  return GangSpec{group.metadata.name, std::max(1, group.spec.schedulingPolicy.gang->minCount), true};
}

namespace plugins {

framework::Status GangScheduling::permit(framework::CycleState&, const framework::NodeFit&) {
  if (!in_group_) return {};
  if (++reserved_ < needed_) return framework::Status(framework::Code::kWait, "waiting for the gang's other members");
  return {};
}

}  // namespace plugins
}  // namespace draplane::sched
