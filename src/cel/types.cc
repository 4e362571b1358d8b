#include "cel/types.h"

namespace draplane::cel {

Type Type::list(Type elem) {
  Type t(TypeKind::kList);
  t.params.push_back(std::move(elem));
  return t;
}
Type Type::map(Type key, Type value) {
  Type t(TypeKind::kMap);
  t.params.push_back(std::move(key));
  t.params.push_back(std::move(value));
  return t;
}
Type Type::optional(Type elem) {
  Type t(TypeKind::kOptional);
  t.params.push_back(std::move(elem));
  return t;
}
Type Type::type_of(Type x) {
  Type t(TypeKind::kType);
  t.params.push_back(std::move(x));
  return t;
}
Type Type::param(std::string name) {
  Type t(TypeKind::kTypeParam);
  t.param_name = std::move(name);
  return t;
}

Type Type::opaque(std::string name) {
  Type t(TypeKind::kOpaque);
  t.param_name = std::move(name);
  return t;
}

std::string Type::to_string() const {
  switch (kind) {
    case TypeKind::kDyn: return "dyn";
    case TypeKind::kNull: return "null_type";
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return "int";
    case TypeKind::kUint: return "uint";
    case TypeKind::kDouble: return "double";
    case TypeKind::kString: return "string";
    case TypeKind::kBytes: return "bytes";
    case TypeKind::kList: return "list(" + params[0].to_string() + ")";
    case TypeKind::kMap: return "map(" + params[0].to_string() + ", " + params[1].to_string() + ")";
    case TypeKind::kType:
      return params.empty() ? "type" : "type(" + params[0].to_string() + ")";
    case TypeKind::kOptional: return "optional_type(" + params[0].to_string() + ")";
    case TypeKind::kQuantity: return "kubernetes.Quantity";
    case TypeKind::kSemver: return "kubernetes.Semver";
    case TypeKind::kDevice: return "kubernetes.DRADevice";
    case TypeKind::kTimestamp: return "google.protobuf.Timestamp";
    case TypeKind::kDuration: return "google.protobuf.Duration";
    case TypeKind::kIP: return "net.IP";
    case TypeKind::kCIDR: return "net.CIDR";
    case TypeKind::kURL: return "kubernetes.URL";
    case TypeKind::kFormat: return "kubernetes.NamedFormat";
    case TypeKind::kOpaque:
    case TypeKind::kTypeParam: return param_name;
    case TypeKind::kError: return "*error*";
  }
  return "?";
}

bool Type::operator==(const Type& o) const {
  return kind == o.kind && params == o.params && param_name == o.param_name;
}

static bool occurs(const std::string& name, const Type& t, const TypeBindings& b) {
  if (t.kind == TypeKind::kTypeParam) {
    if (t.param_name == name) return true;
    auto it = b.find(t.param_name);
    return it != b.end() && occurs(name, it->second, b);
  }
  for (const auto& p : t.params) {
    if (occurs(name, p, b)) return true;
  }
  return false;
}

bool is_assignable(const Type& to, const Type& from, TypeBindings& b) {
  if (to.kind == TypeKind::kTypeParam) {
    auto it = b.find(to.param_name);
    if (it != b.end()) {
      Type bound = it->second;
      if (is_assignable(bound, from, b)) return true;
      // Widen the binding to dyn-compatible when the other direction works
      // (e.g. param bound to dyn first, then int).
      if (is_assignable(from, bound, b)) {
        b[to.param_name] = from;
        return true;
      }
      return false;
    }
    if (from.kind == TypeKind::kTypeParam && from.param_name == to.param_name) return true;
    if (occurs(to.param_name, from, b)) return false;
    b[to.param_name] = from;
    return true;
  }
  if (from.kind == TypeKind::kTypeParam) {
    auto it = b.find(from.param_name);
    if (it != b.end()) return is_assignable(to, it->second, b);
    b[from.param_name] = to;
    return true;
  }
  if (to.kind == TypeKind::kDyn || from.kind == TypeKind::kDyn) return true;
  if (to.kind == TypeKind::kError || from.kind == TypeKind::kError) return true;
  if (to.kind != from.kind) return false;
  if (to.kind == TypeKind::kOpaque) return to.param_name == from.param_name;
  // Type values of any types are comparable with each other (cel-go).
  if (to.kind == TypeKind::kType) return true;
  if (to.params.size() != from.params.size()) return false;
  for (size_t i = 0; i < to.params.size(); ++i) {
    if (!is_assignable(to.params[i], from.params[i], b)) return false;
  }
  return true;
}

Type substitute(const Type& t, const TypeBindings& b, bool dyn_unbound) {
  if (t.kind == TypeKind::kTypeParam) {
    auto it = b.find(t.param_name);
    if (it != b.end()) {
      if (it->second.kind == TypeKind::kTypeParam && it->second.param_name == t.param_name) {
        return dyn_unbound ? Type(TypeKind::kDyn) : t;
      }
      return substitute(it->second, b, dyn_unbound);
    }
    return dyn_unbound ? Type(TypeKind::kDyn) : t;
  }
  if (t.params.empty()) return t;
  Type out = t;
  for (auto& p : out.params) p = substitute(p, b, dyn_unbound);
  return out;
}

bool types_equivalent(const Type& a, const Type& b) {
  if (a.kind != b.kind) return false;
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!types_equivalent(a.params[i], b.params[i])) return false;
  }
  return (a.kind != TypeKind::kTypeParam && a.kind != TypeKind::kOpaque) || a.param_name == b.param_name;
}

}  // namespace draplane::cel
