// Go net/url parsing and printing (the subset the Kubernetes URL library uses).
#include "cel/url.h"

#include <memory>

#include "cel/functions.h"
#include "cel/net.h"
#include "cel/value.h"

namespace draplane::cel {

Value Value::url(Url u) { return boxed<Url>(ValueKind::kURL, std::move(u)); }

namespace url {

namespace {

enum class Mode { kPath, kPathSegment, kHost, kZone, kUserPassword, kQueryComponent, kFragment };

bool ishex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

bool should_escape(unsigned char c, Mode mode) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
  if (mode == Mode::kHost || mode == Mode::kZone) {
    switch (c) {
      case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';':
      case '=': case ':': case '[': case ']': case '<': case '>': case '"': return false;
      default: break;
    }
  }
  switch (c) {
    case '-': case '_': case '.': case '~': return false;
    case '$': case '&': case '+': case ',': case '/': case ':': case ';': case '=': case '?': case '@':
      switch (mode) {
        case Mode::kPath: return c == '?';
        case Mode::kPathSegment: return c == '/' || c == ';' || c == ',' || c == '?';
        case Mode::kUserPassword: return c == '@' || c == '/' || c == '?' || c == ':';
        case Mode::kQueryComponent: return true;
        case Mode::kFragment: return false;
        default: break;
      }
      break;
    default: break;
  }
  if (mode == Mode::kFragment && (c == '!' || c == '(' || c == ')' || c == '*')) return false;
  return true;
}

std::string quote(std::string_view s) { return lib::quote_string(s); }

bool unescape(std::string_view s, Mode mode, std::string& out, std::string& err) {
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || !ishex(s[i + 1]) || !ishex(s[i + 2])) {
        err = "invalid URL escape " + quote(s.substr(i, 3));
        return false;
      }
      int v = unhex(s[i + 1]) << 4 | unhex(s[i + 2]);
      if (mode == Mode::kHost && unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25") {
        err = "invalid URL escape " + quote(s.substr(i, 3));
        return false;
      }
      if (mode == Mode::kZone && s.substr(i, 3) != "%25" && v != ' ' &&
          should_escape(static_cast<unsigned char>(v), Mode::kHost)) {
        err = "invalid URL escape " + quote(s.substr(i, 3));
        return false;
      }
      i += 3;
    } else {
      if ((mode == Mode::kHost || mode == Mode::kZone) && static_cast<unsigned char>(c) < 0x80 &&
          should_escape(static_cast<unsigned char>(c), mode)) {
        err = "invalid character " + quote(s.substr(i, 1)) + " in host name";
        return false;
      }
      ++i;
    }
  }
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      out.push_back(static_cast<char>(unhex(s[i + 1]) << 4 | unhex(s[i + 2])));
      i += 2;
    } else if (c == '+' && mode == Mode::kQueryComponent) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

std::string escape(std::string_view s, Mode mode) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (c == ' ' && mode == Mode::kQueryComponent) {
      out.push_back('+');
    } else if (should_escape(c, mode)) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

bool valid_encoded(std::string_view s, Mode mode) {
  for (unsigned char c : s) {
    switch (c) {
      case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';':
      case '=': case ':': case '@': case '[': case ']': case '%': continue;
      default:
        if (should_escape(c, mode)) return false;
    }
  }
  return true;
}

bool valid_optional_port(std::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  for (char c : port.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool parse_host(std::string_view host, std::string& out, std::string& err) {
  if (!host.empty() && host[0] == '[') {
    size_t close = host.rfind(']');
    if (close == std::string_view::npos) {
      err = "missing ']' in host";
      return false;
    }
    std::string_view colon_port = host.substr(close + 1);
    if (!valid_optional_port(colon_port)) {
      err = "invalid port " + quote(colon_port) + " after host";
      return false;
    }
    size_t zone = host.substr(0, close).find("%25");
    if (zone != std::string_view::npos) {
      std::string h1, h2, h3;
      if (!unescape(host.substr(0, zone), Mode::kHost, h1, err) ||
          !unescape(host.substr(zone, close - zone), Mode::kZone, h2, err) ||
          !unescape(host.substr(close), Mode::kHost, h3, err)) {
        return false;
      }
      out = h1 + h2 + h3;
      return true;
    }
    // Go 1.24.8+: a bracketed host must be an IPv6 address.
    std::string inner;
    if (!unescape(host.substr(1, close - 1), Mode::kHost, inner, err)) return false;
    IpAddr addr;
    bool zoned;
    if (!net::parse_addr(inner, addr, zoned, err)) {
      err = "invalid host: " + err;
      return false;
    }
    if (addr.v4) {
      err = "invalid IP-literal";
      return false;
    }
  } else {
    size_t colon = host.rfind(':');
    if (colon != std::string_view::npos && !valid_optional_port(host.substr(colon))) {
      err = "invalid port " + quote(host.substr(colon)) + " after host";
      return false;
    }
  }
  return unescape(host, Mode::kHost, out, err);
}

bool valid_userinfo(std::string_view s) {
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) continue;
    if (std::string_view("-._:~!$&'()*+,;=%@").find(static_cast<char>(c)) != std::string_view::npos) continue;
    return false;
  }
  return true;
}

bool set_path(Url& u, std::string_view p, std::string& err) {
  if (!unescape(p, Mode::kPath, u.path, err)) return false;
  u.raw_path = escape(u.path, Mode::kPath) == p ? "" : std::string(p);
  return true;
}

// Go's getScheme: false only for a leading ':'.
bool get_scheme(std::string_view raw, std::string& scheme, std::string_view& rest, std::string& err) {
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) {
        err = "missing protocol scheme";
        return false;
      }
      scheme = std::string(raw.substr(0, i));
      rest = raw.substr(i + 1);
      return true;
    }
    break;
  }
  scheme.clear();
  rest = raw;
  return true;
}

bool parse_inner(std::string_view raw, bool via_request, Url& u, std::string& err) {
  for (unsigned char c : raw) {
    if (c < 0x20 || c == 0x7f) {
      err = "net/url: invalid control character in URL";
      return false;
    }
  }
  if (raw.empty() && via_request) {
    err = "empty url";
    return false;
  }
  u = Url{};
  if (raw == "*") {
    u.path = "*";
    return true;
  }
  std::string_view rest;
  if (!get_scheme(raw, u.scheme, rest, err)) return false;
  for (char& c : u.scheme) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  size_t q = rest.find('?');
  if (!rest.empty() && rest.back() == '?' && q == rest.size() - 1) {
    u.force_query = true;
    rest.remove_suffix(1);
  } else if (q != std::string_view::npos) {
    u.raw_query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  if (rest.empty() || rest[0] != '/') {
    if (!u.scheme.empty()) {
      u.opaque = std::string(rest);
      return true;
    }
    if (via_request) {
      err = "invalid URI for request";
      return false;
    }
    std::string_view segment = rest.substr(0, rest.find('/'));
    if (segment.find(':') != std::string_view::npos) {
      err = "first path segment in URL cannot contain colon";
      return false;
    }
  }
  bool authority = rest.size() >= 2 && rest[0] == '/' && rest[1] == '/';
  if ((!u.scheme.empty() || (!via_request && !(rest.size() >= 3 && rest.substr(0, 3) == "///"))) && authority) {
    std::string_view auth = rest.substr(2);
    rest = {};
    size_t slash = auth.find('/');
    if (slash != std::string_view::npos) {
      rest = auth.substr(slash);
      auth = auth.substr(0, slash);
    }
    size_t at = auth.rfind('@');
    std::string_view hostpart = at == std::string_view::npos ? auth : auth.substr(at + 1);
    if (!parse_host(hostpart, u.host, err)) return false;
    if (at != std::string_view::npos) {
      std::string_view userinfo = auth.substr(0, at);
      if (!valid_userinfo(userinfo)) {
        err = "net/url: invalid userinfo";
        return false;
      }
      u.has_user = true;
      size_t colon = userinfo.find(':');
      if (!unescape(userinfo.substr(0, colon), Mode::kUserPassword, u.username, err)) return false;
      if (colon != std::string_view::npos) {
        u.has_password = true;
        if (!unescape(userinfo.substr(colon + 1), Mode::kUserPassword, u.password, err)) return false;
      }
    }
  } else if (!u.scheme.empty() && !rest.empty() && rest[0] == '/') {
    u.omit_host = true;
  }
  return set_path(u, rest, err);
}

}  // namespace

bool parse(std::string_view s, Url& out, std::string& err) {
  size_t hash = s.find('#');
  std::string_view u = s.substr(0, hash);
  std::string why;
  if (!parse_inner(u, false, out, why)) {
    err = "parse " + quote(u) + ": " + why;
    return false;
  }
  if (hash == std::string_view::npos) return true;
  std::string_view frag = s.substr(hash + 1);
  if (frag.empty()) return true;
  if (!unescape(frag, Mode::kFragment, out.fragment, why)) {
    err = "parse " + quote(s) + ": " + why;
    return false;
  }
  out.raw_fragment = escape(out.fragment, Mode::kFragment) == frag ? "" : std::string(frag);
  return true;
}

bool parse_request_uri(std::string_view s, Url& out, std::string& err) {
  std::string why;
  if (!parse_inner(s, true, out, why)) {
    err = "parse " + quote(s) + ": " + why;
    return false;
  }
  return true;
}

std::string escaped_path(const Url& u) {
  if (!u.raw_path.empty() && valid_encoded(u.raw_path, Mode::kPath)) {
    std::string p, err;
    if (unescape(u.raw_path, Mode::kPath, p, err) && p == u.path) return u.raw_path;
  }
  if (u.path == "*") return "*";
  return escape(u.path, Mode::kPath);
}

namespace {

void split_host_port(const std::string& hp, std::string& host, std::string& port) {
  host = hp;
  port.clear();
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && valid_optional_port(std::string_view(host).substr(colon))) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
}

std::string escaped_fragment(const Url& u) {
  if (!u.raw_fragment.empty() && valid_encoded(u.raw_fragment, Mode::kFragment)) {
    std::string f, err;
    if (unescape(u.raw_fragment, Mode::kFragment, f, err) && f == u.fragment) return u.raw_fragment;
  }
  return escape(u.fragment, Mode::kFragment);
}

}  // namespace

std::string hostname(const Url& u) {
  std::string h, p;
  split_host_port(u.host, h, p);
  return h;
}

std::string port(const Url& u) {
  std::string h, p;
  split_host_port(u.host, h, p);
  return p;
}

std::vector<std::pair<std::string, std::vector<std::string>>> query(const Url& u) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::string_view q = u.raw_query;
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (pair.find(';') != std::string_view::npos || pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value, err;
    if (!unescape(pair.substr(0, eq), Mode::kQueryComponent, key, err)) continue;
    if (eq != std::string_view::npos && !unescape(pair.substr(eq + 1), Mode::kQueryComponent, value, err)) continue;
    auto it = out.begin();
    while (it != out.end() && it->first != key) ++it;
    if (it == out.end()) {
      out.emplace_back(std::move(key), std::vector<std::string>{});
      it = out.end() - 1;
    }
    it->second.push_back(std::move(value));
  }
  return out;
}

std::string to_string(const Url& u) {
  std::string buf;
  if (!u.scheme.empty()) buf += u.scheme + ":";
  if (!u.opaque.empty()) {
    buf += u.opaque;
  } else {
    if (!u.scheme.empty() || !u.host.empty() || u.has_user) {
      if (!(u.omit_host && u.host.empty() && !u.has_user)) {
        if (!u.host.empty() || !u.path.empty() || u.has_user) buf += "//";
        if (u.has_user) {
          buf += escape(u.username, Mode::kUserPassword);
          if (u.has_password) buf += ":" + escape(u.password, Mode::kUserPassword);
          buf += "@";
        }
        if (!u.host.empty()) buf += escape(u.host, Mode::kHost);
      }
    }
    std::string path = escaped_path(u);
    if (!path.empty() && path[0] != '/' && !u.host.empty()) buf += "/";
    if (buf.empty()) {
      std::string_view segment = std::string_view(path).substr(0, path.find('/'));
      if (segment.find(':') != std::string_view::npos) buf += "./";
    }
    buf += path;
  }
  if (u.force_query || !u.raw_query.empty()) buf += "?" + u.raw_query;
  if (!u.fragment.empty()) buf += "#" + escaped_fragment(u);
  return buf;
}

}  // namespace url
}  // namespace draplane::cel
