// The protocol buffers wire format, by hand: what the API server needs to read
// Kubernetes protobuf request bodies (protobuf_body.h) and to write the
// protobuf OpenAPI v2 document kubectl 1.27/1.28 ask for. No schema, no
// reflection: fields are numbers with wire types.
//
// Wire format (protobuf.dev/programming-guides/encoding): a message is a
// sequence of (tag, value); tag = field_number << 3 | wire_type, as a varint.
// Wire types: 0 varint, 1 fixed 64-bit, 2 length-delimited (varint length,
// then bytes: strings, bytes, embedded messages, packed repeated fields),
// 5 fixed 32-bit; 3 and 4 (groups) are obsolete and refused.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace draplane::server::pb {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Appends fields to a message. Fields are written in call order.
class Writer {
 public:
  Writer& varint(uint32_t field, uint64_t value);
  Writer& boolean(uint32_t field, bool value) { return varint(field, value ? 1 : 0); }
  // string, bytes, or an embedded message's encoding.
  Writer& bytes(uint32_t field, std::string_view value);
  Writer& message(uint32_t field, const Writer& sub) { return bytes(field, sub.data()); }
  const std::string& data() const { return out_; }

 private:
  void put_varint(uint64_t v);
  std::string out_;
};

// One field as read.
struct Field {
  uint32_t number = 0;
  WireType type = kVarint;
  uint64_t value = 0;      // kVarint, kFixed64, kFixed32
  std::string_view bytes;  // kLengthDelimited (points into the reader's input)
};

// Reads the fields of one message in order. Errors (kBadRequest) name the byte
// offset: a truncated varint or field, a varint over 10 bytes, field number 0,
// a group or unknown wire type.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  // Reads the next field into `f`; false at the end of the message.
  Result<bool> next(Field& f);
  size_t offset() const { return pos_; }

 private:
  Result<uint64_t> read_varint();
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace draplane::server::pb
