// Go net/netip address and prefix parsing, printing and predicates.
#include "cel/net.h"

#include <cstdio>
#include <memory>

#include "cel/functions.h"
#include "cel/value.h"

namespace draplane::cel {

Value Value::ip(const IpAddr& a) { return boxed<IpAddr>(ValueKind::kIP, a); }

Value Value::cidr(const IpPrefix& pfx) { return boxed<IpPrefix>(ValueKind::kCIDR, pfx); }

namespace net {

namespace {

std::string q(std::string_view s) { return lib::quote_string(s); }

// netip's parseAddrError text.
bool addr_error(std::string_view in, std::string_view msg, std::string_view at, std::string& err) {
  err = "ParseAddr(" + q(in) + "): " + std::string(msg);
  if (!at.empty()) err += " (at " + q(at) + ")";
  return false;
}

// Dotted-quad fields of in[off, end) into out[0..3].
bool parse_v4_fields(std::string_view in, size_t off, size_t end, uint8_t* out, std::string& err) {
  std::string_view s = in.substr(off, end - off);
  int val = 0, pos = 0, digits = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (digits == 1 && val == 0) return addr_error(in, "IPv4 field has octet with leading zero", "", err);
      val = val * 10 + (c - '0');
      ++digits;
      if (val > 255) return addr_error(in, "IPv4 field has value >255", "", err);
    } else if (c == '.') {
      if (i == 0 || i == s.size() - 1 || s[i - 1] == '.') {
        return addr_error(in, "IPv4 field must have at least one digit", s.substr(i), err);
      }
      if (pos == 3) return addr_error(in, "IPv4 address too long", "", err);
      out[pos++] = static_cast<uint8_t>(val);
      val = 0;
      digits = 0;
    } else {
      return addr_error(in, "unexpected character", s.substr(i), err);
    }
  }
  if (pos < 3) return addr_error(in, "IPv4 address too short", "", err);
  out[3] = static_cast<uint8_t>(val);
  return true;
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_v6(std::string_view in, IpAddr& out, bool& zoned, std::string& err) {
  std::string_view s = in;
  zoned = false;
  size_t pct = s.find('%');
  std::string_view zone;
  if (pct != std::string_view::npos) {
    zone = s.substr(pct + 1);
    s = s.substr(0, pct);
    if (zone.empty()) return addr_error(in, "zone must be a non-empty string", "", err);
    zoned = true;
  }
  std::array<uint8_t, 16> ip{};
  int ellipsis = -1;
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    s.remove_prefix(2);
    if (s.empty()) {
      out = IpAddr{};
      return true;
    }
  }
  int i = 0;
  while (i < 16) {
    size_t off = 0;
    uint32_t acc = 0;
    for (; off < s.size(); ++off) {
      int h = hexval(s[off]);
      if (h < 0) break;
      acc = (acc << 4) + static_cast<uint32_t>(h);
      if (off > 3) return addr_error(in, "each colon-separated field must have at most 4 hex digits", s, err);
    }
    if (off == 0) return addr_error(in, "each colon-separated field must have at least one digit", s, err);
    if (off < s.size() && s[off] == '.') {
      if (ellipsis < 0 && i != 12) {
        return addr_error(in, "embedded IPv4 address must replace the final 2 fields of the address", s, err);
      }
      if (i + 4 > 16) {
        return addr_error(in, "too many hex fields to fit an embedded IPv4 at the end of the address", s, err);
      }
      size_t end = in.size() - (zoned ? zone.size() + 1 : 0);
      if (!parse_v4_fields(in, end - s.size(), end, &ip[static_cast<size_t>(i)], err)) return false;
      s = {};
      i += 4;
      break;
    }
    ip[static_cast<size_t>(i)] = static_cast<uint8_t>(acc >> 8);
    ip[static_cast<size_t>(i) + 1] = static_cast<uint8_t>(acc);
    i += 2;
    s.remove_prefix(off);
    if (s.empty()) break;
    if (s[0] != ':') return addr_error(in, "unexpected character, want colon", s, err);
    if (s.size() == 1) return addr_error(in, "colon must be followed by more characters", s, err);
    s.remove_prefix(1);
    if (s[0] == ':') {
      if (ellipsis >= 0) return addr_error(in, "multiple :: in address", s, err);
      ellipsis = i;
      s.remove_prefix(1);
      if (s.empty()) break;
    }
  }
  if (!s.empty()) return addr_error(in, "trailing garbage after address", s, err);
  if (i < 16) {
    if (ellipsis < 0) return addr_error(in, "address string too short", "", err);
    int n = 16 - i;
    for (int j = i - 1; j >= ellipsis; --j) ip[static_cast<size_t>(j + n)] = ip[static_cast<size_t>(j)];
    for (int j = ellipsis; j < ellipsis + n; ++j) ip[static_cast<size_t>(j)] = 0;
  } else if (ellipsis >= 0) {
    return addr_error(in, "the :: must expand to at least one field of zeros", "", err);
  }
  out.bytes = ip;
  out.v4 = false;
  return true;
}

}  // namespace

bool parse_addr(std::string_view s, IpAddr& out, bool& zoned, std::string& err) {
  zoned = false;
  for (char c : s) {
    if (c == '.') {
      out = IpAddr{};
      out.v4 = true;
      return parse_v4_fields(s, 0, s.size(), out.bytes.data(), err);
    }
    if (c == ':') return parse_v6(s, out, zoned, err);
    if (c == '%') return addr_error(s, "missing IPv6 address", "", err);
  }
  return addr_error(s, "unable to parse IP", "", err);
}

namespace {

bool is_4in6(const IpAddr& a) {
  if (a.v4) return false;
  for (int k = 0; k < 10; ++k) {
    if (a.bytes[static_cast<size_t>(k)] != 0) return false;
  }
  return a.bytes[10] == 0xff && a.bytes[11] == 0xff;
}

uint16_t v6u16(const IpAddr& a, int k) {
  return static_cast<uint16_t>(a.bytes[static_cast<size_t>(2 * k)] << 8 | a.bytes[static_cast<size_t>(2 * k + 1)]);
}

bool is_multicast(const IpAddr& a) { return a.v4 ? (a.bytes[0] & 0xf0) == 0xe0 : a.bytes[0] == 0xff; }

}  // namespace

bool parse_ip(std::string_view s, IpAddr& out, std::string& err) {
  bool zoned;
  std::string why;
  if (!parse_addr(s, out, zoned, why)) {
    err = "IP Address " + q(s) + " parse error during conversion from string: " + why;
    return false;
  }
  if (zoned) {
    err = "IP address " + q(s) + " with zone value is not allowed";
    return false;
  }
  if (is_4in6(out)) {
    err = "IPv4-mapped IPv6 address " + q(s) + " is not allowed";
    return false;
  }
  return true;
}

bool parse_cidr(std::string_view s, IpPrefix& out, std::string& err) {
  const std::string outer = "network address parse error during conversion from string: ";
  auto fail = [&](const std::string& msg) {
    // cidr() wraps parseCIDR's already-wrapped error once more (upstream text).
    err = outer + outer + "netip.ParsePrefix(" + q(s) + "): " + msg;
    return false;
  };
  size_t slash = s.rfind('/');
  if (slash == std::string_view::npos) return fail("no '/'");
  bool zoned;
  std::string why;
  if (!parse_addr(s.substr(0, slash), out.addr, zoned, why)) return fail(why);
  if (zoned) return fail("IPv6 zones cannot be present in a prefix");
  std::string_view bits = s.substr(slash + 1);
  auto bad_bits = [&] { return fail("bad bits after slash: " + q(bits)); };
  if (bits.empty() || (bits.size() > 1 && (bits[0] < '1' || bits[0] > '9'))) return bad_bits();
  int n = 0;
  for (char c : bits) {
    if (c < '0' || c > '9') return bad_bits();
    n = n * 10 + (c - '0');
    if (n > 1000) break;
  }
  if (n > out.addr.bit_len()) return fail("prefix length out of range");
  out.bits = n;
  if (is_4in6(out.addr)) {
    err = outer + "IPv4-mapped IPv6 address " + q(s) + " is not allowed";
    return false;
  }
  return true;
}

std::string to_string(const IpAddr& a) {
  char buf[64];
  if (a.v4) {
    std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a.bytes[0], a.bytes[1], a.bytes[2], a.bytes[3]);
    return buf;
  }
  // RFC 5952: the first longest run of two or more zero fields becomes "::".
  int zs = -1, ze = -1;
  for (int i = 0; i < 8; ++i) {
    int j = i;
    while (j < 8 && v6u16(a, j) == 0) ++j;
    if (j - i >= 2 && j - i > ze - zs) {
      zs = i;
      ze = j;
    }
  }
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i == zs) {
      out += "::";
      i = ze;
      if (i >= 8) break;
    } else if (i > 0) {
      out += ":";
    }
    std::snprintf(buf, sizeof buf, "%x", v6u16(a, i));
    out += buf;
  }
  return out;
}

std::string to_string(const IpPrefix& p) { return to_string(p.addr) + "/" + std::to_string(p.bits); }

IpPrefix masked(const IpPrefix& p) {
  IpPrefix m = p;
  int len = p.addr.v4 ? 4 : 16;
  for (int k = 0; k < len; ++k) {
    int keep = p.bits - 8 * k;  // bits of this byte to keep
    if (keep >= 8) continue;
    m.addr.bytes[static_cast<size_t>(k)] &= keep <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - keep));
  }
  return m;
}

bool contains(const IpPrefix& p, const IpAddr& a) {
  if (p.addr.v4 != a.v4) return false;
  IpPrefix other{a, p.bits};
  return masked(p).addr == masked(other).addr;
}

bool contains_cidr(const IpPrefix& p, const IpPrefix& other) {
  return masked(p) == IpPrefix{other.addr, p.bits} && p.bits <= other.bits;
}

bool is_unspecified(const IpAddr& a) {
  int len = a.v4 ? 4 : 16;
  for (int k = 0; k < len; ++k) {
    if (a.bytes[static_cast<size_t>(k)] != 0) return false;
  }
  return true;
}

bool is_loopback(const IpAddr& a) {
  if (a.v4) return a.bytes[0] == 127;
  for (int k = 0; k < 15; ++k) {
    if (a.bytes[static_cast<size_t>(k)] != 0) return false;
  }
  return a.bytes[15] == 1;
}

bool is_link_local_multicast(const IpAddr& a) {
  if (a.v4) return a.bytes[0] == 224 && a.bytes[1] == 0 && a.bytes[2] == 0;
  return (v6u16(a, 0) & 0xff0f) == 0xff02;
}

bool is_link_local_unicast(const IpAddr& a) {
  if (a.v4) return a.bytes[0] == 169 && a.bytes[1] == 254;
  return (v6u16(a, 0) & 0xffc0) == 0xfe80;
}

bool is_global_unicast(const IpAddr& a) {
  if (a.v4 && (is_unspecified(a) || (a.bytes[0] == 255 && a.bytes[1] == 255 && a.bytes[2] == 255 && a.bytes[3] == 255))) {
    return false;
  }
  return !is_unspecified(a) && !is_loopback(a) && !is_multicast(a) && !is_link_local_unicast(a);
}

}  // namespace net
}  // namespace draplane::cel
