// Quantities beyond api::Quantity's range, for the Kubernetes quantity library.
//
// api::Quantity holds a value as an __int128 count of nanos (|value| < ~1.7e29),
// enough for every quantity the API stores. Kubernetes' CEL library works on
// resource.Quantity, whose inf.Dec form is exact at any size: after parsing, a
// large value is a big integer of nanos (ParseQuantity rounds to scale 9).
// BigQuantity is that form, used only by CEL values past api::Quantity's range
// (quantity("1e30"), or sums that overflow it); results that fit go back to
// api::Quantity, so the usual paths never see it.
//
// Deliberate limit: values needing more than kMaxBigDigits decimal digits of
// nanos (about 1e990) are an error; Go would build numbers of any size (a
// quantity("1e2147483647") allocates about a gigabyte there).
//
// Plain values; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/quantity.h"
#include "cel/value.h"
#include "common/result.h"

namespace draplane::cel {

inline constexpr size_t kMaxBigDigits = 1000;

// value = (negative ? -1 : 1) * magnitude * 10^-9.
struct BigQuantity {
  bool negative = false;
  std::vector<uint32_t> magnitude;  // little-endian base-2^32 limbs, no zero high limbs
  api::Quantity::Format format = api::Quantity::Format::kDecimalSI;
};

// Parses a quantity that api::Quantity::parse rejected only for its range (the
// text follows the quantity grammar). Error past kMaxBigDigits.
Result<BigQuantity> parse_big_quantity(std::string_view text);

// CEL quantity values (kQuantity) of either representation.
bool is_big_quantity(const Value& v);
BigQuantity to_big(const Value& v);
// The value as a CEL quantity: api::Quantity when it fits, BigQuantity otherwise.
Value make_quantity(BigQuantity q);

int compare(const BigQuantity& a, const BigQuantity& b);
BigQuantity add(const BigQuantity& a, const BigQuantity& b);
BigQuantity sub(const BigQuantity& a, const BigQuantity& b);
int sign(const BigQuantity& q);
// resource.Quantity.AsApproximateFloat64 of the inf.Dec form: the unscaled
// nanos as the nearest double, times 1e-9.
double approximate_float(const BigQuantity& q);
// resource.Quantity.String() (CanonicalizeBytes), as api::Quantity prints.
std::string to_string(const BigQuantity& q);

// String form of any CEL quantity value.
std::string quantity_string(const Value& v);

}  // namespace draplane::cel
