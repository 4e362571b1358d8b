// UTF-8 as Go's encoding/json reads strings (utf8.DecodeRune): a byte that does
// not start a valid sequence stands for U+FFFD on its own.
#include "api/decode_limits.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>


namespace draplane::api {
namespace {

// Length of the valid sequence at s[i], or 0 (utf8.DecodeRune's table).
size_t sequence_length(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  unsigned c = at(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Index of the first byte not in a valid sequence, or npos.
size_t first_invalid(std::string_view s) {
  size_t i = 0;
  for (;;) {
    // ASCII eight bytes at a time (nearly every document is all ASCII).
    while (i + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= s.size()) return std::string_view::npos;
    size_t n = sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
}

}  // namespace

bool valid_utf8(std::string_view text) { return first_invalid(text) == std::string_view::npos; }

std::string coerce_utf8(std::string_view text) {
  size_t bad = first_invalid(text);
  if (bad == std::string_view::npos) return std::string(text);
  std::string out(text.substr(0, bad));
  out.reserve(text.size() + 16);
  for (size_t i = bad; i < text.size();) {
    size_t n = sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace draplane::api
