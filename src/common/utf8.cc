#include "common/utf8.h"

#include <cstring>

namespace draplane {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  // utf8.DecodeRune's acceptance table: the second byte's range depends on the first.
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

DecodedRune decode_rune(std::string_view s, size_t i) {
  size_t n = utf8_sequence_length(s, i);
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (n) {
    case 1: return {byte(0), 1};
    case 2: return {(byte(0) & 0x1F) << 6 | (byte(1) & 0x3F), 2};
    case 3: return {(byte(0) & 0x0F) << 12 | (byte(1) & 0x3F) << 6 | (byte(2) & 0x3F), 3};
    case 4: return {(byte(0) & 0x07) << 18 | (byte(1) & 0x3F) << 12 | (byte(2) & 0x3F) << 6 | (byte(3) & 0x3F), 4};
    default: return {kRuneError, 1};
  }
}

std::vector<uint32_t> decode_runes(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    DecodedRune r = decode_rune(s, i);
    out.push_back(r.rune);
    i += r.width;
  }
  return out;
}

namespace {

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
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
}

}  // namespace

bool valid_utf8(std::string_view s) { return first_invalid(s) == std::string_view::npos; }

std::string coerce_utf8(std::string_view s) {
  size_t bad = first_invalid(s);
  if (bad == std::string_view::npos) return std::string(s);
  std::string out(s.substr(0, bad));
  out.reserve(s.size() + 16);
  for (size_t i = bad; i < s.size();) {
    size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_utf8(out, kRuneError);
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t rune) {
  if (rune > 0x10FFFF || (rune >= 0xD800 && rune < 0xE000)) rune = kRuneError;
  if (rune < 0x80) {
    out.push_back(static_cast<char>(rune));
  } else if (rune < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (rune >> 6)));
    out.push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  } else if (rune < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (rune >> 12)));
    out.push_back(static_cast<char>(0x80 | ((rune >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (rune >> 18)));
    out.push_back(static_cast<char>(0x80 | ((rune >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((rune >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  }
}

bool append_named_escape(std::string& out, uint32_t c) {
  char letter;
  switch (c) {
    case '\a': letter = 'a'; break;
    case '\b': letter = 'b'; break;
    case '\f': letter = 'f'; break;
    case '\n': letter = 'n'; break;
    case '\r': letter = 'r'; break;
    case '\t': letter = 't'; break;
    case '\v': letter = 'v'; break;
    case '\\': letter = '\\'; break;
    case '"': letter = '"'; break;
    default: return false;
  }
  out.push_back('\\');
  out.push_back(letter);
  return true;
}

void append_hex_escape(std::string& out, unsigned char c, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  out += "\\x";
  out.push_back(digits[c >> 4]);
  out.push_back(digits[c & 0xF]);
}

}  // namespace draplane
