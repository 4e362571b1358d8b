// YAML -> JsonValue (yaml-cpp events, scalars resolved as sigs.k8s.io/yaml does
// through go-yaml v2) and JsonValue -> block YAML (as go-yaml v2 marshals the
// JSON document, which is what kubectl -o yaml prints).
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>

#include "api/decode_limits.h"
#include "api/internal/json_value.h"

namespace draplane::api::internal {
namespace {

constexpr std::string_view kYamlPrefix = "error converting YAML to JSON: yaml: ";

// ---------------------------------------------------------------- scalar resolution

bool is_null_word(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// YAML 1.1 booleans as go-yaml v2 knows them; nullopt when not a boolean.
std::optional<bool> bool_word(std::string_view s) {
  static constexpr std::string_view kTrue[] = {"y", "Y", "yes", "Yes", "YES", "true",
                                               "True", "TRUE", "on", "On", "ON"};
  static constexpr std::string_view kFalse[] = {"n", "N", "no", "No", "NO", "false",
                                                "False", "FALSE", "off", "Off", "OFF"};
  for (std::string_view w : kTrue) if (s == w) return true;
  for (std::string_view w : kFalse) if (s == w) return false;
  return std::nullopt;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// strconv.ParseInt(s, 0, 64) / ParseUint fallback, as decimal text.
std::optional<std::string> parse_go_int(std::string_view s) {
  bool neg = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    neg = s[i] == '-';
    ++i;
  }
  int base = 10;
  if (s.size() - i >= 2 && s[i] == '0') {
    char p = s[i + 1];
    if (p == 'x' || p == 'X') { base = 16; i += 2; }
    else if (p == 'o' || p == 'O') { base = 8; i += 2; }
    else if (p == 'b' || p == 'B') { base = 2; i += 2; }
    else { base = 8; i += 1; }
  }
  if (i >= s.size()) return std::nullopt;
  unsigned __int128 v = 0;
  for (; i < s.size(); ++i) {
    int d = digit_value(s[i]);
    if (d >= base) return std::nullopt;
    v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    if (v > static_cast<unsigned __int128>(UINT64_MAX)) return std::nullopt;
  }
  if (neg) {
    if (v > static_cast<unsigned __int128>(INT64_MAX) + 1) return std::nullopt;
    if (v == 0) return std::string("0");
    return "-" + std::to_string(static_cast<uint64_t>(v));
  }
  return std::to_string(static_cast<uint64_t>(v));
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool yaml_style_float(std::string_view s) {
  size_t i = 0;
  auto digits = [&]() {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Go encoding/json's float64 format.
std::string go_json_float(double f) {
  char buf[64];
  double a = std::fabs(f);
  bool exp = a != 0 && (a < 1e-6 || a >= 1e21);
  auto r = exp ? std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific)
               : std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::fixed);
  std::string out(buf, r.ptr);
  if (exp) {
    size_t n = out.size();
    if (n >= 4 && out[n - 4] == 'e' && out[n - 3] == '-' && out[n - 2] == '0') {
      out.erase(n - 2, 1);
    }
  }
  return out;
}

// Resolves a plain (unquoted, untagged) scalar like go-yaml v2 into interface{}.
// Error for values JSON cannot hold (.inf, .nan).
Result<JsonValue> resolve_plain(const std::string& s) {
  if (is_null_word(s)) return JsonValue::null();
  if (auto b = bool_word(s)) return JsonValue::from_bool(*b);
  char c = s[0];
  if (c == '.' || c == '+' || c == '-' || (c >= '0' && c <= '9')) {
    static constexpr std::string_view kSpecial[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf",
                                                    "+.INF", "-.inf", "-.Inf", "-.INF",
                                                    ".nan", ".NaN", ".NAN"};
    for (std::string_view w : kSpecial) {
      if (s == w) return Status(Code::kBadRequest, std::string(kYamlPrefix) + "unsupported value " + s);
    }
    if (c == '.') {
      if (yaml_style_float(s)) return JsonValue::number(go_json_float(std::strtod(s.c_str(), nullptr)));
      return JsonValue::string(s);
    }
    std::string plain;
    for (char ch : s) if (ch != '_') plain.push_back(ch);
    if (auto i = parse_go_int(plain)) return JsonValue::number(*i);
    if (yaml_style_float(plain)) {
      double d = std::strtod(plain.c_str(), nullptr);
      if (std::isinf(d)) return Status(Code::kBadRequest, std::string(kYamlPrefix) + "unsupported value " + s);
      return JsonValue::number(go_json_float(d));
    }
  }
  return JsonValue::string(s);
}

// ---------------------------------------------------------------- reader

// go-yaml v2's bound on alias expansion (decode.go allowedAliasRatio), which
// sigs.k8s.io/yaml and so kube-apiserver apply: the share of decode operations
// that alias expansion may contribute, 99% for small documents falling to 10%
// for big ones, so that a few hundred bytes of nested anchors cannot expand
// into gigabytes.
double allowed_alias_ratio(uint64_t decode_count) {
  constexpr double kLow = 400000, kHigh = 4000000;
  if (static_cast<double>(decode_count) <= kLow) return 0.99;
  if (static_cast<double>(decode_count) >= kHigh) return 0.10;
  return 0.99 - 0.89 * ((static_cast<double>(decode_count) - kLow) / (kHigh - kLow));
}

class Builder : public YAML::EventHandler {
 public:
  struct Frame {
    JsonValue value;
    YAML::anchor_t anchor = 0;
    bool has_key = false;
    std::string key;
    int key_line = 0;
    uint64_t cost = 1;  // go-yaml decode operations for this node so far (itself, its keys and values)
  };

  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  // Where the document began (its first token).
  const YAML::Mark& start() const { return start_; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    count(1, 0);
    JsonValue v = JsonValue::null();
    v.line = mark.line + 1;
    put(std::move(v), anchor, 1);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      count(1, 0);
      put(JsonValue::null(), 0, 1);
      return;
    }
    // Counted before the copy is made: the copy is what an alias bomb multiplies.
    uint64_t cost = it->second.cost;
    count(1 + cost, cost);
    put(error_.empty() ? it->second.value : JsonValue::null(), 0, 1 + cost);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    count(1, 0);
    JsonValue v;
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      v = JsonValue::string(value);
    } else {
      Result<JsonValue> r = resolve_plain(value);
      if (!r.has_value()) {
        fail(mark, r.error().message());
        v = JsonValue::null();
      } else {
        v = std::move(r).value();
        if (v.type == JsonValue::Type::kBool || v.type == JsonValue::Type::kNumber) v.plain = value;
      }
    }
    v.line = mark.line + 1;
    put(std::move(v), anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_container(JsonValue::array(), mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_container(JsonValue::object(), mark, anchor);
  }
  void OnMapEnd() override { close(); }

  // A sequence or mapping starts: its value is built on the stack until its end.
  void open_container(JsonValue value, const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(1, 0);
    Frame f;
    f.value = std::move(value);
    f.value.line = mark.line + 1;
    f.anchor = anchor;
    stack_.push_back(std::move(f));
  }

  bool has_root() const { return has_root_; }
  JsonValue take_root() { return std::move(root_); }
  const std::string& error() const { return error_; }

 private:
  struct Anchored {
    JsonValue value;
    uint64_t cost = 0;
  };

  void fail(const YAML::Mark& mark, const std::string& msg) {
    if (error_.empty()) error_ = msg;
    (void)mark;
  }
  // go-yaml's running count of decode operations (one per node, aliased nodes
  // once per expansion) and of those that alias expansion made; the ratio
  // check runs after each node as go-yaml's does (within one expansion both
  // counts grow together, so checking at its end finds what go-yaml finds).
  void count(uint64_t decodes, uint64_t aliased) {
    decode_count_ += decodes;
    alias_count_ += aliased;
    if (alias_count_ > 100 && decode_count_ > 1000 &&
        static_cast<double>(alias_count_) / static_cast<double>(decode_count_) >
            allowed_alias_ratio(decode_count_) &&
        error_.empty()) {
      error_ = std::string(kYamlPrefix) + "document contains excessive aliasing";
    }
  }
  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    put(std::move(f.value), f.anchor, f.cost);
  }
  // Map keys become JSON member names as sigs.k8s.io/yaml converts them.
  void put(JsonValue v, YAML::anchor_t anchor, uint64_t cost) {
    if (anchor != 0) anchors_[anchor] = Anchored{error_.empty() ? v : JsonValue::null(), cost};
    if (stack_.empty()) {
      root_ = std::move(v);
      has_root_ = true;
      return;
    }
    Frame& top = stack_.back();
    top.cost += cost;
    if (top.value.is_array()) {
      top.value.items.push_back(std::move(v));
      return;
    }
    if (!top.has_key) {
      switch (v.type) {
        case JsonValue::Type::kString: top.key = v.text; break;
        case JsonValue::Type::kNumber: top.key = v.text; break;
        case JsonValue::Type::kBool: top.key = v.boolean ? "true" : "false"; break;
        default:
          if (error_.empty()) {
            error_ = std::string(kYamlPrefix) + "line " + std::to_string(v.line) +
                     ": unsupported map key of type " + std::string(type_name(v.type));
          }
          top.key = "";
      }
      top.key_line = v.line;
      top.has_key = true;
      return;
    }
    if (top.value.find(top.key) != nullptr && error_.empty()) {
      error_ = std::string(kYamlPrefix) + "unmarshal errors:\n  line " +
               std::to_string(top.key_line) + ": key \"" + top.key + "\" already set in map";
    }
    top.value.add(std::move(top.key), std::move(v));
    top.has_key = false;
  }

  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  YAML::Mark start_ = YAML::Mark::null_mark();
  JsonValue root_;
  bool has_root_ = false;
  std::string error_;
  uint64_t decode_count_ = 1;  // go-yaml counts the document node too
  uint64_t alias_count_ = 0;
};

// ---------------------------------------------------------------- writer

bool is_letter(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}
bool is_dig(unsigned char c) { return c >= '0' && c <= '9'; }

// go-yaml v2's keyList.Less for string keys (numbers compared by value).
bool yaml_key_less(const std::string& a, const std::string& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    bool al = is_letter(x), bl = is_letter(y);
    if (al && bl) return x < y;
    if (al || bl) return bl;
    int64_t an = 0, bn = 0;
    if (x == '0' || y == '0') {
      for (size_t j = i; j-- > 0 && is_dig(static_cast<unsigned char>(a[j]));) {
        if (a[j] != '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    size_t ai = i, bi = i;
    for (; ai < a.size() && is_dig(static_cast<unsigned char>(a[ai])); ++ai) an = an * 10 + (a[ai] - '0');
    for (; bi < b.size() && is_dig(static_cast<unsigned char>(b[bi])); ++bi) bn = bn * 10 + (b[bi] - '0');
    if (an != bn) return an < bn;
    if (ai != bi) return ai < bi;
    return x < y;
  }
  return a.size() < b.size();
}

bool looks_like_timestamp(std::string_view s) {
  // go-yaml resolves YYYY-M-D[(T|t| )...] plain scalars as timestamps.
  size_t i = 0;
  auto digits = [&](size_t min, size_t max) {
    size_t start = i;
    while (i < s.size() && is_dig(static_cast<unsigned char>(s[i])) && i - start < max) ++i;
    return i - start >= min;
  };
  if (!digits(4, 4) || i >= s.size() || s[i++] != '-') return false;
  if (!digits(1, 2) || i >= s.size() || s[i++] != '-') return false;
  if (!digits(1, 2)) return false;
  return i == s.size() || s[i] == 'T' || s[i] == 't' || s[i] == ' ';
}

enum class Style { kPlain, kSingle, kDouble, kLiteral };

Style scalar_style(const std::string& s) {
  if (s.empty()) return Style::kDouble;
  if (s.find('\n') != std::string::npos) return Style::kLiteral;
  Result<JsonValue> r = resolve_plain(s);
  if (!r.has_value() || r->type != JsonValue::Type::kString || looks_like_timestamp(s)) {
    return Style::kDouble;
  }
  bool special = false;
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) special = true;
  }
  if (special) return Style::kDouble;
  auto single_or_double = [&]() { return Style::kSingle; };
  unsigned char first = static_cast<unsigned char>(s[0]);
  if (s.front() == ' ' || s.back() == ' ' || s.find('\t') != std::string::npos) return single_or_double();
  constexpr std::string_view kAlwaysIndicators = ",[]{}#&*!|>'\"%@`";
  if (kAlwaysIndicators.find(static_cast<char>(first)) != std::string_view::npos) return single_or_double();
  if ((first == '-' || first == '?' || first == ':') && (s.size() == 1 || s[1] == ' ')) return single_or_double();
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.back() == ':') {
    return single_or_double();
  }
  if (s == "---" || s == "...") return single_or_double();
  return Style::kPlain;
}

void write_double_quoted(const std::string& s, std::string& out) {
  out.push_back('"');
  for (unsigned char c : s) {
    bool named = c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r';
    if (named) {
      append_named_escape(out, c);
    } else if (c < 0x20 || c == 0x7f) {
      append_hex_escape(out, c, /*upper=*/true);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

void write_scalar_text(const std::string& s, int indent, std::string& out) {
  switch (scalar_style(s)) {
    case Style::kPlain: out += s; return;
    case Style::kDouble: write_double_quoted(s, out); return;
    case Style::kSingle: {
      out.push_back('\'');
      for (char c : s) {
        if (c == '\'') out.push_back('\'');
        out.push_back(c);
      }
      out.push_back('\'');
      return;
    }
    case Style::kLiteral: {
      // Lines with leading spaces or trailing blanks would not read back
      // plainly in a literal block: fall back to double quotes.
      std::vector<std::string> lines;
      std::string cur;
      for (char c : s) {
        if (c == '\n') {
          lines.push_back(cur);
          cur.clear();
        } else {
          cur.push_back(c);
        }
      }
      bool trailing_newline = s.back() == '\n';
      bool ok = !(s[0] == ' ' || s[0] == '\t') && !(trailing_newline && s.size() >= 2 && s[s.size() - 2] == '\n');
      for (const std::string& l : lines) {
        if (!l.empty() && (l.back() == ' ' || l.back() == '\t')) ok = false;
      }
      if (!cur.empty() && (cur.back() == ' ' || cur.back() == '\t')) ok = false;
      for (unsigned char c : s) {
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) ok = false;
      }
      if (!ok) {
        write_double_quoted(s, out);
        return;
      }
      if (!trailing_newline) lines.push_back(cur);
      out += trailing_newline ? "|" : "|-";
      for (const std::string& l : lines) {
        out.push_back('\n');
        if (!l.empty()) {
          out.append(static_cast<size_t>(indent), ' ');
          out += l;
        }
      }
      return;
    }
  }
}

void write_node_scalar(const JsonValue& v, int indent, std::string& out) {
  switch (v.type) {
    case JsonValue::Type::kNull: out += "null"; break;
    case JsonValue::Type::kBool: out += v.boolean ? "true" : "false"; break;
    case JsonValue::Type::kNumber: out += v.text; break;
    case JsonValue::Type::kString: write_scalar_text(v.text, indent, out); break;
    case JsonValue::Type::kArray: out += "[]"; break;
    case JsonValue::Type::kObject: out += "{}"; break;
  }
}

bool is_block(const JsonValue& v) {
  return (v.is_object() && !v.members.empty()) || (v.is_array() && !v.items.empty());
}

void emit(const JsonValue& v, int indent, bool inline_first, std::string& out);

void emit_map(const JsonValue& v, int indent, bool inline_first, std::string& out) {
  std::vector<const std::pair<std::string, JsonValue>*> sorted;
  for (const auto& m : v.members) sorted.push_back(&m);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto* a, auto* b) { return yaml_key_less(a->first, b->first); });
  bool first = true;
  for (const auto* m : sorted) {
    if (!(first && inline_first)) out.append(static_cast<size_t>(indent), ' ');
    first = false;
    write_scalar_text(m->first, indent + 2, out);
    out.push_back(':');
    const JsonValue& val = m->second;
    if (val.is_object() && !val.members.empty()) {
      out.push_back('\n');
      emit_map(val, indent + 2, false, out);
    } else if (val.is_array() && !val.items.empty()) {
      out.push_back('\n');
      emit(val, indent, false, out);
    } else {
      out.push_back(' ');
      write_node_scalar(val, indent + 2, out);
      out.push_back('\n');
    }
  }
}

void emit_seq(const JsonValue& v, int indent, bool inline_first, std::string& out) {
  bool first = true;
  for (const JsonValue& item : v.items) {
    if (!(first && inline_first)) out.append(static_cast<size_t>(indent), ' ');
    first = false;
    out += "- ";
    if (is_block(item)) {
      emit(item, indent + 2, true, out);
    } else {
      write_node_scalar(item, indent + 2, out);
      out.push_back('\n');
    }
  }
}

void emit(const JsonValue& v, int indent, bool inline_first, std::string& out) {
  if (v.is_object() && !v.members.empty()) {
    emit_map(v, indent, inline_first, out);
  } else if (v.is_array() && !v.items.empty()) {
    emit_seq(v, indent, inline_first, out);
  } else {
    write_node_scalar(v, indent, out);
    out.push_back('\n');
  }
}

}  // namespace

namespace {
// go-yaml's reader refuses invalid UTF-8 before parsing (readerc.go).
std::optional<std::string> utf8_problem(std::string_view text) {
  if (valid_utf8(text)) return std::nullopt;
  // The first byte that does not start a valid sequence. (Comparing with the
  // coerced text instead misplaces it, or runs past the end, when the bad bytes
  // begin like the U+FFFD that replaces them.)
  size_t i = 0;
  while (i < text.size()) {
    size_t n = draplane::utf8_sequence_length(text, i);
    if (n == 0) break;
    i += n;
  }
  if (i >= text.size()) return "invalid UTF-8";  // unreachable: text is not valid
  unsigned char c = static_cast<unsigned char>(text[i]);
  if ((c >= 0x80 && c <= 0xBF) || c >= 0xF8) return "invalid leading UTF-8 octet";
  size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  if (i + want > text.size()) return "incomplete UTF-8 octet sequence";
  return "invalid trailing UTF-8 octet";
}
}  // namespace

std::vector<YamlDocument> parse_yaml_stream(std::string_view text) {
  std::vector<YamlDocument> docs;
  if (std::optional<std::string> bad = utf8_problem(text)) {
    docs.push_back({JsonValue(), Status(Code::kBadRequest, std::string(kYamlPrefix) + *bad)});
    return docs;
  }
  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    int last_start = -1;
    while (true) {
      Builder builder;
      if (!parser.HandleNextDocument(builder)) break;
      // yaml-cpp 0.7 reads a `,` outside a flow collection (`[a], b`, `- a\n,`)
      // as an empty document without consuming it, and so again for ever: a
      // document that starts where the previous one did made no progress.
      if (builder.start().pos >= 0 && builder.start().pos <= last_start) {
        docs.push_back({JsonValue(), Status(Code::kBadRequest, std::string(kYamlPrefix) + "line " +
                                                                   std::to_string(builder.start().line + 1) +
                                                                   ": did not find expected <document start>")});
        break;
      }
      last_start = builder.start().pos;
      if (!builder.error().empty()) {
        docs.push_back({JsonValue(), Status(Code::kBadRequest, builder.error())});
        continue;
      }
      if (!builder.has_root()) continue;
      JsonValue root = builder.take_root();
      if (root.is_null()) continue;  // empty document
      docs.push_back({std::move(root), Status()});
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp stops at its compile-time depth (go-yaml at 10000, with this wording).
    docs.push_back({JsonValue(), Status(Code::kBadRequest, std::string(kYamlPrefix) + "line " +
                                                               std::to_string(e.mark.line + 1) +
                                                               ": exceeded max depth of " +
                                                               std::to_string(e.depth() - 1))});
  } catch (const YAML::Exception& e) {
    docs.push_back({JsonValue(), Status(Code::kBadRequest, std::string(kYamlPrefix) + "line " +
                                                               std::to_string(e.mark.line + 1) +
                                                               ": " + e.msg)});
  }
  return docs;
}

std::string to_yaml_text(const JsonValue& value) {
  std::string out;
  emit(value, 0, false, out);
  return out;
}

}  // namespace draplane::api::internal
