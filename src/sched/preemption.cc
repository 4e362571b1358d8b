#include "sched/preemption.h"

#include <algorithm>
#include <iterator>
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

// The pods by node and by gang as the search asks for them, each fetched
// once: a search examines some hundred nodes, and reading every pod of a
// large cluster up front was most of its cost.
class PodIndex {
 public:
  PodIndex(const Preemptor& preemptor, PodSource& source) : preemptor_(preemptor), source_(source) {}

  // The pods on `node`, the preemptor left out.
  const std::vector<PodInfo>& on_node(const std::string& node) { return fetch(by_node_, node, &PodSource::on_node); }
  // Every member of gang `gang`, on any node.
  const std::vector<PodInfo>& in_gang(const std::string& gang) { return fetch(by_gang_, gang, &PodSource::in_gang); }
  // A gang with a member the preemptor may not evict is never a victim.
  bool protected_gang(const std::string& gang) {
    auto [it, fresh] = protected_.emplace(gang, false);
    if (fresh) {
      const auto& members = in_gang(gang);
      it->second = std::any_of(members.begin(), members.end(), [&](const PodInfo& m) { return !may_evict(preemptor_, m); });
    }
    return it->second;
  }

 private:
  using Fetch = std::vector<PodInfo> (PodSource::*)(const std::string&);
  const std::vector<PodInfo>& fetch(std::unordered_map<std::string, std::vector<PodInfo>>& memo,
                                    const std::string& name, Fetch get) {
    auto it = memo.find(name);
    if (it != memo.end()) return it->second;
    std::vector<PodInfo> pods = (source_.*get)(name);
    std::erase_if(pods, [&](const PodInfo& p) { return p.key == preemptor_.key; });
    return memo.emplace(name, std::move(pods)).first->second;
  }

  const Preemptor& preemptor_;
  PodSource& source_;
  // Stable addresses: units point at the pods.
  std::unordered_map<std::string, std::vector<PodInfo>> by_node_, by_gang_;
  std::unordered_map<std::string, bool> protected_;
};

// The node's potential victims as units: every pod of lower priority, with
// its whole gang; gangs with a member the preemptor may not preempt are out.
std::vector<Unit> potential_victims(const Preemptor& preemptor, const std::string& node, PodIndex& ix) {
  std::vector<Unit> units;
  std::map<std::string_view, Unit> gangs;  // in name order
  for (const PodInfo& p : ix.on_node(node)) {
    if (p.gang.empty()) {
      if (!may_evict(preemptor, p)) continue;
      Unit u;
      add_member(u, &p, true);
      units.push_back(std::move(u));
    } else if (!gangs.contains(p.gang) && !ix.protected_gang(p.gang)) {
      Unit& u = gangs[p.gang];
      for (const PodInfo& m : ix.in_gang(p.gang)) add_member(u, &m, m.node == node);
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

// The reprieve outcome of nodes by Preemptor::node_key: which units stay
// removed, or nullopt when the node was no candidate.
using Outcomes = std::unordered_map<std::string, std::optional<std::vector<bool>>>;

// Which units must go for the preemptor to fit (upstream's reprieve loop);
// nullopt when it does not fit even with all of them gone.
Result<std::optional<std::vector<bool>>> reprieve(const std::string& node, const std::vector<Unit>& units,
                                                  const FitFn& fits) {
  std::vector<bool> removed(units.size(), true);
  auto all_gone = fits(node, removed_pods(units, removed));
  if (!all_gone) return all_gone.error();
  if (!*all_gone) return std::optional<std::vector<bool>>{};
  // Reprieve, most important first: put the unit back if it still fits.
  for (size_t i = 0; i < units.size(); ++i) {
    removed[i] = false;
    auto still = fits(node, removed_pods(units, removed));
    if (!still) return still.error();
    if (!*still) removed[i] = true;
  }
  return std::optional<std::vector<bool>>{std::move(removed)};
}

// upstream's SelectVictimsOnNode. nullopt: the node is no candidate.
Result<std::optional<Victims>> select_victims(const Preemptor& preemptor, const std::string& node,
                                              PodIndex& pods, const FitFn& fits, Outcomes& outcomes) {
  std::vector<Unit> units = potential_victims(preemptor, node, pods);
  std::optional<std::string> key;
  if (preemptor.node_key && !units.empty()) {
    std::vector<std::vector<const PodInfo*>> shape;
    for (const Unit& u : units) shape.push_back(u.on_node);
    key = preemptor.node_key(node, shape);
  }
  std::optional<std::vector<bool>> outcome;
  if (auto seen = key ? outcomes.find(*key) : outcomes.end(); seen != outcomes.end()) {
    outcome = seen->second;
  } else {
    auto found = reprieve(node, units, fits);
    if (!found) return found.error();
    outcome = std::move(*found);
    if (key) outcomes.emplace(std::move(*key), outcome);
  }
  if (!outcome) return std::optional<Victims>{};
  const std::vector<bool>& removed = *outcome;
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

std::optional<std::string> not_eligible(const Preemptor& preemptor, PodIndex& pods) {
  if (preemptor.preemption_policy == kPreemptNever) return "not eligible due to preemptionPolicy=Never.";
  if (preemptor.nominated_node.empty()) return std::nullopt;
  for (const PodInfo& p : pods.on_node(preemptor.nominated_node))
    if (p.terminating && p.priority < preemptor.priority)
      return "not eligible due to a terminating pod on the nominated node.";
  return std::nullopt;
}

}  // namespace

Result<PostFilterResult> post_filter(const Preemptor& preemptor, const std::vector<NodeCandidate>& nodes,
                                     PodSource& pods, const FitFn& fits) {
  PostFilterResult out;
  PodIndex index(preemptor, pods);
  if (auto why = not_eligible(preemptor, index)) {
    out.outcome = Outcome::kNotEligible;
    out.message = *why;
    return out;
  }
  std::vector<Victims> candidates;
  size_t not_helpful = 0, no_victims = 0;
  // upstream's DryRunPreemption stops once it has max(10% of the nodes, 100)
  // candidates (minCandidateNodesPercentage, minCandidateNodesAbsolute).
  const size_t enough = std::max<size_t>(nodes.size() / 10, 100);
  Outcomes outcomes;
  for (const NodeCandidate& n : nodes) {
    if (candidates.size() >= enough) break;
    if (!n.preemption_may_help) {
      ++not_helpful;
      continue;
    }
    auto v = select_victims(preemptor, n.name, index, fits, outcomes);
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

Result<PostFilterResult> post_filter(const Preemptor& preemptor, const std::vector<NodeCandidate>& nodes,
                                     const std::vector<PodInfo>& pods, const FitFn& fits) {
  class Listed final : public PodSource {
   public:
    explicit Listed(const std::vector<PodInfo>& pods) : pods_(pods) {}
    std::vector<PodInfo> on_node(const std::string& node) override {
      return matching([&](const PodInfo& p) { return p.node == node; });
    }
    std::vector<PodInfo> in_gang(const std::string& gang) override {
      return matching([&](const PodInfo& p) { return p.gang == gang; });
    }

   private:
    std::vector<PodInfo> matching(const std::function<bool(const PodInfo&)>& keep) const {
      std::vector<PodInfo> out;
      std::copy_if(pods_.begin(), pods_.end(), std::back_inserter(out), keep);
      return out;
    }
    const std::vector<PodInfo>& pods_;
  } listed(pods);
  return post_filter(preemptor, nodes, listed, fits);
}

}  // namespace draplane::sched::preemption
