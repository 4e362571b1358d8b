#include "common/rfc3339.h"

#include <gtest/gtest.h>

namespace draplane::common {
namespace {

using std::chrono::microseconds;

WallTime at_micros(int64_t us) { return WallTime(std::chrono::duration_cast<WallTime::duration>(microseconds(us))); }

TEST(Rfc3339, FormatsSecondsAsMetav1Time) {
  EXPECT_EQ(format_rfc3339(int64_t{0}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339(int64_t{1767225600}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339(int64_t{951825600}), "2000-02-29T12:00:00Z");  // leap day
  EXPECT_EQ(format_rfc3339(int64_t{253402300799}), "9999-12-31T23:59:59Z");
  EXPECT_EQ(format_rfc3339(int64_t{-1}), "1969-12-31T23:59:59Z");
}

TEST(Rfc3339, TimeDropsTheFractionMicroTimeKeepsSixDigits) {
  const WallTime t = at_micros(1767225600'123456);
  EXPECT_EQ(format_rfc3339(t), "2026-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339_micro(t), "2026-01-01T00:00:00.123456Z");
  EXPECT_EQ(format_rfc3339_micro(at_micros(1767225600'000007)), "2026-01-01T00:00:00.000007Z");
  // Before 1970 the fraction still counts forward from the whole second below.
  EXPECT_EQ(format_rfc3339_micro(at_micros(-1)), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(unix_seconds_of(at_micros(-1)), -1);
}

TEST(Rfc3339, RoundTrips) {
  for (int64_t s : {int64_t{0}, int64_t{1767225600}, int64_t{951825600}, int64_t{4102444799}, int64_t{-86400}}) {
    EXPECT_EQ(parse_rfc3339(format_rfc3339(s)), s) << s;
  }
  for (int64_t us : {int64_t{1767225600'123456}, int64_t{1}, int64_t{999999}}) {
    auto t = parse_rfc3339_time(format_rfc3339_micro(at_micros(us)));
    ASSERT_TRUE(t.has_value()) << us;
    EXPECT_EQ(*t, at_micros(us));
  }
}

TEST(Rfc3339, ParsesFractionsAndOffsets) {
  EXPECT_EQ(parse_rfc3339("2026-01-01T02:00:00+02:00"), 1767225600);
  EXPECT_EQ(parse_rfc3339("2025-12-31T23:30:00-00:30"), 1767225600);
  EXPECT_EQ(parse_rfc3339("2026-01-01T00:00:00.9Z"), 1767225600);
  EXPECT_EQ(parse_rfc3339_time("2026-01-01T00:00:00.123456789Z"), at_micros(1767225600'123456));
  EXPECT_EQ(parse_rfc3339_time("2026-01-01T00:00:00.5Z"), at_micros(1767225600'500000));
}

TEST(Rfc3339, RejectsWhatIsNotRfc3339) {
  for (const char* bad : {"", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-1-01T00:00:00Z",
                          "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-01-01T24:00:00Z",
                          "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00.Z",
                          "2026-01-01T00:00:00Zjunk", "2026-01-01T00:00:00+0200", "x2026-01-01T00:00:00Z",
                          "2026-01-01T00:00:00z"}) {
    EXPECT_EQ(parse_rfc3339(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace draplane::common
