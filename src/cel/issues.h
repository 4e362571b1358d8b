// Compile-time diagnostics with source positions, printed the way cel-go prints
// them:
//   ERROR: <input>:1:5: undeclared reference to 'foo' (in container '')
//    | x + foo
//    | ....^
// Line and column are 1-based; the column counts code points.
//
// Plain values; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace draplane::cel {

struct Issue {
  int32_t offset = 0;  // byte offset in the source
  std::string message;
};

// All issues, one "ERROR: ..." block each, joined by newlines.
std::string format_issues(std::string_view source, const std::vector<Issue>& issues);

}  // namespace draplane::cel
