// The cel-go strings extension at version 2, as Kubernetes' base environment
// enables it (ext.Strings(ext.StringsVersion(2)), environment/base.go): charAt,
// indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim,
// join, strings.quote, format. Not reverse() (version 3): on a string it is
// "found no matching overload" (only the lists extension's list reverse exists).
// Indices count code points.
#include <cstdio>

#include "cel/functions.h"
#include "cel/overload_adder.h"
#include "cel/lexer.h"

namespace draplane::cel::lib {

namespace {

const Type kB(TypeKind::kBool), kI(TypeKind::kInt), kS(TypeKind::kString), kDyn(TypeKind::kDyn);
const Type kListS = Type::list(Type(TypeKind::kString));

std::string encode(const std::vector<uint32_t>& cps, size_t from, size_t to) {
  std::string out;
  for (size_t k = from; k < to; ++k) append_utf8(out, cps[k]);
  return out;
}

Value out_of_range(int64_t i) { return Value::error("index out of range: " + std::to_string(i)); }

Value char_at(const Value* a) {
  auto cps = decode_utf8(a[0].str());
  int64_t i = a[1].i;
  if (i < 0 || static_cast<size_t>(i) > cps.size()) return out_of_range(i);
  if (static_cast<size_t>(i) == cps.size()) return Value::borrowed_string("");
  return Value::string(encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
}

int64_t find_cp(const std::vector<uint32_t>& hay, const std::vector<uint32_t>& needle, size_t from) {
  if (needle.size() > hay.size()) return -1;
  for (size_t k = from; k + needle.size() <= hay.size(); ++k) {
    bool ok = true;
    for (size_t j = 0; j < needle.size(); ++j) {
      if (hay[k + j] != needle[j]) {
        ok = false;
        break;
      }
    }
    if (ok) return static_cast<int64_t>(k);
  }
  return -1;
}

Value index_of_impl(const Value* a, int64_t offset) {
  auto hay = decode_utf8(a[0].str());
  auto needle = decode_utf8(a[1].str());
  if (offset < 0 || static_cast<size_t>(offset) > hay.size()) return out_of_range(offset);
  if (needle.empty()) return Value::integer(offset);
  return Value::integer(find_cp(hay, needle, static_cast<size_t>(offset)));
}
Value index_of(const Value* a) { return index_of_impl(a, 0); }
Value index_of_offset(const Value* a) { return index_of_impl(a, a[2].i); }

Value last_index_of_impl(const Value* a, int64_t offset, bool has_offset) {
  auto hay = decode_utf8(a[0].str());
  auto needle = decode_utf8(a[1].str());
  if (!has_offset) offset = static_cast<int64_t>(hay.size());
  if (offset < 0 || static_cast<size_t>(offset) > hay.size()) return out_of_range(offset);
  if (needle.empty()) return Value::integer(offset);
  if (needle.size() > hay.size()) return Value::integer(-1);
  int64_t start = std::min<int64_t>(offset, static_cast<int64_t>(hay.size() - needle.size()));
  for (int64_t k = start; k >= 0; --k) {
    bool ok = true;
    for (size_t j = 0; j < needle.size(); ++j) {
      if (hay[static_cast<size_t>(k) + j] != needle[j]) {
        ok = false;
        break;
      }
    }
    if (ok) return Value::integer(k);
  }
  return Value::integer(-1);
}
Value last_index_of(const Value* a) { return last_index_of_impl(a, 0, false); }
Value last_index_of_offset(const Value* a) { return last_index_of_impl(a, a[2].i, true); }

Value lower_ascii(const Value* a) {
  std::string s(a[0].str());
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return Value::string(std::move(s));
}
Value upper_ascii(const Value* a) {
  std::string s(a[0].str());
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return Value::string(std::move(s));
}

Value replace_impl(std::string_view s, std::string_view from, std::string_view to, int64_t n) {
  std::string out;
  if (n == 0) return Value::string(std::string(s));
  if (from.empty()) {
    // Go: inserts `to` before each code point and at the end.
    auto cps = decode_utf8(s);
    int64_t done = 0;
    for (size_t k = 0; k <= cps.size(); ++k) {
      if (n < 0 || done < n) {
        out += to;
        ++done;
      }
      if (k < cps.size()) append_utf8(out, cps[k]);
    }
    return Value::string(std::move(out));
  }
  size_t pos = 0;
  int64_t done = 0;
  while (n < 0 || done < n) {
    size_t f = s.find(from, pos);
    if (f == std::string_view::npos) break;
    out.append(s.substr(pos, f - pos));
    out.append(to);
    pos = f + from.size();
    ++done;
  }
  out.append(s.substr(pos));
  return Value::string(std::move(out));
}
Value replace_all(const Value* a) { return replace_impl(a[0].str(), a[1].str(), a[2].str(), -1); }
Value replace_n(const Value* a) { return replace_impl(a[0].str(), a[1].str(), a[2].str(), a[3].i); }

Value split_impl(std::string_view s, std::string_view sep, int64_t n) {
  ListData out;
  if (n == 0) return Value::list(std::move(out));
  if (sep.empty()) {
    auto cps = decode_utf8(s);
    for (size_t k = 0; k < cps.size(); ++k) {
      if (n > 0 && static_cast<int64_t>(out.size()) == n - 1) {
        out.push_back(Value::string(encode(cps, k, cps.size())));
        return Value::list(std::move(out));
      }
      out.push_back(Value::string(encode(cps, k, k + 1)));
    }
    return Value::list(std::move(out));
  }
  size_t pos = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    size_t f = s.find(sep, pos);
    if (f == std::string_view::npos) break;
    out.push_back(Value::string(std::string(s.substr(pos, f - pos))));
    pos = f + sep.size();
  }
  out.push_back(Value::string(std::string(s.substr(pos))));
  return Value::list(std::move(out));
}
Value split(const Value* a) { return split_impl(a[0].str(), a[1].str(), -1); }
Value split_n(const Value* a) { return split_impl(a[0].str(), a[1].str(), a[2].i); }

Value substring_impl(const Value* a, int64_t start, int64_t end, bool has_end) {
  auto cps = decode_utf8(a[0].str());
  int64_t len = static_cast<int64_t>(cps.size());
  if (!has_end) end = len;
  if (start < 0 || start > len) return out_of_range(start);
  if (end < 0 || end > len) return out_of_range(end);
  if (start > end) {
    return Value::error("invalid substring range. start: " + std::to_string(start) + ", end: " + std::to_string(end));
  }
  return Value::string(encode(cps, static_cast<size_t>(start), static_cast<size_t>(end)));
}
Value substring(const Value* a) { return substring_impl(a, a[1].i, 0, false); }
Value substring_range(const Value* a) { return substring_impl(a, a[1].i, a[2].i, true); }

bool is_unicode_space(uint32_t c) {
  switch (c) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}
Value trim(const Value* a) {
  auto cps = decode_utf8(a[0].str());
  size_t b = 0, e = cps.size();
  while (b < e && is_unicode_space(cps[b])) ++b;
  while (e > b && is_unicode_space(cps[e - 1])) --e;
  return Value::string(encode(cps, b, e));
}
Value join_impl(const Value* a, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& v : a[0].list_data()) {
    if (v.kind != ValueKind::kString) return no_such_overload();
    if (!first) out += sep;
    first = false;
    out += v.str();
  }
  return Value::string(std::move(out));
}
Value join(const Value* a) { return join_impl(a, ""); }
Value join_sep(const Value* a) { return join_impl(a, a[1].str()); }
Value quote(const Value* a) { return Value::string(quote_string(a[0].str())); }
Value format(const Value* a) { return format_string(a[0].str(), a[1].list_data()); }

}  // namespace

std::string quote_string(std::string_view s) {
  // cel-go sanitizes first: each invalid byte becomes U+FFFD, as Go's range over
  // a string reads it; other control characters are written as they are.
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    DecodedRune r = decode_rune(s, i);
    i += r.width;
    if (!append_named_escape(out, r.rune)) append_utf8(out, r.rune);
  }
  out += "\"";
  return out;
}

void register_strings(std::vector<Overload>& out) {
  const OverloadAdder add(out, /*size_cost=*/true);
  add("string_char_at_int", "charAt", true, {kS, kI}, kS, char_at);
  add("string_index_of_string", "indexOf", true, {kS, kS}, kI, index_of);
  add("string_index_of_string_int", "indexOf", true, {kS, kS, kI}, kI, index_of_offset);
  add("string_last_index_of_string", "lastIndexOf", true, {kS, kS}, kI, last_index_of);
  add("string_last_index_of_string_int", "lastIndexOf", true, {kS, kS, kI}, kI, last_index_of_offset);
  add("string_lower_ascii", "lowerAscii", true, {kS}, kS, lower_ascii);
  add("string_upper_ascii", "upperAscii", true, {kS}, kS, upper_ascii);
  add("string_replace_string_string", "replace", true, {kS, kS, kS}, kS, replace_all);
  add("string_replace_string_string_int", "replace", true, {kS, kS, kS, kI}, kS, replace_n);
  add("string_split_string", "split", true, {kS, kS}, kListS, split);
  add("string_split_string_int", "split", true, {kS, kS, kI}, kListS, split_n);
  add("string_substring_int", "substring", true, {kS, kI}, kS, substring);
  add("string_substring_int_int", "substring", true, {kS, kI, kI}, kS, substring_range);
  add("string_trim", "trim", true, {kS}, kS, trim);
  add("list_join", "join", true, {kListS}, kS, join);
  add("list_join_string", "join", true, {kListS, kS}, kS, join_sep);
  add("strings_quote", "strings.quote", false, {kS}, kS, quote);
  add("string_format", "format", true, {kS, Type::list(kDyn)}, kS, format);
}

}  // namespace draplane::cel::lib
