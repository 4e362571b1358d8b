// Quantity: Kubernetes resource.Quantity with exact semantics.
//
// A Quantity is an exact decimal number (no floating point anywhere) with the
// format it was written in (DecimalSI "1.5G", BinarySI "1.5Gi", DecimalExponent
// "1.5e9"), which Kubernetes keeps to print it back. Parsing follows
// k8s.io/apimachinery/pkg/api/resource: sign, digits, optional fraction, then one
// suffix (n u m "" k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E exponent). Precision finer
// than 1n is rounded up (away from zero) to 1n, as Kubernetes does.
//
// to_string() gives the form Kubernetes prints (CanonicalizeBytes):
// "1536Mi" stays "1536Mi", "1000m" -> "1", "0.5" -> "500m", "1.5Gi" -> "1536Mi",
// "1e3" -> "1e3", "12E" -> "12E", "100m" -> "100m". Like Kubernetes' String(),
// a parsed string that its int64 fast path keeps verbatim prints verbatim
// ("1E3", "+5", "007", "1.500k"); canonical_string() never does.
//
// Values are immutable and cheap to copy; thread-safe for concurrent reads.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::api {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  // Zero, DecimalSI.
  Quantity() = default;

  // Parses a quantity string. Error (Code::kInvalid) with a message such as
  // "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
  // for anything Kubernetes rejects (empty, "1.2.3", "1Q", " 1"), or
  // "unable to parse quantity's suffix" ("1i", "0.1mi"). Like Kubernetes, a bare
  // suffix or sign ("Ki", "m", "-", ".") parses as zero. Values of magnitude
  // >= 2^127 nanos (~1.7e29) are an error here (Kubernetes keeps them exactly).
  static Result<Quantity> parse(std::string_view text);

  // Exact integer value in the given format.
  static Quantity from_int(int64_t value, Format format = Format::kDecimalSI);
  // value * 10^-3 (milli units), DecimalSI.
  static Quantity from_milli(int64_t milli);

  // Kubernetes string form (see above).
  std::string to_string() const;
  // CanonicalizeBytes form, ignoring any verbatim-kept input spelling.
  std::string canonical_string() const;

  Format format() const { return format_; }

  // -1, 0 or 1 by numeric value (format is ignored).
  int compare(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return compare(other) == 0; }
  std::strong_ordering operator<=>(const Quantity& other) const {
    int c = compare(other);
    return c < 0 ? std::strong_ordering::less
                 : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
  }

  // Exact arithmetic; the result keeps the format of *this (of `other` when *this
  // is zero, as Kubernetes' Add/Sub do). Error (kInvalid) on
  // overflow of the internal range (|value| < 2^127 * 10^-9).
  Result<Quantity> add(const Quantity& other) const;
  Result<Quantity> sub(const Quantity& other) const;
  // value * n, exact.
  Result<Quantity> mul_int(int64_t n) const;

  int sign() const;
  bool is_zero() const { return nanos_ == 0; }
  // True when the value is a whole number that fits in int64.
  bool is_integer() const;
  // The exact int64 value when is_integer(), else nullopt.
  std::optional<int64_t> as_int64() const;
  // Value() of Kubernetes: rounded to an integer away from zero (1500m -> 2,
  // -1500m -> -2), saturating at int64 limits.
  int64_t value() const;
  // MilliValue(): value*1000 rounded away from zero, saturating.
  int64_t milli_value() const;
  double as_approximate_double() const;

  // Internal representation: value = nanos_ * 1e-9. Exposed for hashing and for
  // callers that need exact sums across many quantities (counters, capacity).
  __int128 nanos() const { return nanos_; }
  static Quantity from_nanos(__int128 nanos, Format format) { return Quantity(nanos, format); }

 private:
  Quantity(__int128 nanos, Format format) : nanos_(nanos), format_(format) {}
  __int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
  // The input spelling when Kubernetes would print it verbatim and it differs
  // from canonical_string(); empty otherwise (so copies rarely allocate).
  std::string kept_;
};

// The DecimalSI suffix of a power-of-ten exponent that is a multiple of 3 in
// [-9, 18] ("n" ... "E", "" for 0); "?" otherwise.
std::string_view decimal_si_suffix(int exponent);

}  // namespace draplane::api
