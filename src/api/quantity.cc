// Quantity: parsing, canonical printing and exact arithmetic, following
// k8s.io/apimachinery/pkg/api/resource (quantity.go, suffix.go, amount.go).
//
// The value is held as an __int128 count of nanos. Parsing computes the exact
// decimal value with a small unbounded integer (digits may be arbitrarily long,
// like Kubernetes' inf.Dec path) and only then rounds to nanos, so long inputs
// and large negative exponents behave as upstream.
#include "api/quantity.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <vector>

#include "api/limbs.h"

namespace draplane::api {
namespace {

using u128 = unsigned __int128;
using i128 = __int128;

constexpr i128 kNanosPerUnit = 1'000'000'000;
constexpr i128 kMaxNanos = std::numeric_limits<i128>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The pieces of a quantity string, as parseQuantityString splits them.
struct Parts {
  bool positive = true;
  std::string_view num;     // integer digits, leading zeros stripped; "0" if none
  std::string_view denom;   // fraction digits, possibly empty
  std::string_view suffix;  // everything after the number
};

// Splits text by the grammar of parseQuantityString; false on a format error.
bool split(std::string_view s, Parts& p) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    p.positive = s[0] == '+';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) {
    p.num = "0";
    return true;
  }
  size_t start = pos;
  while (pos < end && is_digit(s[pos])) ++pos;
  p.num = s.substr(start, pos - start);
  if (p.num.empty()) p.num = "0";
  if (pos >= end) return true;
  if (s[pos] == '.') {
    ++pos;
    start = pos;
    while (pos < end && is_digit(s[pos])) ++pos;
    p.denom = s.substr(start, pos - start);
    if (pos >= end) return true;
  }
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(s[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && is_digit(s[pos])) ++pos;
  if (pos < end) return false;
  p.suffix = s.substr(suffix_start);
  return true;
}

struct Suffix {
  int base = 10;
  int exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// strconv.ParseInt(s, 10, 64) restricted to the int32 range that Kubernetes accepts.
bool parse_exponent(std::string_view s, int& out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    neg = s[i] == '-';
    ++i;
  }
  if (i >= s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
    if (v > std::numeric_limits<int32_t>::max()) return false;
  }
  out = static_cast<int>(neg ? -v : v);
  return true;
}

bool interpret_suffix(std::string_view s, Suffix& out) {
  struct Entry {
    std::string_view name;
    int base;
    int exponent;
  };
  static constexpr std::array<Entry, 16> kTable = {{
      {"", 10, 0},    {"n", 10, -9},  {"u", 10, -6},  {"m", 10, -3},
      {"k", 10, 3},   {"M", 10, 6},   {"G", 10, 9},   {"T", 10, 12},
      {"P", 10, 15},  {"E", 10, 18},  {"Ki", 2, 10},  {"Mi", 2, 20},
      {"Gi", 2, 30},  {"Ti", 2, 40},  {"Pi", 2, 50},  {"Ei", 2, 60},
  }};
  for (const Entry& e : kTable) {
    if (e.name == s) {
      out = {e.base, e.exponent,
             e.base == 2 ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    int exp = 0;
    if (!parse_exponent(s.substr(1), exp)) return false;
    out = {10, exp, Quantity::Format::kDecimalExponent};
    return true;
  }
  return false;
}

// Minimal unbounded unsigned integer (little-endian base 2^32 limbs), enough to
// hold a parsed digit string exactly before rounding it to nanos.
class BigUint {
 public:
  void mul_add(uint32_t m, uint32_t a) { limbs_mul_add(limbs_, m, a); }
  // Divides in place; returns the remainder.
  uint32_t divmod(uint32_t d) { return limbs_divmod(limbs_, d); }
  bool is_zero() const { return limbs_.empty(); }
  size_t bits() const { return limbs_.size() * 32; }
  // The value when it fits in 127 bits.
  std::optional<u128> to_u127() const {
    if (limbs_.size() > 4) return std::nullopt;
    u128 v = 0;
    for (size_t i = limbs_.size(); i-- > 0;) v = (v << 32) | limbs_[i];
    if (v > static_cast<u128>(kMaxNanos)) return std::nullopt;
    return v;
  }

 private:
  Limbs limbs_;
};

// Multiplies by 10^n (n >= 0); false when the result clearly exceeds the range.
bool mul_pow10(BigUint& v, int64_t n) {
  for (; n > 0; --n) {
    if (v.bits() > 160) return false;
    v.mul_add(10, 0);
  }
  return true;
}

// Divides by 10^n (n >= 0), rounding any remainder up (away from zero).
void div_pow10_round_up(BigUint& v, int64_t n) {
  bool sticky = false;
  for (; n > 0 && !v.is_zero(); --n) {
    if (v.divmod(10) != 0) sticky = true;
  }
  if (sticky) v.mul_add(1, 1);
}

std::string u128_to_string(u128 v) {
  if (v == 0) return "0";
  char buf[48];
  int i = sizeof(buf);
  while (v != 0) {
    buf[--i] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  return std::string(buf + i, sizeof(buf) - i);
}

std::string i128_to_string(i128 v) {
  if (v < 0) return "-" + u128_to_string(static_cast<u128>(-(v + 1)) + 1);
  return u128_to_string(static_cast<u128>(v));
}


// AsCanonicalBytes + decimal suffix: mantissa with trailing zeros moved into an
// exponent that is then lowered to a multiple of 3. DecimalSI exponents without a
// suffix (past E) fall back to exponent notation, as current Kubernetes does.
std::string decimal_string(i128 nanos, Quantity::Format format) {
  i128 m = nanos;
  int exp = -9;
  while ((m >= 10 || m <= -10) && m % 10 == 0) {
    m /= 10;
    ++exp;
  }
  switch (exp % 3) {
    case 1: case -2: m *= 10; exp -= 1; break;
    case 2: case -1: m *= 100; exp -= 2; break;
    default: break;
  }
  std::string out = i128_to_string(m);
  if (format == Quantity::Format::kDecimalSI) {
    std::string_view suffix = decimal_si_suffix(exp);
    if (suffix != "?") return out.append(suffix);
  }
  if (exp != 0) out.append("e").append(std::to_string(exp));
  return out;
}

std::string canonical(i128 nanos, Quantity::Format format) {
  if (nanos == 0) return "0";
  if (format == Quantity::Format::kBinarySI) {
    const i128 k1024 = 1024 * kNanosPerUnit;
    if ((nanos > -k1024 && nanos < k1024) || nanos % kNanosPerUnit != 0) {
      return decimal_string(nanos, Quantity::Format::kDecimalSI);
    }
    i128 v = nanos / kNanosPerUnit;
    int times = 0;
    while ((v >= 1024 || v <= -1024) && v % 1024 == 0) {
      v /= 1024;
      ++times;
    }
    static constexpr std::array<std::string_view, 7> kBin = {"", "Ki", "Mi", "Gi",
                                                             "Ti", "Pi", "Ei"};
    if (times < static_cast<int>(kBin.size())) return i128_to_string(v).append(kBin[times]);
    // Past Ei there is no binary suffix: exact decimal, exponent notation.
    return decimal_string(nanos, Quantity::Format::kDecimalExponent);
  }
  return decimal_string(nanos, format);
}

// Whether Kubernetes' ParseQuantity keeps the input string verbatim for printing
// (its int64 fast path with an already canonical-looking mantissa).
bool kubernetes_keeps_string(const Parts& p, const Suffix& sfx) {
  const size_t digits = p.num.size() + p.denom.size();
  if (sfx.format == Quantity::Format::kBinarySI) {
    if (!p.denom.empty()) return false;
    const int precision = 15 - static_cast<int>(p.num.size()) - sfx.exponent * 3 / 10 - 1;
    if (precision < 0) return false;
    const int64_t value = std::strtoll(std::string(p.num).c_str(), nullptr, 10);
    if (value > (kMaxInt64 >> sfx.exponent)) return false;  // int64Multiply overflow
    return (value & 0x07) != 0;
  }
  if (18 - static_cast<int64_t>(digits) < 0) return false;
  const int64_t scale = static_cast<int64_t>(sfx.exponent) - static_cast<int64_t>(p.denom.size());
  if (scale < -9 || scale % 3 != 0) return false;
  std::string shifted = std::string(p.num) + std::string(p.denom);
  if (shifted[0] == '0') return false;
  return !(shifted.size() >= 3 && shifted.compare(shifted.size() - 3, 3, "000") == 0);
}

Status out_of_range(std::string_view text) {
  return invalid_error("quantity \"" + std::string(text) +
                       "\" is out of the supported range (magnitude below 1.7e29 "
                       "with nano precision)");
}

// a*b for int128 with overflow detection.
bool mul_overflow(i128 a, i128 b, i128& out) { return __builtin_mul_overflow(a, b, &out); }

}  // namespace

std::string_view decimal_si_suffix(int exponent) {
  switch (exponent) {
    case -9: return "n";
    case -6: return "u";
    case -3: return "m";
    case 0: return "";
    case 3: return "k";
    case 6: return "M";
    case 9: return "G";
    case 12: return "T";
    case 15: return "P";
    case 18: return "E";
    default: return "?";
  }
}

Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return invalid_error(std::string(kErrFormatWrong));
  if (text == "0") return Quantity();
  Parts p;
  if (!split(text, p)) return invalid_error(std::string(kErrFormatWrong));
  Suffix sfx;
  if (!interpret_suffix(p.suffix, sfx)) return invalid_error(std::string(kErrSuffix));

  // Exact magnitude: digits * base^exponent * 10^-len(denom), in nanos.
  std::string_view digits_num = p.num == "0" ? std::string_view() : p.num;
  BigUint mag;
  for (char c : digits_num) mag.mul_add(10, static_cast<uint32_t>(c - '0'));
  for (char c : p.denom) mag.mul_add(10, static_cast<uint32_t>(c - '0'));
  Format format = sfx.format;
  if (!mag.is_zero()) {
    int64_t pow10 = 9 - static_cast<int64_t>(p.denom.size());
    if (sfx.base == 10) {
      pow10 += sfx.exponent;
    } else {
      for (int i = 0; i < sfx.exponent; i += 10) mag.mul_add(1024, 0);
    }
    if (pow10 >= 0) {
      if (!mul_pow10(mag, pow10)) return out_of_range(text);
    } else {
      div_pow10_round_up(mag, -pow10);
    }
  }
  std::optional<u128> abs = mag.to_u127();
  const u128 cap = static_cast<u128>(kMaxInt64) * static_cast<u128>(kNanosPerUnit);
  if (format == Format::kBinarySI && (!abs || *abs > cap)) abs = cap;  // Kubernetes' cap
  if (!abs) return out_of_range(text);
  if (format == Format::kBinarySI && *abs != 0 && *abs < static_cast<u128>(kNanosPerUnit)) {
    format = Format::kDecimalSI;
  }
  i128 nanos = static_cast<i128>(*abs);
  if (!p.positive) nanos = -nanos;
  Quantity q(nanos, format);
  if (kubernetes_keeps_string(p, sfx)) {
    std::string kept(text);
    if (kept != q.canonical_string()) q.kept_ = std::move(kept);
  }
  return q;
}

Quantity Quantity::from_int(int64_t value, Format format) {
  return Quantity(static_cast<i128>(value) * kNanosPerUnit, format);
}

Quantity Quantity::from_milli(int64_t milli) {
  return Quantity(static_cast<i128>(milli) * 1'000'000, Format::kDecimalSI);
}

std::string Quantity::to_string() const {
  if (!kept_.empty()) return kept_;
  return canonical(nanos_, format_);
}

std::string Quantity::canonical_string() const { return canonical(nanos_, format_); }

int Quantity::compare(const Quantity& other) const {
  return nanos_ < other.nanos_ ? -1 : (nanos_ > other.nanos_ ? 1 : 0);
}

Result<Quantity> Quantity::add(const Quantity& other) const {
  i128 sum;
  if (__builtin_add_overflow(nanos_, other.nanos_, &sum)) {
    return invalid_error("quantity overflow: " + to_string() + " + " + other.to_string());
  }
  return Quantity(sum, nanos_ == 0 ? other.format_ : format_);
}

Result<Quantity> Quantity::sub(const Quantity& other) const {
  i128 diff;
  if (__builtin_sub_overflow(nanos_, other.nanos_, &diff)) {
    return invalid_error("quantity overflow: " + to_string() + " - " + other.to_string());
  }
  return Quantity(diff, nanos_ == 0 ? other.format_ : format_);
}

Result<Quantity> Quantity::mul_int(int64_t n) const {
  i128 prod;
  if (mul_overflow(nanos_, static_cast<i128>(n), prod)) {
    return invalid_error("quantity overflow: " + to_string() + " * " + std::to_string(n));
  }
  return Quantity(prod, format_);
}

int Quantity::sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

bool Quantity::is_integer() const { return as_int64().has_value(); }

std::optional<int64_t> Quantity::as_int64() const {
  if (nanos_ % kNanosPerUnit != 0) return std::nullopt;
  i128 v = nanos_ / kNanosPerUnit;
  if (v > kMaxInt64 || v < std::numeric_limits<int64_t>::min()) return std::nullopt;
  return static_cast<int64_t>(v);
}

namespace {
// nanos / divisor rounded away from zero, saturated to int64.
int64_t scaled_away_from_zero(i128 nanos, i128 divisor) {
  i128 q = nanos / divisor;
  if (nanos % divisor != 0) q += nanos < 0 ? -1 : 1;
  if (q > kMaxInt64) return kMaxInt64;
  if (q < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(q);
}
}  // namespace

int64_t Quantity::value() const { return scaled_away_from_zero(nanos_, kNanosPerUnit); }

int64_t Quantity::milli_value() const { return scaled_away_from_zero(nanos_, 1'000'000); }

double Quantity::as_approximate_double() const {
  return static_cast<double>(static_cast<long double>(nanos_) / 1e9L);
}

}  // namespace draplane::api
