// Scheduler::schedule_gang: reserve every member in the cache, then commit all
// or drop all (see gang.h).
#include "sched/gang.h"

#include <charconv>
#include <memory>

#include "sched/cycle_state.h"

namespace draplane::sched {

std::optional<GangSpec> gang_of(const api::Pod& pod) {
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

CycleResult Scheduler::schedule_gang(const std::string& key, const std::string& gang, int min_member) {
  auto now = clock_.now();
  const std::string ns = cache_.pod(key)->metadata.namespace_;
  // Members: the popped pod first, then the other pending members by key.
  std::vector<std::string> members{key};
  for (const auto& [k, p] : cache_.pods()) {
    if (k == key || p.metadata.namespace_ != ns || !is_ours_pending(p)) continue;
    auto g = gang_of(p);
    if (g && g->name == gang) members.push_back(k);
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
  if (static_cast<int>(members.size()) < min_member) {
    return give_up(gang_id + ": " + std::to_string(members.size()) + " of " + std::to_string(min_member) +
                   " pods (" + kGangMinMemberAnnotation + ") exist");
  }
  struct Member {
    CycleState cs;
    NodeFit fit;
    Reservation reservation;
  };
  std::vector<std::unique_ptr<Member>> placed;
  std::vector<std::string> left_out;
  std::string first_failure;
  for (const auto& m : members) {
    auto mem = std::make_unique<Member>();
    if (!start_cycle(m, mem->cs)) continue;
    std::string msg;
    if (!find_node(mem->cs, mem->fit, &msg)) {
      if (first_failure.empty()) first_failure = "pod " + m + ": " + msg;
      left_out.push_back(m);
      continue;
    }
    mem->reservation = reserve(mem->cs, mem->fit);
    placed.push_back(std::move(mem));
  }
  if (static_cast<int>(placed.size()) < min_member) {
    for (const auto& mem : placed) {
      for (const auto& k : mem->reservation.reserved_keys) cache_.forget_claim(k);
      cache_.forget_bound(mem->cs.pod_key);
    }
    return give_up(gang_id + ": only " + std::to_string(placed.size()) + " of " + std::to_string(min_member) +
                   " pods fit; " + first_failure);
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
