// Validation errors as the API server prints them, one string each: what the
// validation tests compare against.
#pragma once

#include <string>
#include <vector>

#include "api/field_error.h"

namespace draplane::api {

using Lines = std::vector<std::string>;

inline Lines lines(const FieldErrorList& errs) {
  Lines out;
  for (const auto& e : errs) out.push_back(e.to_string());
  return out;
}

}  // namespace draplane::api
