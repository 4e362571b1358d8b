#include "common/rfc3339.h"

#include <cstdio>

namespace draplane::common {
namespace {

using std::chrono::microseconds;

constexpr int64_t kSecondsPerDay = 86400;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil), so formatting needs no gmtime and works for any year.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year;
  int month, day;
};

Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t micros_of(WallTime t) { return std::chrono::duration_cast<microseconds>(t.time_since_epoch()).count(); }

std::string format(int64_t seconds, const char* fraction) {
  const int64_t days = floor_div(seconds, kSecondsPerDay);
  const int64_t rest = seconds - days * kSecondsPerDay;
  const Civil c = civil_from_days(days);
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

bool leap(int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int days_in_month(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && leap(y) ? 29 : kDays[m - 1];
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
