// Snapshot: the immutable device inventory the allocator searches.
//
// Built once from ResourceSlices and DeviceClasses (as published); the
// scheduler reuses one snapshot for many pods and nodes. It holds
// - the slices (owned copies) indexed by node name, node-independent slices, and
//   every slice of each (driver, pool) for completeness checks;
// - one entry per device with a dense identity (driver/pool/device) and a CEL
//   binding built once;
// - per class, the result of its selectors on every device (yes / no / CEL
//   error with upstream's message), so requests that only name a class cost no
//   CEL evaluation at allocation time.
// What is allocated is not part of it: that is an AllocatedState
// (alloc/allocated.h), owned by the caller and keyed by this snapshot's device
// identities, passed to the allocator beside the snapshot (as upstream's
// NewAllocator takes the allocated devices apart from the slices).
//
// Immutable after build(): no member changes it, so one snapshot may be read by
// any number of threads at once; share it as shared_ptr<const Snapshot>.
// programs() is a cache and internally synchronized.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
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
    bool operator==(const DeviceEntry&) const = default;
  };

  enum Match : uint8_t { kNo = 0, kYes = 1, kError = 2 };

  struct ClassEntry {
    api::DeviceClass cls;
    std::vector<uint8_t> match;                    // per device: Match
    std::unordered_map<uint32_t, std::string> errors;  // device -> upstream error text
    bool operator==(const ClassEntry&) const = default;
  };

  // Builds the snapshot. Never fails: broken selectors and pools become data
  // that the allocator reports when a claim needs them. `programs` may be
  // shared with other users; a private cache is made when null.
  static std::shared_ptr<const Snapshot> build(std::vector<api::ResourceSlice> slices,
                                               std::vector<api::DeviceClass> classes,
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
  // capacity_fits(device(d), no requests, nothing allocated): whether a
  // request that asks no capacity may take the device while nothing consumes it.
  bool capacity_fits_unrequested(uint32_t d) const { return fits_unrequested_[d] != 0; }
  // "driver/pool/device", as upstream prints a DeviceID.
  std::string device_id(uint32_t d) const;
  // What to append to a selector's CEL runtime error on device `d` so a person can
  // fix it: "no such key: memory" for an attribute the device publishes as a
  // capacity names the capacity to use instead. Empty when there is nothing to add.
  std::string cel_error_hint(uint32_t d, std::string_view error) const;

  // Dense identity of a published device (DeviceEntry::key); none when no slice
  // publishes it. Identities run from 0 to key_count() - 1.
  std::optional<uint32_t> find_key(std::string_view driver, std::string_view pool, std::string_view device) const;
  uint32_t key_count() const { return static_cast<uint32_t>(keys_.size()); }
  // Null when no class of that name exists.
  const ClassEntry* find_class(std::string_view name) const;
  const std::map<std::string, ClassEntry, std::less<>>& classes() const { return classes_; }

  cel::ProgramCache& programs() const { return *programs_; }

 private:
  Snapshot() = default;
  void index_slices();
  void evaluate_classes();

  std::vector<api::ResourceSlice> slices_;
  std::vector<DeviceEntry> devices_;
  std::vector<uint32_t> first_device_;
  std::vector<cel::DeviceBinding> bindings_;
  std::vector<uint8_t> fits_unrequested_;  // per device
  std::unordered_map<std::string, uint32_t> keys_;  // "driver\0pool\0device" -> key
  std::unordered_map<std::string, std::vector<uint32_t>> by_node_;
  std::vector<uint32_t> shared_slices_;
  std::unordered_map<std::string, std::vector<uint32_t>> by_pool_;  // "driver\0pool"
  std::map<std::string, ClassEntry, std::less<>> classes_;
  std::shared_ptr<cel::ProgramCache> programs_;
};

}  // namespace draplane::alloc
