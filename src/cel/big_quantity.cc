#include "cel/big_quantity.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>

#include "api/limbs.h"

namespace draplane::cel {

namespace {

using api::Limbs;
using u128 = unsigned __int128;
using i128 = __int128;
using Format = api::Quantity::Format;

void trim(Limbs& v) {
  while (!v.empty() && v.back() == 0) v.pop_back();
}

void mul_add(Limbs& v, uint32_t m, uint32_t a) { api::limbs_mul_add(v, m, a); }
uint32_t divmod(Limbs& v, uint32_t d) { return api::limbs_divmod(v, d); }

int cmp_mag(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

Limbs add_mag(const Limbs& a, const Limbs& b) {
  const Limbs& big = a.size() >= b.size() ? a : b;
  const Limbs& small = a.size() >= b.size() ? b : a;
  Limbs out(big.size());
  uint64_t carry = 0;
  for (size_t i = 0; i < big.size(); ++i) {
    uint64_t x = static_cast<uint64_t>(big[i]) + (i < small.size() ? small[i] : 0) + carry;
    out[i] = static_cast<uint32_t>(x);
    carry = x >> 32;
  }
  if (carry != 0) out.push_back(static_cast<uint32_t>(carry));
  return out;
}

// a - b for a >= b.
Limbs sub_mag(const Limbs& a, const Limbs& b) {
  Limbs out(a.size());
  int64_t borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = static_cast<int64_t>(a[i]) - (i < b.size() ? b[i] : 0) - borrow;
    borrow = x < 0 ? 1 : 0;
    out[i] = static_cast<uint32_t>(x + (borrow << 32));
  }
  trim(out);
  return out;
}

Limbs from_u128(u128 v) {
  Limbs out;
  while (v != 0) {
    out.push_back(static_cast<uint32_t>(v));
    v >>= 32;
  }
  return out;
}

std::string decimal(Limbs v) {
  if (v.empty()) return "0";
  std::string out;
  while (!v.empty()) {
    uint32_t chunk = divmod(v, 1'000'000'000);
    for (int k = 0; k < 9; ++k) {
      out.push_back(static_cast<char>('0' + chunk % 10));
      chunk /= 10;
    }
  }
  while (out.size() > 1 && out.back() == '0') out.pop_back();
  std::reverse(out.begin(), out.end());
  return out;
}

// AsCanonicalBytes + suffix for decimal formats, from the decimal digits of
// the nanos (api::Quantity's decimal_string, on any number of digits).
std::string decimal_form(std::string digits, bool negative, Format format) {
  int64_t exp = -9;
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++exp;
  }
  switch (((exp % 3) + 3) % 3) {
    case 1: digits += "0"; exp -= 1; break;  // lowered to a multiple of 3
    case 2: digits += "00"; exp -= 2; break;
    default: break;
  }
  std::string out = negative ? "-" + digits : digits;
  if (format == Format::kDecimalSI) {
    std::string_view suffix = api::decimal_si_suffix(static_cast<int>(exp));
    if (suffix != "?") return out.append(suffix);
  }
  if (exp != 0) out.append("e").append(std::to_string(exp));
  return out;
}

}  // namespace

Result<BigQuantity> parse_big_quantity(std::string_view text) {
  // The grammar is known to hold: [+-] digits [. digits] suffix, where the
  // suffix is a decimal SI suffix or an e/E exponent (a binary suffix is capped
  // by api::Quantity and never lands here).
  BigQuantity q;
  size_t pos = 0;
  if (pos < text.size() && (text[0] == '+' || text[0] == '-')) {
    q.negative = text[0] == '-';
    ++pos;
  }
  std::string digits;
  size_t frac = 0;
  bool in_frac = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c == '.') {
      in_frac = true;
    } else if (c >= '0' && c <= '9') {
      if (!digits.empty() || c != '0') digits.push_back(c);
      if (in_frac) ++frac;
    } else {
      break;
    }
  }
  std::string_view suffix = text.substr(pos);
  int64_t exponent = 0;
  q.format = Format::kDecimalSI;
  static constexpr std::array<std::pair<std::string_view, int>, 10> kSI = {{
      {"", 0}, {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18},
  }};
  bool found = false;
  for (const auto& [name, exp] : kSI) {
    if (name == suffix) {
      exponent = exp;
      found = true;
    }
  }
  if (!found) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) {
      return invalid_error("unable to parse quantity's suffix");
    }
    exponent = std::strtoll(std::string(suffix.substr(1)).c_str(), nullptr, 10);
    q.format = Format::kDecimalExponent;
  }
  // nanos = digits * 10^(exponent + 9 - frac), rounded up (away from zero).
  const int64_t pow10 = exponent + 9 - static_cast<int64_t>(frac);
  if (static_cast<int64_t>(digits.size()) + pow10 > static_cast<int64_t>(kMaxBigDigits)) {
    return invalid_error("quantity \"" + std::string(text) + "\" is out of the supported range (below 1e" +
                         std::to_string(kMaxBigDigits - 9) + ")");
  }
  for (char c : digits) mul_add(q.magnitude, 10, static_cast<uint32_t>(c - '0'));
  if (pow10 >= 0) {
    for (int64_t k = 0; k < pow10; ++k) mul_add(q.magnitude, 10, 0);
  } else {
    bool sticky = false;
    for (int64_t k = 0; k < -pow10 && !q.magnitude.empty(); ++k) {
      if (divmod(q.magnitude, 10) != 0) sticky = true;
    }
    if (sticky) mul_add(q.magnitude, 1, 1);
  }
  if (q.magnitude.empty()) q.negative = false;
  return q;
}

bool is_big_quantity(const Value& v) { return v.kind == ValueKind::kQuantity && v.n == 1; }

BigQuantity to_big(const Value& v) {
  if (is_big_quantity(v)) return *static_cast<const BigQuantity*>(v.p);
  const api::Quantity& q = v.quantity_data();
  BigQuantity out;
  i128 n = q.nanos();
  out.negative = n < 0;
  out.magnitude = from_u128(n < 0 ? static_cast<u128>(-(n + 1)) + 1 : static_cast<u128>(n));
  out.format = q.format();
  return out;
}

Value make_quantity(BigQuantity q) {
  if (q.magnitude.size() <= 4) {
    u128 m = 0;
    for (size_t i = q.magnitude.size(); i-- > 0;) m = (m << 32) | q.magnitude[i];
    if (m <= static_cast<u128>(std::numeric_limits<i128>::max())) {
      i128 n = static_cast<i128>(m);
      return Value::quantity(api::Quantity::from_nanos(q.negative ? -n : n, q.format));
    }
  }
  Value x = Value::boxed<BigQuantity>(ValueKind::kQuantity, std::move(q));
  x.n = 1;  // marks the BigQuantity representation
  return x;
}

int sign(const BigQuantity& q) { return q.magnitude.empty() ? 0 : (q.negative ? -1 : 1); }

int compare(const BigQuantity& a, const BigQuantity& b) {
  int sa = sign(a), sb = sign(b);
  if (sa != sb) return sa < sb ? -1 : 1;
  int c = cmp_mag(a.magnitude, b.magnitude);
  return sa < 0 ? -c : c;
}

BigQuantity add(const BigQuantity& a, const BigQuantity& b) {
  BigQuantity out;
  // Quantity.Add: the sum keeps the receiver's format unless the receiver is zero.
  out.format = a.magnitude.empty() ? b.format : a.format;
  if (a.negative == b.negative) {
    out.negative = a.negative;
    out.magnitude = add_mag(a.magnitude, b.magnitude);
  } else if (cmp_mag(a.magnitude, b.magnitude) >= 0) {
    out.negative = a.negative;
    out.magnitude = sub_mag(a.magnitude, b.magnitude);
  } else {
    out.negative = b.negative;
    out.magnitude = sub_mag(b.magnitude, a.magnitude);
  }
  if (out.magnitude.empty()) out.negative = false;
  return out;
}

BigQuantity sub(const BigQuantity& a, const BigQuantity& b) {
  BigQuantity neg = b;
  if (!neg.magnitude.empty()) neg.negative = !neg.negative;
  BigQuantity out = add(a, neg);
  out.format = a.magnitude.empty() ? b.format : a.format;
  return out;
}

double approximate_float(const BigQuantity& q) {
  // big.Float(unscaled).Float64() rounds to nearest (±Inf past the range), as
  // strtod does; then math.Pow10(-9) is multiplied in.
  double base = std::strtod(decimal(q.magnitude).c_str(), nullptr);
  if (q.negative) base = -base;
  return base * 1e-9;
}

std::string to_string(const BigQuantity& q) {
  if (q.magnitude.empty()) return "0";
  if (q.format == Format::kBinarySI) {
    Limbs units = q.magnitude;
    if (divmod(units, 1'000'000'000) == 0) {
      // Whole units: as many 1024 factors as divide out, as a binary suffix
      // when one exists (past Ei there is none: decimal exponent form).
      int times = 0;
      for (;;) {
        Limbs t = units;
        if (divmod(t, 1024) != 0 || t.empty()) break;
        units = std::move(t);
        ++times;
      }
      static constexpr std::array<std::string_view, 7> kBin = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
      if (times < static_cast<int>(kBin.size())) {
        return (q.negative ? "-" : "") + decimal(units).append(kBin[times]);
      }
      return decimal_form(decimal(q.magnitude), q.negative, Format::kDecimalExponent);
    }
    return decimal_form(decimal(q.magnitude), q.negative, Format::kDecimalSI);
  }
  return decimal_form(decimal(q.magnitude), q.negative, q.format);
}

std::string quantity_string(const Value& v) {
  if (is_big_quantity(v)) return to_string(*static_cast<const BigQuantity*>(v.p));
  return v.quantity_data().to_string();
}

}  // namespace draplane::cel
