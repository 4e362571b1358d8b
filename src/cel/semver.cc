#include "cel/semver.h"

#include <charconv>

#include "api/field_error.h"  // go_quote: Go's %q

namespace draplane::cel {

namespace {

using api::go_quote;

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

// strconv.ParseUint(s, 10, 64), with its error text.
bool parse_uint(std::string_view s, uint64_t& out, std::string& err) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec == std::errc::invalid_argument || ptr != s.data() + s.size()) {
    err = "strconv.ParseUint: parsing " + go_quote(s) + ": invalid syntax";
    return false;
  }
  if (ec == std::errc::result_out_of_range) {
    err = "strconv.ParseUint: parsing " + go_quote(s) + ": value out of range";
    return false;
  }
  return true;
}

bool has_leading_zeroes(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

// An empty string contains only anything (strings.IndexFunc finds nothing).
bool only_digits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One numeric component of MAJOR.MINOR.PATCH, as blang/semver checks it.
bool parse_component(std::string_view s, const char* what, uint64_t& out, std::string& err) {
  std::string name(what);
  if (!only_digits(s)) {
    err = "Invalid character(s) found in " + name + " number " + go_quote(s);
    return false;
  }
  if (has_leading_zeroes(s)) {
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    err = name + " number must not contain leading zeroes " + go_quote(s);
    return false;
  }
  return parse_uint(s, out, err);
}

std::vector<std::string_view> split(std::string_view s, char sep, size_t limit = std::string_view::npos) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (out.size() + 1 < limit) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) break;
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

// blang/semver/v4 Parse: strict MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].
std::optional<Semver> parse_strict(std::string_view text, std::string& err) {
  if (text.empty()) {
    err = "Version string empty";
    return std::nullopt;
  }
  auto parts = split(text, '.', 3);
  if (parts.size() != 3) {
    err = "No Major.Minor.Patch elements found";
    return std::nullopt;
  }
  Semver v;
  if (!parse_component(parts[0], "major", v.major, err)) return std::nullopt;
  if (!parse_component(parts[1], "minor", v.minor, err)) return std::nullopt;
  std::string_view patch = parts[2];
  std::vector<std::string_view> build, pre;
  bool has_build = false, has_pre = false;
  if (size_t plus = patch.find('+'); plus != std::string_view::npos) {
    build = split(patch.substr(plus + 1), '.');
    has_build = true;
    patch = patch.substr(0, plus);
  }
  if (size_t dash = patch.find('-'); dash != std::string_view::npos) {
    pre = split(patch.substr(dash + 1), '.');
    has_pre = true;
    patch = patch.substr(0, dash);
  }
  if (!parse_component(patch, "patch", v.patch, err)) return std::nullopt;
  for (std::string_view id : has_pre ? pre : std::vector<std::string_view>{}) {
    if (id.empty()) {
      err = "Prerelease is empty";
      return std::nullopt;
    }
    if (only_digits(id)) {
      if (has_leading_zeroes(id)) {
        err = "Numeric PreRelease version must not contain leading zeroes " + go_quote(id);
        return std::nullopt;
      }
      uint64_t num = 0;
      if (!parse_uint(id, num, err)) return std::nullopt;
    } else if (!ident_chars(id)) {
      err = "Invalid character(s) found in prerelease " + go_quote(id);
      return std::nullopt;
    }
    v.pre.emplace_back(id);
  }
  for (std::string_view id : has_build ? build : std::vector<std::string_view>{}) {
    if (id.empty()) {
      err = "Build meta data is empty";
      return std::nullopt;
    }
    if (!ident_chars(id)) {
      err = "Invalid character(s) found in build meta data " + go_quote(id);
      return std::nullopt;
    }
  }
  if (has_build) v.build = std::string(text.substr(text.find('+') + 1));
  return v;
}

// normalizeAndParse of the Kubernetes semver library: drops one leading "v",
// strips leading zeros from each of the (at most three) dot-separated parts and
// fills a missing minor/patch with 0; a short version may not carry
// prerelease/build data.
std::optional<Semver> normalize_and_parse(std::string_view text, std::string& err) {
  if (!text.empty() && text[0] == 'v') text.remove_prefix(1);
  std::vector<std::string> parts;
  for (std::string_view p : split(text, '.', 3)) {
    std::string part(p);
    if (part.size() > 1) {
      size_t nz = part.find_first_not_of('0');
      part = nz == std::string::npos ? std::string() : part.substr(nz);
      if (part.empty() || part[0] < '0' || part[0] > '9') part.insert(0, "0");
    }
    parts.push_back(std::move(part));
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      err = "short version cannot contain PreRelease/Build meta data";
      return std::nullopt;
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  std::string joined = parts[0] + "." + parts[1] + "." + parts[2];
  return parse_strict(joined, err);
}

}  // namespace

std::optional<Semver> Semver::parse(std::string_view text, bool normalize, std::string* error) {
  std::string err;
  auto v = normalize ? normalize_and_parse(text, err) : parse_strict(text, err);
  if (!v && error) *error = std::move(err);
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
