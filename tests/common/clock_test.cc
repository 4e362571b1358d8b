#include "common/clock.h"

#include <gtest/gtest.h>

namespace draplane::common {
namespace {

using namespace std::chrono_literals;

TEST(FakeClock, StartsAtTheNewYear2026) {
  FakeClock c;
  EXPECT_EQ(c.unix_seconds(), 1767225600);
  EXPECT_EQ(c.rfc3339(), "2026-01-01T00:00:00Z");
  EXPECT_EQ(c.rfc3339_micro(), "2026-01-01T00:00:00.000000Z");
}

TEST(FakeClock, AdvanceMovesMonotonicAndWallTime) {
  FakeClock c;
  const auto t0 = c.now();
  c.advance(1500ms);
  EXPECT_EQ(c.now() - t0, 1500ms);
  EXPECT_EQ(c.rfc3339(), "2026-01-01T00:00:01Z");
  EXPECT_EQ(c.rfc3339_micro(), "2026-01-01T00:00:01.500000Z");
  c.advance(1h);
  EXPECT_EQ(c.unix_seconds(), 1767225600 + 3601);
}

TEST(FakeClock, SetWallLeavesMonotonicTime) {
  FakeClock c;
  const auto t0 = c.now();
  c.set_unix_seconds(0);
  EXPECT_EQ(c.rfc3339(), "1970-01-01T00:00:00Z");
  EXPECT_EQ(c.now(), t0);
}

TEST(RealClock, ReadsTheSystemClock) {
  auto c = real_clock();
  const int64_t before = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t got = c->unix_seconds();
  EXPECT_GE(got, before);
  EXPECT_LE(got, before + 60);
  const auto a = c->now();
  EXPECT_LE(a, c->now());
  EXPECT_EQ(real_clock().get(), c.get());
}

}  // namespace
}  // namespace draplane::common
