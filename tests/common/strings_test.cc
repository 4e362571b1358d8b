// split, base64 and go_quote.
#include <gtest/gtest.h>

#include "common/base64.h"
#include "common/go_quote.h"
#include "common/hex.h"
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
  auto error_of = [](std::string_view in, Base64 e) {
    auto got = base64_decode(in, e);
    if (got.has_value()) return std::string("decoded");
    EXPECT_EQ(got.error().code(), Code::kBadRequest);
    const std::string prefix = "illegal base64 data at input byte ";
    return got.error().message().rfind(prefix, 0) == 0 ? got.error().message().substr(prefix.size())
                                                        : got.error().message();
  };
  EXPECT_EQ(error_of("Zm9v!", Base64::kStd), "4");  // not in the alphabet
  EXPECT_EQ(error_of("Zm9", Base64::kStd), "0");    // padding missing
  EXPECT_EQ(error_of("Z===", Base64::kStd), "1");   // padding after one symbol
  EXPECT_EQ(error_of("Zg=", Base64::kStd), "3");    // "==" cut short
  EXPECT_EQ(error_of("Zg=x", Base64::kStd), "2");
  EXPECT_EQ(error_of("Zm8=x", Base64::kStd), "4");  // text after the padding
  EXPECT_EQ(error_of("Zg==", Base64::kRawUrl), "2");
  EXPECT_EQ(error_of("Zm9vY", Base64::kRawUrl), "4");  // one symbol left over
  EXPECT_EQ(error_of("ab+c", Base64::kRawUrl), "2");   // the standard alphabet's '+'
}

TEST(GoQuote, AsStrconvQuote) {
  EXPECT_EQ(go_quote(""), R"("")");
  EXPECT_EQ(go_quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(go_quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(go_quote(std::string_view("\x00\x1f\x7f", 3)), R"("\x00\x1f\x7f")");
  EXPECT_EQ(go_quote("gpu\xc3\xa9"), "\"gpu\xc3\xa9\"");
}

TEST(Hex, LowerByDefaultUpperOnRequest) {
  EXPECT_EQ(hex_encode(""), "");
  EXPECT_EQ(hex_encode(std::string_view("\x00\x9f\xff", 3)), "009fff");
  EXPECT_EQ(hex_encode(std::string_view("\x00\x9f\xff", 3), true), "009FFF");
}

}  // namespace
}  // namespace draplane::common
