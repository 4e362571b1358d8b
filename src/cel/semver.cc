#include "cel/semver.h"

#include <charconv>

namespace draplane::cel {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ident_chars(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool parse_number(std::string_view s, uint64_t& out) {
  if (!all_digits(s)) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

}  // namespace

std::optional<Semver> Semver::parse(std::string_view text, bool normalize) {
  std::string normalized;
  if (normalize) {
    std::string_view s = text;
    if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
    size_t extra = s.find_first_of("-+");
    std::string_view core = s.substr(0, extra);
    std::string_view rest = extra == std::string_view::npos ? std::string_view() : s.substr(extra);
    auto parts = split(core, '.');
    if (parts.size() > 3) return std::nullopt;
    for (size_t k = 0; k < 3; ++k) {
      std::string_view part = k < parts.size() ? parts[k] : std::string_view("0");
      while (part.size() > 1 && part[0] == '0') part.remove_prefix(1);
      if (k) normalized += '.';
      normalized += part;
    }
    normalized += rest;
    text = normalized;
  }
  Semver v;
  size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    std::string_view build = text.substr(plus + 1);
    for (auto id : split(build, '.')) {
      if (!ident_chars(id)) return std::nullopt;
    }
    v.build = std::string(build);
    text = text.substr(0, plus);
  }
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    for (auto id : split(text.substr(dash + 1), '.')) {
      if (!ident_chars(id)) return std::nullopt;
      if (all_digits(id) && id.size() > 1 && id[0] == '0') return std::nullopt;
      v.pre.emplace_back(id);
    }
    text = text.substr(0, dash);
  }
  auto parts = split(text, '.');
  if (parts.size() != 3) return std::nullopt;
  if (!parse_number(parts[0], v.major) || !parse_number(parts[1], v.minor) || !parse_number(parts[2], v.patch)) {
    return std::nullopt;
  }
  return v;
}

int Semver::compare(const Semver& o) const {
  auto cmp = [](uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); };
  if (int c = cmp(major, o.major)) return c;
  if (int c = cmp(minor, o.minor)) return c;
  if (int c = cmp(patch, o.patch)) return c;
  if (pre.empty() && o.pre.empty()) return 0;
  if (pre.empty()) return 1;
  if (o.pre.empty()) return -1;
  for (size_t k = 0; k < pre.size() && k < o.pre.size(); ++k) {
    const std::string& a = pre[k];
    const std::string& b = o.pre[k];
    bool an = all_digits(a), bn = all_digits(b);
    if (an && bn) {
      if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
      int c = a.compare(b);
      if (c) return c < 0 ? -1 : 1;
    } else if (an != bn) {
      return an ? -1 : 1;
    } else {
      int c = a.compare(b);
      if (c) return c < 0 ? -1 : 1;
    }
  }
  return cmp(pre.size(), o.pre.size());
}

std::string Semver::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (size_t k = 0; k < pre.size(); ++k) s += (k ? "." : "-") + pre[k];
  if (!build.empty()) s += "+" + build;
  return s;
}

}  // namespace draplane::cel
