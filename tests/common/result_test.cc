#include "common/result.h"

#include <gtest/gtest.h>

namespace draplane {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_error("must be greater than zero");
  return v;
}

Result<int> doubled(int v) {
  ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Result<void> check(int v) {
  RETURN_IF_ERROR(parse_positive(v));
  return {};
}

TEST(Result, ValueAndError) {
  auto ok = doubled(4);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 8);
  auto bad = doubled(0);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Code::kInvalid);
  EXPECT_EQ(bad.error().to_string(), "Invalid: must be greater than zero");
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(Result, VoidPropagates) {
  EXPECT_TRUE(check(1).has_value());
  auto r = check(-1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "must be greater than zero");
}

TEST(Result, StatusOkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "OK");
  EXPECT_EQ(code_name(Code::kConflict), "Conflict");
}

}  // namespace
}  // namespace draplane
