// Strict decimal integers (annotation values, label values, selector
// operands): the whole text must be the number, no sign other than '-', no
// spaces; out of range is no value. One function for the places that read
// numbers kept as strings in the API.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace draplane::common {

inline std::optional<int64_t> parse_int64(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace draplane::common
