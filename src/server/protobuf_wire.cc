#include "server/protobuf_wire.h"

namespace draplane::server::pb {

void Writer::put_varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

Writer& Writer::varint(uint32_t field, uint64_t value) {
  put_varint((uint64_t{field} << 3) | kVarint);
  put_varint(value);
  return *this;
}

Writer& Writer::bytes(uint32_t field, std::string_view value) {
  put_varint((uint64_t{field} << 3) | kLengthDelimited);
  put_varint(value.size());
  out_.append(value);
  return *this;
}

Result<uint64_t> Reader::read_varint() {
  size_t start = pos_;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) {
      return Status(Code::kBadRequest, "protobuf: truncated varint at byte " + std::to_string(start));
    }
    auto b = static_cast<uint8_t>(data_[pos_++]);
    v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  return Status(Code::kBadRequest, "protobuf: varint longer than 10 bytes at byte " + std::to_string(start));
}

Result<bool> Reader::next(Field& f) {
  if (pos_ >= data_.size()) return false;
  size_t start = pos_;
  ASSIGN_OR_RETURN(uint64_t tag, read_varint());
  f = Field{};
  uint64_t number = tag >> 3;
  if (number == 0 || number > 0x1fffffff) {
    return Status(Code::kBadRequest, "protobuf: invalid field number " + std::to_string(number) + " at byte " +
                                         std::to_string(start));
  }
  f.number = static_cast<uint32_t>(number);
  auto fixed = [&](size_t n) -> Status {
    if (data_.size() - pos_ < n) {
      return Status(Code::kBadRequest, "protobuf: truncated field " + std::to_string(number) + " at byte " +
                                           std::to_string(start));
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    pos_ += n;
    f.value = v;
    return Status();
  };
  switch (tag & 7) {
    case kVarint: {
      f.type = kVarint;
      ASSIGN_OR_RETURN(f.value, read_varint());
      return true;
    }
    case kFixed64:
      f.type = kFixed64;
      RETURN_IF_ERROR(fixed(8));
      return true;
    case kFixed32:
      f.type = kFixed32;
      RETURN_IF_ERROR(fixed(4));
      return true;
    case kLengthDelimited: {
      f.type = kLengthDelimited;
      ASSIGN_OR_RETURN(uint64_t len, read_varint());
      if (len > data_.size() - pos_) {
        return Status(Code::kBadRequest, "protobuf: field " + std::to_string(number) + " at byte " +
                                             std::to_string(start) + " is " + std::to_string(len) +
                                             " bytes long but only " + std::to_string(data_.size() - pos_) +
                                             " remain");
      }
      f.bytes = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    default:
      return Status(Code::kBadRequest, "protobuf: unsupported wire type " + std::to_string(tag & 7) + " of field " +
                                           std::to_string(number) + " at byte " + std::to_string(start));
  }
}

}  // namespace draplane::server::pb
