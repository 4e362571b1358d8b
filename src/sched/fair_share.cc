#include "sched/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace draplane::sched::fair {
namespace {

// KAI gives over-quota shares in whole units: whole GPUs, millicores, bytes.
constexpr int64_t kRoundingUnit[kResources] = {1000, 1, 1};

// One sibling's state while one resource of its parent is divided.
struct Slot {
  const QueueInput* in = nullptr;
  size_t out = 0;            // index into the result
  int64_t requestable = 0;   // min(limit, demand)
  int64_t given = 0;
  long double remainder = 0;  // what rounding down withheld in its last unsatisfied round
};

int64_t want(const Slot& s) { return std::max<int64_t>(0, s.requestable - s.given); }

// Step 1: the guaranteed part. Returns what is left of `total`.
int64_t give_quotas(std::vector<Slot>& slots, int r, int64_t total) {
  int64_t remaining = total;
  for (Slot& s : slots) {
    int64_t quota = s.in->resources[r].quota;
    if (quota == kUnlimited) quota = total;
    s.given = std::min(std::max<int64_t>(0, quota), s.requestable);
    remaining -= s.given;
  }
  return remaining;
}

// Step 2 for one priority level: rounds of weighted offers until a round
// satisfies nobody or nothing is left. Returns what is left.
int64_t water_fill(std::vector<Slot*>& level, int r, int64_t remaining) {
  for (;;) {
    long double weights = 0;
    for (const Slot* s : level)
      if (want(*s) > 0) weights += s->in->resources[r].over_quota_weight;
    if (weights <= 0 || remaining <= 0) return std::max<int64_t>(0, remaining);
    const int64_t offered = remaining;
    bool someone_satisfied = false;
    for (Slot* s : level) {
      const double w = s->in->resources[r].over_quota_weight;
      if (w <= 0 || want(*s) == 0 || remaining == 0) continue;
      const long double share = static_cast<long double>(offered) * w / weights;
      if (static_cast<long double>(want(*s)) <= share) {
        remaining -= want(*s);
        s->given = s->requestable;
        s->remainder = 0;
        someone_satisfied = true;
        continue;
      }
      const int64_t unit = kRoundingUnit[r];
      const int64_t whole = static_cast<int64_t>(std::floor(share / unit)) * unit;
      s->given += whole;
      remaining -= whole;
      s->remainder = share - static_cast<long double>(whole);
    }
    if (!someone_satisfied) return remaining;
  }
}

// Step 2's tail: the units rounding withheld, one each, largest remainder first.
int64_t give_leftovers(std::vector<Slot*>& unsatisfied, int r, int64_t remaining) {
  std::stable_sort(unsatisfied.begin(), unsatisfied.end(), [](const Slot* a, const Slot* b) {
    if (a->in->priority != b->in->priority) return a->in->priority > b->in->priority;
    if (a->remainder != b->remainder) return a->remainder > b->remainder;
    return a->in->name < b->in->name;
  });
  for (Slot* s : unsatisfied) {
    if (remaining <= 0) break;
    const int64_t give = std::min({kRoundingUnit[r], remaining, want(*s)});
    s->given += give;
    remaining -= give;
  }
  return remaining;
}

// Divides resource `r` of `total` among `slots` (siblings).
void divide(std::vector<Slot>& slots, int r, int64_t total) {
  int64_t remaining = give_quotas(slots, r, total);
  if (remaining <= 0) return;
  std::map<int64_t, std::vector<Slot*>, std::greater<>> by_priority;
  for (Slot& s : slots)
    if (s.in->resources[r].over_quota_weight > 0) by_priority[s.in->priority].push_back(&s);
  for (auto& [priority, level] : by_priority) {
    std::sort(level.begin(), level.end(), [](const Slot* a, const Slot* b) { return a->in->name < b->in->name; });
    remaining = water_fill(level, r, remaining);
  }
  std::vector<Slot*> unsatisfied;
  for (auto& [priority, level] : by_priority)
    for (Slot* s : level)
      if (want(*s) > 0 && s->remainder > 0) unsatisfied.push_back(s);
  give_leftovers(unsatisfied, r, remaining);
}

struct Tree {
  std::vector<const QueueInput*> inputs;  // distinct queues, input order
  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<size_t>> children;
  std::vector<size_t> roots;
};

Tree build_tree(const std::vector<QueueInput>& queues) {
  Tree t;
  for (const QueueInput& q : queues)
    if (t.index.emplace(q.name, t.inputs.size()).second) t.inputs.push_back(&q);
  t.children.resize(t.inputs.size());
  for (size_t i = 0; i < t.inputs.size(); ++i) {
    const std::string& parent = t.inputs[i]->parent;
    if (parent.empty()) {
      t.roots.push_back(i);
      continue;
    }
    auto it = t.index.find(parent);
    if (it != t.index.end() && it->second != i) t.children[it->second].push_back(i);
  }
  return t;
}

// Own plus descendants' amounts of `field`, for every queue reachable from
// `i`; `seen` guards against cycles.
Amounts subtree_sum(const Tree& t, size_t i, Amounts QueueInput::*field, std::vector<Amounts>& out,
                    std::vector<bool>& seen) {
  seen[i] = true;
  Amounts sum = t.inputs[i]->*field;
  for (size_t c : t.children[i]) {
    if (seen[c]) continue;
    Amounts child = subtree_sum(t, c, field, out, seen);
    for (int r = 0; r < kResources; ++r) sum[r] += child[r];
  }
  out[i] = sum;
  return sum;
}

void divide_children(const Tree& t, const std::vector<size_t>& siblings, const Amounts& total,
                     std::vector<QueueShare>& out) {
  if (siblings.empty()) return;
  std::vector<Slot> slots;
  for (size_t i : siblings) slots.push_back(Slot{t.inputs[i], i, 0, 0, 0});
  for (int r = 0; r < kResources; ++r) {
    for (Slot& s : slots) {
      const int64_t limit = s.in->resources[r].limit;
      const int64_t demand = out[s.out].demand[r];
      s.requestable = limit == kUnlimited ? demand : std::min(std::max<int64_t>(0, limit), demand);
      s.given = 0;
      s.remainder = 0;
    }
    divide(slots, r, total[r]);
    for (const Slot& s : slots) out[s.out].fair_share[r] = s.given;
  }
  for (size_t i : siblings) divide_children(t, t.children[i], out[i].fair_share, out);
}

}  // namespace

std::vector<QueueShare> compute_fair_shares(const std::vector<QueueInput>& queues, const Amounts& capacity) {
  Tree t = build_tree(queues);
  const size_t n = t.inputs.size();
  std::vector<QueueShare> out(n);
  std::vector<Amounts> demand(n), allocated(n);
  std::vector<bool> seen_demand(n, false), seen_alloc(n, false);
  for (size_t root : t.roots) {
    subtree_sum(t, root, &QueueInput::demand, demand, seen_demand);
    subtree_sum(t, root, &QueueInput::allocated, allocated, seen_alloc);
  }
  for (size_t i = 0; i < n; ++i) {
    out[i].name = t.inputs[i]->name;
    // Not reached from a top-level queue: its parent is missing or on a cycle.
    out[i].orphaned = !seen_demand[i];
    out[i].demand = out[i].orphaned ? t.inputs[i]->demand : demand[i];
    out[i].allocated = out[i].orphaned ? t.inputs[i]->allocated : allocated[i];
  }
  divide_children(t, t.roots, capacity, out);
  for (size_t i = 0; i < n; ++i) {
    for (int r = 0; r < kResources; ++r) {
      QueueShare& s = out[i];
      s.over_fair_share[r] = std::max<int64_t>(0, s.allocated[r] - s.fair_share[r]);
      const int64_t quota = t.inputs[i]->resources[r].quota;
      s.over_quota[r] = quota == kUnlimited ? 0 : std::max<int64_t>(0, s.allocated[r] - std::max<int64_t>(0, quota));
    }
  }
  return out;
}

double dominant_share(const QueueShare& share) {
  double dominant = 0;
  for (int r = 0; r < kResources; ++r) {
    if (share.allocated[r] <= 0) continue;
    if (share.fair_share[r] <= 0) return std::numeric_limits<double>::infinity();
    dominant = std::max(dominant, static_cast<double>(share.allocated[r]) / static_cast<double>(share.fair_share[r]));
  }
  return dominant;
}

namespace {

bool within(int64_t amount, int64_t bound) { return bound == kUnlimited || amount <= bound; }

// Both sides of one rule: the reclaimer's allocation plus `request` within
// `reclaimer_bound`, the victim's allocation less `freed` at least
// `victim_bound` in every resource it gives up.
bool rule_holds(const Amounts& reclaimer_alloc, const Amounts& request, const Amounts& reclaimer_bound,
                const Amounts& victim_alloc, const Amounts& freed, const Amounts& victim_bound) {
  for (int r = 0; r < kResources; ++r) {
    if (!within(reclaimer_alloc[r] + request[r], reclaimer_bound[r])) return false;
    if (freed[r] <= 0) continue;
    if (victim_bound[r] == kUnlimited) return false;  // an unlimited guarantee is never over
    if (victim_alloc[r] - freed[r] < victim_bound[r]) return false;
  }
  return true;
}

}  // namespace

bool reclaim_allowed(const ReclaimSide& reclaimer, const Amounts& request, const ReclaimSide& victim,
                     const Amounts& freed) {
  if (reclaimer.share == nullptr || victim.share == nullptr || reclaimer.share == victim.share) return false;
  const QueueShare& a = *reclaimer.share;
  const QueueShare& v = *victim.share;
  return rule_holds(a.allocated, request, reclaimer.quota, v.allocated, freed, victim.quota) ||
         rule_holds(a.allocated, request, a.fair_share, v.allocated, freed, v.fair_share);
}

ResourceSpec from_kai_units(Resource r, double quota, double limit, double over_quota_weight) {
  // Milli-GPUs per GPU, millicores per millicore, bytes per megabyte.
  constexpr double kScale[kResources] = {1000.0, 1.0, 1e6};
  auto scaled = [&](double v) { return v < 0 ? kUnlimited : static_cast<int64_t>(std::llround(v * kScale[r])); };
  return ResourceSpec{scaled(quota), scaled(limit), over_quota_weight};
}

int64_t gpu_fraction_milli(int64_t consumed, int64_t total) {
  if (total <= 0) return 1000;
  if (consumed <= 0) return 0;
  if (consumed >= total) return 1000;
  const int64_t milli = static_cast<int64_t>(static_cast<__int128>(consumed) * 1000 / total);
  return std::max<int64_t>(1, milli);
}

}  // namespace draplane::sched::fair
