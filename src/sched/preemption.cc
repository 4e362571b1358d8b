#include "sched/preemption.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace draplane::sched::preemption {
namespace {

// Lower priority, or reclaimable from another queue.
bool may_evict(const Preemptor& preemptor, const PodInfo& p) {
  return p.priority < preemptor.priority || (preemptor.reclaimable && preemptor.reclaimable(p));
}

// A group of pods that is evicted or spared together: one pod, or a gang.
struct Unit {
  std::vector<const PodInfo*> on_node;   // members on the node examined
  std::vector<const PodInfo*> elsewhere;  // members on other nodes
  int32_t priority = std::numeric_limits<int32_t>::min();  // highest member priority
  int64_t start_time = std::numeric_limits<int64_t>::max();  // earliest member start
  bool terminating = true;  // every member is being deleted already
};

// Upstream's MoreImportantPod: higher priority, then earlier start; before
// both, a unit already being deleted is the least important (reprieved last,
// so an earlier preemption's victims are counted out before new ones).
bool more_important(const Unit& a, const Unit& b) {
  if (a.terminating != b.terminating) return !a.terminating;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.start_time < b.start_time;
}

void add_member(Unit& u, const PodInfo* p, bool on_node) {
  (on_node ? u.on_node : u.elsewhere).push_back(p);
  u.priority = std::max(u.priority, p->priority);
  u.start_time = std::min(u.start_time, p->start_time);
  u.terminating = u.terminating && p->terminating;
}

// The pods by node and by gang, and the gangs no member of which may be
// evicted; built once per search (looking at every pod for every node was
// quadratic at 1,000 nodes).
struct PodIndex {
  std::unordered_map<std::string_view, std::vector<const PodInfo*>> by_node, by_gang;
  std::set<std::string_view> protected_gangs;
};

PodIndex index_pods(const Preemptor& preemptor, const std::vector<PodInfo>& pods) {
  PodIndex ix;
  for (const PodInfo& p : pods) {
    if (p.key == preemptor.key) continue;
    ix.by_node[p.node].push_back(&p);
    if (p.gang.empty()) continue;
    ix.by_gang[p.gang].push_back(&p);
    if (!may_evict(preemptor, p)) ix.protected_gangs.insert(p.gang);
  }
  return ix;
}

// The node's potential victims as units: every pod of lower priority, with
// its whole gang; gangs with a member the preemptor may not preempt are out.
std::vector<Unit> potential_victims(const Preemptor& preemptor, const std::string& node, const PodIndex& ix) {
  std::vector<Unit> units;
  auto on_node = ix.by_node.find(node);
  if (on_node == ix.by_node.end()) return units;
  std::map<std::string_view, Unit> gangs;  // in name order
  for (const PodInfo* p : on_node->second) {
    if (p->gang.empty()) {
      if (!may_evict(preemptor, *p)) continue;
      Unit u;
      add_member(u, p, true);
      units.push_back(std::move(u));
    } else if (!ix.protected_gangs.contains(p->gang) && !gangs.contains(p->gang)) {
      Unit& u = gangs[p->gang];
      for (const PodInfo* m : ix.by_gang.at(p->gang)) add_member(u, m, m->node == node);
    }
  }
  for (auto& [name, u] : gangs) units.push_back(std::move(u));
  std::stable_sort(units.begin(), units.end(), more_important);
  return units;
}

std::vector<const PodInfo*> removed_pods(const std::vector<Unit>& units, const std::vector<bool>& removed) {
  std::vector<const PodInfo*> out;
  for (size_t i = 0; i < units.size(); ++i)
    if (removed[i]) out.insert(out.end(), units[i].on_node.begin(), units[i].on_node.end());
  return out;
}

// upstream's SelectVictimsOnNode. nullopt: the node is no candidate.
Result<std::optional<Victims>> select_victims(const Preemptor& preemptor, const std::string& node,
                                              const PodIndex& pods, const FitFn& fits) {
  std::vector<Unit> units = potential_victims(preemptor, node, pods);
  std::vector<bool> removed(units.size(), true);
  auto all_gone = fits(node, removed_pods(units, removed));
  if (!all_gone) return all_gone.error();
  if (!*all_gone) return std::optional<Victims>{};
  // Reprieve, most important first: put the unit back if it still fits.
  for (size_t i = 0; i < units.size(); ++i) {
    removed[i] = false;
    auto still = fits(node, removed_pods(units, removed));
    if (!still) return still.error();
    if (!*still) removed[i] = true;
  }
  Victims v;
  v.node = node;
  v.highest_priority = std::numeric_limits<int32_t>::min();
  for (size_t i = 0; i < units.size(); ++i) {
    if (!removed[i]) continue;
    for (const auto* members : {&units[i].on_node, &units[i].elsewhere})
      for (const PodInfo* p : *members) v.pods.push_back(*p);
  }
  std::stable_sort(v.pods.begin(), v.pods.end(), [](const PodInfo& a, const PodInfo& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.start_time < b.start_time;
  });
  for (const PodInfo& p : v.pods) {
    v.highest_priority = std::max(v.highest_priority, p.priority);
    v.priority_sum += int64_t{p.priority} + (int64_t{1} << 31);
  }
  if (preemptor.victims_allowed && !preemptor.victims_allowed(v.pods)) return std::optional<Victims>{};
  return std::optional<Victims>{std::move(v)};
}

// Earliest start among the victims of the highest priority (upstream's
// GetEarliestPodStartTime over them).
int64_t earliest_start_of_highest(const Victims& v) {
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (const PodInfo& p : v.pods)
    if (p.priority == v.highest_priority) earliest = std::min(earliest, p.start_time);
  return earliest;
}

// upstream's pickOneNodeForPreemption: each criterion keeps the best nodes,
// a tie goes to the next; the first remaining node wins.
size_t pick_node(const std::vector<Victims>& candidates) {
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].pods.empty()) return i;
  std::vector<size_t> keep(candidates.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = i;
  auto narrow = [&](auto key) {  // keeps the nodes with the smallest key
    auto best = key(candidates[keep[0]]);
    for (size_t i : keep) best = std::min(best, key(candidates[i]));
    std::erase_if(keep, [&](size_t i) { return key(candidates[i]) != best; });
  };
  narrow([](const Victims& v) { return v.highest_priority; });
  narrow([](const Victims& v) { return v.priority_sum; });
  narrow([](const Victims& v) { return v.pods.size(); });
  narrow([](const Victims& v) { return -earliest_start_of_highest(v); });
  return keep[0];
}

std::optional<std::string> not_eligible(const Preemptor& preemptor, const std::vector<PodInfo>& pods) {
  if (preemptor.preemption_policy == kPreemptNever) return "not eligible due to preemptionPolicy=Never.";
  if (preemptor.nominated_node.empty()) return std::nullopt;
  for (const PodInfo& p : pods)
    if (p.node == preemptor.nominated_node && p.terminating && p.priority < preemptor.priority)
      return "not eligible due to a terminating pod on the nominated node.";
  return std::nullopt;
}

}  // namespace

Result<PostFilterResult> post_filter(const Preemptor& preemptor, const std::vector<NodeCandidate>& nodes,
                                     const std::vector<PodInfo>& pods, const FitFn& fits) {
  PostFilterResult out;
  if (auto why = not_eligible(preemptor, pods)) {
    out.outcome = Outcome::kNotEligible;
    out.message = *why;
    return out;
  }
  std::vector<Victims> candidates;
  size_t not_helpful = 0, no_victims = 0;
  // upstream's DryRunPreemption stops once it has max(10% of the nodes, 100)
  // candidates (minCandidateNodesPercentage, minCandidateNodesAbsolute).
  const size_t enough = std::max<size_t>(nodes.size() / 10, 100);
  const PodIndex index = index_pods(preemptor, pods);
  for (const NodeCandidate& n : nodes) {
    if (candidates.size() >= enough) break;
    if (!n.preemption_may_help) {
      ++not_helpful;
      continue;
    }
    auto v = select_victims(preemptor, n.name, index, fits);
    if (!v) return v.error();
    if (*v) candidates.push_back(std::move(**v));
    else ++no_victims;
  }
  if (candidates.empty()) {
    out.outcome = Outcome::kNoCandidate;
    std::string reasons;
    if (no_victims > 0) reasons = std::to_string(no_victims) + " No preemption victims found for incoming pod";
    if (not_helpful > 0)
      reasons += (reasons.empty() ? "" : ", ") + std::to_string(not_helpful) + " Preemption is not helpful for scheduling";
    out.message = "preemption: 0/" + std::to_string(nodes.size()) + " nodes are available: " + reasons + ".";
    return out;
  }
  out.outcome = Outcome::kNominated;
  out.victims = std::move(candidates[pick_node(candidates)]);
  return out;
}

}  // namespace draplane::sched::preemption
