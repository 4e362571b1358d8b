#include "cel/lexer.h"

#include <array>

namespace draplane::cel {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
int hex_val(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

Token error_at(size_t offset, std::string msg) {
  Token t;
  t.kind = Tok::kError;
  t.offset = static_cast<int32_t>(offset);
  t.text = std::move(msg);
  return t;
}

}  // namespace

bool is_reserved_word(std::string_view w) {
  static constexpr std::array<std::string_view, 17> kWords = {
      "as",  "break",  "const",     "continue", "else",   "for", "function", "if",   "import",
      "let", "loop",   "package",   "namespace", "return", "var", "void",     "while"};
  for (auto k : kWords) {
    if (k == w) return true;
  }
  return false;
}

bool Lexer::skip_space_and_comments() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  return pos_ < src_.size();
}

Token Lexer::next() {
  Token t;
  if (!skip_space_and_comments()) {
    t.kind = Tok::kEof;
    t.offset = static_cast<int32_t>(src_.size());
    return t;
  }
  size_t start = pos_;
  t.offset = static_cast<int32_t>(start);
  char c = src_[pos_];
  auto peek = [&](size_t k) -> char { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; };

  if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return lex_number();

  if (is_ident_start(c)) {
    // String prefixes: r, R, b, B and their combinations.
    size_t p = pos_;
    bool raw = false, bytes = false;
    for (int k = 0; k < 2 && p < src_.size(); ++k) {
      char x = src_[p];
      if ((x == 'r' || x == 'R') && !raw) {
        raw = true;
        ++p;
      } else if ((x == 'b' || x == 'B') && !bytes) {
        bytes = true;
        ++p;
      } else {
        break;
      }
    }
    if ((raw || bytes) && p < src_.size() && (src_[p] == '"' || src_[p] == '\'')) {
      pos_ = p;
      return lex_string(start, raw, bytes);
    }
    while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
    t.text = std::string(src_.substr(start, pos_ - start));
    if (t.text == "true") t.kind = Tok::kTrue;
    else if (t.text == "false") t.kind = Tok::kFalse;
    else if (t.text == "null") t.kind = Tok::kNull;
    else if (t.text == "in") t.kind = Tok::kIn;
    else t.kind = Tok::kIdent;
    return t;
  }
  if (c == '"' || c == '\'') return lex_string(start, false, false);
  if (c == '`') {
    ++pos_;
    size_t s = pos_;
    while (pos_ < src_.size() && src_[pos_] != '`') {
      char x = src_[pos_];
      if (!(is_ident_char(x) || x == '.' || x == '-' || x == '/' || x == ' ')) {
        return error_at(pos_, "Syntax error: invalid character in quoted identifier");
      }
      ++pos_;
    }
    if (pos_ >= src_.size()) return error_at(start, "Syntax error: unterminated quoted identifier");
    t.kind = Tok::kQuotedIdent;
    t.text = std::string(src_.substr(s, pos_ - s));
    ++pos_;
    return t;
  }
  auto two = [&](char second, Tok yes, Tok no) {
    if (peek(1) == second) {
      pos_ += 2;
      t.kind = yes;
    } else {
      pos_ += 1;
      t.kind = no;
    }
    return t;
  };
  auto doubled = [&](Tok kind) {  // ==, &&, ||: no one-character form
    pos_ += 2;
    t.kind = kind;
    return t;
  };
  switch (c) {
    case '(': ++pos_; t.kind = Tok::kLParen; return t;
    case ')': ++pos_; t.kind = Tok::kRParen; return t;
    case '[': ++pos_; t.kind = Tok::kLBracket; return t;
    case ']': ++pos_; t.kind = Tok::kRBracket; return t;
    case '{': ++pos_; t.kind = Tok::kLBrace; return t;
    case '}': ++pos_; t.kind = Tok::kRBrace; return t;
    case '.': ++pos_; t.kind = Tok::kDot; return t;
    case ',': ++pos_; t.kind = Tok::kComma; return t;
    case ':': ++pos_; t.kind = Tok::kColon; return t;
    case '?': ++pos_; t.kind = Tok::kQuestion; return t;
    case '-': ++pos_; t.kind = Tok::kMinus; return t;
    case '+': ++pos_; t.kind = Tok::kPlus; return t;
    case '*': ++pos_; t.kind = Tok::kStar; return t;
    case '/': ++pos_; t.kind = Tok::kSlash; return t;
    case '%': ++pos_; t.kind = Tok::kPercent; return t;
    case '!': return two('=', Tok::kNe, Tok::kNot);
    case '<': return two('=', Tok::kLe, Tok::kLt);
    case '>': return two('=', Tok::kGe, Tok::kGt);
    case '=':
      if (peek(1) == '=') return doubled(Tok::kEq);
      break;
    case '&':
      if (peek(1) == '&') return doubled(Tok::kAnd);
      break;
    case '|':
      if (peek(1) == '|') return doubled(Tok::kOr);
      break;
    default: break;
  }
  std::string shown(1, c);
  return error_at(start, "Syntax error: token recognition error at: '" + shown + "'");
}

Token Lexer::lex_number() {
  Token t;
  size_t start = pos_;
  t.offset = static_cast<int32_t>(start);
  auto at = [&](size_t p) -> char { return p < src_.size() ? src_[p] : '\0'; };
  if (at(pos_) == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'X') && is_hex(at(pos_ + 2))) {
    pos_ += 2;
    size_t s = pos_;
    while (is_hex(at(pos_))) ++pos_;
    t.text = std::string(src_.substr(s, pos_ - s));
    t.hex = true;
    if (at(pos_) == 'u' || at(pos_) == 'U') {
      ++pos_;
      t.kind = Tok::kUint;
    } else {
      t.kind = Tok::kInt;
    }
    return t;
  }
  bool is_float = false;
  while (is_digit(at(pos_))) ++pos_;
  if (at(pos_) == '.' && is_digit(at(pos_ + 1))) {
    is_float = true;
    ++pos_;
    while (is_digit(at(pos_))) ++pos_;
  }
  if (at(pos_) == 'e' || at(pos_) == 'E') {
    size_t p = pos_ + 1;
    if (at(p) == '+' || at(p) == '-') ++p;
    if (is_digit(at(p))) {
      is_float = true;
      pos_ = p;
      while (is_digit(at(pos_))) ++pos_;
    }
  }
  t.text = std::string(src_.substr(start, pos_ - start));
  if (is_float) {
    t.kind = Tok::kDouble;
  } else if (at(pos_) == 'u' || at(pos_) == 'U') {
    ++pos_;
    t.kind = Tok::kUint;
  } else {
    t.kind = Tok::kInt;
  }
  return t;
}

Token Lexer::lex_string(size_t start, bool raw, bool bytes) {
  Token t;
  t.offset = static_cast<int32_t>(start);
  t.kind = bytes ? Tok::kBytes : Tok::kString;
  char q = src_[pos_];
  bool triple = pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q;
  pos_ += triple ? 3 : 1;
  std::string& out = t.text;
  while (true) {
    if (pos_ >= src_.size()) return error_at(start, "Syntax error: unterminated string literal");
    char c = src_[pos_];
    if (triple) {
      if (c == q && pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q) {
        pos_ += 3;
        return t;
      }
    } else {
      if (c == q) {
        ++pos_;
        return t;
      }
      if (c == '\n' || c == '\r') {
        return error_at(start, "Syntax error: newline in string literal");
      }
    }
    if (c != '\\' || raw) {
      out.push_back(c);
      ++pos_;
      continue;
    }
    // Escape sequence.
    size_t esc = pos_;
    ++pos_;
    if (pos_ >= src_.size()) return error_at(start, "Syntax error: unterminated string literal");
    char e = src_[pos_++];
    auto need = [&](int n, bool (*ok)(char)) {
      if (pos_ + n > src_.size()) return false;
      for (int k = 0; k < n; ++k) {
        if (!ok(src_[pos_ + k])) return false;
      }
      return true;
    };
    // One-character escapes: each letter followed by the character it stands for.
    static constexpr std::string_view kSimple = "a\ab\bf\fn\nr\rt\tv\v\\\\''\"\"``??";
    if (size_t k = kSimple.find(e); k != std::string_view::npos && k % 2 == 0) {
      out.push_back(kSimple[k + 1]);
      continue;
    }
    switch (e) {
      case 'x':
      case 'X': {
        if (!need(2, is_hex)) return error_at(esc, "Syntax error: invalid escape sequence");
        uint32_t v = static_cast<uint32_t>(hex_val(src_[pos_]) * 16 + hex_val(src_[pos_ + 1]));
        pos_ += 2;
        if (bytes) out.push_back(static_cast<char>(v));
        else append_utf8(out, v);
        break;
      }
      case 'u':
      case 'U': {
        int n = e == 'u' ? 4 : 8;
        if (!need(n, is_hex)) return error_at(esc, "Syntax error: invalid escape sequence");
        uint32_t v = 0;
        for (int k = 0; k < n; ++k) v = v * 16 + static_cast<uint32_t>(hex_val(src_[pos_ + k]));
        pos_ += n;
        if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
          return error_at(esc, "Syntax error: invalid unicode code point");
        }
        append_utf8(out, v);
        break;
      }
      case '0': case '1': case '2': case '3': {
        auto is_oct = [](char x) { return x >= '0' && x <= '7'; };
        if (!need(2, is_oct)) return error_at(esc, "Syntax error: invalid escape sequence");
        uint32_t v = static_cast<uint32_t>((e - '0') * 64 + (src_[pos_] - '0') * 8 + (src_[pos_ + 1] - '0'));
        pos_ += 2;
        if (bytes) out.push_back(static_cast<char>(v));
        else append_utf8(out, v);
        break;
      }
      default:
        return error_at(esc, "Syntax error: invalid escape sequence");
    }
  }
}

}  // namespace draplane::cel
