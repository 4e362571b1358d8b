// Internals of DeviceBinding: a device's attributes and capacities converted once
// into CEL values and indexed by (domain, name) with a precomputed hash, so that a
// selector's `device.attributes['d'].name` is one hash probe and one string
// comparison, and `device.attributes` is a borrowed map (no copy).
//
// Immutable after construction; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"
#include "cel/value.h"

namespace draplane::cel {

// FNV-1a of domain '\0' name; the compiler computes it for constant lookups.
uint64_t attribute_hash(std::string_view domain, std::string_view name);
// The index key of (domain, name): domain '\0' name, so that a lookup is one
// comparison rather than two.
std::string attribute_key(std::string_view domain, std::string_view name);

struct DeviceBinding::Impl {
  std::string driver;
  bool allow_multiple_allocations = false;
  MapData attributes;  // domain -> map(name -> value)
  MapData capacity;    // domain -> map(name -> quantity)
  // Set when an attribute cannot be represented (an invalid version string):
  // every evaluation against this device fails with it, as upstream does.
  std::string bind_error;

  struct IndexEntry {
    uint64_t hash = 0;
    std::string_view key;  // attribute_key(domain, name)
    const Value* value = nullptr;
  };
  std::vector<IndexEntry> attr_index;  // open addressing, size a power of two
  std::vector<IndexEntry> cap_index;
  std::string attr_keys, cap_keys;  // the index keys, back to back (sized once)

  // Storage that the values above borrow from (deques keep addresses stable).
  std::deque<std::string> strings;
  std::deque<Semver> semvers;
  std::deque<api::Quantity> quantities;
  std::deque<MapData> inner_maps;

  // `key` is attribute_key(domain, name) and `hash` its attribute_hash.
  const Value* find(bool capacity_map, uint64_t hash, std::string_view key) const {
    const auto& index = capacity_map ? cap_index : attr_index;
    if (index.empty()) return nullptr;
    size_t mask = index.size() - 1;
    for (size_t k = hash & mask;; k = (k + 1) & mask) {
      const IndexEntry& e = index[k];
      if (!e.value) return nullptr;
      if (e.hash == hash && same_bytes(e.key, key)) return e.value;
    }
  }
};

}  // namespace draplane::cel
