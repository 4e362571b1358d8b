// Quantity vectors taken from k8s.io/apimachinery/pkg/api/resource/quantity_test.go
// (TestQuantityParse, TestQuantityString, TestQuantityParseEmit, TestQuantityCmp,
// TestNegativeValueRoundsAwayFromZero, TestNewSet, TestMilliNewSet) with the
// string Kubernetes' String() prints for each.
#include "api/quantity.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace draplane::api {
namespace {

using F = Quantity::Format;

struct ParseCase {
  const char* in;
  const char* want;            // Quantity.String() in Kubernetes
  const char* want_canonical;  // CanonicalizeBytes (== want unless the input is kept)
  F format;
};

TEST(QuantityTest, ParseAndPrint) {
  const ParseCase cases[] = {
      {"0", "0", "0", F::kDecimalSI},
      {"0n", "0", "0", F::kDecimalSI},
      {"0m", "0", "0", F::kDecimalSI},
      {"0Ki", "0", "0", F::kBinarySI},
      {"0T", "0", "0", F::kDecimalSI},
      {"-0", "0", "0", F::kDecimalSI},
      {"1", "1", "1", F::kDecimalSI},
      // Binary suffixes.
      {"1Ki", "1Ki", "1Ki", F::kBinarySI},
      {"8Ki", "8Ki", "8Ki", F::kBinarySI},
      {"7Mi", "7Mi", "7Mi", F::kBinarySI},
      {"6Gi", "6Gi", "6Gi", F::kBinarySI},
      {"5Ti", "5Ti", "5Ti", F::kBinarySI},
      {"4Pi", "4Pi", "4Pi", F::kBinarySI},
      {"3Ei", "3Ei", "3Ei", F::kBinarySI},
      {"10Ti", "10Ti", "10Ti", F::kBinarySI},
      {"100Ti", "100Ti", "100Ti", F::kBinarySI},
      {"1024Mi", "1Gi", "1Gi", F::kBinarySI},
      {"1536Mi", "1536Mi", "1536Mi", F::kBinarySI},
      {"1.5Gi", "1536Mi", "1536Mi", F::kBinarySI},
      {"-5Mi", "-5Mi", "-5Mi", F::kBinarySI},
      {"-1.5Gi", "-1536Mi", "-1536Mi", F::kBinarySI},
      {"1024", "1024", "1024", F::kDecimalSI},
      // Decimal suffixes.
      {"5n", "5n", "5n", F::kDecimalSI},
      {"4u", "4u", "4u", F::kDecimalSI},
      {"3m", "3m", "3m", F::kDecimalSI},
      {"100m", "100m", "100m", F::kDecimalSI},
      {"-100m", "-100m", "-100m", F::kDecimalSI},
      {"1000m", "1", "1", F::kDecimalSI},
      {"9", "9", "9", F::kDecimalSI},
      {"1000", "1k", "1k", F::kDecimalSI},
      {"8k", "8k", "8k", F::kDecimalSI},
      {"50k", "50k", "50k", F::kDecimalSI},
      {"7M", "7M", "7M", F::kDecimalSI},
      {"1000M", "1G", "1G", F::kDecimalSI},
      {"6G", "6G", "6G", F::kDecimalSI},
      {"5T", "5T", "5T", F::kDecimalSI},
      {"40T", "40T", "40T", F::kDecimalSI},
      {"300T", "300T", "300T", F::kDecimalSI},
      {"2P", "2P", "2P", F::kDecimalSI},
      {"1E", "1E", "1E", F::kDecimalSI},
      {"12E", "12E", "12E", F::kDecimalSI},
      // No DecimalSI suffix past E: exponent notation (current upstream).
      {"1000E", "1e21", "1e21", F::kDecimalSI},
      // Decimal exponents; the input spelling is kept when upstream keeps it.
      {"1E-3", "1E-3", "1e-3", F::kDecimalExponent},
      {"1e3", "1e3", "1e3", F::kDecimalExponent},
      {"1E3", "1E3", "1e3", F::kDecimalExponent},
      {"1E6", "1E6", "1e6", F::kDecimalExponent},
      {"1e9", "1e9", "1e9", F::kDecimalExponent},
      {"1E18", "1E18", "1e18", F::kDecimalExponent},
      {"1e14", "100e12", "100e12", F::kDecimalExponent},
      {"1e13", "10e12", "10e12", F::kDecimalExponent},
      {"1.2e3", "1200", "1200", F::kDecimalExponent},
      {"1.3E+6", "1300e3", "1300e3", F::kDecimalExponent},
      {"1.40e9", "1400e6", "1400e6", F::kDecimalExponent},
      {"1.53E12", "1530e9", "1530e9", F::kDecimalExponent},
      {"0.5e0", "500e-3", "500e-3", F::kDecimalExponent},
      {"0.5e-1", "50e-3", "50e-3", F::kDecimalExponent},
      {"0.5e-2", "5e-3", "5e-3", F::kDecimalExponent},
      // Things that look like floating point.
      {"0.001", "1m", "1m", F::kDecimalSI},
      {"0.0005k", "500m", "500m", F::kDecimalSI},
      {"0.005", "5m", "5m", F::kDecimalSI},
      {"0.05", "50m", "50m", F::kDecimalSI},
      {"0.5", "500m", "500m", F::kDecimalSI},
      {"0.00050k", "500m", "500m", F::kDecimalSI},
      {"1.5", "1500m", "1500m", F::kDecimalSI},
      {"9.01", "9010m", "9010m", F::kDecimalSI},
      {"-9.01", "-9010m", "-9010m", F::kDecimalSI},
      {"8.1k", "8100", "8100", F::kDecimalSI},
      {"100.035k", "100.035k", "100035", F::kDecimalSI},
      {"10.035M", "10.035M", "10035k", F::kDecimalSI},
      {"7.123456M", "7.123456M", "7123456", F::kDecimalSI},
      {"6.987654321G", "6.987654321G", "6987654321", F::kDecimalSI},
      {"5.444T", "5.444T", "5444G", F::kDecimalSI},
      {"2.5P", "2500T", "2500T", F::kDecimalSI},
      {"1.01E", "1010P", "1010P", F::kDecimalSI},
      // Things that saturate or round up to 1n.
      {"3.001n", "4n", "4n", F::kDecimalSI},
      {"1.1E-9", "2e-9", "2e-9", F::kDecimalExponent},
      {"0.0000000001", "1n", "1n", F::kDecimalSI},
      {"0.0000000005", "1n", "1n", F::kDecimalSI},
      {"0.5e-9", "1e-9", "1e-9", F::kDecimalExponent},
      {"0.9n", "1n", "1n", F::kDecimalSI},
      {"0.00000012345", "124n", "124n", F::kDecimalSI},
      {"0.00000012354", "124n", "124n", F::kDecimalSI},
      {".484785E-7466", "1e-9", "1e-9", F::kDecimalExponent},
      {"9Ei", "9223372036854775807", "9223372036854775807", F::kBinarySI},
      {"9223372036854775807Ki", "9223372036854775807", "9223372036854775807", F::kBinarySI},
      {"-9Ei", "-9223372036854775807", "-9223372036854775807", F::kBinarySI},
      // Fractional binary values.
      {"100.035Ki", "102435840m", "102435840m", F::kBinarySI},
      {"0.5Mi", "512Ki", "512Ki", F::kBinarySI},
      {"0.05Gi", "53687091200m", "53687091200m", F::kBinarySI},
      {"0.025Ti", "27487790694400m", "27487790694400m", F::kBinarySI},
      {".001Ki", "1024m", "1024m", F::kBinarySI},
      {".000001Ki", "1024u", "1024u", F::kDecimalSI},
      {".000000001Ki", "1024n", "1024n", F::kDecimalSI},
      {"0.000000000001Ki", "2n", "2n", F::kDecimalSI},
      // Written by trolls: accepted, and some spellings kept verbatim.
      {".001", "1m", "1m", F::kDecimalSI},
      {".0001k", "100m", "100m", F::kDecimalSI},
      {".5", "500m", "500m", F::kDecimalSI},
      {"1.", "1.", "1", F::kDecimalSI},
      {"5.", "5.", "5", F::kDecimalSI},
      {"1.G", "1.G", "1G", F::kDecimalSI},
      {"+5", "+5", "5", F::kDecimalSI},
      {"007", "007", "7", F::kDecimalSI},
      {"1e0", "1e0", "1", F::kDecimalExponent},
      {"Ki", "0", "0", F::kBinarySI},
      {"-", "0", "0", F::kDecimalSI},
      {".", "0", "0", F::kDecimalSI},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.in);
    Result<Quantity> q = Quantity::parse(c.in);
    ASSERT_TRUE(q.has_value()) << q.error().message();
    EXPECT_EQ(q->to_string(), c.want);
    EXPECT_EQ(q->canonical_string(), c.want_canonical);
    EXPECT_EQ(q->format(), c.format);
    // Printing then parsing gives the same value.
    Result<Quantity> back = Quantity::parse(q->to_string());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->compare(*q), 0);
  }
}

TEST(QuantityTest, ExactNanos) {
  struct Case {
    const char* in;
    __int128 nanos;
  };
  const Case cases[] = {
      {"1", 1'000'000'000},
      {"1Ki", __int128{1024} * 1'000'000'000},
      {"100m", 100'000'000},
      {"3.001n", 4},
      {"-3.001n", -4},
      {"1.1E-9", 2},
      {"1e-100", 1},
      {"-1e-100", -1},
      {"0.000000000000000000000000000000000001", 1},
      {"1.5Gi", __int128{1610612736} * 1'000'000'000},
      {"12E", __int128{12} * 1'000'000'000'000'000'000 * 1'000'000'000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Result<Quantity> q = Quantity::parse(c.in);
    ASSERT_TRUE(q.has_value()) << q.error().message();
    EXPECT_TRUE(q->nanos() == c.nanos);
  }
}

TEST(QuantityTest, Invalid) {
  constexpr const char* kFormat =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  constexpr const char* kSuffix = "unable to parse quantity's suffix";
  struct Case {
    const char* in;
    const char* message;
  };
  const Case cases[] = {
      {"", kFormat},
      {"1.1.M", kFormat},
      {"1+1.0M", kFormat},
      {"0.1am", kFormat},
      {"aoeu", kFormat},
      {" 1", kFormat},
      {"1 ", kFormat},
      {"1.2.3", kFormat},
      {"1Q", kFormat},
      {"1e3e", kFormat},
      {"0.1mi", kSuffix},
      {".5i", kSuffix},
      {"1i", kSuffix},
      {"-3.01i", kSuffix},
      {"-3.01e-", kSuffix},
      {"1e4294967297", kSuffix},
      {"1E2147483648", kSuffix},
      {"1e", kSuffix},
      {"1mm", kSuffix},
      {"1Kie3", kSuffix},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Result<Quantity> q = Quantity::parse(c.in);
    ASSERT_FALSE(q.has_value());
    EXPECT_EQ(q.error().code(), Code::kInvalid);
    EXPECT_EQ(q.error().message(), c.message);
  }
}

TEST(QuantityTest, OutOfSupportedRange) {
  for (const char* in : {"1e30", "-1e40", "1E2147483647", "200000000000E"}) {
    SCOPED_TRACE(in);
    Result<Quantity> q = Quantity::parse(in);
    ASSERT_FALSE(q.has_value());
    EXPECT_EQ(q.error().code(), Code::kInvalid);
    EXPECT_NE(q.error().message().find("out of the supported range"), std::string::npos);
  }
  // Just inside the range.
  EXPECT_TRUE(Quantity::parse("1e29").has_value());
}

TEST(QuantityTest, Compare) {
  struct Case {
    const char* x;
    const char* y;
    int want;
  };
  const Case cases[] = {
      {"0", "0", 0},         {"100m", "50m", 1},   {"50m", "100m", -1},
      {"10000T", "100Gi", 1}, {"1Ki", "1024", 0},  {"1e3", "1k", 0},
      {"1.5Gi", "1536Mi", 0}, {"-1", "1n", -1},    {"1E", "1Ei", -1},
      {"0.5", "500m", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.x) + " vs " + c.y);
    Quantity x = *Quantity::parse(c.x);
    Quantity y = *Quantity::parse(c.y);
    EXPECT_EQ(x.compare(y), c.want);
    EXPECT_EQ(y.compare(x), -c.want);
    EXPECT_EQ(x == y, c.want == 0);
    EXPECT_EQ(x < y, c.want < 0);
  }
}

TEST(QuantityTest, AddSubMul) {
  struct Case {
    const char* a;
    char op;
    const char* b;
    const char* want;
  };
  const Case cases[] = {
      {"100m", '+', "0", "100m"},   {"0", '+', "100m", "100m"},
      {"1Gi", '+', "0", "1Gi"},     {"0", '+', "1Gi", "1Gi"},
      {"1", '+', "500m", "1500m"},  {"10", '+', "1", "11"},
      {"1Gi", '-', "512Mi", "512Mi"}, {"0", '-', "1Gi", "-1Gi"},
      {"100m", '-', "0", "100m"},   {"10", '-', "10", "0"},
      {"1E3", '+', "0", "1e3"},  // arithmetic drops the kept spelling
      {"1Ki", '+', "1", "1025"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.a) + c.op + c.b);
    Quantity a = *Quantity::parse(c.a);
    Quantity b = *Quantity::parse(c.b);
    Result<Quantity> r = c.op == '+' ? a.add(b) : a.sub(b);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->to_string(), c.want);
  }
  EXPECT_EQ(Quantity::parse("10")->mul_int(-10)->to_string(), "-100");
  EXPECT_EQ(Quantity::parse("1Gi")->mul_int(4)->to_string(), "4Gi");
  EXPECT_EQ(Quantity::parse("-9.01")->to_string(), "-9010m");

  Quantity max = Quantity::from_nanos(std::numeric_limits<__int128>::max(), F::kDecimalSI);
  Result<Quantity> over = max.add(Quantity::from_int(1));
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code(), Code::kInvalid);
  EXPECT_FALSE(Quantity::from_nanos(std::numeric_limits<__int128>::min(), F::kDecimalSI)
                   .sub(Quantity::from_int(1))
                   .has_value());
  EXPECT_FALSE(max.mul_int(2).has_value());
}

TEST(QuantityTest, Constructors) {
  struct Case {
    Quantity q;
    const char* want;
  };
  const Case cases[] = {
      {Quantity::from_int(1), "1"},
      {Quantity::from_int(1000), "1k"},
      {Quantity::from_int(1234000), "1234k"},
      {Quantity::from_int(1024, F::kBinarySI), "1Ki"},
      {Quantity::from_int(1024 * 1024, F::kBinarySI), "1Mi"},
      {Quantity::from_int(1000000, F::kDecimalExponent), "1e6"},
      {Quantity::from_int(2000, F::kBinarySI), "2000"},
      {Quantity::from_int(-2000, F::kBinarySI), "-2000"},
      {Quantity::from_int(5, F::kBinarySI), "5"},
      {Quantity::from_milli(1), "1m"},
      {Quantity::from_milli(1000), "1"},
      {Quantity::from_milli(1234000), "1234"},
      {Quantity(), "0"},
      {Quantity::from_nanos(__int128{1} << 70, F::kBinarySI), "1180591620717411303424n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(c.q.to_string(), c.want);
  }
  // 2^70 as a whole number has no binary suffix past Ei: exact decimal.
  Quantity big = *Quantity::from_int(int64_t{1} << 60, F::kBinarySI).mul_int(1024);
  EXPECT_EQ(big.to_string(), "1180591620717411303424");
  EXPECT_EQ(Quantity::from_int(int64_t{1} << 60, F::kBinarySI).to_string(), "1Ei");
}

TEST(QuantityTest, ValueRoundsAwayFromZero) {
  struct Case {
    const char* in;
    int64_t value;
    int64_t milli;
  };
  const Case cases[] = {
      {"-.484785E-7466", -1, -1},
      {".484785E-7466", 1, 1},
      {"-.484785E-1", -1, -49},
      {".484785E-1", 1, 49},
      {"-0.0005", -1, -1},
      {"0.0005", 1, 1},
      {"-1500m", -2, -1500},
      {"1500m", 2, 1500},
      {"-9.5000000001Gi", -10200547329, -10200547328108},
      {"9.5000000001Gi", 10200547329, 10200547328108},
      {"-1", -1, -1000},
      {"1", 1, 1000},
      {"0", 0, 0},
      {"100E", std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()},
      {"-100E", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    Quantity q = *Quantity::parse(c.in);
    EXPECT_EQ(q.value(), c.value);
    EXPECT_EQ(q.milli_value(), c.milli);
  }
}

TEST(QuantityTest, IntegerAccessors) {
  EXPECT_EQ(Quantity::parse("1Gi")->as_int64(), int64_t{1} << 30);
  EXPECT_TRUE(Quantity::parse("1Gi")->is_integer());
  EXPECT_EQ(Quantity::parse("1500m")->as_int64(), std::nullopt);
  EXPECT_FALSE(Quantity::parse("1500m")->is_integer());
  EXPECT_EQ(Quantity::parse("12E")->as_int64(), std::nullopt);  // > int64
  EXPECT_EQ(Quantity::parse("-3")->as_int64(), -3);
  EXPECT_EQ(Quantity::parse("-3")->sign(), -1);
  EXPECT_EQ(Quantity::parse("0")->sign(), 0);
  EXPECT_TRUE(Quantity::parse("0Gi")->is_zero());
  EXPECT_EQ(Quantity::parse("2Gi")->as_approximate_double(), 2147483648.0);
  EXPECT_EQ(Quantity::parse("1.1Ki")->as_approximate_double(), 1126.4);
  EXPECT_EQ(Quantity::parse("1Mi")->as_approximate_double(), 1048576.0);
}

}  // namespace
}  // namespace draplane::api
