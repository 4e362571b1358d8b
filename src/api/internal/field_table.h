// Field tables: each API struct of types.h is described once, as a constexpr
// tuple of field descriptors in Go struct order (the order kube-apiserver writes
// them), and the codec's decoder (decoder.h) and encoder (codec_encode.cc) are
// generic code that walks the tuple with fold expressions: no per-type read or
// write functions, no runtime reflection, no std::function.
//
// A table is a specialization of FieldTable<T> with a static constexpr `fields`
// tuple (fields_meta.h, fields_resource.h, fields_core.h):
//
//   template <> struct FieldTable<NodeSelectorRequirement> {
//     using T = NodeSelectorRequirement;
//     static constexpr auto fields = std::tuple(
//         always("key", &T::key), always("operator", &T::operator_),
//         omitempty("values", &T::values));
//   };
//
// Descriptors:
//   omitempty(name, &T::m [, flags])  written only when set (Go's omitempty: "" 0
//                                     false, empty list/map, unset optional)
//   always(name, &T::m [, flags])     always written (no omitempty; a struct
//                                     member such as spec.pool, always written)
//   ignored(name)                     accepted on read and dropped; never written
//   hook<T, fn>(name)                 read by a one-off function; never written
//   nested(name, descriptors...)      an object of members of T itself (Namespace's
//                                     spec.finalizers): read strictly, always written
// Flags: kTime (an RFC 3339 metav1.Time: parsed on read), kArray (RawJson that
// must hold an array: ObjectMeta.managedFields).
//
// Lists shared by types that upstream also keeps apart with the same fields
// (taint_fields<T>, toleration_fields<T>) and the common head of a top-level
// kind (object_fields<T>(...): apiVersion, kind, metadata) are in fields_meta.h.
//
// A struct with an `extra` member (the core kinds' unmodelled members) is read
// leniently: unknown members go to `extra`, and encoding appends them after the
// modelled ones. A top-level kind's table also names its kind and apiVersion.
//
// This header is included only by the codec; types.h stays free of it.
#pragma once

#include <concepts>
#include <cstring>
#include <string_view>
#include <tuple>

#include "api/types.h"

namespace draplane::api::internal {

class Decoder;
class FieldPath;
struct JsonValue;

enum FieldFlags : unsigned { kPlain = 0, kTime = 1, kArray = 2 };

// A member of T: JSON name, member pointer, omit policy, flags.
template <typename T, typename M, bool OmitEmpty>
struct MemberField {
  static constexpr bool omit_empty = OmitEmpty;
  std::string_view name;
  M T::*member;
  unsigned flags;
};

template <typename T, typename M>
constexpr MemberField<T, M, true> omitempty(std::string_view name, M T::*member,
                                            unsigned flags = kPlain) {
  return {name, member, flags};
}
template <typename T, typename M>
constexpr MemberField<T, M, false> always(std::string_view name, M T::*member,
                                          unsigned flags = kPlain) {
  return {name, member, flags};
}

// A key that is read and dropped (deprecated or not modelled) and never written.
struct IgnoredField {
  std::string_view name;
};
constexpr IgnoredField ignored(std::string_view name) { return {name}; }

// A key read by `Read(d, value, parent_path, path, out)`; never written.
template <typename T, auto Read>
struct HookField {
  std::string_view name;
};
template <typename T,
          void (*Read)(Decoder&, const JsonValue&, const FieldPath&, const FieldPath&, T&)>
constexpr HookField<T, Read> hook(std::string_view name) {
  return {name};
}

// An object whose members are members of the enclosing struct.
template <typename... F>
struct NestedField {
  std::string_view name;
  std::tuple<F...> fields;
};
template <typename... F>
constexpr NestedField<F...> nested(std::string_view name, F... fields) {
  return {name, std::tuple<F...>(fields...)};
}

// Whether JSON key `key` is descriptor name `name`. Inlined, so that with the
// table's constant name it compiles to a length test and a fixed-size compare
// (GCC leaves string_view's operator== out of line here).
[[gnu::always_inline]] inline bool is_name(std::string_view key, std::string_view name) {
  return key.size() == name.size() && std::memcmp(key.data(), name.data(), name.size()) == 0;
}

// A top-level kind's name and the apiVersion the encoder writes.
struct KindName {
  std::string_view name;
  std::string_view api_version;
};

// Specialized once per API struct (fields_*.h).
template <typename T>
struct FieldTable;

template <typename T>
concept Described = requires {
  FieldTable<T>::fields;
};

// A top-level kind: its table also has `kind` and `api_version`.
template <typename T>
concept TopLevel = Described<T> && requires {
  FieldTable<T>::kind;
};

template <typename T>
concept HasExtra = requires(T t) {
  { t.extra } -> std::same_as<RawJson&>;
};

}  // namespace draplane::api::internal
