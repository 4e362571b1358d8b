// List, set and optional libraries: Kubernetes' lists library (isSorted, sum,
// min, max, indexOf, lastIndexOf), cel-go's lists extension (slice, flatten,
// distinct, reverse, sort, first, last, lists.range), the sets extension
// (sets.contains, sets.equivalent, sets.intersects), optional values and the
// map insertion helper of two-variable comprehensions.
#include <algorithm>
#include <type_traits>

#include "cel/functions.h"
#include "cel/overload_adder.h"

namespace draplane::cel::lib {

namespace {

const Type kB(TypeKind::kBool), kI(TypeKind::kInt), kU(TypeKind::kUint), kD(TypeKind::kDouble),
    kDyn(TypeKind::kDyn);
const Type kA = Type::param("A");
const Type kListA = Type::list(Type::param("A"));
const Type kOptA = Type::optional(Type::param("A"));

Value is_sorted(const Value* a) {
  const auto& l = a[0].list_data();
  for (size_t k = 1; k < l.size(); ++k) {
    int c = compare_values(l[k - 1], l[k]);
    if (c == 2) return no_such_overload();
    if (c > 0) return Value::boolean(false);
  }
  return Value::boolean(true);
}

template <ValueKind K>
Value sum(const Value* a);

// A list typed dyn at compile time dispatches to the first overload; sum by
// what the list holds.
template <ValueKind K>
Value sum_of_kind(const Value* a) {
  const auto& l = a[0].list_data();
  if (l.empty() || l[0].kind == K) return sum<K>(a);
  switch (l[0].kind) {
    case ValueKind::kInt: return sum<ValueKind::kInt>(a);
    case ValueKind::kUint: return sum<ValueKind::kUint>(a);
    case ValueKind::kDouble: return sum<ValueKind::kDouble>(a);
    case ValueKind::kDuration: return sum<ValueKind::kDuration>(a);
    default: return no_such_overload();
  }
}

// The sum of a list whose elements must all be of `kind`, read through `field`;
// `overflow` is the error when an integer sum overflows.
template <typename T>
Value checked_sum(const ListData& l, ValueKind kind, T Value::*field, Value (*make)(T), const char* overflow) {
  T s = 0;
  for (const auto& v : l) {
    if (v.kind != kind) return no_such_overload();
    if constexpr (std::is_floating_point_v<T>) {
      s += v.*field;
    } else if (__builtin_add_overflow(s, v.*field, &s)) {
      return Value::error(overflow);
    }
  }
  return make(s);
}

template <ValueKind K>
Value sum(const Value* a) {
  const auto& l = a[0].list_data();
  if constexpr (K == ValueKind::kInt) {
    return checked_sum(l, K, &Value::i, Value::integer, "integer overflow");
  } else if constexpr (K == ValueKind::kUint) {
    return checked_sum(l, K, &Value::u, Value::uinteger, "unsigned integer overflow");
  } else if constexpr (K == ValueKind::kDuration) {
    return checked_sum(l, K, &Value::i, Value::duration, "integer overflow");
  } else {
    return checked_sum(l, ValueKind::kDouble, &Value::d, Value::dbl, "");
  }
}

template <bool Max>
Value min_max(const Value* a) {
  const auto& l = a[0].list_data();
  if (l.empty()) return Value::error(Max ? "max called on empty list" : "min called on empty list");
  const Value* best = &l[0];
  for (size_t k = 1; k < l.size(); ++k) {
    int c = compare_values(l[k], *best);
    if (c == 2) return no_such_overload();
    if (Max ? c > 0 : c < 0) best = &l[k];
  }
  return *best;
}

Value list_index_of(const Value* a) {
  const auto& l = a[0].list_data();
  for (size_t k = 0; k < l.size(); ++k) {
    if (values_equal(l[k], a[1])) return Value::integer(static_cast<int64_t>(k));
  }
  return Value::integer(-1);
}
Value list_last_index_of(const Value* a) {
  const auto& l = a[0].list_data();
  for (size_t k = l.size(); k-- > 0;) {
    if (values_equal(l[k], a[1])) return Value::integer(static_cast<int64_t>(k));
  }
  return Value::integer(-1);
}

Value slice(const Value* a) {
  const auto& l = a[0].list_data();
  int64_t s = a[1].i, e = a[2].i;
  if (s < 0 || e < 0) return Value::error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) + "), negative indexes not supported");
  if (s > e) return Value::error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) + "), start index must be less than or equal to end index");
  if (static_cast<size_t>(e) > l.size()) return Value::error("cannot slice(" + std::to_string(s) + ", " + std::to_string(e) + "), list is length " + std::to_string(l.size()));
  return Value::list(ListData(l.begin() + s, l.begin() + e));
}
void flatten_into(const ListData& l, int64_t depth, ListData& out) {
  for (const auto& v : l) {
    if (v.kind == ValueKind::kList && depth > 0) flatten_into(v.list_data(), depth - 1, out);
    else out.push_back(v);
  }
}
Value flatten(const Value* a) {
  ListData out;
  flatten_into(a[0].list_data(), 1, out);
  return Value::list(std::move(out));
}
Value flatten_n(const Value* a) {
  if (a[1].i < 0) return Value::error("level must be non-negative");
  ListData out;
  flatten_into(a[0].list_data(), a[1].i, out);
  return Value::list(std::move(out));
}
Value distinct(const Value* a) {
  ListData out;
  for (const auto& v : a[0].list_data()) {
    bool seen = false;
    for (const auto& w : out) {
      if (values_equal(v, w)) {
        seen = true;
        break;
      }
    }
    if (!seen) out.push_back(v);
  }
  return Value::list(std::move(out));
}
Value reverse_list(const Value* a) {
  ListData out(a[0].list_data().rbegin(), a[0].list_data().rend());
  return Value::list(std::move(out));
}
// sortListByAssociatedKeys of cel-go's lists extension: `list` ordered by
// `keys`, which must be of one comparable type.
Value sort_by_keys(const Value* a) {
  const ListData& list = a[0].list_data();
  const ListData& keys = a[1].list_data();
  if (list.size() != keys.size()) {
    return Value::error(
        "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got " +
        std::to_string(list.size()) + " and " + std::to_string(keys.size()) + " elements respectively");
  }
  if (list.empty()) return a[0];
  switch (keys[0].kind) {
    case ValueKind::kInt: case ValueKind::kUint: case ValueKind::kDouble: case ValueKind::kBool:
    case ValueKind::kString: case ValueKind::kBytes: case ValueKind::kTimestamp: case ValueKind::kDuration: break;
    default: return Value::error("list elements must be comparable");
  }
  for (const auto& k : keys) {
    if (k.kind != keys[0].kind) return Value::error("list elements must have the same type");
  }
  std::vector<size_t> order(list.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return compare_values(keys[x], keys[y]) == -1; });
  ListData out;
  out.reserve(list.size());
  for (size_t k : order) out.push_back(list[k]);
  return Value::list(std::move(out));
}
Value sort_list(const Value* a) {
  Value both[2] = {a[0], a[0]};
  return sort_by_keys(both);
}
Value first(const Value* a) {
  const auto& l = a[0].list_data();
  return l.empty() ? Value::optional_none() : Value::optional_of(l.front());
}
Value last(const Value* a) {
  const auto& l = a[0].list_data();
  return l.empty() ? Value::optional_none() : Value::optional_of(l.back());
}
Value range(const Value* a) {
  ListData out;
  for (int64_t k = 0; k < a[0].i; ++k) out.push_back(Value::integer(k));
  return Value::list(std::move(out));
}

bool list_has(const ListData& l, const Value& v) {
  for (const auto& w : l) {
    if (values_equal(v, w)) return true;
  }
  return false;
}
Value sets_contains(const Value* a) {
  for (const auto& v : a[1].list_data()) {
    if (!list_has(a[0].list_data(), v)) return Value::boolean(false);
  }
  return Value::boolean(true);
}
Value sets_equivalent(const Value* a) {
  Value r = sets_contains(a);
  if (!r.b) return r;
  Value swapped[2] = {a[1], a[0]};
  return sets_contains(swapped);
}
Value sets_intersects(const Value* a) {
  for (const auto& v : a[1].list_data()) {
    if (list_has(a[0].list_data(), v)) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Value opt_of(const Value* a) { return Value::optional_of(a[0]); }
bool is_zero(const Value& v) {
  switch (v.kind) {
    case ValueKind::kNull: return true;
    case ValueKind::kBool: return !v.b;
    case ValueKind::kInt: return v.i == 0;
    case ValueKind::kUint: return v.u == 0;
    case ValueKind::kDouble: return v.d == 0;
    case ValueKind::kString:
    case ValueKind::kBytes: return v.n == 0;
    case ValueKind::kList: return v.list_data().empty();
    case ValueKind::kMap: return v.map_data().entries.empty();
    default: return false;
  }
}
Value opt_of_non_zero(const Value* a) { return is_zero(a[0]) ? Value::optional_none() : Value::optional_of(a[0]); }
Value opt_none(const Value*) { return Value::optional_none(); }
Value opt_has_value(const Value* a) { return Value::boolean(a[0].optional_value() != nullptr); }
Value opt_value(const Value* a) {
  if (!a[0].optional_value()) return Value::error("optional.none() dereference");
  return *a[0].optional_value();
}
// optional.unwrap / unwrapOpt (cel-go's optional library, version 2): the
// values of the present optionals, in order.
Value opt_unwrap(const Value* a) {
  ListData out;
  for (const auto& v : a[0].list_data()) {
    if (v.kind != ValueKind::kOptional) return no_such_overload();
    if (v.optional_value()) out.push_back(*v.optional_value());
  }
  return Value::list(std::move(out));
}
Value opt_or(const Value* a) { return a[0].optional_value() ? a[0] : a[1]; }
Value opt_or_value(const Value* a) { return a[0].optional_value() ? *a[0].optional_value() : a[1]; }

Value map_insert(const Value* a) {
  MapData m = a[0].map_data();
  m.default_empty = false;
  if (m.find(a[1])) return Value::error("insert failed: key " + to_literal(a[1]) + " already exists");
  m.entries.emplace_back(a[1], a[2]);
  return Value::map(std::move(m));
}
Value map_insert_entry(const Value* a) {
  MapData m = a[0].map_data();
  m.default_empty = false;
  for (const auto& [k, v] : a[1].map_data().entries) {
    if (m.find(k)) return Value::error("insert failed: key " + to_literal(k) + " already exists");
    m.entries.emplace_back(k, v);
  }
  return Value::map(std::move(m));
}

// optional[index]: optional chaining through an index; an absent key or index
// yields optional.none().
Value opt_index(const Value* a) {
  const Value* inner = a[0].optional_value();
  if (!inner) return a[0];
  if (inner->kind == ValueKind::kMap) {
    const Value* v = inner->map_data().find(a[1]);
    return v ? Value::optional_of(*v) : Value::optional_none();
  }
  if (inner->kind == ValueKind::kList) {
    if (a[1].kind != ValueKind::kInt) return no_such_overload();
    const auto& l = inner->list_data();
    if (a[1].i < 0 || static_cast<size_t>(a[1].i) >= l.size()) return Value::optional_none();
    return Value::optional_of(l[static_cast<size_t>(a[1].i)]);
  }
  return no_such_overload();
}

}  // namespace

void register_lists(std::vector<Overload>& out) {
  const OverloadAdder add(out, /*size_cost=*/true);
  // Kubernetes' lists library (library/lists.go) declares isSorted, min and max
  // per comparable type and sum per summable type (int, uint, double,
  // duration): a list of lists or maps does not type-check.
  const std::pair<const char*, Type> kK8sComparable[] = {
      {"int", kI}, {"uint", kU}, {"double", kD}, {"bool", kB},
      {"duration", Type(TypeKind::kDuration)}, {"timestamp", Type(TypeKind::kTimestamp)},
      {"string", Type(TypeKind::kString)}, {"bytes", Type(TypeKind::kBytes)},
  };
  for (const auto& [name, t] : kK8sComparable) {
    const std::string n = name;
    add("list_" + n + "_is_sorted_bool", "isSorted", true, {Type::list(t)}, kB, is_sorted);
    add("list_" + n + "_max_" + n, "max", true, {Type::list(t)}, t, min_max<true>);
    add("list_" + n + "_min_" + n, "min", true, {Type::list(t)}, t, min_max<false>);
  }
  add("list_int_sum_int", "sum", true, {Type::list(kI)}, kI, sum_of_kind<ValueKind::kInt>);
  add("list_uint_sum_uint", "sum", true, {Type::list(kU)}, kU, sum_of_kind<ValueKind::kUint>);
  add("list_double_sum_double", "sum", true, {Type::list(kD)}, kD, sum_of_kind<ValueKind::kDouble>);
  add("list_duration_sum_duration", "sum", true, {Type::list(Type(TypeKind::kDuration))}, Type(TypeKind::kDuration),
      sum_of_kind<ValueKind::kDuration>);
  add("list_index_of", "indexOf", true, {kListA, kA}, kI, list_index_of);
  add("list_last_index_of", "lastIndexOf", true, {kListA, kA}, kI, list_last_index_of);
  add("list_slice", "slice", true, {kListA, kI, kI}, kListA, slice);
  add("list_flatten", "flatten", true, {Type::list(kListA)}, kListA, flatten);
  add("list_flatten_int", "flatten", true, {Type::list(kDyn), kI}, Type::list(kDyn), flatten_n);
  add("list_distinct", "distinct", true, {kListA}, kListA, distinct);
  add("list_reverse", "reverse", true, {kListA}, kListA, reverse_list);
  // sort and sortBy's @sortByAssociatedKeys are declared per comparable type
  // (ext/lists.go comparableTypes): a list of lists does not type-check.
  const std::pair<const char*, Type> kComparable[] = {
      {"int", kI}, {"uint", kU}, {"double", kD}, {"bool", kB},
      {"google.protobuf.Duration", Type(TypeKind::kDuration)},
      {"google.protobuf.Timestamp", Type(TypeKind::kTimestamp)},
      {"string", Type(TypeKind::kString)}, {"bytes", Type(TypeKind::kBytes)},
  };
  for (const auto& [name, t] : kComparable) {
    add(std::string("list_") + name + "_sort", "sort", true, {Type::list(t)}, Type::list(t), sort_list);
    add(std::string("list_") + name + "_sortByAssociatedKeys", "@sortByAssociatedKeys", true, {kListA, Type::list(t)},
        kListA, sort_by_keys);
  }
  add("list_first", "first", true, {kListA}, kOptA, first);
  add("list_last", "last", true, {kListA}, kOptA, last);
  add("lists_range", "lists.range", false, {kI}, Type::list(kI), range);
  add("list_sets_contains_list", "sets.contains", false, {kListA, kListA}, kB, sets_contains);
  add("list_sets_equivalent_list", "sets.equivalent", false, {kListA, kListA}, kB, sets_equivalent);
  add("list_sets_intersects_list", "sets.intersects", false, {kListA, kListA}, kB, sets_intersects);
  add("optional_of", "optional.of", false, {kA}, kOptA, opt_of);
  add("optional_ofNonZeroValue", "optional.ofNonZeroValue", false, {kA}, kOptA, opt_of_non_zero);
  add("optional_none", "optional.none", false, {}, Type::optional(kDyn), opt_none);
  add("optional_hasValue", "hasValue", true, {kOptA}, kB, opt_has_value);
  add("optional_value", "value", true, {kOptA}, kA, opt_value);
  add("optional_or_optional", "or", true, {kOptA, kOptA}, kOptA, opt_or);
  // Kubernetes enables cel.OptionalTypes() unversioned: all of version 2.
  add("optional_unwrap", "optional.unwrap", false, {Type::list(kOptA)}, kListA, opt_unwrap);
  add("optional_unwrapOpt", "unwrapOpt", true, {Type::list(kOptA)}, kListA, opt_unwrap);
  add("optional_orValue_value", "orValue", true, {kOptA, kA}, kA, opt_or_value);
  const Type kMapKV = Type::map(Type::param("K"), Type::param("V"));
  const Type kK = Type::param("K"), kV = Type::param("V");
  const Type kS(TypeKind::kString);
  // Optional field selection and index (evaluated by the interpreter itself).
  add("select_optional_field", "_?._", false, {kMapKV, kS}, Type::optional(kV), nullptr);
  add("select_optional_optional_field", "_?._", false, {Type::optional(kMapKV), kS}, Type::optional(kV), nullptr);
  add("list_optindex_optional_int", "_[?_]", false, {kListA, kI}, kOptA, nullptr);
  add("optional_list_optindex_optional_int", "_[?_]", false, {Type::optional(kListA), kI}, kOptA, nullptr);
  add("map_optindex_optional_value", "_[?_]", false, {kMapKV, kK}, Type::optional(kV), nullptr);
  add("optional_map_optindex_optional_value", "_[?_]", false, {Type::optional(kMapKV), kK}, Type::optional(kV),
      nullptr);
  add("optional_list_index_int", "_[_]", false, {Type::optional(kListA), kI}, kOptA, opt_index);
  add("optional_map_index_value", "_[_]", false, {Type::optional(kMapKV), kK}, Type::optional(kV), opt_index);
  add("@mapInsert_map_key_value", "cel.@mapInsert", false, {kMapKV, Type::param("K"), Type::param("V")}, kMapKV,
      map_insert);
  add("@mapInsert_map_map", "cel.@mapInsert", false, {kMapKV, kMapKV}, kMapKV, map_insert_entry);
}

}  // namespace draplane::cel::lib
