// Field-level validation errors, after k8s.io/apimachinery/pkg/util/validation/field.
//
// A FieldError names the field path (e.g. `spec.devices.requests[1].exactly.count`),
// the error type, the offending value and a detail, and renders exactly as the
// Kubernetes API server does:
//   spec.devices.requests[1].exactly.count: Invalid value: 0: must be greater than zero
//   spec.devices.requests[0].exactly.deviceClassName: Required value
//   spec.devices.requests: Too many: 33: must have at most 32 items
//   spec.driver: Too long: must have at most 63 bytes
// Required, Forbidden, TooLong and Internal errors never print the value (as upstream).
// Values are rendered like Go's fmt: strings quoted with %q, numbers and bools bare,
// `null` for nil, and anything else as pre-rendered text (BadValue::raw).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace draplane::api {

enum class FieldErrorType {
  kNotFound,      // "Not found"
  kRequired,      // "Required value"
  kDuplicate,     // "Duplicate value"
  kInvalid,       // "Invalid value"
  kNotSupported,  // "Unsupported value"
  kForbidden,     // "Forbidden"
  kTooLong,       // "Too long"
  kTooMany,       // "Too many"
  kInternal,      // "Internal error"
};

// The canonical text of a type, e.g. "Invalid value".
std::string_view field_error_type_text(FieldErrorType type);

// Go's strconv.Quote (what %q prints): double quotes, backslash escapes for '"',
// '\\' and control characters; printable UTF-8 is kept as is.
std::string go_quote(std::string_view s);

// The offending value of an error, already rendered as Go would print it.
class BadValue {
 public:
  BadValue() = default;  // omitted: the error prints no value
  BadValue(std::string_view s) : text_(go_quote(s)) {}
  BadValue(const char* s) : text_(go_quote(s)) {}
  BadValue(const std::string& s) : text_(go_quote(s)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  BadValue(I v) : text_(std::to_string(v)) {}

  static BadValue boolean(bool b) { return raw(b ? "true" : "false"); }
  static BadValue null() { return raw("null"); }
  // Text printed verbatim (a Go %#v or Stringer rendering built by the caller).
  static BadValue raw(std::string text) {
    BadValue v;
    v.text_ = std::move(text);
    return v;
  }

  bool omitted() const { return !text_.has_value(); }
  const std::string& text() const { return *text_; }
  bool operator==(const BadValue&) const = default;

 private:
  std::optional<std::string> text_;
};

// A field path like `spec.devices.requests[0].exactly`. Immutable; each step returns a
// new path.
class FieldPath {
 public:
  FieldPath() = default;
  explicit FieldPath(std::string_view root) : path_(root) {}
  FieldPath child(std::string_view name) const;
  FieldPath child(std::string_view a, std::string_view b) const { return child(a).child(b); }
  FieldPath index(size_t i) const;
  FieldPath key(std::string_view k) const;  // `[k]`, unquoted like Go's field.Path
  const std::string& str() const { return path_; }
  bool operator==(const FieldPath&) const = default;

 private:
  std::string path_;
};

struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;
  BadValue value;
  std::string detail;

  // "<field>: <body>" exactly as Kubernetes prints it.
  std::string to_string() const;
  // The message without the field, e.g. "Invalid value: 0: must be greater than zero".
  std::string body() const;
  bool operator==(const FieldError&) const = default;
};

using FieldErrorList = std::vector<FieldError>;

// Constructors mirroring field.Required, field.Invalid, ...
FieldError field_required(const FieldPath& path, std::string detail = "");
FieldError field_invalid(const FieldPath& path, BadValue value, std::string detail);
FieldError field_duplicate(const FieldPath& path, BadValue value);
FieldError field_not_found(const FieldPath& path, BadValue value, std::string detail = "");
// detail = `supported values: "a", "b"` (values quoted, in the given order).
FieldError field_not_supported(const FieldPath& path, BadValue value,
                               const std::vector<std::string>& valid_values);
FieldError field_forbidden(const FieldPath& path, std::string detail);
// "must have at most <max_length> bytes"
FieldError field_too_long(const FieldPath& path, int64_t max_length);
// value = actual count, "must have at most <max> items"
FieldError field_too_many(const FieldPath& path, int64_t actual, int64_t max);
FieldError field_internal(const FieldPath& path, std::string detail);

// Appends `more` to `list`.
inline void append_errors(FieldErrorList& list, FieldErrorList more) {
  list.insert(list.end(), std::make_move_iterator(more.begin()),
              std::make_move_iterator(more.end()));
}

// utilerrors.NewAggregate(list.ToAggregate()).Error(): duplicates (same text) dropped,
// one error as is, several as "[e1, e2]". Empty string for an empty list.
std::string aggregate(const FieldErrorList& errors);

// The API server's 422 message: `<Kind>.<group> "<name>" is invalid: <aggregate>`
// (group empty for core kinds: `Pod "x" is invalid: ...`).
std::string invalid_object_message(std::string_view kind, std::string_view group,
                                   std::string_view name, const FieldErrorList& errors);

}  // namespace draplane::api
