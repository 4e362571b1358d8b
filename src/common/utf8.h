// UTF-8 as Go reads and writes it (unicode/utf8), shared by the API codec and CEL:
// a byte that does not start a valid sequence (overlong forms, surrogates, code
// points past U+10FFFF, truncated sequences) stands for U+FFFD on its own, as
// utf8.DecodeRuneInString and `range` over a string have it.
//
// Also the backslash escapes that the Go-style quoting functions (api::go_quote,
// CEL's strings.quote and literal printing, YAML double-quoted scalars, time
// errors) have in common. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace draplane {

inline constexpr uint32_t kRuneError = 0xFFFD;

// Length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 when s[i] does not
// start one. i < s.size().
size_t utf8_sequence_length(std::string_view s, size_t i);

struct DecodedRune {
  uint32_t rune;  // kRuneError for an invalid byte
  size_t width;   // bytes consumed: 1 for an invalid byte
};
// utf8.DecodeRuneInString(s[i:]). i < s.size().
DecodedRune decode_rune(std::string_view s, size_t i);

// The code points of `s` (a `range` over the string).
std::vector<uint32_t> decode_runes(std::string_view s);

// utf8.ValidString. Fast for ASCII.
bool valid_utf8(std::string_view s);

// `s` with each byte that does not start a valid sequence replaced by U+FFFD.
std::string coerce_utf8(std::string_view s);

// utf8.AppendRune: surrogates and values past U+10FFFF append U+FFFD.
void append_utf8(std::string& out, uint32_t rune);

// Appends the two-character escape Go's strconv writes for `c` ('\a' '\b' '\f'
// '\n' '\r' '\t' '\v' '\\' '"'); false (nothing appended) for any other value.
bool append_named_escape(std::string& out, uint32_t c);

// Appends "\x" and the byte as two hex digits (lowercase as Go writes them, or
// uppercase as YAML emitters do).
void append_hex_escape(std::string& out, unsigned char c, bool upper = false);

}  // namespace draplane
