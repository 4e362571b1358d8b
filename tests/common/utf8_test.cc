#include "common/utf8.h"

#include <gtest/gtest.h>

namespace draplane {
namespace {

TEST(Utf8, DecodeRuneAsGo) {
  // Valid sequences of each length.
  EXPECT_EQ(decode_rune("a", 0).rune, 'a');
  DecodedRune r = decode_rune("\xc3\xa9", 0);  // é
  EXPECT_EQ(r.rune, 0xE9u);
  EXPECT_EQ(r.width, 2u);
  r = decode_rune("x\xe2\x82\xac", 1);  // €
  EXPECT_EQ(r.rune, 0x20ACu);
  EXPECT_EQ(r.width, 3u);
  r = decode_rune("\xf0\x9f\x98\x80", 0);  // 😀
  EXPECT_EQ(r.rune, 0x1F600u);
  EXPECT_EQ(r.width, 4u);
  // Each invalid byte is U+FFFD of width 1: overlong, surrogate, past U+10FFFF,
  // truncated, a lone continuation byte.
  for (std::string_view bad : {"\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    SCOPED_TRACE(testing::PrintToString(std::string(bad)));
    r = decode_rune(bad, 0);
    EXPECT_EQ(r.rune, kRuneError);
    EXPECT_EQ(r.width, 1u);
  }
}

TEST(Utf8, DecodeRunes) {
  EXPECT_EQ(decode_runes("a\xc3\xa9\xff"), (std::vector<uint32_t>{'a', 0xE9, kRuneError}));
  EXPECT_TRUE(decode_runes("").empty());
}

TEST(Utf8, ValidAndCoerce) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain ascii, more than eight bytes long"));
  EXPECT_TRUE(valid_utf8("long ascii prefix then \xe2\x82\xac"));
  EXPECT_FALSE(valid_utf8("long ascii prefix then \xe2\x82"));
  EXPECT_FALSE(valid_utf8("\xc1\xbf"));  // overlong
  EXPECT_EQ(coerce_utf8("ok"), "ok");
  EXPECT_EQ(coerce_utf8("a\xffz"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(coerce_utf8("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8, AppendRune) {
  std::string out;
  for (uint32_t r : {0x41u, 0xE9u, 0x20ACu, 0x1F600u}) append_utf8(out, r);
  EXPECT_EQ(out, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  out.clear();
  append_utf8(out, 0xD800);    // a surrogate
  append_utf8(out, 0x110000);  // past the last code point
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8, Escapes) {
  std::string out;
  for (char c : std::string_view("\a\b\f\n\r\t\v\\\"")) {
    EXPECT_TRUE(append_named_escape(out, static_cast<unsigned char>(c)));
  }
  EXPECT_EQ(out, "\\a\\b\\f\\n\\r\\t\\v\\\\\\\"");
  out.clear();
  EXPECT_FALSE(append_named_escape(out, 'x'));
  EXPECT_FALSE(append_named_escape(out, 0x1b));
  EXPECT_EQ(out, "");
  append_hex_escape(out, 0x1b);
  append_hex_escape(out, 0xfe, /*upper=*/true);
  EXPECT_EQ(out, "\\x1b\\xFE");
}

}  // namespace
}  // namespace draplane
