// Status and Result<T>: errors as values across every draplane module.
//
// Result<T> mirrors the parts of std::expected that draplane uses (has_value,
// value, error, operator*, operator->, value_or), so that a later switch to
// std::expected is a type alias. Neither type throws; value() on an error and
// error() on a value are programming errors (asserted in debug builds).
//
// Thread-safety: plain values; a const object may be read from several threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace draplane {

// What the caller should do next decides the code (after absl::StatusCode).
enum class Code {
  kOk = 0,
  kInvalid,             // the input is wrong: fix it (HTTP 422 / CLI exit 2)
  kBadRequest,          // malformed request or document (HTTP 400)
  kNotFound,            // 404
  kAlreadyExists,       // 409
  kConflict,            // stale resourceVersion: redo read-modify-write (409)
  kForbidden,           // 403
  kUnauthorized,        // 401
  kGone,                // compacted history (410)
  kFailedPrecondition,  // state does not allow it now: fix state
  kUnavailable,         // retry later (503)
  kDeadlineExceeded,    // took too long
  kInternal,            // a bug or broken invariant (500)
};

std::string_view code_name(Code code);

class Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Uniform with Result<T> so the macros below accept both.
  bool has_value() const { return ok(); }
  const Status& error() const { return *this; }

  // "NotFound: message" style, for logs.
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status invalid_error(std::string msg) { return {Code::kInvalid, std::move(msg)}; }
inline Status not_found_error(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
inline Status internal_error(std::string msg) { return {Code::kInternal, std::move(msg)}; }
inline Status conflict_error(std::string msg) { return {Code::kConflict, std::move(msg)}; }

// Tag to construct an error Result, like std::unexpected.
struct Unexpected {
  Status status;
};
inline Unexpected unexpected(Status s) { return Unexpected{std::move(s)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(const T& v) : v_(std::in_place_index<0>, v) {}
  Result(T&& v) : v_(std::in_place_index<0>, std::move(v)) {}
  template <typename U, typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                                    !std::is_same_v<std::decay_t<U>, Result> &&
                                                    !std::is_same_v<std::decay_t<U>, Status> &&
                                                    !std::is_same_v<std::decay_t<U>, Unexpected>>>
  Result(U&& v) : v_(std::in_place_index<0>, std::forward<U>(v)) {}
  Result(Status s) : v_(std::in_place_index<1>, std::move(s)) { assert(!std::get<1>(v_).ok()); }
  Result(Unexpected u) : v_(std::in_place_index<1>, std::move(u.status)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(v_); }
  const T& value() const& { assert(has_value()); return std::get<0>(v_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Status& error() const { assert(!has_value()); return std::get<1>(v_); }
  Status status() const { return has_value() ? Status() : std::get<1>(v_); }

  template <typename U>
  T value_or(U&& def) const& { return has_value() ? value() : static_cast<T>(std::forward<U>(def)); }

 private:
  std::variant<T, Status> v_;
};

// Result<void>: success or a Status.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Status s) : s_(std::move(s)) {}
  Result(Unexpected u) : s_(std::move(u.status)) {}
  bool has_value() const { return s_.ok(); }
  explicit operator bool() const { return has_value(); }
  const Status& error() const { return s_; }
  Status status() const { return s_; }

 private:
  Status s_;
};

}  // namespace draplane

// Propagate an error from an expression returning Result/Status-like values.
#define DRAPLANE_CONCAT_INNER(a, b) a##b
#define DRAPLANE_CONCAT(a, b) DRAPLANE_CONCAT_INNER(a, b)
#define DRAPLANE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.has_value()) return ::draplane::unexpected(tmp.error()); \
  lhs = std::move(tmp).value()
#define ASSIGN_OR_RETURN(lhs, expr) \
  DRAPLANE_ASSIGN_OR_RETURN_IMPL(DRAPLANE_CONCAT(_res_, __LINE__), lhs, expr)
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    auto _st = (expr);                                          \
    if (!_st.has_value()) return ::draplane::unexpected(_st.error()); \
  } while (0)
