// Table-driven evaluation for the CEL library tests: each case is an
// expression and its value in CEL literal form, or a prefix of its error.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cel/cel.h"

namespace draplane::cel::testing {

// The value in CEL literal form, or "error: <message>".
inline std::string eval(const std::string& expr) {
  auto r = eval_to_string(expr, nullptr, "");
  if (!r) return "error: " + r.error().message();
  return *r;
}

struct Case {
  const char* expr;
  const char* want;  // literal form, or a prefix of "error: ..."
};

inline void run(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    std::string got = eval(c.expr);
    std::string want = c.want;
    if (want.rfind("error: ", 0) == 0) {
      EXPECT_EQ(got.substr(0, want.size()), want) << got;
    } else {
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace draplane::cel::testing
