#include "cel/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "cel/big_quantity.h"
#include "cel/k8s_format.h"
#include "cel/net.h"
#include "cel/time.h"
#include "cel/url.h"
#include "common/utf8.h"

namespace draplane::cel {

Value Value::string(std::string s) {
  auto owned = std::make_shared<const std::string>(std::move(s));
  Value x;
  x.kind = ValueKind::kString;
  x.p = owned->data();
  x.n = owned->size();
  x.owner = std::move(owned);
  return x;
}

Value Value::bytes(std::string s) {
  Value x = string(std::move(s));
  x.kind = ValueKind::kBytes;
  return x;
}

Value Value::list(ListData elems) { return boxed<ListData>(ValueKind::kList, std::move(elems)); }

Value Value::map(MapData m) { return boxed<MapData>(ValueKind::kMap, std::move(m)); }

Value Value::borrowed_map(const MapData* m) {
  Value x;
  x.kind = ValueKind::kMap;
  x.p = m;
  return x;
}

Value Value::quantity(api::Quantity q) { return boxed<api::Quantity>(ValueKind::kQuantity, std::move(q)); }

Value Value::semver(Semver v) { return boxed<Semver>(ValueKind::kSemver, std::move(v)); }

Value Value::optional_of(Value v) { return boxed<Value>(ValueKind::kOptional, std::move(v)); }

Value Value::error(std::string message) { return boxed<std::string>(ValueKind::kError, std::move(message)); }

const MapData& empty_map() {
  static const MapData kEmpty;
  return kEmpty;
}

namespace {

bool key_matches(const Value& k, const Value& key) {
  switch (key.kind) {
    case ValueKind::kString:
      return k.kind == ValueKind::kString && k.str() == key.str();
    case ValueKind::kInt:
      return (k.kind == ValueKind::kInt && k.i == key.i) ||
             (k.kind == ValueKind::kUint && key.i >= 0 && k.u == static_cast<uint64_t>(key.i));
    case ValueKind::kUint:
      return (k.kind == ValueKind::kUint && k.u == key.u) ||
             (k.kind == ValueKind::kInt && k.i >= 0 && static_cast<uint64_t>(k.i) == key.u);
    case ValueKind::kDouble: {
      // A double key finds an int/uint key with the same exact value.
      double d = key.d;
      if (d != std::trunc(d)) return false;
      if (k.kind == ValueKind::kInt) return d >= -9.2233720368547758e18 && d < 9.2233720368547758e18 &&
                                            static_cast<int64_t>(d) == k.i;
      if (k.kind == ValueKind::kUint) return d >= 0 && d < 1.8446744073709552e19 && static_cast<uint64_t>(d) == k.u;
      return false;
    }
    case ValueKind::kBool:
      return k.kind == ValueKind::kBool && k.b == key.b;
    default:
      return false;
  }
}

}  // namespace

const Value* MapData::find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (key_matches(k, key)) return &v;
  }
  return nullptr;
}

const Value* MapData::find_string(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k.kind == ValueKind::kString && k.str() == key) return &v;
  }
  return nullptr;
}

std::string_view type_name_of(const Value& v) {
  switch (v.kind) {
    case ValueKind::kNull: return "null_type";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kUint: return "uint";
    case ValueKind::kDouble: return "double";
    case ValueKind::kString: return "string";
    case ValueKind::kBytes: return "bytes";
    case ValueKind::kList: return "list";
    case ValueKind::kMap: return "map";
    case ValueKind::kType: return "type";
    case ValueKind::kQuantity: return "kubernetes.Quantity";
    case ValueKind::kSemver: return "kubernetes.Semver";
    case ValueKind::kOptional: return "optional_type";
    case ValueKind::kDevice: return "kubernetes.DRADevice";
    case ValueKind::kTimestamp: return "google.protobuf.Timestamp";
    case ValueKind::kDuration: return "google.protobuf.Duration";
    case ValueKind::kIP: return "net.IP";
    case ValueKind::kCIDR: return "net.CIDR";
    case ValueKind::kURL: return "kubernetes.URL";
    case ValueKind::kFormat: return "kubernetes.NamedFormat";
    case ValueKind::kError: return "*error*";
  }
  return "?";
}

namespace {

bool is_number(const Value& v) {
  return v.kind == ValueKind::kInt || v.kind == ValueKind::kUint || v.kind == ValueKind::kDouble;
}

// Exact numeric comparison across int, uint and double: -1/0/1, 2 for NaN.
int compare_numbers(const Value& a, const Value& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.kind == b.kind) {
    switch (a.kind) {
      case ValueKind::kInt: return cmp(a.i, b.i);
      case ValueKind::kUint: return cmp(a.u, b.u);
      default:
        if (std::isnan(a.d) || std::isnan(b.d)) return 2;
        return cmp(a.d, b.d);
    }
  }
  if (a.kind == ValueKind::kInt && b.kind == ValueKind::kUint) {
    if (a.i < 0) return -1;
    return cmp(static_cast<uint64_t>(a.i), b.u);
  }
  if (a.kind == ValueKind::kUint && b.kind == ValueKind::kInt) {
    if (b.i < 0) return 1;
    return cmp(a.u, static_cast<uint64_t>(b.i));
  }
  // One side is a double: compare as cel-go does (the integer converted to double
  // once it is known to be in range, so 2^63-1 and 2^63 compare equal).
  bool a_double = a.kind == ValueKind::kDouble;
  double d = a_double ? a.d : b.d;
  const Value& other = a_double ? b : a;
  if (std::isnan(d)) return 2;
  int r;  // d compared with other
  if (other.kind == ValueKind::kInt) {
    if (d < -9.2233720368547758e18) r = -1;
    else if (d > 9.2233720368547758e18) r = 1;
    else r = cmp(d, static_cast<double>(other.i));
  } else {
    if (d < 0) r = -1;
    else if (d > 1.8446744073709552e19) r = 1;
    else r = cmp(d, static_cast<double>(other.u));
  }
  return a_double ? r : -r;
}

}  // namespace

bool values_equal(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return compare_numbers(a, b) == 0;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kNull: return true;
    case ValueKind::kBool: return a.b == b.b;
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kType: return a.str() == b.str();
    case ValueKind::kList: {
      const auto& x = a.list_data();
      const auto& y = b.list_data();
      if (x.size() != y.size()) return false;
      for (size_t k = 0; k < x.size(); ++k) {
        if (!values_equal(x[k], y[k])) return false;
      }
      return true;
    }
    case ValueKind::kMap: {
      const auto& x = a.map_data();
      const auto& y = b.map_data();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* w = y.find(k);
        if (!w || !values_equal(v, *w)) return false;
      }
      return true;
    }
    case ValueKind::kQuantity:
      if (is_big_quantity(a) || is_big_quantity(b)) return compare(to_big(a), to_big(b)) == 0;
      return a.quantity_data().compare(b.quantity_data()) == 0;
    case ValueKind::kSemver: return a.semver_data().compare(b.semver_data()) == 0;
    case ValueKind::kOptional: {
      const Value* x = a.optional_value();
      const Value* y = b.optional_value();
      if (!x || !y) return x == y;
      return values_equal(*x, *y);
    }
    case ValueKind::kDevice: return a.p == b.p;
    case ValueKind::kTimestamp: return a.ts_seconds() == b.ts_seconds() && a.ts_nanos() == b.ts_nanos();
    case ValueKind::kDuration: return a.i == b.i;
    case ValueKind::kIP: return a.ip_data() == b.ip_data();
    case ValueKind::kCIDR: return a.cidr_data() == b.cidr_data();
    case ValueKind::kURL: return url::to_string(a.url_data()) == url::to_string(b.url_data());
    case ValueKind::kFormat: return std::string_view(a.format_data().name) == b.format_data().name;
    default: return false;
  }
}

int compare_values(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return compare_numbers(a, b);
  if (a.kind != b.kind) return 2;
  switch (a.kind) {
    case ValueKind::kBool: return a.b == b.b ? 0 : (a.b ? 1 : -1);
    case ValueKind::kString:
    case ValueKind::kBytes: {
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case ValueKind::kTimestamp: {
      if (a.ts_seconds() != b.ts_seconds()) return a.ts_seconds() < b.ts_seconds() ? -1 : 1;
      return a.ts_nanos() == b.ts_nanos() ? 0 : (a.ts_nanos() < b.ts_nanos() ? -1 : 1);
    }
    case ValueKind::kDuration: return a.i == b.i ? 0 : (a.i < b.i ? -1 : 1);
    default: return 2;
  }
}

namespace {

// CEL literal form: \" \\ \n \r \t by name, other control bytes (and every
// byte past ASCII in bytes) as \x escapes.
void quote(std::string& out, std::string_view s, bool bytes) {
  out += bytes ? "b\"" : "\"";
  for (unsigned char c : s) {
    bool named = c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t';
    if (named) {
      append_named_escape(out, c);
    } else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80)) {
      append_hex_escape(out, c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out += "\"";
}

void literal(std::string& out, const Value& v) {
  switch (v.kind) {
    case ValueKind::kNull: out += "null"; return;
    case ValueKind::kBool: out += v.b ? "true" : "false"; return;
    case ValueKind::kInt: out += std::to_string(v.i); return;
    case ValueKind::kUint: out += std::to_string(v.u) + "u"; return;
    case ValueKind::kDouble: {
      if (std::isnan(v.d)) {
        out += "double(\"NaN\")";
        return;
      }
      if (std::isinf(v.d)) {
        out += v.d > 0 ? "double(\"Infinity\")" : "double(\"-Infinity\")";
        return;
      }
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, v.d);
      std::string s(buf, r.ptr);
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      out += s;
      return;
    }
    case ValueKind::kString: quote(out, v.str(), false); return;
    case ValueKind::kBytes: quote(out, v.str(), true); return;
    case ValueKind::kType: out += v.str(); return;
    case ValueKind::kList: {
      out += "[";
      bool first = true;
      for (const auto& e : v.list_data()) {
        if (!first) out += ", ";
        first = false;
        literal(out, e);
      }
      out += "]";
      return;
    }
    case ValueKind::kMap: {
      out += "{";
      bool first = true;
      for (const auto& [k, e] : v.map_data().entries) {
        if (!first) out += ", ";
        first = false;
        literal(out, k);
        out += ": ";
        literal(out, e);
      }
      out += "}";
      return;
    }
    case ValueKind::kQuantity: out += "quantity(\"" + quantity_string(v) + "\")"; return;
    case ValueKind::kSemver: out += "semver(\"" + v.semver_data().to_string() + "\")"; return;
    case ValueKind::kOptional:
      if (!v.optional_value()) {
        out += "optional.none()";
      } else {
        out += "optional.of(";
        literal(out, *v.optional_value());
        out += ")";
      }
      return;
    case ValueKind::kDevice: out += "device"; return;
    case ValueKind::kTimestamp:
      // cel-go prints timestamps in UTC.
      out += "timestamp(\"" + timeutil::format_rfc3339({v.ts_seconds(), v.ts_nanos(), 0}) + "\")";
      return;
    case ValueKind::kDuration: out += "duration(\"" + timeutil::format_duration(v.i) + "\")"; return;
    case ValueKind::kIP: out += "ip(\"" + net::to_string(v.ip_data()) + "\")"; return;
    case ValueKind::kCIDR: out += "cidr(\"" + net::to_string(v.cidr_data()) + "\")"; return;
    case ValueKind::kURL:
      out += "url(";
      quote(out, url::to_string(v.url_data()), false);
      out += ")";
      return;
    case ValueKind::kFormat: out += std::string("format.") + v.format_data().key + "()"; return;
    case ValueKind::kError: out += v.error_message(); return;
  }
}

}  // namespace

std::string to_literal(const Value& v) {
  std::string out;
  literal(out, v);
  return out;
}

}  // namespace draplane::cel
