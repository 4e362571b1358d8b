#include "server/query_params.h"

#include <limits>

#include "api/field_error.h"

namespace draplane::server {
namespace {

Status num_error(const char* func, std::string_view s, const char* why) {
  return Status(Code::kBadRequest,
                std::string("strconv.") + func + ": parsing " + api::go_quote(s) + ": " + why);
}

// Go's json.Marshal of a string (HTML-safe escaping included), for values
// that field errors render as JSON.
std::string go_json_string(std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else if (c == 0xe2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xa8 || static_cast<unsigned char>(s[i + 2]) == 0xa9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xa8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

std::optional<std::string> query_value(const Request& req, std::string_view name) {
  auto it = req.query.find(std::string(name));
  if (it == req.query.end()) return std::nullopt;
  return it->second;
}

std::string query_string(const Request& req, std::string_view name) {
  return query_value(req, name).value_or("");
}

std::optional<bool> query_option_bool(const Request& req, std::string_view name) {
  auto v = query_value(req, name);
  if (!v) return std::nullopt;
  if (*v == "0") return false;
  if (v->size() == 5) {
    std::string lower = *v;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "false") return false;
  }
  return true;
}

bool query_flag(const Request& req, std::string_view name) { return query_option_bool(req, name).value_or(false); }

// strconv.ParseUint: digits only; the first overflow ends the scan with a range
// error, the first non-digit with a syntax error.
Result<uint64_t> go_parse_uint64(std::string_view s) {
  if (s.empty()) return num_error("ParseUint", s, "invalid syntax");
  uint64_t n = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (char c : s) {
    if (c < '0' || c > '9') return num_error("ParseUint", s, "invalid syntax");
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (n > kMax / 10 || n * 10 > kMax - d) return num_error("ParseUint", s, "value out of range");
    n = n * 10 + d;
  }
  return n;
}

Result<int64_t> go_parse_int64(std::string_view s) {
  if (s.empty()) return num_error("ParseInt", s, "invalid syntax");
  std::string_view digits = s;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    digits = s.substr(1);
  }
  auto u = go_parse_uint64(digits);
  if (!u.has_value()) {
    bool range = u.error().message().ends_with("value out of range");
    return num_error("ParseInt", s, range ? "value out of range" : "invalid syntax");
  }
  constexpr uint64_t kCutoff = uint64_t{1} << 63;
  if (!neg && *u >= kCutoff) return num_error("ParseInt", s, "value out of range");
  if (neg && *u > kCutoff) return num_error("ParseInt", s, "value out of range");
  if (neg) return *u == kCutoff ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(*u);
  return static_cast<int64_t>(*u);
}

std::optional<bool> go_parse_bool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") return false;
  return std::nullopt;
}

Result<std::optional<int64_t>> query_int64(const Request& req, std::string_view name) {
  auto v = query_value(req, name);
  if (!v) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(int64_t n, go_parse_int64(*v));
  return std::optional<int64_t>(n);
}

std::optional<ApiError> check_dry_run(const std::vector<std::string>& values, std::string_view options_kind) {
  bool ok = true;
  for (const auto& v : values) ok = ok && v == "All";
  if (ok) return std::nullopt;
  std::string rendered = "[";
  for (size_t i = 0; i < values.size(); ++i) rendered += (i ? "," : "") + go_json_string(values[i]);
  rendered += "]";
  return invalid(options_info(std::string(options_kind)), "",
                 {api::field_not_supported(api::FieldPath("dryRun"), api::BadValue::raw(rendered), {"All"})});
}

std::vector<std::string> query_dry_run(const Request& req) {
  auto v = query_value(req, "dryRun");
  if (!v) return {};
  return {*v};
}

bool is_dry_run(const Request& req) { return query_string(req, "dryRun") == "All"; }

std::optional<ApiError> check_table_options(const Request& req) {
  std::string v = query_string(req, "includeObject");
  if (v.empty() || v == "None" || v == "Metadata" || v == "Object") return std::nullopt;
  return invalid(options_info("TableOptions"), "",
                 {api::field_invalid(api::FieldPath("includeObject"), v, "must be 'Metadata', 'Object', 'None', or empty")});
}

}  // namespace draplane::server
