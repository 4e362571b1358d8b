// Pruning that upstream lacks. Each check solves a relaxation of the problem
// (fewer requests, fewer constraints, no shared counters), so "the relaxation has
// no solution" proves that the full search would fail too: the answer changes
// only in speed, never in which solution first-fit returns.
#include <algorithm>
#include <climits>
#include <functional>

#include "alloc/internal/search.h"

namespace draplane::alloc::internal {

bool Search::matching_infeasible() {
  // Requests need distinct devices (a shareable device at most once per
  // request): a bipartite matching of request units to usable devices must
  // cover every unit. Admin-access requests may reuse devices: left out.
  const auto& cands = view_.candidates();
  // One demand is covered by feasible_by_count: skip the scan of every candidate.
  size_t demands = 0;
  for (const auto& slots : slots_) demands += slots.size();
  if (demands < 2) return false;
  std::vector<int> need;                       // per demand
  std::vector<std::vector<uint32_t>> adj;      // per demand: usable candidates
  size_t total = 0;
  for (size_t ci = 0; ci < slots_.size(); ++ci) {
    for (const Slot& slot : slots_[ci]) {
      int count = INT32_MAX;
      std::vector<uint8_t> usable(cands.size(), 0);
      bool skip = false;
      for (int s = 0; s < slot.count; ++s) {
        ReqData& r = reqs_[slot.first + s];
        if (r.admin) skip = true;
        count = std::min(count, r.num);
        for (uint32_t c = 0; c < cands.size(); ++c) {
          if (usable[c]) continue;
          int u = usable_alone(r, c);
          if (u < 0) return false;  // CEL error: leave it to the search
          usable[c] = static_cast<uint8_t>(u);
        }
      }
      if (skip || count <= 0) continue;
      std::vector<uint32_t> list;
      for (uint32_t c = 0; c < cands.size(); ++c) {
        if (usable[c]) list.push_back(c);
      }
      need.push_back(count);
      adj.push_back(std::move(list));
      total += static_cast<size_t>(count);
    }
  }
  if (need.size() < 2) return false;  // a single request is covered by feasible_by_count
  std::vector<int> cap(cands.size(), 1);
  for (uint32_t c = 0; c < cands.size(); ++c) {
    if (snap_.device(cands[c].device).allowMultipleAllocations.value_or(false)) cap[c] = static_cast<int>(need.size());
  }
  std::vector<std::vector<int>> holders(cands.size());
  std::vector<uint8_t> seen(cands.size());
  std::function<bool(int)> augment = [&](int i) -> bool {
    for (uint32_t c : adj[i]) {
      if (seen[c]) continue;
      auto& h = holders[c];
      if (std::find(h.begin(), h.end(), i) != h.end()) continue;
      seen[c] = 1;
      if (static_cast<int>(h.size()) < cap[c]) {
        h.push_back(i);
        return true;
      }
      for (int& j : h) {
        int moved = j;
        j = i;  // tentatively give c to i; j must find another device
        if (augment(moved)) return true;
        j = moved;
      }
    }
    return false;
  };
  size_t matched = 0;
  for (size_t i = 0; i < need.size(); ++i) {
    for (int k = 0; k < need[i]; ++k) {
      std::fill(seen.begin(), seen.end(), 0);
      if (!augment(static_cast<int>(i))) return true;
      ++matched;
    }
  }
  return matched < total;
}

bool Search::solo_infeasible() {
  size_t requests = 0;
  for (const auto& s : slots_) requests += s.size();
  if (requests < 2) return false;  // the search itself is the solo search
  Options solo;
  solo.policy = options_.policy;
  solo.max_steps = 8192;
  solo.should_stop = options_.should_stop;
  solo.explain = false;
  solo.shortcuts = options_.shortcuts;
  for (size_t ci = 0; ci < claims_.size(); ++ci) {
    const auto& claim = *claims_[ci];
    for (const auto& req : claim.spec.devices.requests) {
      api::ResourceClaim one;
      one.metadata.name = claim.metadata.name;
      one.metadata.namespace_ = claim.metadata.namespace_;
      one.spec.devices.requests.push_back(req);
      // matchAttribute constraints that cover this request still hold for its
      // devices alone; distinctAttribute is left out (upstream compares only
      // some pairs, so dropping it keeps this a relaxation).
      for (const auto& k : claim.spec.devices.constraints) {
        if (!k.matchAttribute) continue;
        bool covers = k.requests.empty();
        for (const auto& n : k.requests) covers = covers || n == req.name;
        if (!covers) continue;
        api::DeviceConstraint c;
        c.matchAttribute = k.matchAttribute;
        one.spec.devices.constraints.push_back(std::move(c));
      }
      std::vector<const api::ResourceClaim*> claims{&one};
      Search sub(view_, claims, solo, /*nested=*/true);
      auto got = sub.run();
      if (got.has_value() && !got->fits && !got->timed_out) return true;
    }
  }
  return false;
}

}  // namespace draplane::alloc::internal
