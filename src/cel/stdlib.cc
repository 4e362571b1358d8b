// CEL standard library: operators, equality and ordering, membership, index,
// size, type conversions, string predicates and matches().
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include <re2/re2.h>

#include "cel/functions.h"
#include "cel/overload_adder.h"

namespace draplane::cel {

Value no_such_overload() { return Value::error("no such overload"); }

Value no_such_key(const Value& key) {
  std::string k;
  switch (key.kind) {
    case ValueKind::kString: k = std::string(key.str()); break;
    case ValueKind::kInt: k = std::to_string(key.i); break;
    case ValueKind::kUint: k = std::to_string(key.u); break;
    case ValueKind::kBool: k = key.b ? "true" : "false"; break;
    default: k = to_literal(key); break;
  }
  return Value::error("no such key: " + k);
}

namespace lib {

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::vector<uint32_t> decode_utf8(std::string_view s) { return decode_runes(s); }

namespace {

const Type kB(TypeKind::kBool), kI(TypeKind::kInt), kU(TypeKind::kUint), kD(TypeKind::kDouble),
    kS(TypeKind::kString), kY(TypeKind::kBytes), kN(TypeKind::kNull), kDyn(TypeKind::kDyn),
    kT(TypeKind::kTimestamp), kDur(TypeKind::kDuration);
const Type kA = Type::param("A");
const Type kBp = Type::param("B");
const Type kListA = Type::list(Type::param("A"));
const Type kMapAB = Type::map(Type::param("A"), Type::param("B"));

Value overflow() { return Value::error("integer overflow"); }
Value uoverflow() { return Value::error("unsigned integer overflow"); }

// ---------------------------------------------------------------- arithmetic
// + - * with Go's overflow checks: `Op` on the int64 (or uint64) payloads.
enum class Arith { kAdd, kSub, kMul };
template <Arith Op, typename T>
bool overflows(T x, T y, T& r) {
  if constexpr (Op == Arith::kAdd) {
    return __builtin_add_overflow(x, y, &r);
  } else if constexpr (Op == Arith::kSub) {
    return __builtin_sub_overflow(x, y, &r);
  } else {
    return __builtin_mul_overflow(x, y, &r);
  }
}
template <Arith Op>
Value int_arith(const Value* a) {
  int64_t r;
  return overflows<Op>(a[0].i, a[1].i, r) ? overflow() : Value::integer(r);
}
template <Arith Op>
Value uint_arith(const Value* a) {
  uint64_t r;
  return overflows<Op>(a[0].u, a[1].u, r) ? uoverflow() : Value::uinteger(r);
}
constexpr FnImpl add_int = int_arith<Arith::kAdd>, sub_int = int_arith<Arith::kSub>, mul_int = int_arith<Arith::kMul>;
constexpr FnImpl add_uint = uint_arith<Arith::kAdd>, sub_uint = uint_arith<Arith::kSub>,
                 mul_uint = uint_arith<Arith::kMul>;
Value div_int(const Value* a) {
  if (a[1].i == 0) return Value::error("division by zero");
  if (a[0].i == std::numeric_limits<int64_t>::min() && a[1].i == -1) return overflow();
  return Value::integer(a[0].i / a[1].i);
}
Value mod_int(const Value* a) {
  if (a[1].i == 0) return Value::error("modulus by zero");
  if (a[0].i == std::numeric_limits<int64_t>::min() && a[1].i == -1) return overflow();
  return Value::integer(a[0].i % a[1].i);
}
Value neg_int(const Value* a) {
  if (a[0].i == std::numeric_limits<int64_t>::min()) return overflow();
  return Value::integer(-a[0].i);
}
Value div_uint(const Value* a) {
  if (a[1].u == 0) return Value::error("division by zero");
  return Value::uinteger(a[0].u / a[1].u);
}
Value mod_uint(const Value* a) {
  if (a[1].u == 0) return Value::error("modulus by zero");
  return Value::uinteger(a[0].u % a[1].u);
}
Value add_double(const Value* a) { return Value::dbl(a[0].d + a[1].d); }
Value sub_double(const Value* a) { return Value::dbl(a[0].d - a[1].d); }
Value mul_double(const Value* a) { return Value::dbl(a[0].d * a[1].d); }
Value div_double(const Value* a) { return Value::dbl(a[0].d / a[1].d); }
Value neg_double(const Value* a) { return Value::dbl(-a[0].d); }
Value add_string(const Value* a) {
  std::string s;
  s.reserve(a[0].n + a[1].n);
  s.append(a[0].str());
  s.append(a[1].str());
  return a[0].kind == ValueKind::kBytes ? Value::bytes(std::move(s)) : Value::string(std::move(s));
}
Value add_list(const Value* a) {
  if (a[1].list_data().empty()) return a[0];
  if (a[0].list_data().empty()) return a[1];
  ListData l;
  l.reserve(a[0].list_data().size() + a[1].list_data().size());
  for (const auto& v : a[0].list_data()) l.push_back(v);
  for (const auto& v : a[1].list_data()) l.push_back(v);
  return Value::list(std::move(l));
}
Value logical_not(const Value* a) { return Value::boolean(!a[0].b); }

// ---------------------------------------------------------------- equality, ordering
Value eq(const Value* a) {
  // The Kubernetes object types answer "no such overload" when compared with
  // another type (their Equal methods), the CEL types false.
  switch (a[0].kind) {
    case ValueKind::kQuantity:
    case ValueKind::kSemver:
    case ValueKind::kIP:
    case ValueKind::kCIDR:
    case ValueKind::kURL:
    case ValueKind::kFormat:
      if (a[1].kind != a[0].kind) return no_such_overload();
      break;
    default: break;
  }
  return Value::boolean(values_equal(a[0], a[1]));
}
Value ne(const Value* a) {
  Value r = eq(a);
  if (r.is_error()) return r;
  return Value::boolean(!r.b);
}
template <int Op>
Value ordered(const Value* a) {
  int c = compare_values(a[0], a[1]);
  if (c == 2) {
    bool numeric = (a[0].kind == ValueKind::kInt || a[0].kind == ValueKind::kUint || a[0].kind == ValueKind::kDouble) &&
                   (a[1].kind == ValueKind::kInt || a[1].kind == ValueKind::kUint || a[1].kind == ValueKind::kDouble);
    if (numeric) return Value::boolean(false);  // NaN
    return no_such_overload();
  }
  switch (Op) {
    case 0: return Value::boolean(c < 0);
    case 1: return Value::boolean(c <= 0);
    case 2: return Value::boolean(c > 0);
    default: return Value::boolean(c >= 0);
  }
}
Value in_list(const Value* a) {
  for (const auto& v : a[1].list_data()) {
    if (values_equal(a[0], v)) return Value::boolean(true);
  }
  return Value::boolean(false);
}
Value in_map(const Value* a) { return Value::boolean(a[1].map_data().find(a[0]) != nullptr); }

// ---------------------------------------------------------------- index
Value index_list(const Value* a) {
  const auto& l = a[0].list_data();
  int64_t idx;
  const Value& k = a[1];
  if (k.kind == ValueKind::kInt) {
    idx = k.i;
  } else if (k.kind == ValueKind::kUint) {
    idx = k.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(k.u);
  } else if (k.kind == ValueKind::kDouble) {
    if (k.d != std::trunc(k.d) || !(k.d > -9.2e18 && k.d < 9.2e18)) {
      return Value::error("unsupported index value");
    }
    idx = static_cast<int64_t>(k.d);
  } else {
    return no_such_overload();
  }
  if (idx < 0 || static_cast<size_t>(idx) >= l.size()) {
    return Value::error("index out of bounds: " + std::to_string(idx));
  }
  return l[static_cast<size_t>(idx)];
}
Value index_map(const Value* a) {
  const auto& m = a[0].map_data();
  if (a[1].kind != ValueKind::kString && a[1].kind != ValueKind::kInt && a[1].kind != ValueKind::kUint &&
      a[1].kind != ValueKind::kBool && a[1].kind != ValueKind::kDouble) {
    return Value::error("unsupported key type");
  }
  if (const Value* v = m.find(a[1])) return *v;
  if (m.default_empty) return Value::borrowed_map(&empty_map());
  return no_such_key(a[1]);
}

// ---------------------------------------------------------------- size
Value size_string(const Value* a) { return Value::integer(static_cast<int64_t>(utf8_length(a[0].str()))); }
Value size_bytes(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].n)); }
Value size_list(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].list_data().size())); }
Value size_map(const Value* a) { return Value::integer(static_cast<int64_t>(a[0].map_data().entries.size())); }

// ---------------------------------------------------------------- conversions
Value identity(const Value* a) { return a[0]; }
Value int_from_uint(const Value* a) {
  if (a[0].u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return overflow();
  return Value::integer(static_cast<int64_t>(a[0].u));
}
// int(double) / uint(double): truncated when inside the open range (lo, hi).
template <typename T>
Value truncate_double(const Value* a, double lo, double hi, Value (*make)(T), Value (*out_of_range)()) {
  double d = a[0].d;
  if (!(d > lo && d < hi)) return out_of_range();
  return make(static_cast<T>(d));
}
// int(string) / uint(string): the whole string in decimal, else cel-go's error.
template <typename T>
Value integer_from_string(const Value* a, Value (*make)(T), const char* type) {
  T v;
  auto s = a[0].str();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
    return Value::error("invalid " + std::string(type) + ": " + std::string(s));
  }
  return make(v);
}
Value int_from_double(const Value* a) {
  return truncate_double<int64_t>(a, -9.2233720368547758e18, 9.2233720368547758e18, Value::integer, overflow);
}
Value int_from_string(const Value* a) { return integer_from_string<int64_t>(a, Value::integer, "int"); }
Value uint_from_int(const Value* a) {
  if (a[0].i < 0) return uoverflow();
  return Value::uinteger(static_cast<uint64_t>(a[0].i));
}
Value uint_from_double(const Value* a) {
  return truncate_double<uint64_t>(a, -1.0, 1.8446744073709552e19, Value::uinteger, uoverflow);
}
Value uint_from_string(const Value* a) { return integer_from_string<uint64_t>(a, Value::uinteger, "uint"); }
Value double_from_int(const Value* a) { return Value::dbl(static_cast<double>(a[0].i)); }
Value double_from_uint(const Value* a) { return Value::dbl(static_cast<double>(a[0].u)); }
Value double_from_string(const Value* a) {
  std::string s(a[0].str());
  if (s == "NaN") return Value::dbl(std::nan(""));
  if (s == "Infinity" || s == "+Infinity" || s == "inf" || s == "+inf") return Value::dbl(HUGE_VAL);
  if (s == "-Infinity" || s == "-inf") return Value::dbl(-HUGE_VAL);
  double v;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return Value::dbl(std::strtod(s.c_str(), nullptr));
  }
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return Value::error("invalid double: " + s);
  return Value::dbl(v);
}

}  // namespace

// Go's fmt "%g" (strconv.FormatFloat(f, 'g', -1, 64)), which cel-go's
// Double.ConvertToType(StringType) uses: exponent form below 1e-4 and, for the
// shortest representation, from 1e6 (strconv's eprec = 6), so string(1e6) is
// "1e+06" (not JavaScript's 1e21 threshold).
std::string format_double_go(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // e.g. -1.2345e+06
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    return out + eb;
  }
  if (exp < 0) {
    out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
  }
  return out;
}

namespace {

Value string_from_int(const Value* a) { return Value::string(std::to_string(a[0].i)); }
Value string_from_uint(const Value* a) { return Value::string(std::to_string(a[0].u)); }
Value string_from_double(const Value* a) { return Value::string(format_double_go(a[0].d)); }
Value string_from_bool(const Value* a) { return Value::borrowed_string(a[0].b ? "true" : "false"); }
Value string_from_bytes(const Value* a) {
  if (!valid_utf8(a[0].str())) return Value::error("invalid UTF-8 in bytes, cannot convert to string");
  Value v = a[0];
  v.kind = ValueKind::kString;
  return v;
}
Value bytes_from_string(const Value* a) {
  Value v = a[0];
  v.kind = ValueKind::kBytes;
  return v;
}
Value bool_from_string(const Value* a) {
  auto s = a[0].str();
  if (s == "true" || s == "TRUE" || s == "True" || s == "t" || s == "T" || s == "1") return Value::boolean(true);
  if (s == "false" || s == "FALSE" || s == "False" || s == "f" || s == "F" || s == "0") return Value::boolean(false);
  return Value::error("type conversion error from 'string' to 'bool'");
}
Value type_of(const Value* a) { return Value::type_name(type_name_of(a[0])); }

// ---------------------------------------------------------------- strings
Value starts_with(const Value* a) { return Value::boolean(a[0].str().starts_with(a[1].str())); }
Value ends_with(const Value* a) { return Value::boolean(a[0].str().ends_with(a[1].str())); }
Value contains(const Value* a) { return Value::boolean(a[0].str().find(a[1].str()) != std::string_view::npos); }
Value matches(const Value* a) {
  RE2::Options opts;
  opts.set_log_errors(false);
  RE2 re(re2::StringPiece(a[1].str().data(), a[1].str().size()), opts);
  if (!re.ok()) return Value::error("invalid regular expression: " + re.error());
  return Value::boolean(RE2::PartialMatch(re2::StringPiece(a[0].str().data(), a[0].str().size()), re));
}
Value not_strictly_false(const Value* a) { return Value::boolean(a[0].kind != ValueKind::kBool || a[0].b); }

}  // namespace

void register_standard(std::vector<Overload>& out) {
  const OverloadAdder add(out);
  add("add_int64", "_+_", false, {kI, kI}, kI, add_int);
  add("add_uint64", "_+_", false, {kU, kU}, kU, add_uint);
  add("add_double", "_+_", false, {kD, kD}, kD, add_double);
  add("add_string", "_+_", false, {kS, kS}, kS, add_string, true);
  add("add_bytes", "_+_", false, {kY, kY}, kY, add_string, true);
  add("add_list", "_+_", false, {kListA, kListA}, kListA, add_list, true);
  add("subtract_int64", "_-_", false, {kI, kI}, kI, sub_int);
  add("subtract_uint64", "_-_", false, {kU, kU}, kU, sub_uint);
  add("subtract_double", "_-_", false, {kD, kD}, kD, sub_double);
  add("multiply_int64", "_*_", false, {kI, kI}, kI, mul_int);
  add("multiply_uint64", "_*_", false, {kU, kU}, kU, mul_uint);
  add("multiply_double", "_*_", false, {kD, kD}, kD, mul_double);
  add("divide_int64", "_/_", false, {kI, kI}, kI, div_int);
  add("divide_uint64", "_/_", false, {kU, kU}, kU, div_uint);
  add("divide_double", "_/_", false, {kD, kD}, kD, div_double);
  add("modulo_int64", "_%_", false, {kI, kI}, kI, mod_int);
  add("modulo_uint64", "_%_", false, {kU, kU}, kU, mod_uint);
  add("negate_int64", "-_", false, {kI}, kI, neg_int);
  add("negate_double", "-_", false, {kD}, kD, neg_double);
  add("logical_not", "!_", false, {kB}, kB, logical_not);
  add("logical_and", "_&&_", false, {kB, kB}, kB, nullptr);
  add("logical_or", "_||_", false, {kB, kB}, kB, nullptr);
  add("conditional", "_?_:_", false, {kB, kA, kA}, kA, nullptr);
  add("not_strictly_false", "@not_strictly_false", false, {kB}, kB, not_strictly_false);
  add("equals", "_==_", false, {kA, kA}, kB, eq);
  add("not_equals", "_!=_", false, {kA, kA}, kB, ne);
  const char* names[4] = {"_<_", "_<=_", "_>_", "_>=_"};
  const char* ids[4] = {"less", "less_equals", "greater", "greater_equals"};
  FnImpl impls[4] = {ordered<0>, ordered<1>, ordered<2>, ordered<3>};
  const Type* ordered_types[] = {&kB, &kI, &kU, &kD, &kS, &kY, &kT, &kDur};
  const char* suffix[] = {"bool", "int64", "uint64", "double", "string", "bytes", "timestamp", "duration"};
  for (int op = 0; op < 4; ++op) {
    for (int t = 0; t < 8; ++t) {
      add(std::string(ids[op]) + "_" + suffix[t], names[op], false, {*ordered_types[t], *ordered_types[t]}, kB,
          impls[op]);
    }
    // CrossTypeNumericComparisons.
    const Type* nums[] = {&kI, &kU, &kD};
    for (int x = 0; x < 3; ++x) {
      for (int y = 0; y < 3; ++y) {
        if (x == y) continue;
        add(std::string(ids[op]) + "_" + suffix[x + 1] + "_" + suffix[y + 1], names[op], false, {*nums[x], *nums[y]},
            kB, impls[op]);
      }
    }
  }
  add("in_list", "@in", false, {kA, kListA}, kB, in_list, true);
  add("in_map", "@in", false, {kA, kMapAB}, kB, in_map);
  add("index_list", "_[_]", false, {kListA, kI}, kA, index_list);
  add("index_list_uint", "_[_]", false, {kListA, kU}, kA, index_list);
  add("index_list_double", "_[_]", false, {kListA, kD}, kA, index_list);
  add("index_map", "_[_]", false, {kMapAB, kA}, kBp, index_map);
  add("size_string", "size", false, {kS}, kI, size_string);
  add("size_bytes", "size", false, {kY}, kI, size_bytes);
  add("size_list", "size", false, {kListA}, kI, size_list);
  add("size_map", "size", false, {kMapAB}, kI, size_map);
  add("string_size", "size", true, {kS}, kI, size_string);
  add("bytes_size", "size", true, {kY}, kI, size_bytes);
  add("list_size", "size", true, {kListA}, kI, size_list);
  add("map_size", "size", true, {kMapAB}, kI, size_map);
  add("int64_to_int64", "int", false, {kI}, kI, identity);
  add("uint64_to_int64", "int", false, {kU}, kI, int_from_uint);
  add("double_to_int64", "int", false, {kD}, kI, int_from_double);
  add("string_to_int64", "int", false, {kS}, kI, int_from_string);
  add("uint64_to_uint64", "uint", false, {kU}, kU, identity);
  add("int64_to_uint64", "uint", false, {kI}, kU, uint_from_int);
  add("double_to_uint64", "uint", false, {kD}, kU, uint_from_double);
  add("string_to_uint64", "uint", false, {kS}, kU, uint_from_string);
  add("double_to_double", "double", false, {kD}, kD, identity);
  add("int64_to_double", "double", false, {kI}, kD, double_from_int);
  add("uint64_to_double", "double", false, {kU}, kD, double_from_uint);
  add("string_to_double", "double", false, {kS}, kD, double_from_string);
  add("string_to_string", "string", false, {kS}, kS, identity);
  add("int64_to_string", "string", false, {kI}, kS, string_from_int);
  add("uint64_to_string", "string", false, {kU}, kS, string_from_uint);
  add("double_to_string", "string", false, {kD}, kS, string_from_double);
  add("bool_to_string", "string", false, {kB}, kS, string_from_bool);
  add("bytes_to_string", "string", false, {kY}, kS, string_from_bytes);
  add("bytes_to_bytes", "bytes", false, {kY}, kY, identity);
  add("string_to_bytes", "bytes", false, {kS}, kY, bytes_from_string);
  add("bool_to_bool", "bool", false, {kB}, kB, identity);
  add("string_to_bool", "bool", false, {kS}, kB, bool_from_string);
  add("to_dyn", "dyn", false, {kA}, kDyn, identity);
  add("type", "type", false, {kA}, Type::type_of(kA), type_of);
  add("starts_with_string", "startsWith", true, {kS, kS}, kB, starts_with, true);
  add("ends_with_string", "endsWith", true, {kS, kS}, kB, ends_with, true);
  add("contains_string", "contains", true, {kS, kS}, kB, contains, true);
  add("matches", "matches", false, {kS, kS}, kB, matches, true);
  add("matches_string", "matches", true, {kS, kS}, kB, matches, true);
}

}  // namespace lib
}  // namespace draplane::cel
