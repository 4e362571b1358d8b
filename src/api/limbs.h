// Unbounded unsigned integers as little-endian base 2^32 limbs: the two steps
// that api::Quantity's exact parsing and CEL's big quantities (cel/big_quantity)
// both need. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace draplane::api {

using Limbs = std::vector<uint32_t>;

// v = v * m + a.
inline void limbs_mul_add(Limbs& v, uint32_t m, uint32_t a) {
  uint64_t carry = a;
  for (uint32_t& limb : v) {
    uint64_t x = static_cast<uint64_t>(limb) * m + carry;
    limb = static_cast<uint32_t>(x);
    carry = x >> 32;
  }
  if (carry != 0) v.push_back(static_cast<uint32_t>(carry));
}

// Divides v by d in place (dropping high zero limbs); returns the remainder.
inline uint32_t limbs_divmod(Limbs& v, uint32_t d) {
  uint64_t rem = 0;
  for (size_t i = v.size(); i-- > 0;) {
    uint64_t cur = (rem << 32) | v[i];
    v[i] = static_cast<uint32_t>(cur / d);
    rem = cur % d;
  }
  while (!v.empty() && v.back() == 0) v.pop_back();
  return static_cast<uint32_t>(rem);
}

}  // namespace draplane::api
