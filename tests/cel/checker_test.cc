// Type-checker regressions.
#include <gtest/gtest.h>

#include "cel/cel.h"

namespace draplane::cel {
namespace {

// Optional list elements and map entries unwrap optional_type(T) to T; the
// unwrapping once assigned a type from its own parameters (a use-after-free
// that ASan reports).
TEST(Checker, OptionalAggregateElements) {
  struct {
    const char* expr;
    const char* want;
  } cases[] = {
      {"[?optional.of(1), ?optional.none()]", "[1]"},
      {"[?optional.of([1]), ?optional.of([2])]", "[[1], [2]]"},
      {"{?'a': optional.of(1), ?'b': optional.none()}", "{\"a\": 1}"},
      {"{?'a': optional.of({'x': [1]})}", "{\"a\": {\"x\": [1]}}"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto r = eval_to_string(c.expr, nullptr, "");
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(*r, c.want);
  }
}

}  // namespace
}  // namespace draplane::cel
