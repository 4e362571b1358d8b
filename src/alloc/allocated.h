// AllocatedState: what allocated claims hold of a Snapshot's devices
// (upstream's AllocatedState: allocated devices, shares by shareID, consumed
// capacity), kept apart from the inventory so that the Snapshot stays
// immutable and the allocator a pure function of both.
//
// Keyed by the Snapshot's dense device identities (a vector lookup per
// candidate: a hash lookup each was a sixth of a scheduling cycle), so one
// state belongs to one Snapshot, which must outlive it. Results naming devices
// the snapshot lacks are ignored: they cannot affect an allocation.
//
// Ownership: the caller's. The scheduler's cache keeps one per snapshot and
// updates it in place (add / remove) as claims are allocated, assumed and
// released, without copying the inventory; `draplane allocate` and tests build
// one from the claims they read.
//
// Thread-safety: none of its own. Concurrent const use (allocate() on several
// threads) is safe; add() and remove() need the owner to be the only user at
// the time, and NodeViews built on it must refresh_allocations() afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "alloc/snapshot.h"
#include "api/types.h"

namespace draplane::alloc {

class AllocatedState {
 public:
  // What allocated claims hold of one device. Holders are counted: two
  // records of one allocation (the scheduler's placeholder for a claim it is
  // creating, and the created claim) hold the device until both are removed.
  struct InUse {
    int dedicated = 0;          // results without shareID and without adminAccess
    bool shared = false;        // at least one result with a shareID
    bool has_capacity = false;  // some share recorded consumedCapacity
    std::map<std::string, __int128> capacity;  // summed consumedCapacity, nano units
    std::multiset<std::string> share_ids;
    bool operator==(const InUse&) const = default;
  };

  // Nothing allocated yet on `snapshot`'s devices.
  explicit AllocatedState(const Snapshot& snapshot) : snapshot_(&snapshot) {}
  // Records every claim of `allocated` that has status.allocation (others are
  // ignored), as the scheduler's foreachAllocatedDevice does.
  AllocatedState(const Snapshot& snapshot, const std::vector<api::ResourceClaim>& allocated);

  // Records one claim's results. Admin-access results do not count as
  // allocated; shares are recorded by shareID with their consumed capacity.
  void add(const api::AllocationResult& allocation);
  // Undoes exactly one earlier add() (or constructor record) of the same allocation.
  void remove(const api::AllocationResult& allocation);

  // In-use record of a device identity (Snapshot::DeviceEntry::key); null when nothing holds it.
  const InUse* in_use(uint32_t key) const {
    if (key >= in_use_.size()) return nullptr;
    const InUse& u = in_use_[key];
    return u.dedicated || u.shared || u.has_capacity ? &u : nullptr;
  }
  // The snapshot whose device identities this state uses.
  const Snapshot& snapshot() const { return *snapshot_; }

  // Same records (whatever the capacity of the vectors behind them).
  bool operator==(const AllocatedState& other) const;

 private:
  const Snapshot* snapshot_;
  // By device identity; an empty record means free.
  std::vector<InUse> in_use_;
};

}  // namespace draplane::alloc
