// CEL lexer: turns source text into tokens (cel-spec lexical grammar): numbers
// (decimal and hex int, uint with u/U, doubles with fraction and exponent),
// strings and bytes (quoted, triple-quoted, raw, every escape), identifiers,
// backquoted identifiers, reserved words, operators and punctuation; `//`
// comments and whitespace are skipped.
//
// Not thread-safe (one lexer per parse).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/utf8.h"  // append_utf8, used with the lexer's decoded strings

namespace draplane::cel {

enum class Tok {
  kEof,
  kError,
  kInt,     // text holds the digits (value parsed by the parser, which folds '-')
  kUint,
  kDouble,
  kString,  // value: decoded UTF-8
  kBytes,   // value: decoded bytes
  kIdent,
  kQuotedIdent,  // `a.b-c`
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace,
  kDot, kComma, kColon, kQuestion,
  kNot, kMinus, kPlus, kStar, kSlash, kPercent,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr,
};

struct Token {
  Tok kind = Tok::kEof;
  int32_t offset = 0;  // byte offset of the first character
  std::string text;    // identifier name, number text, decoded string/bytes, or error message
  bool hex = false;    // kInt/kUint written in hex
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  // Next token; kError carries the message in text and its position in offset.
  Token next();

 private:
  Token lex_number();
  Token lex_string(size_t start, bool raw, bool bytes);
  bool skip_space_and_comments();

  std::string_view src_;
  size_t pos_ = 0;
};

// True for words CEL reserves (as, break, const, ...), which cannot be identifiers.
bool is_reserved_word(std::string_view word);

}  // namespace draplane::cel
