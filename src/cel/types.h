// Static CEL types used by the checker: primitives, list/map/optional, type
// values, the DRA object types (device, Quantity, Semver), the time types, the
// Kubernetes IP/CIDR/URL/format library types and type parameters for
// generic overloads. Names print the way cel-go prints them in error messages
// ("list(int)", "map(string, dyn)", "optional_type(int)", "kubernetes.Quantity").
//
// Plain values; thread-safe for concurrent reads.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace draplane::cel {

enum class TypeKind : unsigned char {
  kDyn,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,      // params[0] = the type described (dyn when unknown)
  kOptional,  // params[0] = element type
  kQuantity,
  kSemver,
  kDevice,     // kubernetes.DRADevice
  kTimestamp,  // google.protobuf.Timestamp
  kDuration,   // google.protobuf.Duration
  kIP,         // net.IP
  kCIDR,       // net.CIDR
  kURL,        // kubernetes.URL
  kFormat,     // kubernetes.NamedFormat
  kOpaque,     // an object type no selector value has (param_name: its name)
  kTypeParam,
  kError,
};

struct Type {
  TypeKind kind = TypeKind::kDyn;
  std::vector<Type> params;
  std::string param_name;  // kTypeParam, kOpaque

  Type() = default;
  explicit Type(TypeKind k) : kind(k) {}
  static Type list(Type elem);
  static Type map(Type key, Type value);
  static Type optional(Type elem);
  static Type type_of(Type t);
  static Type param(std::string name);
  static Type opaque(std::string name);

  bool is_dyn_or_error() const { return kind == TypeKind::kDyn || kind == TypeKind::kError; }
  std::string to_string() const;
  bool operator==(const Type& o) const;
};

// Type parameter substitutions collected while matching an overload.
using TypeBindings = std::map<std::string, Type>;

// True when a value of type `from` may be passed where `to` is expected, binding
// type parameters of `to` in `bindings` (cel-go's isAssignable, without
// protobuf wrappers).
bool is_assignable(const Type& to, const Type& from, TypeBindings& bindings);

// Replaces bound type parameters; unbound ones become dyn when `dyn_unbound`.
Type substitute(const Type& t, const TypeBindings& bindings, bool dyn_unbound);

// The most general of two types for aggregate literals and ternaries: equal
// types stay, otherwise dyn (cel-go's mostGeneral for non-homogeneous cases).
bool types_equivalent(const Type& a, const Type& b);

}  // namespace draplane::cel
