#include "common/rfc3339.h"

#include <cstdio>

#include "common/civil_date.h"

namespace draplane::common {
namespace {

using std::chrono::microseconds;

constexpr int64_t kSecondsPerDay = 86400;

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t micros_of(WallTime t) { return std::chrono::duration_cast<microseconds>(t.time_since_epoch()).count(); }

std::string format(int64_t seconds, const char* fraction) {
  const int64_t days = floor_div(seconds, kSecondsPerDay);
  const int64_t rest = seconds - days * kSecondsPerDay;
  const CivilDate c = civil_from_days(days);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d%sZ", static_cast<long long>(c.year), c.month, c.day,
                static_cast<int>(rest / 3600), static_cast<int>(rest / 60 % 60), static_cast<int>(rest % 60), fraction);
  return buf;
}

// Reads exactly n digits at text[pos]; advances pos.
std::optional<int> digits(std::string_view text, size_t& pos, size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

int64_t unix_seconds_of(WallTime t) { return floor_div(micros_of(t), 1000000); }

std::string format_rfc3339(int64_t unix_seconds) { return format(unix_seconds, ""); }

std::string format_rfc3339(WallTime t) { return format(unix_seconds_of(t), ""); }

std::string format_rfc3339_micro(WallTime t) {
  const int64_t us = micros_of(t);
  const int micros = static_cast<int>(us - floor_div(us, 1000000) * 1000000);  // 0..999999
  char frac[32];
  std::snprintf(frac, sizeof frac, ".%06d", micros);
  return format(floor_div(us, 1000000), frac);
}

std::optional<WallTime> parse_rfc3339_time(std::string_view text) {
  size_t pos = 0;
  auto y = digits(text, pos, 4);
  if (!y || !expect(text, pos, '-')) return std::nullopt;
  auto mo = digits(text, pos, 2);
  if (!mo || *mo < 1 || *mo > 12 || !expect(text, pos, '-')) return std::nullopt;
  auto d = digits(text, pos, 2);
  if (!d || *d < 1 || *d > days_in_month(*y, *mo) || !expect(text, pos, 'T')) return std::nullopt;
  auto h = digits(text, pos, 2);
  if (!h || *h > 23 || !expect(text, pos, ':')) return std::nullopt;
  auto mi = digits(text, pos, 2);
  if (!mi || *mi > 59 || !expect(text, pos, ':')) return std::nullopt;
  auto s = digits(text, pos, 2);
  if (!s || *s > 59) return std::nullopt;
  int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100000;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos, scale /= 10) {
      micros += (text[pos] - '0') * scale;  // digits past the sixth are dropped (scale reaches 0)
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (expect(text, pos, 'Z')) {
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos++] == '-' ? -1 : 1;
    auto oh = digits(text, pos, 2);
    if (!oh || *oh > 23 || !expect(text, pos, ':')) return std::nullopt;
    auto om = digits(text, pos, 2);
    if (!om || *om > 59) return std::nullopt;
    offset = sign * (*oh * 3600 + *om * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  const int64_t seconds = days_from_civil(*y, *mo, *d) * kSecondsPerDay + *h * 3600 + *mi * 60 + *s - offset;
  return WallTime(std::chrono::duration_cast<WallTime::duration>(microseconds(seconds * 1000000 + micros)));
}

std::optional<int64_t> parse_rfc3339(std::string_view text) {
  auto t = parse_rfc3339_time(text);
  if (!t) return std::nullopt;
  return unix_seconds_of(*t);
}

}  // namespace draplane::common
