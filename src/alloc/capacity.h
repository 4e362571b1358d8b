// Consumable capacity (KEP-5075) as the upstream allocator applies it: how much
// of each device capacity one allocation consumes (request rounded by the
// capacity's requestPolicy, or its default, or the whole value), and whether it
// still fits next to what is allocated and being allocated.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/types.h"

namespace draplane::alloc {

// What one allocation of `device` for a request with `requests` consumes, per
// device capacity (every capacity of the device gets an entry).
std::map<std::string, api::Quantity> consumed_capacity(const api::Device& device,
                                                       const api::CapacityRequirements* requests);

// True when the request can be served by `device`: every requested capacity
// exists on the device, each consumed amount satisfies the requestPolicy, and
// allocated + allocating + consumed <= value for every capacity. `allocated`
// and `allocating` are sums in nano units keyed by capacity name (may be null).
bool capacity_fits(const api::Device& device, const api::CapacityRequirements* requests,
                   const std::map<std::string, __int128>* allocated,
                   const std::map<std::string, __int128>* allocating);

}  // namespace draplane::alloc
