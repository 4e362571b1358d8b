// Scheduler::gang_cycle and schedule_group: a gang's members through PreFilter
// ... Reserve and Permit against one cache state (each sees the devices of
// those before it taken); GangScheduling's Permit holds them until enough are
// reserved; then all are bound, or all are unreserved (see gang.h). A
// PodGroup's PodGroupInitiallyScheduled condition follows the outcome.
#include <spdlog/spdlog.h>

#include <map>
#include <memory>
#include <set>

#include "api/workload.h"
#include "sched/gang.h"
#include "sched/plugins/gang_scheduling.h"
#include "sched/plugins/preemption.h"
#include "sched/pod_claims.h"
#include "sched/scheduler.h"

namespace draplane::sched {
namespace {

// What the pending members' claims still need, in words a person can act on:
// "needs 8 devices of class gpu.nvidia.com (each claim's devices with the same
// gpu.nvidia.com/clique)". Empty when they need no devices.
std::string shortfall(const std::vector<std::string>& members, const ClusterCache& cache) {
  std::map<std::string, int64_t> by_class;
  std::set<std::string> matched;
  std::set<std::string> seen;
  for (const auto& m : members) {
    const api::Pod* p = cache.pod(m);
    if (p == nullptr) continue;
    for (const auto& key : resolve_claims(*p, cache).keys) {
      const api::ResourceClaim* c = cache.claim(key);
      if (c == nullptr || c->status.allocation || !seen.insert(key).second) continue;
      for (const auto& r : c->spec.devices.requests) {
        if (r.exactly) {
          by_class[r.exactly->deviceClassName] += r.exactly->count.value_or(1);
        } else if (!r.firstAvailable.empty()) {
          by_class[r.firstAvailable.front().deviceClassName] += r.firstAvailable.front().count.value_or(1);
        }
      }
      for (const auto& k : c->spec.devices.constraints) {
        if (k.matchAttribute) matched.insert(*k.matchAttribute);
      }
    }
  }
  if (by_class.empty()) return "";
  std::string need;
  for (const auto& [cls, n] : by_class) {
    need += (need.empty() ? "" : " and ") + std::to_string(n) + " devices of class " + cls;
  }
  if (!matched.empty()) {
    std::string attrs;
    for (const auto& a : matched) attrs += (attrs.empty() ? "" : ", ") + a;
    need += " (each claim's devices with the same " + attrs + ")";
  }
  // How many of them are free is the first failure's per-node explanation
  // (free devices counted here would include other classes' devices).
  return "needs " + need;
}

}  // namespace

std::optional<CycleResult> Scheduler::gang_cycle(const std::string& key, const api::Pod& pod, Clock::TimePoint now) {
  std::optional<GangSpec> g = gang_of(pod);
  if (!g) return std::nullopt;
  if (g->pod_group) {
    const std::string group_key = pod.metadata.namespace_ + "/" + g->name;
    const api::PodGroup* group = cache_.pod_group(group_key);
    if (group == nullptr) {
      // The PodGroup may be created after its pods: they wait for it (its add wakes them).
      queue_.unschedulable(key, now);
      mark_unschedulable(pod, "waiting for PodGroup " + group_key + " (spec.schedulingGroup.podGroupName) to be created");
      ++stats_.unschedulable;
      return CycleResult{Outcome::kUnschedulable, key, "", "PodGroup " + group_key + " not found"};
    }
    g = gang_of_group(*group);
    if (!g) return std::nullopt;  // basic policy: scheduled one by one
  }
  return schedule_group(key, *g);
}

void Scheduler::set_pod_group_condition(const std::string& ns, const GangSpec& gang, bool scheduled,
                                        const std::string& message) {
  if (!gang.pod_group) return;
  const std::string key = ns + "/" + gang.name;
  const api::PodGroup* group = cache_.pod_group(key);
  if (group == nullptr) return;
  const std::string status = scheduled ? "True" : "False";
  const std::string reason = scheduled ? "Scheduled" : api::kPodGroupReasonUnschedulable;
  for (const auto& c : group->status.conditions) {
    if (c.type != api::kPodGroupInitiallyScheduled) continue;
    if (c.status == "True") return;  // terminal: the gang was placed once
    if (c.status == status && c.reason == reason && c.message == message) return;
  }
  // The cache shows our last write only when its event is back: do not repeat it meanwhile.
  std::string written = status + "\n" + reason + "\n" + message;
  auto [it, inserted] = group_condition_written_.try_emplace(key, written);
  if (!inserted) {
    if (it->second == written || it->second.starts_with("True\n")) return;
    it->second = written;
  }
  const std::string now = clock_.rfc3339();
  auto r = binder_.update_pod_group_status(*group, [&](api::PodGroup& g) {
    api::Condition* cond = nullptr;
    for (auto& c : g.status.conditions) {
      if (c.type == api::kPodGroupInitiallyScheduled) cond = &c;
    }
    if (cond != nullptr && cond->status == "True") return;
    if (cond == nullptr) {
      g.status.conditions.push_back(api::Condition{api::kPodGroupInitiallyScheduled, "", 0, now, "", ""});
      cond = &g.status.conditions.back();
    } else if (cond->status != status) {
      cond->lastTransitionTime = now;
    }
    cond->status = status;
    cond->reason = reason;
    cond->message = message;
    cond->observedGeneration = g.metadata.generation;
  });
  if (!r.has_value()) {
    log_->debug("PodGroup {}: condition not written: {}", key, r.error().message());
    group_condition_written_.erase(key);  // the next gang cycle writes it again
  }
}

CycleResult Scheduler::schedule_group(const std::string& key, const GangSpec& gang) {
  auto now = clock_.now();
  const int min_member = gang.min_member;
  const std::string ns = cache_.pod(key)->metadata.namespace_;
  // Members: the popped pod first, then the other pending members by key.
  // Members already bound count towards min_member: a gang placed earlier
  // takes late members one by one, and one partly placed is completed.
  std::vector<std::string> members{key};
  int admitted = 0;
  for (const auto& [k, p] : cache_.pods()) {
    if (k == key || p.metadata.namespace_ != ns) continue;
    auto g = gang_of(p);
    if (!g || !same_gang(*g, gang)) continue;
    if (is_ours_pending(p)) members.push_back(k);
    else if (pod_is_active(p) && (!p.spec.nodeName.empty() || !cache_.bound_node(k).empty())) ++admitted;
  }
  auto give_up = [&](const std::string& msg) {
    for (const auto& m : members) {
      queue_.unschedulable(m, now);
      if (const api::Pod* p = cache_.pod(m)) mark_unschedulable(*p, msg);
    }
    set_pod_group_condition(ns, gang, false, msg);
    ++stats_.unschedulable;
    return CycleResult{Outcome::kUnschedulable, key, "", msg};
  };
  const std::string gang_id = (gang.pod_group ? "PodGroup " : "gang ") + ns + "/" + gang.name;
  const int exist = static_cast<int>(members.size()) + admitted;
  if (exist < min_member) {
    const char* field = gang.pod_group ? "spec.schedulingPolicy.gang.minCount" : kGangMinMemberAnnotation;
    return give_up(gang_id + ": " + std::to_string(exist) + " of " + std::to_string(min_member) + " pods (" + field +
                   ") exist");
  }
  using Member = GangMember;
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
    const std::string preempting = preempt_ != nullptr ? preempt_for_gang(gang_id, placed, left_out, min_member - admitted) : "";
    // Members still waiting when the group's cycle ends: nothing stays reserved.
    for (auto it = placed.rbegin(); it != placed.rend(); ++it) unreserve((*it)->cs, (*it)->fit, (*it)->reservation);
    std::string why = shortfall(members, cache_);
    return give_up(gang_id + ": only " + std::to_string(static_cast<int>(placed.size()) + admitted) + " of " +
                   std::to_string(min_member) + " pods fit" + (why.empty() ? "" : " (" + why + ")") + "; " +
                   first_failure + preempting);
  }
  CycleResult result{Outcome::kUnschedulable, key, "", gang_id + ": " + first_failure};
  for (auto& mem : placed) {
    CycleResult r = commit(mem->cs, mem->fit, mem->reservation);
    if (mem->cs.pod_key == key) result = r;
  }
  if (!placed.empty()) {
    set_pod_group_condition(ns, gang, true,
                            std::to_string(static_cast<int>(placed.size()) + admitted) + " of " +
                                std::to_string(min_member) + " pods (minCount) placed");
  }
  for (const auto& m : left_out) {
    queue_.unschedulable(m, now);
    if (const api::Pod* p = cache_.pod(m)) mark_unschedulable(*p, gang_id + ": " + first_failure);
  }
  return result;
}

std::string Scheduler::preempt_for_gang(const std::string& gang_id,
                                        const std::vector<std::unique_ptr<GangMember>>& placed,
                                        const std::vector<std::string>& left_out, int needed) {
  if (left_out.empty()) return "";
  if (preempt_->gang_waiting(gang_id)) return "; waiting for the pods it preempted to go";
  // Per member placed in the simulation: the victims it needed, taken out of
  // the cache, then the member reserved. Undone last first.
  struct Step {
    std::unique_ptr<plugins::DefaultPreemption::Removal> removal;
    std::unique_ptr<GangMember> member;  // null: not reserved
  };
  std::vector<Step> steps;
  std::vector<std::string> victims;
  std::set<std::string> seen;
  int reserved = static_cast<int>(placed.size());
  auto place = [&](const std::string& key, GangMember& m, framework::NodeStatusMap* statuses) {
    std::string msg;
    return start_cycle(key, m.cs) && find_node(m.cs, m.fit, &msg, statuses);
  };
  for (const auto& key : left_out) {
    if (reserved >= needed) break;
    Step& step = steps.emplace_back();
    step.member = std::make_unique<GangMember>();
    framework::NodeStatusMap statuses;
    bool fits = place(key, *step.member, &statuses);
    if (!fits && !statuses.empty()) {
      auto found = preempt_->search(step.member->cs, statuses);
      if (found.has_value() && found->outcome == preemption::Outcome::kNominated) {
        std::vector<std::string> taken;
        for (const auto& v : found->victims.pods) {
          if (seen.insert(v.key).second) taken.push_back(v.key);
        }
        victims.insert(victims.end(), taken.begin(), taken.end());
        step.removal = preempt_->remove(taken);
        step.member = std::make_unique<GangMember>();  // placed again: the claims and nodes changed
        fits = place(key, *step.member, nullptr);
      }
    }
    if (!fits || !reserve(step.member->cs, step.member->fit, step.member->reservation)) {
      step.member.reset();
      break;
    }
    ++reserved;
  }
  std::vector<std::pair<std::string, std::string>> nominations;
  for (const auto& mem : placed) nominations.emplace_back(mem->cs.pod_key, mem->fit.node);
  for (const auto& step : steps) {
    if (step.member) nominations.emplace_back(step.member->cs.pod_key, step.member->fit.node);
  }
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (it->member) unreserve(it->member->cs, it->member->fit, it->member->reservation);
    it->removal.reset();
  }
  if (reserved < needed || victims.empty()) return "";
  preempt_->evict_for_gang(gang_id, nominations, victims);
  log_->info("{}: preempting {} pod(s) to place the gang", gang_id, victims.size());
  std::string names;
  for (size_t i = 0; i < victims.size() && i < 3; ++i) names += (i ? ", " : "") + victims[i];
  if (victims.size() > 3) names += ", ...";
  return "; preempting " + std::to_string(victims.size()) + " lower-priority pod(s) for the gang (" + names + ")";
}

}  // namespace draplane::sched
