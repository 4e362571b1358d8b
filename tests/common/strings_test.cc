// split, base64 and go_quote.
#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/go_quote.h"
#include "common/split.h"

namespace draplane::common {
namespace {

using Views = std::vector<std::string_view>;

TEST(Split, AsGoStringsSplit) {
  EXPECT_EQ(split("a,b,c", ','), (Views{"a", "b", "c"}));
  EXPECT_EQ(split("a,,b", ','), (Views{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (Views{""}));
  EXPECT_EQ(split(",", ','), (Views{"", ""}));
  EXPECT_EQ(split("abc", ','), (Views{"abc"}));
  EXPECT_EQ(split("/a/", '/'), (Views{"", "a", ""}));
}

TEST(Base64, EncodesStdWithPaddingAndRawUrlWithout) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("\xfb\xff", Base64::kStd), "+/8=");
  EXPECT_EQ(base64_encode("\xfb\xff", Base64::kRawUrl), "-_8");
  EXPECT_EQ(base64_encode("f", Base64::kRawUrl), "Zg");
}

TEST(Base64, RoundTripsEveryLength) {
  std::string in;
  for (int n = 0; n < 40; ++n) {
    for (Base64 e : {Base64::kStd, Base64::kRawUrl}) {
      auto back = base64_decode(base64_encode(in, e), e);
      ASSERT_TRUE(back.has_value()) << n;
      EXPECT_EQ(*back, in);
    }
    in.push_back(static_cast<char>(n * 37 + 200));
  }
}

TEST(Base64, DecodeSkipsNewlines) {
  EXPECT_EQ(base64_decode("Zm9v\r\nYmFy\n").value(), "foobar");
  EXPECT_EQ(base64_decode("Zg=\n=", Base64::kStd).value(), "f");
  EXPECT_EQ(base64_decode("Zm\n8", Base64::kRawUrl).value(), "fo");
}

// Go's CorruptInputError offsets.
TEST(Base64, DecodeErrorsNameTheByteAsGoDoes) {
  struct Case {
    std::string_view in;
    Base64 e;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {"Zm9v!", Base64::kStd, "illegal base64 data at input byte 4"},
           {"Zm9", Base64::kStd, "illegal base64 data at input byte 0"},
           {"Z===", Base64::kStd, "illegal base64 data at input byte 1"},
           {"Zg=", Base64::kStd, "illegal base64 data at input byte 3"},
           {"Zg=x", Base64::kStd, "illegal base64 data at input byte 2"},
           {"Zm8=x", Base64::kStd, "illegal base64 data at input byte 4"},
           {"Zg==", Base64::kRawUrl, "illegal base64 data at input byte 2"},
           {"Zm9vY", Base64::kRawUrl, "illegal base64 data at input byte 4"},
           {"ab+c", Base64::kRawUrl, "illegal base64 data at input byte 2"},
       }) {
    auto got = base64_decode(c.in, c.e);
    ASSERT_FALSE(got.has_value()) << c.in;
    EXPECT_EQ(got.error().code(), Code::kBadRequest);
    EXPECT_EQ(got.error().message(), c.want) << c.in;
  }
}

TEST(GoQuote, AsStrconvQuote) {
  EXPECT_EQ(go_quote(""), R"("")");
  EXPECT_EQ(go_quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(go_quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(go_quote(std::string_view("\x00\x1f\x7f", 3)), R"("\x00\x1f\x7f")");
  EXPECT_EQ(go_quote("gpu\xc3\xa9"), "\"gpu\xc3\xa9\"");
}

}  // namespace
}  // namespace draplane::common
