#include "api/field_error.h"

#include <set>

#include "common/utf8.h"

namespace draplane::api {

std::string_view field_error_type_text(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kNotFound: return "Not found";
    case FieldErrorType::kRequired: return "Required value";
    case FieldErrorType::kDuplicate: return "Duplicate value";
    case FieldErrorType::kInvalid: return "Invalid value";
    case FieldErrorType::kNotSupported: return "Unsupported value";
    case FieldErrorType::kForbidden: return "Forbidden";
    case FieldErrorType::kTooLong: return "Too long";
    case FieldErrorType::kTooMany: return "Too many";
    case FieldErrorType::kInternal: return "Internal error";
  }
  return "Invalid value";
}

std::string go_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    if (append_named_escape(out, c)) continue;
    if (c < 0x20 || c == 0x7f) {
      append_hex_escape(out, c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

FieldPath FieldPath::child(std::string_view name) const {
  FieldPath p;
  if (path_.empty()) {
    p.path_ = std::string(name);
  } else {
    p.path_ = path_ + "." + std::string(name);
  }
  return p;
}

FieldPath FieldPath::index(size_t i) const {
  FieldPath p;
  p.path_ = path_ + "[" + std::to_string(i) + "]";
  return p;
}

FieldPath FieldPath::key(std::string_view k) const {
  FieldPath p;
  p.path_ = path_ + "[" + std::string(k) + "]";
  return p;
}

std::string FieldError::body() const {
  std::string s(field_error_type_text(type));
  switch (type) {
    case FieldErrorType::kRequired:
    case FieldErrorType::kForbidden:
    case FieldErrorType::kTooLong:
    case FieldErrorType::kInternal:
      break;  // upstream never prints the value of these
    default:
      if (!value.omitted()) s += ": " + value.text();
  }
  if (!detail.empty()) s += ": " + detail;
  return s;
}

std::string FieldError::to_string() const { return field + ": " + body(); }

FieldError field_required(const FieldPath& path, std::string detail) {
  return {FieldErrorType::kRequired, path.str(), BadValue(""), std::move(detail)};
}
FieldError field_invalid(const FieldPath& path, BadValue value, std::string detail) {
  return {FieldErrorType::kInvalid, path.str(), std::move(value), std::move(detail)};
}
FieldError field_duplicate(const FieldPath& path, BadValue value) {
  return {FieldErrorType::kDuplicate, path.str(), std::move(value), ""};
}
FieldError field_not_found(const FieldPath& path, BadValue value, std::string detail) {
  return {FieldErrorType::kNotFound, path.str(), std::move(value), std::move(detail)};
}
FieldError field_not_supported(const FieldPath& path, BadValue value,
                               const std::vector<std::string>& valid_values) {
  std::string detail;
  if (!valid_values.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < valid_values.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += go_quote(valid_values[i]);
    }
  }
  return {FieldErrorType::kNotSupported, path.str(), std::move(value), std::move(detail)};
}
FieldError field_forbidden(const FieldPath& path, std::string detail) {
  return {FieldErrorType::kForbidden, path.str(), BadValue(""), std::move(detail)};
}
FieldError field_too_long(const FieldPath& path, int64_t max_length) {
  return {FieldErrorType::kTooLong, path.str(), BadValue(""),
          "must have at most " + std::to_string(max_length) + " bytes"};
}
FieldError field_too_many(const FieldPath& path, int64_t actual, int64_t max) {
  return {FieldErrorType::kTooMany, path.str(), BadValue(actual),
          "must have at most " + std::to_string(max) + " items"};
}
FieldError field_internal(const FieldPath& path, std::string detail) {
  return {FieldErrorType::kInternal, path.str(), BadValue::null(), std::move(detail)};
}

std::string aggregate(const FieldErrorList& errors) {
  std::set<std::string> seen;
  std::vector<std::string> msgs;
  for (const auto& e : errors) {
    std::string m = e.to_string();
    if (seen.insert(m).second) msgs.push_back(std::move(m));
  }
  if (msgs.empty()) return "";
  if (msgs.size() == 1) return msgs[0];
  std::string out = "[";
  for (size_t i = 0; i < msgs.size(); ++i) {
    if (i > 0) out += ", ";
    out += msgs[i];
  }
  return out + "]";
}

std::string invalid_object_message(std::string_view kind, std::string_view group,
                                   std::string_view name, const FieldErrorList& errors) {
  std::string qualified(kind);
  if (!group.empty()) qualified += "." + std::string(group);
  return qualified + " " + go_quote(name) + " is invalid: " + aggregate(errors);
}

}  // namespace draplane::api
