#include "common/base64.h"

#include <cstdint>

namespace draplane::common {
namespace {

constexpr std::string_view kStd = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string_view alphabet(Base64 e) { return e == Base64::kStd ? kStd : kUrl; }

Status corrupt(size_t at) {
  return Status(Code::kBadRequest, "illegal base64 data at input byte " + std::to_string(at));
}

bool newline(char c) { return c == '\r' || c == '\n'; }

size_t skip_newlines(std::string_view in, size_t i) {
  while (i < in.size() && newline(in[i])) ++i;
  return i;
}

}  // namespace

std::string base64_encode(std::string_view in, Base64 encoding) {
  const std::string_view k = alphabet(encoding);
  const bool pad = encoding == Base64::kStd;
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += k[(n >> s) & 63];
  }
  const size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t n = uint8_t(in[i]) << 16;
    if (rest == 2) n |= uint8_t(in[i + 1]) << 8;
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    if (rest == 2) out += k[(n >> 6) & 63];
    if (pad) out.append(rest == 2 ? 1 : 2, '=');
  }
  return out;
}

// Follows Go's decodeQuantum: groups of four symbols; with padding, "=" may
// end the input after two or three symbols and only newlines may follow it.
Result<std::string> base64_decode(std::string_view in, Base64 encoding) {
  const std::string_view k = alphabet(encoding);
  const bool padded = encoding == Base64::kStd;
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  int j = 0;  // symbols read in the current quantum
  size_t i = 0;
  while (true) {
    i = skip_newlines(in, i);
    if (i == in.size()) {
      if (j == 1 || (padded && j != 0)) return corrupt(in.size() - j);
      return out;
    }
    const char c = in[i++];
    if (padded && c == '=') {
      if (j < 2) return corrupt(i - 1);
      if (j == 2) {  // "==" expected
        i = skip_newlines(in, i);
        if (i == in.size()) return corrupt(in.size());
        if (in[i] != '=') return corrupt(i - 1);
        ++i;
      }
      i = skip_newlines(in, i);
      if (i < in.size()) return corrupt(i);
      return out;
    }
    const size_t at = k.find(c);
    if (at == std::string_view::npos) return corrupt(i - 1);
    buf = (buf << 6) | static_cast<uint32_t>(at);
    bits += 6;
    j = (j + 1) % 4;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
}

}  // namespace draplane::common
