// string.format() of the cel-go strings extension: %s %d %f %e %b %o %x %X and
// %%, with an optional precision for %f and %e, and cel-go's error messages.
#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <functional>

#include "cel/functions.h"
#include "common/hex.h"
#include "cel/lexer.h"
#include "cel/time.h"

namespace draplane::cel::lib {

namespace {

// %s rendering; false when the value kind cannot be rendered, with `bad` the
// type name of the (innermost) value that could not.
bool as_string(const Value& v, std::string& out, std::string& bad) {
  switch (v.kind) {
    case ValueKind::kNull: out += "null"; return true;
    case ValueKind::kBool: out += v.b ? "true" : "false"; return true;
    case ValueKind::kInt: out += std::to_string(v.i); return true;
    case ValueKind::kUint: out += std::to_string(v.u); return true;
    case ValueKind::kDouble:
      if (std::isnan(v.d)) out += "NaN";
      else if (std::isinf(v.d)) out += v.d > 0 ? "Infinity" : "-Infinity";
      else out += format_double_go(v.d);
      return true;
    case ValueKind::kString:
    case ValueKind::kBytes: out += v.str(); return true;
    case ValueKind::kType: out += v.str(); return true;
    case ValueKind::kList: {
      out += "[";
      bool first = true;
      for (const auto& e : v.list_data()) {
        if (!first) out += ", ";
        first = false;
        if (!as_string(e, out, bad)) return false;
      }
      out += "]";
      return true;
    }
    case ValueKind::kMap: {
      std::vector<std::pair<std::string, std::string>> entries;
      for (const auto& [k, e] : v.map_data().entries) {
        std::string ks, es;
        if (!as_string(k, ks, bad) || !as_string(e, es, bad)) return false;
        entries.emplace_back(std::move(ks), std::move(es));
      }
      std::sort(entries.begin(), entries.end());
      out += "{";
      for (size_t k = 0; k < entries.size(); ++k) {
        if (k) out += ", ";
        out += entries[k].first + ": " + entries[k].second;
      }
      out += "}";
      return true;
    }
    // Quantities and semvers are not formattable: cel-go's FormatString errs
    // on any type outside the list above (they reach the default).
    case ValueKind::kTimestamp:
      out += timeutil::format_rfc3339({v.ts_seconds(), v.ts_nanos(), v.ts_offset()});
      return true;
    case ValueKind::kDuration: out += timeutil::format_duration(v.i); return true;
    default: bad = std::string(type_name_of(v)); return false;
  }
}

bool non_finite(const Value& v, std::string& out) {
  if (v.kind != ValueKind::kDouble || std::isfinite(v.d)) return false;
  out += std::isnan(v.d) ? "NaN" : (v.d > 0 ? "Infinity" : "-Infinity");
  return true;
}

std::string to_base(uint64_t u, int base, bool upper) {
  if (u == 0) return "0";
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string s;
  while (u) {
    s.push_back(digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  }
  std::reverse(s.begin(), s.end());
  return s;
}

std::string int_in_base(const Value& v, int base, bool upper) {
  if (v.kind == ValueKind::kUint) return to_base(v.u, base, upper);
  if (v.i < 0) return "-" + to_base(static_cast<uint64_t>(0) - static_cast<uint64_t>(v.i), base, upper);
  return to_base(static_cast<uint64_t>(v.i), base, upper);
}

}  // namespace

std::string scan_format(std::string_view fmt, size_t nargs, bool runtime, std::string* out,
                        const std::function<std::string(size_t, char, int)>& clause, size_t* requested) {
  size_t arg = 0;
  for (size_t i = 0; i < fmt.size();) {
    if (fmt[i] != '%') {
      if (out) out->push_back(fmt[i]);
      ++i;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      if (out) out->push_back('%');
      i += 2;
      continue;
    }
    // parseFormatString: the argument is fetched first (at run time an absent
    // one is the error), then the clause is parsed.
    if (requested) ++*requested;
    if (runtime && arg >= nargs) return "index " + std::to_string(arg) + " out of range";
    if (i + 1 >= fmt.size()) return "unexpected end of string";
    if (arg >= nargs) return "index " + std::to_string(arg) + " out of range";
    size_t j = i + 1;
    int precision = -1;
    if (fmt[j] == '.') {
      constexpr std::string_view kPrecision = "could not parse formatting clause: error while parsing precision: ";
      size_t start = ++j;
      while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') ++j;
      if (j >= fmt.size()) return std::string(kPrecision) + "could not find end of precision specifier";
      std::string_view digits = fmt.substr(start, j - start);
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), precision);
      if (digits.empty() || ec != std::errc()) {
        return std::string(kPrecision) + "error while converting precision to integer: strconv.Atoi: parsing \"" +
               std::string(digits) + "\": " + (digits.empty() ? "invalid syntax" : "value out of range");
      }
    }
    char verb = fmt[j++];
    if (std::string_view("sdfeboxX").find(verb) == std::string_view::npos) {
      std::string r;
      append_utf8(r, static_cast<unsigned char>(verb));  // Go's rune(byte)
      return "could not parse formatting clause: unrecognized formatting clause \"" + r + "\"";
    }
    std::string err = clause(arg, verb, precision);
    if (!err.empty()) return "error during formatting: " + err;
    ++arg;
    i = j;
  }
  return "";
}

Value format_string(std::string_view fmt, const ListData& args) {
  std::string out;
  auto clause = [&](size_t index, char verb, int precision) -> std::string {
    const Value& v = args[index];
    std::string type(type_name_of(v));
    switch (verb) {
      case 's':
        if (std::string bad; !as_string(v, out, bad)) {
          return "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given " + bad;
        }
        break;
      case 'd':
        if (non_finite(v, out)) break;
        if (v.kind != ValueKind::kInt && v.kind != ValueKind::kUint) {
          return "decimal clause can only be used on integers, was given " + type;
        }
        out += int_in_base(v, 10, false);
        break;
      case 'f':
      case 'e': {
        if (non_finite(v, out)) break;
        if (v.kind != ValueKind::kDouble) {
          return std::string(verb == 'f' ? "fixed-point" : "scientific") +
                 " clause can only be used on doubles, was given " + type;
        }
        char buf[512];
        std::snprintf(buf, sizeof buf, verb == 'f' ? "%.*f" : "%.*e", precision < 0 ? 6 : precision, v.d);
        out += buf;
        break;
      }
      case 'b':
        if (v.kind == ValueKind::kBool) {
          out += v.b ? "1" : "0";
        } else if (v.kind == ValueKind::kInt || v.kind == ValueKind::kUint) {
          out += int_in_base(v, 2, false);
        } else {
          return "only integers and bools can be formatted as binary, was given " + type;
        }
        break;
      case 'o':
        if (v.kind != ValueKind::kInt && v.kind != ValueKind::kUint) {
          return "octal clause can only be used on integers, was given " + type;
        }
        out += int_in_base(v, 8, false);
        break;
      default: {  // x, X
        bool upper = verb == 'X';
        if (v.kind == ValueKind::kInt || v.kind == ValueKind::kUint) {
          out += int_in_base(v, 16, upper);
        } else if (v.kind == ValueKind::kString || v.kind == ValueKind::kBytes) {
          out += common::hex_encode(v.str(), upper);
        } else {
          return "only integers, byte buffers, and strings can be formatted as hex, was given " + type;
        }
      }
    }
    return "";
  };
  std::string err = scan_format(fmt, args.size(), true, &out, clause, nullptr);
  if (!err.empty()) return Value::error(std::move(err));
  return Value::string(std::move(out));
}

}  // namespace draplane::cel::lib
