// Scheduler::schedule_group: a gang's members through PreFilter ... Reserve
// and Permit against one cache state (each sees the devices of those before
// it taken); GangScheduling's Permit holds them until enough are reserved;
// then all are bound, or all are unreserved (see gang.h).
#include <memory>

#include "sched/gang.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/scheduler.h"

namespace draplane::sched {

CycleResult Scheduler::schedule_group(const std::string& key, const std::string& gang, int min_member) {
  auto now = clock_.now();
  const std::string ns = cache_.pod(key)->metadata.namespace_;
  // Members: the popped pod first, then the other pending members by key.
  // Members already bound count towards min_member: a gang placed earlier
  // takes late members one by one, and one partly placed is completed.
  std::vector<std::string> members{key};
  int admitted = 0;
  for (const auto& [k, p] : cache_.pods()) {
    if (k == key || p.metadata.namespace_ != ns) continue;
    auto g = gang_of(p);
    if (!g || g->name != gang) continue;
    if (is_ours_pending(p)) members.push_back(k);
    else if (pod_is_active(p) && (!p.spec.nodeName.empty() || !cache_.bound_node(k).empty())) ++admitted;
  }
  auto give_up = [&](const std::string& msg) {
    for (const auto& m : members) {
      queue_.unschedulable(m, now);
      if (const api::Pod* p = cache_.pod(m)) mark_unschedulable(*p, msg);
    }
    ++stats_.unschedulable;
    return CycleResult{Outcome::kUnschedulable, key, "", msg};
  };
  const std::string gang_id = "gang " + ns + "/" + gang;
  const int exist = static_cast<int>(members.size()) + admitted;
  if (exist < min_member) {
    return give_up(gang_id + ": " + std::to_string(exist) + " of " + std::to_string(min_member) + " pods (" +
                   kGangMinMemberAnnotation + ") exist");
  }
  struct Member {
    CycleState cs;
    NodeFit fit;
    Reservation reservation;
  };
  std::vector<std::unique_ptr<Member>> placed;
  std::vector<std::string> left_out;
  std::string first_failure;
  gang_->begin_group(min_member - admitted);
  bool allowed = min_member <= admitted;
  for (const auto& m : members) {
    auto mem = std::make_unique<Member>();
    if (!start_cycle(m, mem->cs)) continue;
    std::string msg;
    if (!find_node(mem->cs, mem->fit, &msg) || !reserve(mem->cs, mem->fit, mem->reservation)) {
      if (first_failure.empty()) first_failure = "pod " + m + ": " + msg;
      left_out.push_back(m);
      continue;
    }
    framework::Status p = fw_->run_permit(mem->cs, mem->fit);
    if (p.rejected() || p.code() == framework::Code::kError) {
      unreserve(mem->cs, mem->fit, mem->reservation);
      if (first_failure.empty()) first_failure = "pod " + m + ": " + p.reason();
      left_out.push_back(m);
      continue;
    }
    // Success: this member completed the quorum; the waiting ones go with it.
    if (p.ok()) allowed = true;
    placed.push_back(std::move(mem));
  }
  gang_->end_group();
  if (!allowed) {
    // Members still waiting when the group's cycle ends: nothing stays reserved.
    for (auto& mem : placed) unreserve(mem->cs, mem->fit, mem->reservation);
    return give_up(gang_id + ": only " + std::to_string(static_cast<int>(placed.size()) + admitted) + " of " +
                   std::to_string(min_member) + " pods fit; " + first_failure);
  }
  CycleResult result{Outcome::kUnschedulable, key, "", gang_id + ": " + first_failure};
  for (auto& mem : placed) {
    CycleResult r = commit(mem->cs, mem->fit, mem->reservation);
    if (mem->cs.pod_key == key) result = r;
  }
  for (const auto& m : left_out) {
    queue_.unschedulable(m, now);
    if (const api::Pod* p = cache_.pod(m)) mark_unschedulable(*p, gang_id + ": " + first_failure);
  }
  return result;
}

}  // namespace draplane::sched
