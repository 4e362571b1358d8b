// find(): a device of a pool's ResourceSlices by name, for the node tests.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::node::testing {

// The device named `name` in any of the slices, or nullptr.
inline const api::Device* find(const std::vector<api::ResourceSlice>& slices, const std::string& name) {
  for (const auto& s : slices) {
    for (const auto& d : s.spec.devices) {
      if (d.name == name) return &d;
    }
  }
  return nullptr;
}

}  // namespace draplane::node::testing
