// Encoding of the object model into the Kubernetes JSON shape, generic over the
// field tables (fields_*.h): members in Go struct order, omitempty where upstream
// has it, maps sorted (std::map), core `extra` members appended after the
// modelled ones.
#include <type_traits>

#include "api/codec.h"
#include "api/internal/encoder.h"
#include "api/internal/fields_core.h"
#include "api/internal/fields_resource.h"
#include "api/internal/json_value.h"

namespace draplane::api::internal {
namespace {

using J = JsonValue;

J enc(const std::string& s) { return J::string(s); }
J enc(const Quantity& q) { return J::string(q.to_string()); }
J enc(int64_t i) { return J::number(std::to_string(i)); }
J enc(int32_t i) { return J::number(std::to_string(i)); }
J enc(bool b) { return J::from_bool(b); }
J enc(const RawJson& raw) {
  if (raw.empty()) return J::null();
  Result<J> v = parse_json(raw.text);
  return v.has_value() ? std::move(v).value() : J::string(raw.text);
}

// Declared before any definition: each calls the others for its members.
template <Described T>
J enc(const T& v);
template <typename T>
J enc(const std::vector<T>& list);
template <typename T>
J enc(const std::map<std::string, T>& map);
template <typename T>
J enc(const std::optional<T>& v);

template <typename T>
J enc(const std::vector<T>& list) {
  J a = J::array();
  for (const T& item : list) a.items.push_back(enc(item));
  return a;
}

template <typename T>
J enc(const std::map<std::string, T>& map) {
  J o = J::object();
  for (const auto& [k, item] : map) o.add(k, enc(item));
  return o;
}

// A pointer without omitempty: null when unset, as Go writes it.
template <typename T>
J enc(const std::optional<T>& v) {
  return v.has_value() ? enc(*v) : J::null();
}

// Whether Go's omitempty leaves the value out: "" 0 false, an empty list or map,
// a nil pointer. A struct is never empty (omitempty does not apply to structs).
bool is_empty(const std::string& s) { return s.empty(); }
bool is_empty(int64_t i) { return i == 0; }
bool is_empty(int32_t i) { return i == 0; }  // an exact match, or the struct template would take it
bool is_empty(bool b) { return !b; }
bool is_empty(const RawJson& raw) { return raw.empty(); }
template <typename T>
bool is_empty(const std::optional<T>& v) {
  return !v.has_value();
}
template <typename T>
bool is_empty(const std::vector<T>& v) {
  return v.empty();
}
template <typename T>
bool is_empty(const std::map<std::string, T>& v) {
  return v.empty();
}
template <typename T>
bool is_empty(const T&) {
  return false;
}

template <typename M>
constexpr bool is_optional = false;
template <typename T>
constexpr bool is_optional<std::optional<T>> = true;

template <typename T, typename M, bool OmitEmpty>
[[gnu::always_inline]] inline void write_field(J& o, const MemberField<T, M, OmitEmpty>& f,
                                               const T& v) {
  const M& value = v.*(f.member);
  if constexpr (OmitEmpty) {
    if (is_empty(value)) return;
    if constexpr (is_optional<M>) {
      o.add(std::string(f.name), enc(*value));  // set: is_empty said so
      return;
    }
  }
  o.add(std::string(f.name), enc(value));
}

template <typename T>
void write_field(J&, const IgnoredField&, const T&) {}

template <typename T, auto Read>
void write_field(J&, const HookField<T, Read>&, const T&) {}

template <typename... F, typename T>
void write_field(J& o, const NestedField<F...>& f, const T& v);

// How many members write_members adds for `v`: the object's members are then
// allocated once, not grown (and moved) member by member.
template <typename T, typename M, bool OmitEmpty>
[[gnu::always_inline]] inline size_t written(const MemberField<T, M, OmitEmpty>& f, const T& v) {
  if constexpr (OmitEmpty) return is_empty(v.*(f.member)) ? 0 : 1;
  return 1;
}
template <typename T>
size_t written(const IgnoredField&, const T&) {
  return 0;
}
template <typename T, auto Read>
size_t written(const HookField<T, Read>&, const T&) {
  return 0;
}
template <typename... F, typename T>
size_t written(const NestedField<F...>&, const T&) {
  return 1;
}

template <typename Table, typename T>
[[gnu::always_inline]] inline void write_members(J& o, const Table& table, const T& v) {
  o.members.reserve(o.members.size() +
                    std::apply([&](const auto&... f) { return (size_t{0} + ... + written(f, v)); }, table));
  std::apply(
      [&](const auto&... f) __attribute__((always_inline)) { (write_field(o, f, v), ...); }, table);
}

// A nested object is always written.
template <typename... F, typename T>
void write_field(J& o, const NestedField<F...>& f, const T& v) {
  J sub = J::object();
  write_members(sub, f.fields, v);
  o.add(std::string(f.name), std::move(sub));
}

// Appends the members of an `extra` JSON object.
void merge_extra(J& o, const RawJson& extra) {
  if (extra.empty()) return;
  J e = enc(extra);
  if (!e.is_object()) return;
  for (auto& [k, v] : e.members) {
    if (o.find(k) == nullptr) o.add(k, std::move(v));
  }
}

template <Described T>
J enc(const T& v) {
  J o = J::object();
  write_members(o, FieldTable<T>::fields, v);
  if constexpr (HasExtra<T>) merge_extra(o, v.extra);
  return o;
}

// kind and apiVersion first. The structs are the version's shape whatever
// typeMeta says, so the version written is the table's.
template <TopLevel T>
J enc_object(const T& v) {
  J o = J::object();
  o.add("kind", J::string(std::string(FieldTable<T>::kind.name)));
  o.add("apiVersion", J::string(std::string(FieldTable<T>::kind.api_version)));
  write_members(o, FieldTable<T>::fields, v);
  return o;
}

}  // namespace

JsonValue encode_object(const Object& object) {
  return std::visit([](const auto& obj) -> J { return enc_object(obj); }, object);
}

}  // namespace draplane::api::internal
