#include "alloc/allocated.h"

#include <algorithm>

namespace draplane::alloc {

AllocatedState::AllocatedState(const Snapshot& snapshot, const std::vector<api::ResourceClaim>& allocated)
    : snapshot_(&snapshot) {
  for (const auto& claim : allocated) {
    if (claim.status.allocation) add(*claim.status.allocation);
  }
}

void AllocatedState::add(const api::AllocationResult& allocation) {
  for (const auto& r : allocation.devices.results) {
    if (r.adminAccess.value_or(false)) continue;
    auto key = snapshot_->find_key(r.driver, r.pool, r.device);
    if (!key) continue;  // not published: cannot affect allocation
    if (in_use_.size() <= *key) in_use_.resize(snapshot_->key_count());
    InUse& u = in_use_[*key];
    if (r.shareID) {
      u.shared = true;
      u.share_ids.insert(*r.shareID);
      if (!r.consumedCapacity.empty()) {
        u.has_capacity = true;
        for (const auto& [name, q] : r.consumedCapacity) u.capacity[name] += q.nanos();
      }
      continue;
    }
    ++u.dedicated;
  }
}

void AllocatedState::remove(const api::AllocationResult& allocation) {
  for (const auto& r : allocation.devices.results) {
    if (r.adminAccess.value_or(false)) continue;
    auto key = snapshot_->find_key(r.driver, r.pool, r.device);
    if (!key || *key >= in_use_.size()) continue;
    InUse& u = in_use_[*key];
    if (r.shareID) {
      if (auto id = u.share_ids.find(*r.shareID); id != u.share_ids.end()) u.share_ids.erase(id);
      for (const auto& [name, q] : r.consumedCapacity) {
        auto c = u.capacity.find(name);
        if (c == u.capacity.end()) continue;
        c->second -= q.nanos();
        if (c->second == 0) u.capacity.erase(c);
      }
      u.shared = !u.share_ids.empty();
      u.has_capacity = !u.capacity.empty();
    } else if (u.dedicated > 0) {
      --u.dedicated;
    }
  }
}

bool AllocatedState::operator==(const AllocatedState& other) const {
  static const InUse kFree;
  const size_t n = std::max(in_use_.size(), other.in_use_.size());
  for (size_t k = 0; k < n; ++k) {
    const InUse& a = k < in_use_.size() ? in_use_[k] : kFree;
    const InUse& b = k < other.in_use_.size() ? other.in_use_[k] : kFree;
    if (!(a == b)) return false;
  }
  return snapshot_ == other.snapshot_;
}

}  // namespace draplane::alloc
