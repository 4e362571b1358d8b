#include "server/query_string.h"

namespace draplane::server {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool url_decode(std::string_view s, std::string& out) {
  out.clear();
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
      int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) return false;  // Go: invalid URL escape
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return true;
}

void split_target(std::string_view target, std::string& path, std::map<std::string, std::string>& query) {
  size_t q = target.find('?');
  path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return;
  std::string_view qs = target.substr(q + 1);
  while (!qs.empty()) {
    size_t amp = qs.find('&');
    std::string_view kv = qs.substr(0, amp);
    qs = amp == std::string_view::npos ? std::string_view() : qs.substr(amp + 1);
    size_t eq = kv.find('=');
    std::string k, v;
    if (!url_decode(kv.substr(0, eq), k)) continue;
    if (eq != std::string_view::npos && !url_decode(kv.substr(eq + 1), v)) continue;
    // The first value counts, as the options conversions take values[0].
    if (!k.empty()) query.emplace(std::move(k), std::move(v));
  }
}

}  // namespace draplane::server
