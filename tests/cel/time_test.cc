// CEL timestamps and durations (cel-go semantics, DefaultUTCTimeZone): parsing,
// printing, conversions, arithmetic with range checks, comparisons, accessors
// with and without a time zone, and the compile-time literal checks.
#include <gtest/gtest.h>

#include "cel/cel.h"
#include "eval_cases.h"
#include "cel/time.h"
#include "cel/tz.h"
#include "common/civil_date.h"

namespace draplane::cel {
namespace {

using testing::Case;
using testing::eval;
using testing::run;

TEST(Timestamp, ParseAndPrint) {
  run({
      {"string(timestamp('2009-02-13T23:31:30Z'))", "\"2009-02-13T23:31:30Z\""},
      {"string(timestamp('2009-02-13T23:31:30.120Z'))", "\"2009-02-13T23:31:30.12Z\""},
      {"string(timestamp('9999-12-31T23:59:59.999999999Z'))", "\"9999-12-31T23:59:59.999999999Z\""},
      {"string(timestamp('0001-01-01T00:00:00Z'))", "\"0001-01-01T00:00:00Z\""},
      // The offset is kept, as cel-go keeps the time.Time location.
      {"string(timestamp('2021-01-01T05:30:00+05:30'))", "\"2021-01-01T05:30:00+05:30\""},
      {"string(timestamp('2021-01-01T00:00:00+00:00'))", "\"2021-01-01T00:00:00Z\""},
      {"timestamp('2021-01-01T05:30:00+05:30') == timestamp('2021-01-01T00:00:00Z')", "true"},
      {"timestamp('2021-01-01T00:00:00,5Z') == timestamp('2021-01-01T00:00:00.5Z')", "true"},
      {"timestamp('2021-01-01T00:00:00Z')", "timestamp(\"2021-01-01T00:00:00Z\")"},
      {"timestamp('2021-01-01T05:30:00+05:30')", "timestamp(\"2021-01-01T00:00:00Z\")"},
      {"int(timestamp('2009-02-13T23:31:30Z'))", "1234567890"},
      {"int(timestamp('1969-12-31T23:59:59Z'))", "-1"},
      {"timestamp(1234567890) == timestamp('2009-02-13T23:31:30Z')", "true"},
      {"timestamp(timestamp(0)) == timestamp(0)", "true"},
      {"type(timestamp(0)) == google.protobuf.Timestamp", "true"},
      {"type(timestamp(0))", "google.protobuf.Timestamp"},
      {"dyn(timestamp(0)) == null", "false"},
      {"dyn(timestamp(0)) == 0", "false"},
      {"'%s'.format([timestamp('2023-02-03T23:31:20+00:00')])", "\"2023-02-03T23:31:20Z\""},
  });
}

TEST(Timestamp, BadInputs) {
  run({
      {"timestamp(dyn('2021-13-01T00:00:00Z'))",
       "error: type conversion error from 'string' to 'google.protobuf.Timestamp': parsing time "
       "\"2021-13-01T00:00:00Z\": month out of range"},
      {"timestamp(dyn('2021-02-29T00:00:00Z'))", "error: type conversion error from 'string' to "
                                                 "'google.protobuf.Timestamp': parsing time \"2021-02-29T00:00:00Z\": "
                                                 "day out of range"},
      {"timestamp(dyn('2021-01-01 00:00:00Z'))",
       "error: type conversion error from 'string' to 'google.protobuf.Timestamp': parsing time "
       "\"2021-01-01 00:00:00Z\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \" 00:00:00Z\" as \"T\""},
      {"timestamp(dyn('2021-01-01T00:00:00'))", "error: type conversion error"},
      {"timestamp(dyn('2021-01-01T00:00:00Zjunk'))", "error: type conversion error from 'string' to "
                                                     "'google.protobuf.Timestamp': parsing time "
                                                     "\"2021-01-01T00:00:00Zjunk\": extra text: \"junk\""},
      {"timestamp(dyn('0000-01-01T00:00:00Z'))", "error: timestamp overflow"},
      {"timestamp(dyn('0001-01-01T00:00:00+01:00'))", "error: timestamp overflow"},
      {"timestamp(dyn(253402300800))", "error: timestamp overflow"},
      {"timestamp(dyn(-62135596801))", "error: timestamp overflow"},
      {"timestamp(-62135596801)", "error: ERROR: <input>:1:11: invalid timestamp argument: timestamp overflow"},
      {"timestamp(1) == 1", "error: ERROR: <input>:1:14: found no matching overload for '_==_'"},
      {"timestamp(1.5)", "error: ERROR: <input>:1:10: found no matching overload for 'timestamp' applied to '(double)'"},
  });
}

TEST(Duration, ParseAndPrint) {
  run({
      {"string(duration('1h30m'))", "\"5400s\""},
      {"string(duration('-1.5s'))", "\"-1.5s\""},
      {"string(duration('100ms'))", "\"0.1s\""},
      {"string(duration('1us')) == string(duration('1µs'))", "true"},
      {"string(duration('-1ns'))", "\"-0.000000001s\""},
      {"string(duration('0'))", "\"0s\""},
      {"string(duration('+2h'))", "\"7200s\""},
      {"string(duration('1.5h'))", "\"5400s\""},
      {"duration('1h') == duration('60m')", "true"},
      {"int(duration('1s'))", "1000000000"},
      {"duration('2562047h47m16.854775807s') > duration('0s')", "true"},
      {"duration('1m')", "duration(\"60s\")"},
      {"type(duration('1s')) == google.protobuf.Duration", "true"},
      {"duration(duration('1s')) == duration('1000ms')", "true"},
      {"'%s'.format([duration('1h45m47s')])", "\"6347s\""},
  });
}

TEST(Duration, BadInputs) {
  run({
      {"duration(dyn('1d'))", "error: type conversion error from 'string' to 'google.protobuf.Duration': time: "
                              "unknown unit \"d\" in duration \"1d\""},
      {"duration(dyn('10'))", "error: type conversion error from 'string' to 'google.protobuf.Duration': time: "
                              "missing unit in duration \"10\""},
      {"duration(dyn(''))", "error: type conversion error from 'string' to 'google.protobuf.Duration': time: "
                            "invalid duration \"\""},
      {"duration(dyn('.s'))", "error: type conversion error"},
      {"duration(dyn('2562048h'))", "error: type conversion error from 'string' to 'google.protobuf.Duration': "
                                    "time: invalid duration \"2562048h\""},
      {"duration(dyn('-2562047h47m16.854775808s')) < duration('0s')", "true"},
      {"-duration('1s')", "error: ERROR: <input>:1:1: found no matching overload for '-_'"},
  });
}

TEST(Time, Arithmetic) {
  run({
      {"timestamp('2009-02-13T23:00:00Z') + duration('240s') == timestamp('2009-02-13T23:04:00Z')", "true"},
      {"duration('120s') + timestamp('2009-02-13T23:01:00Z') == timestamp('2009-02-13T23:03:00Z')", "true"},
      {"timestamp('2009-02-13T23:10:00Z') - duration('600s') == timestamp('2009-02-13T23:00:00Z')", "true"},
      {"timestamp('2009-02-13T23:31:00Z') - timestamp('2009-02-13T23:29:00Z') == duration('120s')", "true"},
      {"duration('900s') - duration('42s') == duration('858s')", "true"},
      {"duration('1h') + duration('1m')", "duration(\"3660s\")"},
      {"timestamp('0001-01-01T00:00:01.000000001Z') + duration('-999999999ns') == "
       "timestamp('0001-01-01T00:00:00.000000002Z')",
       "true"},
      {"string(timestamp('2021-01-01T23:00:00+02:00') + duration('2h'))", "\"2021-01-02T01:00:00+02:00\""},
      // Range checks: overflow is an error.
      {"timestamp('9999-12-31T23:59:59.999999999Z') + duration('1ns')", "error: timestamp overflow"},
      {"timestamp('0001-01-01T00:00:00Z') - duration('1s')", "error: timestamp overflow"},
      {"timestamp('9999-12-31T23:59:59Z') - timestamp('0001-01-01T00:00:00Z')", "error: integer overflow"},
      {"duration('2562047h') + duration('2562047h')", "error: integer overflow"},
      {"duration('-2562047h') - duration('2562047h')", "error: integer overflow"},
      {"timestamp(0) - duration('-2562047h47m16.854775808s')", "error: integer overflow"},
      {"timestamp(0) + timestamp(0)", "error: ERROR: <input>:1:14: found no matching overload for '_+_'"},
  });
}

TEST(Time, Comparisons) {
  run({
      {"timestamp('2009-02-13T23:00:00Z') < timestamp('2009-03-13T23:00:00Z')", "true"},
      {"timestamp('2009-02-13T23:00:00Z') <= timestamp('2009-02-13T22:59:59Z')", "false"},
      {"timestamp('2009-02-13T23:00:00.000000001Z') > timestamp('2009-02-13T23:00:00Z')", "true"},
      {"timestamp('2009-02-13T23:00:00Z') >= timestamp('2009-02-13T23:00:00Z')", "true"},
      {"timestamp('2009-02-13T23:00:00Z') != timestamp('2009-02-13T23:00:01Z')", "true"},
      {"duration('1ms') < duration('1s')", "true"},
      {"duration('60s') >= duration('1m')", "true"},
      {"duration('-1s') > duration('1s')", "false"},
      {"[duration('2s'), duration('1s')].sort() == [duration('1s'), duration('2s')]", "true"},
      {"[timestamp(2), timestamp(1)].isSorted()", "false"},
      {"timestamp(0) < duration('1s')", "error: ERROR: <input>:1:14: found no matching overload for '_<_'"},
      {"dyn(timestamp(0)) < dyn(duration('1s'))", "error: no such overload"},
  });
}

TEST(Timestamp, Accessors) {
  run({
      {"timestamp('2009-02-13T23:31:30Z').getFullYear()", "2009"},
      {"timestamp('2009-02-13T23:31:30Z').getMonth()", "1"},
      {"timestamp('2009-02-13T23:31:30Z').getDayOfYear()", "43"},
      {"timestamp('2009-02-13T23:31:30Z').getDayOfMonth()", "12"},
      {"timestamp('2009-02-13T23:31:30Z').getDate()", "13"},
      {"timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", "5"},
      {"timestamp('2009-02-13T23:31:30Z').getHours()", "23"},
      {"timestamp('2009-02-13T23:31:30Z').getMinutes()", "31"},
      {"timestamp('2009-02-13T23:31:30Z').getSeconds()", "30"},
      {"timestamp('2009-02-13T23:31:20.123456789Z').getMilliseconds()", "123"},
      {"timestamp('2024-12-31T12:00:00Z').getDayOfYear()", "365"},
      {"timestamp('1969-12-31T23:59:59Z').getDayOfWeek()", "3"},
      {"timestamp('0001-01-01T00:00:00Z').getDayOfWeek()", "1"},
      // The accessors default to UTC, whatever offset the timestamp was written with.
      {"timestamp('2021-01-01T05:30:00+05:30').getHours()", "0"},
      // Fixed offsets, as cel-go parses them.
      {"timestamp('2009-02-13T23:31:30Z').getHours('+05:30')", "5"},
      {"timestamp('2009-02-13T23:31:30Z').getMinutes('+05:30')", "1"},
      {"timestamp('2009-02-13T23:31:30Z').getDate('+05:30')", "14"},
      {"timestamp('2009-02-13T02:00:00Z').getDayOfMonth('-02:30')", "11"},
      {"timestamp('2009-02-13T23:31:30Z').getHours('02:00')", "1"},
      {"timestamp('2009-02-13T23:31:30Z').getSeconds('-00:00')", "30"},
      {"timestamp('2023-01-01T05:30:00Z').getFullYear('-08:00')", "2022"},
      {"timestamp('2009-02-13T23:31:30Z').getDayOfWeek('UTC')", "5"},
      {"timestamp('2009-02-13T23:31:20.123Z').getMilliseconds('+01:00')", "123"},
      {"timestamp('2009-02-13T23:31:30Z').getHours('+5:x')",
       "error: strconv.Atoi: parsing \"x\": invalid syntax"},
      {"timestamp('2009-02-13T23:31:30Z').getHours('Local')", "error: unknown time zone Local"},
      {"timestamp('2009-02-13T23:31:30Z').getHours('../etc/passwd')", "error: time: invalid location name"},
      {"duration('10000s').getHours()", "2"},
      {"duration('3730s').getMinutes()", "62"},
      {"duration('3730s').getSeconds()", "3730"},
      {"duration('-3730s').getSeconds()", "-3730"},
      {"duration('123.321456789s').getMilliseconds()", "123321"},
  });
}

// IANA names need the system zone database; skip when it is not installed.
TEST(Timestamp, NamedZones) {
  int32_t off;
  std::string err;
  if (!timeutil::TimeZoneDatabase().offset("America/New_York", 0, off, err)) GTEST_SKIP() << err;
  run({
      {"timestamp('2009-02-13T23:31:30Z').getDate('Australia/Sydney')", "14"},
      {"timestamp('2009-02-13T23:31:30Z').getMinutes('Asia/Kathmandu')", "16"},
      {"timestamp('2009-02-13T02:00:00Z').getDayOfMonth('America/St_Johns')", "11"},
      {"timestamp('2023-07-01T05:00:00Z').getDayOfMonth('America/Los_Angeles')", "29"},
      // Summer and winter time in New York, including after the zone file's last
      // transition (the POSIX rule in its footer).
      {"timestamp('2023-07-01T12:00:00Z').getHours('America/New_York')", "8"},
      {"timestamp('2023-01-01T12:00:00Z').getHours('America/New_York')", "7"},
      {"timestamp('2090-07-01T12:00:00Z').getHours('America/New_York')", "8"},
      {"timestamp('2090-01-01T12:00:00Z').getHours('America/New_York')", "7"},
      {"timestamp('2090-01-01T12:00:00Z').getHours('Australia/Sydney')", "23"},
      {"timestamp('2090-07-01T12:00:00Z').getHours('Australia/Sydney')", "22"},
      {"timestamp('2009-02-13T23:31:30Z').getHours('Mars/Olympus_Mons')", "error: unknown time zone Mars/Olympus_Mons"},
  });
}

TEST(Timestamp, PosixRules) {
  struct {
    const char* rule;
    const char* when;
    int32_t want;
  } cases[] = {
      {"EST5EDT,M3.2.0,M11.1.0", "2030-03-10T06:59:59Z", -5 * 3600},
      {"EST5EDT,M3.2.0,M11.1.0", "2030-03-10T07:00:00Z", -4 * 3600},
      {"EST5EDT,M3.2.0,M11.1.0", "2030-11-03T05:59:59Z", -4 * 3600},
      {"EST5EDT,M3.2.0,M11.1.0", "2030-11-03T06:00:00Z", -5 * 3600},
      {"EST5EDT", "2030-07-01T00:00:00Z", -4 * 3600},  // default US rules
      {"AEST-10AEDT,M10.1.0,M4.1.0/3", "2030-01-01T00:00:00Z", 11 * 3600},
      {"AEST-10AEDT,M10.1.0,M4.1.0/3", "2030-07-01T00:00:00Z", 10 * 3600},
      {"<+0545>-5:45", "2030-07-01T00:00:00Z", 5 * 3600 + 45 * 60},
      {"IST-2IDT,M3.4.4/26,M10.5.0", "2030-06-01T00:00:00Z", 3 * 3600},
      {"XXX3YYY,J60,J300", "2030-06-01T00:00:00Z", -2 * 3600},
      {"XXX3YYY,59,299", "2030-12-01T00:00:00Z", -3 * 3600},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.rule) + " at " + c.when);
    timeutil::Timestamp t;
    std::string err;
    ASSERT_TRUE(timeutil::parse_rfc3339(c.when, t, err)) << err;
    int32_t off = 0;
    ASSERT_TRUE(timeutil::posix_rule_offset(c.rule, t.seconds, off));
    EXPECT_EQ(off, c.want);
  }
  int32_t off;
  EXPECT_FALSE(timeutil::posix_rule_offset("E5", 0, off));
  EXPECT_FALSE(timeutil::posix_rule_offset("EST5EDT,M13.1.0,M11.1.0", 0, off));
}

TEST(Time, CivilRoundTrip) {
  // Every day from 0001-01-01 to 9999-12-31 in steps, against days_from_civil.
  for (int64_t days = timeutil::kMinUnixSeconds / 86400; days <= timeutil::kMaxUnixSeconds / 86400; days += 997) {
    timeutil::Civil c = timeutil::civil_from_seconds(days * 86400 + 3723);
    ASSERT_EQ(common::days_from_civil(c.year, c.month, c.day), days);
    ASSERT_EQ(c.hour, 1);
    ASSERT_EQ(c.minute, 2);
    ASSERT_EQ(c.second, 3);
  }
}

// duration('...') and timestamp('...') with constant strings are checked when
// the selector compiles (cel.ValidateDurationLiterals/TimestampLiterals).
TEST(Time, LiteralsCheckedAtCompileTime) {
  struct {
    const char* expr;
    const char* want;
  } cases[] = {
      {"timestamp('2021-13-01T00:00:00Z') > timestamp(0)",
       "ERROR: <input>:1:11: invalid timestamp argument: parsing time \"2021-13-01T00:00:00Z\": month out of range"},
      {"timestamp('0000-01-01T00:00:00Z') > timestamp(0)",
       "ERROR: <input>:1:11: invalid timestamp argument: timestamp overflow"},
      {"timestamp(253402300800) > timestamp(0)",
       "ERROR: <input>:1:11: invalid timestamp argument: timestamp overflow"},
      {"duration('1d') > duration('1h')",
       "ERROR: <input>:1:10: invalid duration argument: time: unknown unit \"d\" in duration \"1d\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.expr);
    auto p = compile(c.expr);
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().message().substr(0, std::string(c.want).size()), c.want) << p.error().message();
    Status s = check_selector(c.expr);
    EXPECT_EQ(s.code(), Code::kInvalid);
  }
  EXPECT_TRUE(compile("timestamp('2021-01-01T00:00:00Z') < timestamp(dyn('x'))").has_value());
  EXPECT_TRUE(compile("duration('1h') > duration('1m')").has_value());
}

TEST(Time, Cost) {
  // Timestamps and durations are scalars for the estimator: O(1) operations.
  auto p = compile("timestamp('2021-01-01T00:00:00Z') + duration('1h') > timestamp('2021-01-01T00:30:00Z')");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ((*p)->estimated_cost(), 5u);  // timestamp, duration, +, timestamp, >
  auto q = compile("timestamp(0) == timestamp(1) && timestamp(0) != timestamp(1)");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ((*q)->estimated_cost(), 6u);
}

}  // namespace
}  // namespace draplane::cel
