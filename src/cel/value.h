// Runtime CEL values.
//
// A Value is a small tagged union. Scalars, timestamps and durations live inline;
// strings, bytes, lists, maps, quantities, semvers, IPs, CIDRs, URLs, named
// formats, optionals and errors are referenced through a pointer. The pointed-to data is either borrowed (it lives in the Program's
// constants or in a DeviceBinding, both of which outlive an evaluation: `owner` is
// null, copying costs nothing) or owned by the value (`owner` keeps it alive).
// This is what lets selector evaluation run without allocating: attribute
// lookups and literal comparisons only move borrowed pointers.
//
// Thread-safety: values are immutable; concurrent reads are safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/quantity.h"
#include "cel/semver.h"

namespace draplane::cel {

enum class ValueKind : unsigned char {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kQuantity,
  kSemver,
  kOptional,
  kDevice,
  kTimestamp,  // i: Unix seconds; n: nanos (low 32 bits), UTC offset seconds (high 32)
  kDuration,   // i: nanoseconds (cel-go's time.Duration range)
  kIP,         // p: IpAddr (cel/net.h)
  kCIDR,       // p: IpPrefix (cel/net.h)
  kURL,        // p: Url (cel/url.h)
  kFormat,     // p: NamedFormat (cel/k8s_format.h), always static
  kError,
};

struct Value;
struct MapData;
struct IpAddr;
struct IpPrefix;
struct Url;
struct NamedFormat;
using ListData = std::vector<Value>;

struct Value {
  ValueKind kind = ValueKind::kNull;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    const void* p;
  };
  size_t n = 0;  // byte length of string/bytes/type name
  std::shared_ptr<const void> owner;

  Value() : i(0) {}
  // The factories below build on these: a kind with its integer, or its pointer
  // and length, payload.
  Value(ValueKind k, int64_t v) : kind(k), i(v) {}
  explicit Value(ValueKind k, const void* ptr = nullptr, size_t len = 0) : kind(k), p(ptr), n(len) {}

  // A value of `kind` pointing at its own shared copy of `data`.
  template <typename T>
  static Value boxed(ValueKind kind, T data) {
    auto owned = std::make_shared<const T>(std::move(data));
    Value x(kind, owned.get());
    x.owner = std::move(owned);
    return x;
  }

  static Value null() { return Value(); }
  static Value boolean(bool v) {
    Value x(ValueKind::kBool);
    x.b = v;
    return x;
  }
  static Value integer(int64_t v) { return Value(ValueKind::kInt, v); }
  static Value uinteger(uint64_t v) {
    Value x(ValueKind::kUint);
    x.u = v;
    return x;
  }
  static Value dbl(double v) {
    Value x(ValueKind::kDouble);
    x.d = v;
    return x;
  }
  // Borrowed string: `s` must outlive the value (program constants, bindings).
  static Value borrowed_string(std::string_view s) { return Value(ValueKind::kString, s.data(), s.size()); }
  static Value string(std::string s);
  static Value bytes(std::string s);
  static Value borrowed_bytes(std::string_view s) { return Value(ValueKind::kBytes, s.data(), s.size()); }
  static Value type_name(std::string_view static_name) {
    return Value(ValueKind::kType, static_name.data(), static_name.size());
  }
  static Value list(ListData elems);
  static Value borrowed_list(const ListData* l) { return Value(ValueKind::kList, l); }
  static Value map(MapData m);
  static Value borrowed_map(const MapData* m);
  static Value quantity(api::Quantity q);
  static Value borrowed_quantity(const api::Quantity* q) { return Value(ValueKind::kQuantity, q); }
  static Value semver(Semver v);
  static Value borrowed_semver(const Semver* v) { return Value(ValueKind::kSemver, v); }
  static Value optional_none() { return Value(ValueKind::kOptional, nullptr); }
  static Value optional_of(Value v);
  static Value error(std::string message);
  // A timestamp: `seconds` since the Unix epoch, `nanos` in [0, 1e9), and the UTC
  // offset (seconds east) it was written with, which string() keeps (cel-go
  // keeps the time.Time location). Range checks are the caller's.
  static Value timestamp(int64_t seconds, int32_t nanos, int32_t offset = 0) {
    Value x(ValueKind::kTimestamp, seconds);
    x.n = static_cast<size_t>(static_cast<uint32_t>(nanos)) |
          (static_cast<size_t>(static_cast<uint32_t>(offset)) << 32);
    return x;
  }
  static Value duration(int64_t nanos) { return Value(ValueKind::kDuration, nanos); }
  // Defined in net.cc / url.cc / k8s_format.cc.
  static Value ip(const IpAddr& a);
  static Value cidr(const IpPrefix& p);
  static Value url(Url u);
  static Value format(const NamedFormat* f) { return Value(ValueKind::kFormat, f); }

  bool is_error() const { return kind == ValueKind::kError; }
  std::string_view str() const { return {static_cast<const char*>(p), n}; }
  const ListData& list_data() const { return *static_cast<const ListData*>(p); }
  const MapData& map_data() const { return *static_cast<const MapData*>(p); }
  // For a kQuantity with n == 0; n == 1 marks a value past api::Quantity's
  // range (cel/big_quantity.h), read through the functions there.
  const api::Quantity& quantity_data() const { return *static_cast<const api::Quantity*>(p); }
  const Semver& semver_data() const { return *static_cast<const Semver*>(p); }
  const Value* optional_value() const { return static_cast<const Value*>(p); }
  const std::string& error_message() const { return *static_cast<const std::string*>(p); }
  int64_t ts_seconds() const { return i; }
  int32_t ts_nanos() const { return static_cast<int32_t>(static_cast<uint32_t>(n & 0xffffffffu)); }
  int32_t ts_offset() const { return static_cast<int32_t>(static_cast<uint32_t>(n >> 32)); }
  const IpAddr& ip_data() const { return *static_cast<const IpAddr*>(p); }
  const IpPrefix& cidr_data() const { return *static_cast<const IpPrefix*>(p); }
  const Url& url_data() const { return *static_cast<const Url*>(p); }
  const NamedFormat& format_data() const { return *static_cast<const NamedFormat*>(p); }
};
static_assert(sizeof(size_t) == 8, "timestamps pack nanos and offset into Value::n");

// A CEL map. Keys are bool, int, uint or string; int and uint keys that are
// numerically equal are the same key. Insertion order is kept for iteration.
// `default_empty` makes a lookup of an absent key yield an empty map (the
// behaviour of device.attributes / device.capacity for unknown domains).
struct MapData {
  std::vector<std::pair<Value, Value>> entries;
  bool default_empty = false;

  // Pointer to the value for `key`, or null.
  const Value* find(const Value& key) const;
  const Value* find_string(std::string_view key) const;
};

// Equality of two byte ranges of the same length `n`, inlined: the keys and
// literals selectors compare are a few dozen bytes, where a call to memcmp
// costs more than the comparison.
inline bool bytes_equal(const char* a, const char* b, size_t n) {
  auto load8 = [](const char* p) {
    uint64_t x;
    __builtin_memcpy(&x, p, 8);
    return x;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (load8(a + i) != load8(b + i)) return false;
    }
    return load8(a + n - 8) == load8(b + n - 8);  // the tail, overlapping
  }
  if (n >= 4) {
    uint32_t x, y, z, w;
    __builtin_memcpy(&x, a, 4);
    __builtin_memcpy(&y, b, 4);
    __builtin_memcpy(&z, a + n - 4, 4);
    __builtin_memcpy(&w, b + n - 4, 4);
    return x == y && z == w;
  }
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
inline bool same_bytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() && bytes_equal(a.data(), b.data(), a.size());
}

// The name `type()` reports for a value: "int", "list", "kubernetes.Quantity", ...
std::string_view type_name_of(const Value& v);

// CEL equality (heterogeneous numeric equality, deep for lists and maps).
// Errors are not handled here: callers check is_error() first.
bool values_equal(const Value& a, const Value& b);

// Ordering for <, <=, >, >=: -1/0/1, or 2 when the values are not ordered
// (NaN, or no ordering for the pair of kinds).
int compare_values(const Value& a, const Value& b);

// CEL literal form for `draplane cel eval` and tests.
std::string to_literal(const Value& v);

// The shared empty map returned for unknown attribute domains.
const MapData& empty_map();

}  // namespace draplane::cel
