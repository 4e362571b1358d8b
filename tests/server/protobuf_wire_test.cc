// The hand-written protobuf wire format: writer output byte for byte, reader
// round trips, and the errors for malformed input.
#include "server/protobuf_wire.h"

#include <gtest/gtest.h>

#include <vector>

namespace draplane::server::pb {
namespace {

std::vector<Field> read_all(std::string_view data) {
  std::vector<Field> out;
  Reader r(data);
  Field f;
  for (;;) {
    auto more = r.next(f);
    EXPECT_TRUE(more.has_value()) << more.error().message();
    if (!more.has_value() || !*more) break;
    out.push_back(f);
  }
  return out;
}

TEST(ProtobufWire, WriterEncodesLikeProtoc) {
  // Field 1 varint 150 is 08 96 01 (the encoding guide's example); field 2
  // string "testing" is 12 07 74 65 73 74 69 6e 67.
  Writer w;
  w.varint(1, 150).bytes(2, "testing");
  EXPECT_EQ(w.data(), std::string("\x08\x96\x01\x12\x07testing", 12));
  Writer big;
  big.varint(1, 0).boolean(2, true).varint(16, UINT64_MAX);  // field 16 needs a 2-byte tag
  EXPECT_EQ(big.data(), std::string("\x08\x00\x10\x01\x80\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 16));
  Writer outer;
  outer.message(3, w);
  EXPECT_EQ(outer.data(), "\x1a\x0c" + w.data());
}

TEST(ProtobufWire, ReaderRoundTrip) {
  Writer inner;
  inner.bytes(1, "ns").varint(5, 300);
  Writer w;
  w.bytes(1, std::string("k8s\0", 4)).message(2, inner).varint(536870911, 7);
  // Fixed-width fields are read too (and skipped by callers that do not want them).
  std::string data = w.data() + std::string("\x19\x01\x00\x00\x00\x00\x00\x00\x80\x25\x02\x00\x00\x00", 14);
  std::vector<Field> f = read_all(data);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[0].number, 1u);
  EXPECT_EQ(f[0].type, kLengthDelimited);
  EXPECT_EQ(f[0].bytes, std::string_view("k8s\0", 4));
  EXPECT_EQ(f[1].number, 2u);
  std::vector<Field> in = read_all(f[1].bytes);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].bytes, "ns");
  EXPECT_EQ(in[1].number, 5u);
  EXPECT_EQ(in[1].value, 300u);
  EXPECT_EQ(f[2].number, 536870911u);
  EXPECT_EQ(f[2].value, 7u);
  EXPECT_EQ(f[3].type, kFixed64);
  EXPECT_EQ(f[3].value, 0x8000000000000001ull);
  EXPECT_EQ(f[4].type, kFixed32);
  EXPECT_EQ(f[4].value, 2u);
  EXPECT_TRUE(read_all("").empty());
}

TEST(ProtobufWire, MalformedInputIsBadRequestWithOffset) {
  struct Case {
    const char* name;
    std::string data;
    const char* want;
  };
  const Case cases[] = {
      {"truncated varint", std::string("\x08\x96", 2), "protobuf: truncated varint at byte 1"},
      {"varint too long", std::string("\x08") + std::string(10, '\xff') + "\x01",
       "protobuf: varint longer than 10 bytes at byte 1"},
      {"length past the end", std::string("\x08\x01\x12\x05" "abc", 7),
       "protobuf: field 2 at byte 2 is 5 bytes long but only 3 remain"},
      {"field number 0", std::string("\x00\x01", 2), "protobuf: invalid field number 0 at byte 0"},
      {"group", std::string("\x0b", 1), "protobuf: unsupported wire type 3 of field 1 at byte 0"},
      {"truncated fixed32", std::string("\x0d\x01\x02", 3), "protobuf: truncated field 1 at byte 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Reader r(c.data);
    Field f;
    Result<bool> res = true;
    while (res.has_value() && *res) res = r.next(f);
    ASSERT_FALSE(res.has_value());
    EXPECT_EQ(res.error().code(), Code::kBadRequest);
    EXPECT_EQ(res.error().message(), c.want);
  }
}

}  // namespace
}  // namespace draplane::server::pb
