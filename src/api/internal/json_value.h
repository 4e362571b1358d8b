// JsonValue: the codec's intermediate document tree (JSON data model), shared by
// the JSON reader, the YAML reader (YAML -> JSON like sigs.k8s.io/yaml), the typed
// decoders and encoders, and the JSON/YAML writers.
//
// Numbers keep their source text (so a Quantity written as 1e3 stays 1e3 and an
// int64 is never squeezed through a double). Object members keep source order;
// duplicate keys are kept, the typed decoder reports them, and the last one
// wins (find() returns it), as in Go's decoder.
//
// Plain value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace draplane::api::internal {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the string; kNumber: the number as written
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
  int line = 0;  // 1-based source line when known (YAML), else 0
  // A YAML plain scalar that resolved to a bool or number keeps its source text, so a
  // string field given `Y` or `1.10` reads the text the user wrote (see docs/compat.md).
  std::string plain;

  // The special members and factories are defined below the struct: clang
  // otherwise instantiates the member vectors' destructor here, while
  // std::pair<std::string, JsonValue> is still incomplete.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();

  static JsonValue null();
  static JsonValue from_bool(bool b);
  static JsonValue string(std::string s);
  static JsonValue number(std::string digits);
  static JsonValue array();
  static JsonValue object();

  bool is_null() const { return type == Type::kNull; }
  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString; }

  // Last member named `key` (a repeated key's value, as Go's decoder takes it), or nullptr.
  const JsonValue* find(std::string_view key) const {
    for (size_t i = members.size(); i-- > 0;) {
      if (members[i].first == key) return &members[i].second;
    }
    return nullptr;
  }
  JsonValue* find(std::string_view key) {
    for (size_t i = members.size(); i-- > 0;) {
      if (members[i].first == key) return &members[i].second;
    }
    return nullptr;
  }
  // Appends a member (no duplicate check).
  JsonValue& add(std::string key, JsonValue value) {
    members.emplace_back(std::move(key), std::move(value));
    return members.back().second;
  }
  // Removes every member named `key`; true if one was removed.
  bool erase(std::string_view key) {
    bool removed = false;
    for (size_t i = 0; i < members.size();) {
      if (members[i].first == key) {
        members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
        removed = true;
      } else {
        ++i;
      }
    }
    return removed;
  }

  // Deep equality (member order matters; line does not).
  bool operator==(const JsonValue& o) const {
    return type == o.type && boolean == o.boolean && text == o.text && items == o.items &&
           members == o.members;
  }
};

inline JsonValue::JsonValue() = default;
inline JsonValue::JsonValue(const JsonValue&) = default;
inline JsonValue::JsonValue(JsonValue&&) noexcept = default;
inline JsonValue& JsonValue::operator=(const JsonValue&) = default;
inline JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
inline JsonValue::~JsonValue() = default;

inline JsonValue JsonValue::null() { return {}; }
inline JsonValue JsonValue::from_bool(bool b) {
  JsonValue v;
  v.type = Type::kBool;
  v.boolean = b;
  return v;
}
inline JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.type = Type::kString;
  v.text = std::move(s);
  return v;
}
inline JsonValue JsonValue::number(std::string digits) {
  JsonValue v;
  v.type = Type::kNumber;
  v.text = std::move(digits);
  return v;
}
inline JsonValue JsonValue::array() {
  JsonValue v;
  v.type = Type::kArray;
  return v;
}
inline JsonValue JsonValue::object() {
  JsonValue v;
  v.type = Type::kObject;
  return v;
}

// One member of an object: key and value.
using JsonMember = std::pair<std::string, JsonValue>;

// "string", "number", "object", ... as used in error messages.
std::string_view type_name(JsonValue::Type type);

// Parses one or more concatenated JSON values (a JSON stream). Error (kBadRequest)
// with the byte offset and reason on malformed input.
Result<std::vector<JsonValue>> parse_json_stream(std::string_view text);
// Parses exactly one JSON value.
Result<JsonValue> parse_json(std::string_view text);

// Writes JSON. `indent` 0 is compact; otherwise pretty with that many spaces.
void write_json(const JsonValue& value, std::string& out, int indent = 0);
std::string to_json_text(const JsonValue& value, int indent = 0);
// Compact JSON with object keys sorted bytewise at every level, as Go's
// encoding/json writes a map[string]interface{} (what kubectl sends for YAML
// input). RawJson members hold this form, so JSON and YAML round trips agree.
std::string canonical_json_text(const JsonValue& value);
// canonical_json_text of an object holding just these members (in any order).
std::string canonical_json_object(std::vector<const JsonMember*> members);

// Parses every document of a YAML stream into JSON values, resolving plain
// scalars as sigs.k8s.io/yaml (YAML 1.1 via go-yaml v2) does: ints, floats, bools
// (true/false/yes/no/on/off/y/n), null (~, null, empty); quoted scalars are
// strings. Empty documents are skipped. When a document has a syntax error the
// result ends with that error ("error converting YAML to JSON: yaml: line N: ...").
struct YamlDocument {
  JsonValue value;  // meaningful when error.ok()
  Status error;
};
std::vector<YamlDocument> parse_yaml_stream(std::string_view text);

// Block-style YAML like `kubectl get -o yaml` (sigs.k8s.io/yaml JSONToYAML): map
// keys sorted, two-space indent, lists not indented under their key, strings
// quoted only where a plain scalar would read back differently.
std::string to_yaml_text(const JsonValue& value);

}  // namespace draplane::api::internal
