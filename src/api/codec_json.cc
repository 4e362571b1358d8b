// JSON reading (RapidJSON SAX into JsonValue, numbers kept as text) and writing
// (Go encoding/json style: HTML-safe escapes, compact or indented).
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "api/internal/json_value.h"

namespace draplane::api::internal {
namespace {

// Builds a JsonValue tree from SAX events.
class TreeBuilder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TreeBuilder> {
 public:
  bool Null() { return put(JsonValue::null()); }
  bool Bool(bool b) { return put(JsonValue::from_bool(b)); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    return put(JsonValue::number(std::string(s, n)));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return put(JsonValue::string(std::string(s, n)));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    keys_.emplace_back(s, n);
    return true;
  }
  bool StartObject() {
    stack_.push_back(JsonValue::object());
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() {
    stack_.push_back(JsonValue::array());
    return true;
  }
  bool EndArray(rapidjson::SizeType) { return close(); }

  JsonValue take() { return std::move(root_); }

 private:
  bool put(JsonValue v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    JsonValue& top = stack_.back();
    if (top.is_object()) {
      top.add(std::move(keys_.back()), std::move(v));
      keys_.pop_back();
    } else {
      top.items.push_back(std::move(v));
    }
    return true;
  }
  bool close() {
    JsonValue v = std::move(stack_.back());
    stack_.pop_back();
    return put(std::move(v));
  }

  std::vector<JsonValue> stack_;
  std::vector<std::string> keys_;
  JsonValue root_;
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

void write_string(std::string_view s, std::string& out) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
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
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void newline(std::string& out, int indent, int depth) {
  out.push_back('\n');
  out.append(static_cast<size_t>(indent * depth), ' ');
}

void write_value(const JsonValue& v, std::string& out, int indent, int depth) {
  switch (v.type) {
    case JsonValue::Type::kNull: out += "null"; return;
    case JsonValue::Type::kBool: out += v.boolean ? "true" : "false"; return;
    case JsonValue::Type::kNumber: out += v.text; return;
    case JsonValue::Type::kString: write_string(v.text, out); return;
    case JsonValue::Type::kArray: {
      if (v.items.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) out.push_back(',');
        if (indent > 0) newline(out, indent, depth + 1);
        write_value(v.items[i], out, indent, depth + 1);
      }
      if (indent > 0) newline(out, indent, depth);
      out.push_back(']');
      return;
    }
    case JsonValue::Type::kObject: {
      if (v.members.empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      for (size_t i = 0; i < v.members.size(); ++i) {
        if (i > 0) out.push_back(',');
        if (indent > 0) newline(out, indent, depth + 1);
        write_string(v.members[i].first, out);
        out += indent > 0 ? ": " : ":";
        write_value(v.members[i].second, out, indent, depth + 1);
      }
      if (indent > 0) newline(out, indent, depth);
      out.push_back('}');
      return;
    }
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

Result<std::vector<JsonValue>> parse_json_stream(std::string_view text) {
  std::string buf(text);  // RapidJSON's StringStream stops at NUL
  rapidjson::StringStream stream(buf.c_str());
  std::vector<JsonValue> values;
  while (!only_space(buf, stream.Tell())) {
    TreeBuilder builder;
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                                rapidjson::kParseStopWhenDoneFlag |
                                rapidjson::kParseValidateEncodingFlag;
    rapidjson::ParseResult ok = reader.Parse<kFlags>(stream, builder);
    if (!ok) {
      int line = 0, col = 0;
      line_col(buf, ok.Offset(), line, col);
      return Status(Code::kBadRequest, "invalid JSON at line " + std::to_string(line) +
                                           ", column " + std::to_string(col) + ": " +
                                           rapidjson::GetParseError_En(ok.Code()));
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
void sort_keys(JsonValue& v) {
  for (JsonValue& item : v.items) sort_keys(item);
  for (auto& member : v.members) sort_keys(member.second);
  std::stable_sort(v.members.begin(), v.members.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}
}  // namespace

std::string canonical_json_text(const JsonValue& value) {
  JsonValue copy = value;
  sort_keys(copy);
  return to_json_text(copy);
}

std::string to_json_text(const JsonValue& value, int indent) {
  std::string out;
  write_json(value, out, indent);
  return out;
}

}  // namespace draplane::api::internal
