// Snapshot: the immutable device inventory the allocator searches.
//
// Built once from ResourceSlices, DeviceClasses and the claims that are already
// allocated; the scheduler reuses one snapshot for many pods and nodes. It holds
// - the slices (owned copies) indexed by node name, node-independent slices, and
//   every slice of each (driver, pool) for completeness checks;
// - one entry per device with a dense identity (driver/pool/device) and a CEL
//   binding built once;
// - what is in use: dedicated devices, shares (with their shareIDs) and the sum
//   of consumed capacity per device, as the scheduler's AllocatedState;
// - per class, the result of its selectors on every device (yes / no / CEL
//   error with upstream's message), so requests that only name a class cost no
//   CEL evaluation at allocation time.
//
// Thread-safety: immutable after build(); share it as shared_ptr<const Snapshot>
// between threads. programs() is internally synchronized.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "cel/cel.h"

namespace draplane::alloc {

class Snapshot {
 public:
  // One device of one slice.
  struct DeviceEntry {
    uint32_t slice = 0;  // index into slices()
    uint32_t index = 0;  // index into that slice's spec.devices
    uint32_t key = 0;    // dense identity of (driver, pool, device name)
  };

  // What allocated claims hold of one device (upstream AllocatedState).
  struct InUse {
    bool dedicated = false;     // a result without shareID and without adminAccess
    bool shared = false;        // at least one result with a shareID
    bool has_capacity = false;  // some share recorded consumedCapacity
    std::map<std::string, __int128> capacity;  // summed consumedCapacity, nano units
    std::set<std::string> share_ids;
  };

  enum Match : uint8_t { kNo = 0, kYes = 1, kError = 2 };

  struct ClassEntry {
    api::DeviceClass cls;
    std::vector<uint8_t> match;                    // per device: Match
    std::unordered_map<uint32_t, std::string> errors;  // device -> upstream error text
  };

  // Builds the snapshot. `allocated` are claims with status.allocation (others
  // are ignored). Never fails: broken selectors and pools become data that the
  // allocator reports when a claim needs them. `programs` may be shared with
  // other users; a private cache is made when null.
  static std::shared_ptr<const Snapshot> build(std::vector<api::ResourceSlice> slices,
                                               std::vector<api::DeviceClass> classes,
                                               const std::vector<api::ResourceClaim>& allocated,
                                               std::shared_ptr<cel::ProgramCache> programs = nullptr);

  const std::vector<api::ResourceSlice>& slices() const { return slices_; }
  // Slices whose spec.nodeName is `node` (without shared counters); empty when none.
  const std::vector<uint32_t>& slices_with_node_name(std::string_view node) const;
  // Slices without nodeName (nodeSelector, allNodes, perDeviceNodeSelection) and
  // every slice with shared counters.
  const std::vector<uint32_t>& slices_without_node_name() const { return shared_slices_; }
  // Every slice of a pool, any generation.
  const std::vector<uint32_t>& slices_of_pool(std::string_view driver, std::string_view pool) const;

  const std::vector<DeviceEntry>& devices() const { return devices_; }
  // Index of the first device of slice `s` in devices(); its devices follow in order.
  uint32_t first_device(uint32_t s) const { return first_device_[s]; }
  const api::Device& device(uint32_t d) const {
    const auto& e = devices_[d];
    return slices_[e.slice].spec.devices[e.index];
  }
  const api::ResourceSlice& slice_of(uint32_t d) const { return slices_[devices_[d].slice]; }
  const cel::DeviceBinding& binding(uint32_t d) const { return bindings_[d]; }
  // "driver/pool/device", as upstream prints a DeviceID.
  std::string device_id(uint32_t d) const;
  // What to append to a selector's CEL runtime error on device `d` so a person can
  // fix it: "no such key: memory" for an attribute the device publishes as a
  // capacity names the capacity to use instead. Empty when there is nothing to add.
  std::string cel_error_hint(uint32_t d, std::string_view error) const;

  // In-use record of a device identity; null when nothing holds it.
  const InUse* in_use(uint32_t key) const {
    if (key >= in_use_.size()) return nullptr;
    const InUse& u = in_use_[key];
    return u.dedicated || u.shared || u.has_capacity ? &u : nullptr;
  }
  // Null when no class of that name exists.
  const ClassEntry* find_class(std::string_view name) const;
  const std::map<std::string, ClassEntry, std::less<>>& classes() const { return classes_; }

  cel::ProgramCache& programs() const { return *programs_; }

  // Incremental in-use accounting for the one owner of a snapshot that no other
  // thread reads at the time (the scheduler's cache: allocations written or
  // assumed since build, and claims deallocated since). add_allocation records
  // one claim's results like build() does; remove_allocation undoes exactly one
  // earlier add (or build-time record) of the same allocation. Results naming
  // devices the snapshot lacks are ignored. NodeViews built before the call keep
  // their counter availability: rebuild those of the affected pools.
  void add_allocation(const api::AllocationResult& allocation);
  void remove_allocation(const api::AllocationResult& allocation);

 private:
  Snapshot() = default;
  void index_slices();
  void record_allocations(const std::vector<api::ResourceClaim>& allocated);
  void evaluate_classes();

  std::vector<api::ResourceSlice> slices_;
  std::vector<DeviceEntry> devices_;
  std::vector<uint32_t> first_device_;
  std::vector<cel::DeviceBinding> bindings_;
  std::unordered_map<std::string, uint32_t> keys_;  // "driver\0pool\0device" -> key
  std::unordered_map<std::string, std::vector<uint32_t>> by_node_;
  std::vector<uint32_t> shared_slices_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_pool_;  // "driver\0pool"
  // By device identity (keys are dense); an empty record means free. A vector:
  // the allocator asks for every candidate device, a hash lookup each was a
  // sixth of a scheduling cycle.
  std::vector<InUse> in_use_;
  std::map<std::string, ClassEntry, std::less<>> classes_;
  std::shared_ptr<cel::ProgramCache> programs_;
};

}  // namespace draplane::alloc
