// The injected time zone database: a CEL program resolves named zones in the
// TimeZoneDatabase its owner gives it (a directory of TZif files), never in
// process-wide state.
#include "cel/tz.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cel/cel.h"
#include "cel/interpreter.h"
#include "cel/parser.h"

namespace draplane::cel {
namespace {

namespace fs = std::filesystem;

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

// A version-1 TZif file with one local time type and no transitions: the zone
// is `offset` seconds east of UTC at all times.
std::string fixed_zone_tzif(int32_t offset) {
  std::string f = "TZif";
  f.append(16, '\0');  // version 1 ('\0') and 15 reserved bytes
  for (uint32_t count : {0u, 0u, 0u, 0u, 1u, 4u}) put_u32(f, count);  // isut, isstd, leap, time, type, char
  put_u32(f, static_cast<uint32_t>(offset));
  f.push_back('\0');  // isdst
  f.push_back('\0');  // abbreviation index
  f.append("FKT", 4);  // "FKT\0"
  return f;
}

// A fresh directory under the test's temporary directory, removed at the end.
class FakeZoneinfo {
 public:
  FakeZoneinfo() {
    dir_ = fs::temp_directory_path() / ("draplane_tz_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~FakeZoneinfo() { fs::remove_all(dir_); }
  void add(const std::string& name, int32_t offset) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << fixed_zone_tzif(offset);
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

constexpr int32_t kFakeOffset = 5 * 3600 + 30 * 60;  // +05:30

TEST(TimeZoneDatabase, ReadsZonesFromItsOwnDirectory) {
  FakeZoneinfo zi;
  zi.add("Test/Fake", kFakeOffset);
  TimeZoneDatabase db({zi.path()});
  int32_t off = 0;
  std::string err;
  ASSERT_TRUE(db.offset("Test/Fake", 1234567890, off, err)) << err;
  EXPECT_EQ(off, kFakeOffset);
  EXPECT_FALSE(db.offset("Test/Missing", 0, off, err));
  EXPECT_EQ(err, "unknown time zone Test/Missing");
  EXPECT_FALSE(db.offset("../Test/Fake", 0, off, err));
  EXPECT_EQ(err, "time: invalid location name");
  EXPECT_FALSE(db.offset("Local", 0, off, err));
  EXPECT_EQ(err, "unknown time zone Local (the host's zone is not used)");
}

// Two databases share nothing: each caches what it read (a miss included), and a
// database over other directories does not see the fake zone.
TEST(TimeZoneDatabase, EachDatabaseHasItsOwnCache) {
  FakeZoneinfo zi;
  TimeZoneDatabase first({zi.path()});
  int32_t off = 0;
  std::string err;
  EXPECT_FALSE(first.offset("Test/Late", 0, off, err));  // not there yet: cached as unknown
  zi.add("Test/Late", kFakeOffset);
  EXPECT_FALSE(first.offset("Test/Late", 0, off, err));
  TimeZoneDatabase second({zi.path()});
  ASSERT_TRUE(second.offset("Test/Late", 0, off, err)) << err;
  EXPECT_EQ(off, kFakeOffset);
  TimeZoneDatabase system;
  EXPECT_FALSE(system.offset("Test/Late", 0, off, err));
}

TEST(TimeZoneDatabase, ConcurrentLookups) {
  FakeZoneinfo zi;
  for (int k = 0; k < 8; ++k) zi.add("Test/Zone" + std::to_string(k), k * 3600);
  TimeZoneDatabase db({zi.path()});
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        int k = (t + i) % 8;
        int32_t off = -1;
        std::string err;
        if (!db.offset("Test/Zone" + std::to_string(k), i, off, err) || off != k * 3600) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

std::shared_ptr<const TimeZoneDatabase> fake_db(const FakeZoneinfo& zi) {
  return std::make_shared<const TimeZoneDatabase>(std::vector<std::string>{zi.path()});
}

Result<bool> eval_bool(const Program& p) {
  api::Device device;
  device.name = "gpu-0";
  DeviceBinding binding("gpu.example.com", device);
  EvalResult r = p.eval(binding);
  if (!r.ok()) return invalid_error(r.error);
  return r.value;
}

// 2009-02-13T23:31:30Z is 05:01:30 on the 14th at +05:30.
constexpr std::string_view kSelector =
    "timestamp('2009-02-13T23:31:30Z').getHours('Test/Fake') == 5 && "
    "timestamp('2009-02-13T23:31:30Z').getDate('Test/Fake') == 14";

TEST(TimeZoneDatabase, CompileOptionsInjectTheDatabase) {
  FakeZoneinfo zi;
  zi.add("Test/Fake", kFakeOffset);
  auto p = compile(kSelector, CompileOptions{fake_db(zi)});
  ASSERT_TRUE(p) << p.error().message();
  auto r = eval_bool(**p);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(*r);

  // Without options the program reads the system's zoneinfo, which has no Test/Fake.
  auto plain = compile(kSelector);
  ASSERT_TRUE(plain) << plain.error().message();
  auto miss = eval_bool(**plain);
  ASSERT_FALSE(miss);
  EXPECT_EQ(miss.error().message(), "unknown time zone Test/Fake");
}

TEST(TimeZoneDatabase, ProgramCacheSharesItsDatabase) {
  FakeZoneinfo zi;
  zi.add("Test/Fake", kFakeOffset);
  ProgramCache cache(fake_db(zi));
  auto p = cache.get(kSelector);
  ASSERT_TRUE(p) << p.error().message();
  auto r = eval_bool(**p);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(*r);
}

TEST(TimeZoneDatabase, EvalToStringTakesOptions) {
  FakeZoneinfo zi;
  zi.add("Test/Fake", kFakeOffset);
  auto r = eval_to_string("timestamp('2009-02-13T23:31:30Z').getMinutes('Test/Fake')", nullptr, "",
                          CompileOptions{fake_db(zi)});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, "1");
}

// A plan evaluated without a database knows fixed offsets and UTC only.
TEST(TimeZoneDatabase, PlanWithoutDatabase) {
  std::vector<Issue> issues;
  ExprPtr ast = parse("timestamp('2009-02-13T23:31:30Z').getHours('Europe/Paris')", issues);
  ASSERT_TRUE(ast);
  auto plan = Plan::build(*ast, false);
  EXPECT_TRUE(plan->uses_context());
  Value v = plan->eval(EvalInput{});
  ASSERT_TRUE(v.is_error());
  EXPECT_EQ(v.error_message(), "unknown time zone Europe/Paris (no time zone database)");

  ExprPtr fixed = parse("timestamp('2009-02-13T23:31:30Z').getHours('+01:00')", issues);
  ASSERT_TRUE(fixed);
  auto fixed_plan = Plan::build(*fixed, false);
  Value h = fixed_plan->eval(EvalInput{});
  ASSERT_EQ(h.kind, ValueKind::kInt);
  EXPECT_EQ(h.i, 0);
}

// The plan asks its owner for the database once, when it plans the first call
// that needs one, and never for an expression without named zones.
TEST(TimeZoneDatabase, PlanAsksForTheDatabaseOnlyWhenNeeded) {
  FakeZoneinfo zi;
  zi.add("Test/Fake", kFakeOffset);
  TimeZoneDatabase db({zi.path()});
  int asked = 0;
  auto source = [&] {
    ++asked;
    return CallContext{&db};
  };
  std::vector<Issue> issues;
  ExprPtr ast = parse(
      "timestamp('2009-02-13T23:31:30Z').getHours('Test/Fake') * 100 + "
      "timestamp('2009-02-13T23:31:30Z').getMinutes('Test/Fake')",
      issues);
  ASSERT_TRUE(ast);
  auto plan = Plan::build(*ast, false, source);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(plan->uses_context());
  Value v = plan->eval(EvalInput{});
  ASSERT_EQ(v.kind, ValueKind::kInt) << (v.is_error() ? v.error_message() : "");
  EXPECT_EQ(v.i, 501);

  ExprPtr plain = parse("device.driver == 'x' && timestamp('2009-02-13T23:31:30Z').getHours() == 23", issues);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(Plan::build(*plain, false, source)->uses_context());
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace draplane::cel
