// Static worst-case cost estimate of a checked expression, after cel-go's
// checker/cost.go with the size limits Kubernetes declares for the DRA device
// (at most 32 attributes or capacities per device and per domain, attribute
// strings of at most 64 bytes, driver names of at most 63 bytes).
//
// The estimate is the maximum of cel-go's range: constants cost 0, identifiers
// and field selections 1, calls 1 plus their arguments (string and list
// traversals a tenth of the size), list literals 10 and map literals 30 plus their
// elements, `&&`/`||` the sum of both sides, `?:` the condition plus the more
// expensive branch, and a comprehension its range, initializer and result plus
// (range size) x (condition + step). Unknown sizes are unbounded, so iterating
// over a computed list of unknown size saturates to UINT64_MAX.
//
// Thread-safe: pure function.
#pragma once

#include <cstdint>

#include "cel/ast.h"

namespace draplane::cel {

uint64_t estimate_cost(const Expr& checked_root);

}  // namespace draplane::cel
