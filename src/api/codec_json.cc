// JSON reading (RapidJSON SAX into JsonValue, numbers kept as text) and writing
// (Go encoding/json style: HTML-safe escapes, compact or indented).
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "api/decode_limits.h"
#include "api/internal/json_value.h"

namespace draplane::api::internal {
namespace {

// Builds a JsonValue tree from SAX events, each value written in place: the
// stack holds the open containers, and a container's slot in its parent stays
// put until the container closes (its siblings come after it).
class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  bool Null() {
    slot();
    return true;
  }
  bool Bool(bool b) {
    JsonValue& v = slot();
    v.type = JsonValue::Type::kBool;
    v.boolean = b;
    return true;
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    JsonValue& v = slot();
    v.type = JsonValue::Type::kNumber;
    v.text.assign(s, n);
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    JsonValue& v = slot();
    v.type = JsonValue::Type::kString;
    v.text.assign(s, n);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    stack_.back()->members.emplace_back(std::piecewise_construct, std::forward_as_tuple(s, n),
                                        std::forward_as_tuple());
    return true;
  }
  bool StartObject() { return open(JsonValue::Type::kObject); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(JsonValue::Type::kArray); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  JsonValue take() { return std::move(root_); }
  // The bracket that went past kMaxNestingDepth ('[' or '{'), or 0.
  char too_deep() const { return too_deep_; }

 private:
  // Where the next value goes: the root, the member Key() just added, or a new item.
  JsonValue& slot() {
    if (stack_.empty()) return root_;
    JsonValue& top = *stack_.back();
    if (top.is_object()) return top.members.back().second;
    return top.items.emplace_back();
  }

  bool open(JsonValue::Type type) {
    // Bounded like Go's encoding/json (kube-apiserver's decoder): deeper input
    // would only exhaust the stack of the recursive parser and of every tree walk.
    if (stack_.size() >= static_cast<size_t>(kMaxNestingDepth)) {
      too_deep_ = type == JsonValue::Type::kArray ? '[' : '{';
      return false;
    }
    JsonValue& v = slot();
    v.type = type;
    stack_.push_back(&v);
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<JsonValue*> stack_;
  JsonValue root_;
  char too_deep_ = 0;
};

void line_col(std::string_view text, size_t offset, int& line, int& col) {
  line = 1;
  col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

bool only_space(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

// Whether byte c is written as is (no escape, not the start of U+2028/U+2029).
inline bool plain_byte(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2;
}

void write_string(std::string_view s, std::string& out) {
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet written
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (plain_byte(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
                    static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          // U+2028 / U+2029, escaped by Go for JavaScript safety.
          out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
          i += 2;
          run = i + 1;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

void newline(std::string& out, int indent, int depth) {
  out.push_back('\n');
  out.append(static_cast<size_t>(indent * depth), ' ');
}

// `n` elements between `open` and `close`, one a line when indenting; `element(i)`
// writes the i-th.
template <typename Element>
void write_container(std::string& out, char open, char close, size_t n, int indent, int depth, Element element) {
  if (n == 0) {  // "[]" or "{}" in one append (pods have many empty objects)
    const char empty[2] = {open, close};
    out.append(empty, 2);
    return;
  }
  out.push_back(open);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out.push_back(',');
    if (indent > 0) newline(out, indent, depth + 1);
    element(i);
  }
  if (indent > 0) newline(out, indent, depth);
  out.push_back(close);
}

void write_value(const JsonValue& v, std::string& out, int indent, int depth) {
  switch (v.type) {
    case JsonValue::Type::kNull: out += "null"; return;
    case JsonValue::Type::kBool: out += v.boolean ? "true" : "false"; return;
    case JsonValue::Type::kNumber: out += v.text; return;
    case JsonValue::Type::kString: write_string(v.text, out); return;
    case JsonValue::Type::kArray:
      write_container(out, '[', ']', v.items.size(), indent, depth,
                      [&](size_t i) { write_value(v.items[i], out, indent, depth + 1); });
      return;
    case JsonValue::Type::kObject:
      write_container(out, '{', '}', v.members.size(), indent, depth, [&](size_t i) {
        write_string(v.members[i].first, out);
        out += indent > 0 ? ": " : ":";
        write_value(v.members[i].second, out, indent, depth + 1);
      });
      return;
  }
}

}  // namespace

std::string_view type_name(JsonValue::Type type) {
  switch (type) {
    case JsonValue::Type::kNull: return "null";
    case JsonValue::Type::kBool: return "boolean";
    case JsonValue::Type::kNumber: return "number";
    case JsonValue::Type::kString: return "string";
    case JsonValue::Type::kArray: return "array";
    case JsonValue::Type::kObject: return "object";
  }
  return "value";
}

namespace {
// Plain ASCII is valid UTF-8: such text (nearly every object) needs no further
// check. RapidJSON's per-character encoding check is never used (the text is
// made valid first), which also lets it copy strings in bulk.
bool all_ascii(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    if (word & 0x8080808080808080ull) return false;
  }
  for (; i < s.size(); ++i) {
    if (static_cast<unsigned char>(s[i]) & 0x80) return false;
  }
  return true;
}

template <unsigned kFlags>
rapidjson::ParseResult parse_one(rapidjson::InsituStringStream& stream, TreeBuilder& builder) {
  rapidjson::Reader reader;
  return reader.Parse<kFlags>(stream, builder);
}
}  // namespace

Result<std::vector<JsonValue>> parse_json_stream(std::string_view text) {
  // RapidJSON's streams stop at NUL, and in-situ parsing unescapes strings in the
  // buffer (only behind the read position: what is left to read is untouched).
  // With RAPIDJSON_SSE2 (not defined: CMakeLists.txt says why) it scans in
  // aligned 16-byte loads, which may read up to 15 bytes past the terminating
  // NUL: the buffer is allocated with that much room.
  // Invalid UTF-8 is read as Go's encoding/json reads it (kube-apiserver accepts
  // it): each byte that does not start a valid sequence becomes U+FFFD.
  std::string coerced;
  if (!all_ascii(text) && !valid_utf8(text)) {
    coerced = coerce_utf8(text);
    text = coerced;
  }
  std::string buf;
  buf.reserve(text.size() + 16);
  buf.assign(text);
  rapidjson::InsituStringStream stream(buf.data());
  std::vector<JsonValue> values;
  while (!only_space(buf, stream.Tell())) {
    TreeBuilder builder;
    constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag |
                                rapidjson::kParseStopWhenDoneFlag;
    rapidjson::ParseResult ok = parse_one<kFlags>(stream, builder);  // the text is valid UTF-8 by now
    if (!ok) {
      int line = 0, col = 0;
      line_col(text, ok.Offset(), line, col);
      std::string why = rapidjson::GetParseError_En(ok.Code());
      if (char c = builder.too_deep()) why = std::string("invalid character '") + c + "' exceeded max depth";
      return Status(Code::kBadRequest, "invalid JSON at line " + std::to_string(line) +
                                           ", column " + std::to_string(col) + ": " + why);
    }
    values.push_back(builder.take());
  }
  return values;
}

Result<JsonValue> parse_json(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<JsonValue> values, parse_json_stream(text));
  if (values.size() != 1) {
    return Status(Code::kBadRequest, "expected one JSON value, found " +
                                         std::to_string(values.size()));
  }
  return std::move(values[0]);
}

void write_json(const JsonValue& value, std::string& out, int indent) {
  write_value(value, out, indent, 0);
}

namespace {
void write_canonical(const JsonValue& v, std::string& out);

void write_canonical_members(std::vector<const JsonMember*> order, std::string& out) {
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  out.push_back('{');
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out.push_back(',');
    write_string(order[i]->first, out);
    out.push_back(':');
    write_canonical(order[i]->second, out);
  }
  out.push_back('}');
}

// write_value with every object's members in bytewise key order (stable, so
// duplicate keys keep their order), without copying the tree to sort it.
void write_canonical(const JsonValue& v, std::string& out) {
  if (v.type == JsonValue::Type::kArray) {
    out.push_back('[');
    for (size_t i = 0; i < v.items.size(); ++i) {
      if (i > 0) out.push_back(',');
      write_canonical(v.items[i], out);
    }
    out.push_back(']');
    return;
  }
  if (v.type != JsonValue::Type::kObject) {
    write_value(v, out, 0, 0);
    return;
  }
  std::vector<const JsonMember*> order;
  order.reserve(v.members.size());
  for (const auto& m : v.members) order.push_back(&m);
  write_canonical_members(std::move(order), out);
}
}  // namespace

std::string canonical_json_text(const JsonValue& value) {
  std::string out;
  write_canonical(value, out);
  return out;
}

std::string canonical_json_object(std::vector<const JsonMember*> members) {
  std::string out;
  write_canonical_members(std::move(members), out);
  return out;
}

std::string to_json_text(const JsonValue& value, int indent) {
  std::string out;
  write_json(value, out, indent);
  return out;
}

}  // namespace draplane::api::internal
