// RFC 3339 and Go duration parsing/printing, civil-date arithmetic and the
// fixed-offset half of time zone resolution (named zones: tz.cc).
#include "cel/time.h"

#include <charconv>
#include <cstdio>
#include <limits>

#include "cel/tz.h"
#include "common/civil_date.h"
#include "common/go_quote.h"

namespace draplane::cel::timeutil {

namespace {

bool digit(std::string_view s, size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; }

// The time package's quote, as Go's parse errors carry it.
using common::go_time_quote;

constexpr std::string_view kLayout = "2006-01-02T15:04:05Z07:00";

}  // namespace

Civil civil_from_seconds(int64_t local) {
  int64_t days = local / 86400;
  int64_t rem = local % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  Civil c;
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem / 60 % 60);
  c.second = static_cast<int>(rem % 60);
  int64_t wd = (days + 4) % 7;
  c.wday = static_cast<int>(wd < 0 ? wd + 7 : wd);
  const common::CivilDate date = common::civil_from_days(days);
  c.year = date.year;
  c.month = date.month;
  c.day = date.day;
  c.yday = static_cast<int>(days - common::days_from_civil(c.year, 1, 1));
  return c;
}

// The general path of Go's time.parse for the RFC 3339 layout (a superset of its
// strict fast path: a one-digit hour, ',' before the fraction and offsets up to
// 24:60 are accepted there too).
bool parse_rfc3339(std::string_view s, Timestamp& out, std::string& err) {
  size_t p = 0;
  auto cannot = [&](std::string_view elem) {
    err = "parsing time " + go_time_quote(s) + " as " + go_time_quote(kLayout) + ": cannot parse " +
          go_time_quote(s.substr(std::min(p, s.size()))) + " as " + go_time_quote(elem);
    return false;
  };
  auto range = [&](const char* what) {
    err = "parsing time " + go_time_quote(s) + ": " + what + " out of range";
    return false;
  };
  auto literal = [&](char c) {
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  };
  // getnum: two digits, or one when not `fixed`.
  auto num = [&](bool fixed, int& v) {
    if (!digit(s, p)) return false;
    if (!digit(s, p + 1)) {
      if (fixed) return false;
      v = s[p] - '0';
      p += 1;
      return true;
    }
    v = (s[p] - '0') * 10 + (s[p + 1] - '0');
    p += 2;
    return true;
  };
  if (s.size() < 4 || !digit(s, 0) || !digit(s, 1) || !digit(s, 2) || !digit(s, 3)) return cannot("2006");
  int64_t year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  p = 4;
  int month, day, hour, minute, second;
  if (!literal('-')) return cannot("-");
  if (!num(true, month)) return cannot("01");
  if (month < 1 || month > 12) return range("month");
  if (!literal('-')) return cannot("-");
  if (!num(true, day)) return cannot("02");
  if (!literal('T')) return cannot("T");
  if (!num(false, hour)) return cannot("15");
  if (hour > 23) return range("hour");
  if (!literal(':')) return cannot(":");
  if (!num(true, minute)) return cannot("04");
  if (minute > 59) return range("minute");
  if (!literal(':')) return cannot(":");
  if (!num(true, second)) return cannot("05");
  if (second > 59) return range("second");
  int32_t nanos = 0;
  if (p + 1 < s.size() && (s[p] == '.' || s[p] == ',') && digit(s, p + 1)) {
    ++p;
    int ndigits = 0;
    while (digit(s, p)) {
      if (ndigits < 9) {
        nanos = nanos * 10 + (s[p] - '0');
        ++ndigits;
      }
      ++p;
    }
    for (; ndigits < 9; ++ndigits) nanos *= 10;
  }
  int32_t offset = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else {
    if (s.size() - p < 6 || s[p + 3] != ':') return cannot("Z07:00");
    const size_t q = p;
    const char sign = s[q];
    int hh, mm;
    p = q + 1;
    bool ok = num(true, hh);
    p = q + 4;
    ok = ok && num(true, mm);
    p = q;
    if (!ok) return cannot("Z07:00");
    if (hh > 24) return range("time zone offset hour");
    if (mm > 60) return range("time zone offset minute");
    if (sign != '+' && sign != '-') return cannot("Z07:00");
    offset = (hh * 60 + mm) * 60 * (sign == '-' ? -1 : 1);
    p = q + 6;
  }
  if (p != s.size()) {
    err = "parsing time " + go_time_quote(s) + ": extra text: " + go_time_quote(s.substr(p));
    return false;
  }
  if (day < 1 || day > common::days_in_month(year, month)) return range("day");
  out.seconds = common::days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  out.nanos = nanos;
  out.offset = offset;
  return true;
}

std::string format_rfc3339(const Timestamp& t) {
  Civil c = civil_from_seconds(t.seconds + t.offset);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d", static_cast<long long>(c.year), c.month, c.day,
                c.hour, c.minute, c.second);
  std::string out = buf;
  if (t.nanos != 0) {
    std::snprintf(buf, sizeof buf, ".%09d", t.nanos);
    std::string frac = buf;
    while (frac.back() == '0') frac.pop_back();
    out += frac;
  }
  if (t.offset == 0) return out + "Z";
  int32_t off = t.offset < 0 ? -t.offset : t.offset;
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", t.offset < 0 ? '-' : '+', off / 3600, off / 60 % 60);
  return out + buf;
}

bool parse_duration(std::string_view s, int64_t& nanos, std::string& err) {
  const std::string_view orig = s;
  auto invalid = [&] {
    err = "time: invalid duration " + go_time_quote(orig);
    return false;
  };
  constexpr uint64_t kMax = uint64_t{1} << 63;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") {
    nanos = 0;
    return true;
  }
  if (s.empty()) return invalid();
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return invalid();
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (v > kMax / 10) return invalid();
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > kMax) return invalid();
    }
    bool pre = i > 0;
    s.remove_prefix(i);
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      size_t k = 0;
      bool overflow = false;
      for (; k < s.size() && s[k] >= '0' && s[k] <= '9'; ++k) {
        if (overflow) continue;
        if (f > (kMax - 1) / 10) {
          overflow = true;
          continue;
        }
        uint64_t y = f * 10 + static_cast<uint64_t>(s[k] - '0');
        if (y > kMax) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = k > 0;
      s.remove_prefix(k);
    }
    if (!pre && !post) return invalid();
    size_t u = 0;
    while (u < s.size() && s[u] != '.' && !(s[u] >= '0' && s[u] <= '9')) ++u;
    if (u == 0) {
      err = "time: missing unit in duration " + go_time_quote(orig);
      return false;
    }
    std::string_view unit_name = s.substr(0, u);
    s.remove_prefix(u);
    uint64_t unit;
    if (unit_name == "ns") unit = 1;
    else if (unit_name == "us" || unit_name == "\xc2\xb5s" || unit_name == "\xce\xbcs") unit = 1000;
    else if (unit_name == "ms") unit = 1000000;
    else if (unit_name == "s") unit = 1000000000;
    else if (unit_name == "m") unit = 60000000000;
    else if (unit_name == "h") unit = 3600000000000;
    else {
      err = "time: unknown unit " + go_time_quote(unit_name) + " in duration " + go_time_quote(orig);
      return false;
    }
    if (v > kMax / unit) return invalid();
    v *= unit;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kMax) return invalid();
    }
    total += v;
    if (total > kMax) return invalid();
  }
  if (neg) {
    nanos = static_cast<int64_t>(0 - total);  // total <= 2^63
    return true;
  }
  if (total > kMax - 1) return invalid();
  nanos = static_cast<int64_t>(total);
  return true;
}

std::string format_duration(int64_t nanos) {
  // Go's d.Seconds(): whole seconds plus the fraction, each converted exactly.
  double secs = static_cast<double>(nanos / kNanosPerSecond) +
                static_cast<double>(nanos % kNanosPerSecond) / 1e9;
  char buf[128];
  auto r = std::to_chars(buf, buf + sizeof buf, secs, std::chars_format::fixed);
  return std::string(buf, r.ptr) + "s";
}

namespace {

// strconv.Atoi for the fixed-offset form.
bool go_atoi(std::string_view s, int64_t& v, std::string& err) {
  std::string_view digits = s;
  bool neg = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    neg = digits[0] == '-';
    digits.remove_prefix(1);
  }
  uint64_t u = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    if (u > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
      err = "strconv.Atoi: parsing " + go_time_quote(s) + ": value out of range";
      return false;
    }
    u = u * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    err = "strconv.Atoi: parsing " + go_time_quote(s) + ": invalid syntax";
    return false;
  }
  if (u > (neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1)) {
    err = "strconv.Atoi: parsing " + go_time_quote(s) + ": value out of range";
    return false;
  }
  v = neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  return true;
}

}  // namespace

bool zone_offset(const TimeZoneDatabase* zones, std::string_view tz, int64_t unix_seconds, int32_t& offset,
                 std::string& err) {
  size_t colon = tz.find(':');
  if (colon == std::string_view::npos) {
    if (tz.empty() || tz == "UTC") {
      offset = 0;
      return true;
    }
    if (!zones) {
      err = "unknown time zone " + std::string(tz) + " (no time zone database)";
      return false;
    }
    return zones->offset(tz, unix_seconds, offset, err);
  }
  // cel-go: hours and minutes through strconv.Atoi; a leading '-' makes the
  // minutes negative too ("-02:30" is 2h30m west).
  int64_t hr, min;
  if (!go_atoi(tz.substr(0, colon), hr, err) || !go_atoi(tz.substr(colon + 1), min, err)) return false;
  constexpr int64_t kLimit = 100000;  // beyond any real offset; keeps the arithmetic exact
  if (hr < -kLimit || hr > kLimit || min < -kLimit || min > kLimit) {
    err = "time zone offset out of range: " + std::string(tz);
    return false;
  }
  int64_t minutes = tz[0] == '-' ? hr * 60 - min : hr * 60 + min;
  offset = static_cast<int32_t>(minutes * 60);
  return true;
}

}  // namespace draplane::cel::timeutil
