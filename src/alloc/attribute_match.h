// How the allocator reads a device attribute for a claim constraint
// (matchAttribute / distinctAttribute), shared by the search and the views'
// attribute index.
#pragma once

#include <string>

#include "api/types.h"

namespace draplane::alloc {

// The attribute `name` of device `d` published by `driver`: a qualified name
// ("driver/attr") also finds the driver's own unqualified attribute, as upstream.
inline const api::DeviceAttribute* lookup_attribute(const api::Device& d, const std::string& driver,
                                                    const std::string& name) {
  auto it = d.attributes.find(name);
  if (it != d.attributes.end()) return &it->second;
  auto slash = name.find('/');
  if (slash == std::string::npos || name.compare(0, slash, driver) != 0) return nullptr;
  it = d.attributes.find(name.substr(slash + 1));
  return it == d.attributes.end() ? nullptr : &it->second;
}

// upstream matchAttributeConstraint.add: compares by the new value's type.
inline bool same_value(const api::DeviceAttribute& a, const api::DeviceAttribute& b) {
  if (a.string_) return b.string_ && *a.string_ == *b.string_;
  if (a.int_) return b.int_ && *a.int_ == *b.int_;
  if (a.bool_) return b.bool_ && *a.bool_ == *b.bool_;
  if (a.version) return b.version && *a.version == *b.version;
  return false;
}

// A key equal for two attributes exactly when same_value() holds between
// them, for attributes of one type (as validation requires); "" for one that
// sets no type or several.
inline std::string value_key(const api::DeviceAttribute& a) {
  const int types = (a.string_ ? 1 : 0) + (a.int_ ? 1 : 0) + (a.bool_ ? 1 : 0) + (a.version ? 1 : 0);
  if (types != 1) return {};
  if (a.string_) return "s" + *a.string_;
  if (a.int_) return "i" + std::to_string(*a.int_);
  if (a.bool_) return *a.bool_ ? "b1" : "b0";
  return "v" + *a.version;
}

}  // namespace draplane::alloc
