// The overload table: built once from the library files, then read-only.
#include <unordered_map>

#include "cel/functions.h"

namespace draplane::cel {

namespace {

struct Registry {
  std::vector<Overload> all;
  std::unordered_map<std::string, std::vector<const Overload*>> by_name;

  Registry() {
    lib::register_standard(all);
    lib::register_strings(all);
    lib::register_lists(all);
    lib::register_kubernetes(all);
    lib::register_time(all);
    lib::register_net(all);
    lib::register_format(all);
    lib::register_authz(all);
    for (const auto& o : all) by_name[o.function].push_back(&o);
  }
};

const Registry& registry() {
  static const Registry kRegistry;  // immutable after construction
  return kRegistry;
}

}  // namespace

std::vector<const Overload*> find_overloads(std::string_view function, bool member, size_t nargs) {
  std::vector<const Overload*> out;
  const auto& reg = registry();
  auto it = reg.by_name.find(std::string(function));
  if (it == reg.by_name.end()) return out;
  for (const Overload* o : it->second) {
    if (o->member == member && o->params.size() == nargs) out.push_back(o);
  }
  return out;
}

bool function_declared(std::string_view function) {
  return registry().by_name.count(std::string(function)) > 0;
}

int required_value_kind(const Type& param) {
  switch (param.kind) {
    case TypeKind::kDyn:
    case TypeKind::kTypeParam:
    case TypeKind::kError: return -1;
    case TypeKind::kNull: return static_cast<int>(ValueKind::kNull);
    case TypeKind::kBool: return static_cast<int>(ValueKind::kBool);
    case TypeKind::kInt: return static_cast<int>(ValueKind::kInt);
    case TypeKind::kUint: return static_cast<int>(ValueKind::kUint);
    case TypeKind::kDouble: return static_cast<int>(ValueKind::kDouble);
    case TypeKind::kString: return static_cast<int>(ValueKind::kString);
    case TypeKind::kBytes: return static_cast<int>(ValueKind::kBytes);
    case TypeKind::kList: return static_cast<int>(ValueKind::kList);
    case TypeKind::kMap: return static_cast<int>(ValueKind::kMap);
    case TypeKind::kType: return static_cast<int>(ValueKind::kType);
    case TypeKind::kOptional: return static_cast<int>(ValueKind::kOptional);
    case TypeKind::kQuantity: return static_cast<int>(ValueKind::kQuantity);
    case TypeKind::kSemver: return static_cast<int>(ValueKind::kSemver);
    case TypeKind::kDevice: return static_cast<int>(ValueKind::kDevice);
    case TypeKind::kTimestamp: return static_cast<int>(ValueKind::kTimestamp);
    case TypeKind::kDuration: return static_cast<int>(ValueKind::kDuration);
    case TypeKind::kIP: return static_cast<int>(ValueKind::kIP);
    case TypeKind::kCIDR: return static_cast<int>(ValueKind::kCIDR);
    case TypeKind::kURL: return static_cast<int>(ValueKind::kURL);
    case TypeKind::kFormat: return static_cast<int>(ValueKind::kFormat);
    case TypeKind::kOpaque: return static_cast<int>(ValueKind::kError);  // no value has the type
  }
  return -1;
}

bool value_matches(const Type& param, const Value& v) {
  switch (param.kind) {
    case TypeKind::kDyn:
    case TypeKind::kTypeParam:
    case TypeKind::kError: return true;
    case TypeKind::kNull: return v.kind == ValueKind::kNull;
    case TypeKind::kBool: return v.kind == ValueKind::kBool;
    case TypeKind::kInt: return v.kind == ValueKind::kInt;
    case TypeKind::kUint: return v.kind == ValueKind::kUint;
    case TypeKind::kDouble: return v.kind == ValueKind::kDouble;
    case TypeKind::kString: return v.kind == ValueKind::kString;
    case TypeKind::kBytes: return v.kind == ValueKind::kBytes;
    case TypeKind::kList: return v.kind == ValueKind::kList;
    case TypeKind::kMap: return v.kind == ValueKind::kMap;
    case TypeKind::kType: return v.kind == ValueKind::kType;
    case TypeKind::kOptional: return v.kind == ValueKind::kOptional;
    case TypeKind::kQuantity: return v.kind == ValueKind::kQuantity;
    case TypeKind::kSemver: return v.kind == ValueKind::kSemver;
    case TypeKind::kDevice: return v.kind == ValueKind::kDevice;
    case TypeKind::kTimestamp: return v.kind == ValueKind::kTimestamp;
    case TypeKind::kDuration: return v.kind == ValueKind::kDuration;
    case TypeKind::kIP: return v.kind == ValueKind::kIP;
    case TypeKind::kCIDR: return v.kind == ValueKind::kCIDR;
    case TypeKind::kURL: return v.kind == ValueKind::kURL;
    case TypeKind::kFormat: return v.kind == ValueKind::kFormat;
    case TypeKind::kOpaque: return false;
  }
  return false;
}

}  // namespace draplane::cel
