// Runtime CEL values.
//
// A Value is a small tagged union. Scalars live inline; strings, bytes, lists,
// maps, quantities, semvers, optionals and errors are referenced through a
// pointer. The pointed-to data is either borrowed (it lives in the Program's
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
  kError,
};

struct Value;
struct MapData;
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

  static Value null() { return Value(); }
  static Value boolean(bool v) {
    Value x;
    x.kind = ValueKind::kBool;
    x.b = v;
    return x;
  }
  static Value integer(int64_t v) {
    Value x;
    x.kind = ValueKind::kInt;
    x.i = v;
    return x;
  }
  static Value uinteger(uint64_t v) {
    Value x;
    x.kind = ValueKind::kUint;
    x.u = v;
    return x;
  }
  static Value dbl(double v) {
    Value x;
    x.kind = ValueKind::kDouble;
    x.d = v;
    return x;
  }
  // Borrowed string: `s` must outlive the value (program constants, bindings).
  static Value borrowed_string(std::string_view s) {
    Value x;
    x.kind = ValueKind::kString;
    x.p = s.data();
    x.n = s.size();
    return x;
  }
  static Value string(std::string s);
  static Value bytes(std::string s);
  static Value borrowed_bytes(std::string_view s) {
    Value x = borrowed_string(s);
    x.kind = ValueKind::kBytes;
    return x;
  }
  static Value type_name(std::string_view static_name) {
    Value x;
    x.kind = ValueKind::kType;
    x.p = static_name.data();
    x.n = static_name.size();
    return x;
  }
  static Value list(ListData elems);
  static Value borrowed_list(const ListData* l) {
    Value x;
    x.kind = ValueKind::kList;
    x.p = l;
    return x;
  }
  static Value map(MapData m);
  static Value borrowed_map(const MapData* m);
  static Value quantity(api::Quantity q);
  static Value borrowed_quantity(const api::Quantity* q) {
    Value x;
    x.kind = ValueKind::kQuantity;
    x.p = q;
    return x;
  }
  static Value semver(Semver v);
  static Value borrowed_semver(const Semver* v) {
    Value x;
    x.kind = ValueKind::kSemver;
    x.p = v;
    return x;
  }
  static Value optional_none() {
    Value x;
    x.kind = ValueKind::kOptional;
    x.p = nullptr;
    return x;
  }
  static Value optional_of(Value v);
  static Value error(std::string message);

  bool is_error() const { return kind == ValueKind::kError; }
  std::string_view str() const { return {static_cast<const char*>(p), n}; }
  const ListData& list_data() const { return *static_cast<const ListData*>(p); }
  const MapData& map_data() const { return *static_cast<const MapData*>(p); }
  const api::Quantity& quantity_data() const { return *static_cast<const api::Quantity*>(p); }
  const Semver& semver_data() const { return *static_cast<const Semver*>(p); }
  const Value* optional_value() const { return static_cast<const Value*>(p); }
  const std::string& error_message() const { return *static_cast<const std::string*>(p); }
};

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
