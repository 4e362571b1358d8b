// TZif zone files and POSIX TZ rules (after Go's time/zoneinfo_read.go and
// time/zoneinfo.go tzset).
#include "cel/tz.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cel/time.h"
#include "common/civil_date.h"

namespace draplane::cel::timeutil {

namespace {

// ---------------------------------------------------------------- POSIX TZ rules

struct Rule {
  enum Kind { kJulian, kDayOfYear, kMonthWeekDay } kind = kJulian;
  int day = 0, week = 0, mon = 0;
  int time = 2 * 3600;  // local time of day of the change, seconds
};

struct PosixTz {
  int std_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  int dst_offset = 0;
  Rule start, end;
};

bool tz_num(std::string_view& s, int min, int max, int& out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  int v = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > max) return false;
  }
  if (v < min) return false;
  s.remove_prefix(i);
  out = v;
  return true;
}

bool tz_name(std::string_view& s) {
  if (s.empty()) return false;
  if (s[0] == '<') {
    size_t close = s.find('>');
    if (close == std::string_view::npos) return false;
    s.remove_prefix(close + 1);
    return true;
  }
  size_t i = 0;
  while (i < s.size() && std::string_view("0123456789,-+").find(s[i]) == std::string_view::npos) ++i;
  if (i < 3) return false;
  s.remove_prefix(i);
  return true;
}

// [+-]hh[:mm[:ss]], hours up to 24*7 as tzcode allows.
bool tz_offset(std::string_view& s, int& out) {
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  int h, m = 0, sec = 0;
  if (!tz_num(s, 0, 24 * 7, h)) return false;
  if (!s.empty() && s[0] == ':') {
    s.remove_prefix(1);
    if (!tz_num(s, 0, 59, m)) return false;
    if (!s.empty() && s[0] == ':') {
      s.remove_prefix(1);
      if (!tz_num(s, 0, 59, sec)) return false;
    }
  }
  out = (h * 3600 + m * 60 + sec) * (neg ? -1 : 1);
  return true;
}

bool tz_rule(std::string_view& s, Rule& r) {
  if (s.empty()) return false;
  if (s[0] == 'J') {
    s.remove_prefix(1);
    r.kind = Rule::kJulian;
    if (!tz_num(s, 1, 365, r.day)) return false;
  } else if (s[0] == 'M') {
    s.remove_prefix(1);
    r.kind = Rule::kMonthWeekDay;
    if (!tz_num(s, 1, 12, r.mon) || s.empty() || s[0] != '.') return false;
    s.remove_prefix(1);
    if (!tz_num(s, 1, 5, r.week) || s.empty() || s[0] != '.') return false;
    s.remove_prefix(1);
    if (!tz_num(s, 0, 6, r.day)) return false;
  } else {
    r.kind = Rule::kDayOfYear;
    if (!tz_num(s, 0, 365, r.day)) return false;
  }
  r.time = 2 * 3600;
  if (!s.empty() && s[0] == '/') {
    s.remove_prefix(1);
    if (!tz_offset(s, r.time)) return false;
  }
  return true;
}

bool parse_posix(std::string_view s, PosixTz& tz) {
  if (!tz_name(s) || !tz_offset(s, tz.std_offset)) return false;
  tz.std_offset = -tz.std_offset;  // POSIX offsets are west-positive
  if (s.empty() || s[0] == ',') return true;
  if (!tz_name(s)) return false;
  tz.has_dst = true;
  if (s.empty() || s[0] == ',') {
    tz.dst_offset = tz.std_offset + 3600;
  } else {
    if (!tz_offset(s, tz.dst_offset)) return false;
    tz.dst_offset = -tz.dst_offset;
  }
  std::string_view rules = s.empty() ? std::string_view(",M3.2.0,M11.1.0") : s;
  if (rules[0] != ',' && rules[0] != ';') return false;
  rules.remove_prefix(1);
  if (!tz_rule(rules, tz.start) || rules.empty() || rules[0] != ',') return false;
  rules.remove_prefix(1);
  return tz_rule(rules, tz.end) && rules.empty();
}

// Seconds from the start of `year` (UTC) to the rule's change, given the offset
// in effect before it.
int64_t rule_time(int64_t year, const Rule& r, int off) {
  int64_t day = 0;  // 0-based day of the year
  switch (r.kind) {
    case Rule::kJulian:
      day = r.day - 1 + (common::is_leap_year(year) && r.day >= 60 ? 1 : 0);
      break;
    case Rule::kDayOfYear: day = r.day; break;
    case Rule::kMonthWeekDay: {
      int64_t first = common::days_from_civil(year, r.mon, 1);
      int64_t dow = (first + 4) % 7;
      if (dow < 0) dow += 7;
      int64_t d = (r.day - dow + 7) % 7;  // 0-based day of month of the first such weekday
      const int dim = common::days_in_month(year, r.mon);
      for (int i = 1; i < r.week; ++i) {
        if (d + 7 >= dim) break;
        d += 7;
      }
      day = first - common::days_from_civil(year, 1, 1) + d;
      break;
    }
  }
  return day * 86400 + r.time - off;
}

int posix_offset_at(const PosixTz& tz, int64_t sec) {
  if (!tz.has_dst) return tz.std_offset;
  int64_t days = sec / 86400 - (sec % 86400 < 0 ? 1 : 0);
  int64_t year = civil_from_seconds(days * 86400).year;
  int64_t ysec = sec - common::days_from_civil(year, 1, 1) * 86400;
  int64_t start = rule_time(year, tz.start, tz.std_offset);
  int64_t end = rule_time(year, tz.end, tz.dst_offset);
  int std_off = tz.std_offset, dst_off = tz.dst_offset;
  if (end < start) {  // southern hemisphere: the labels flip
    std::swap(start, end);
    std::swap(std_off, dst_off);
  }
  if (ysec < start || ysec >= end) return std_off;
  return dst_off;
}

// ---------------------------------------------------------------- TZif

struct Zone {
  std::vector<int64_t> transitions;
  std::vector<uint8_t> type_of;  // per transition
  std::vector<int32_t> offsets;  // per local time type
  std::optional<PosixTz> extend;

  int32_t offset_at(int64_t sec) const {
    if (offsets.empty()) return extend ? posix_offset_at(*extend, sec) : 0;
    if (transitions.empty() || sec < transitions.front()) {
      if (transitions.empty() && extend) return posix_offset_at(*extend, sec);
      return offsets[0];
    }
    size_t k = static_cast<size_t>(std::upper_bound(transitions.begin(), transitions.end(), sec) -
                                   transitions.begin()) - 1;
    if (k == transitions.size() - 1 && extend) return posix_offset_at(*extend, sec);
    return offsets[type_of[k]];
  }
};

class Reader {
 public:
  explicit Reader(const std::string& d) : d_(d) {}
  bool has(size_t n) const { return pos_ + n <= d_.size(); }
  uint32_t u32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | static_cast<unsigned char>(d_[pos_++]);
    return v;
  }
  int64_t i64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<unsigned char>(d_[pos_++]);
    return static_cast<int64_t>(v);
  }
  uint8_t u8() { return static_cast<uint8_t>(d_[pos_++]); }
  void skip(size_t n) { pos_ += n; }
  size_t pos() const { return pos_; }

 private:
  const std::string& d_;
  size_t pos_ = 0;
};

std::optional<Zone> parse_tzif(const std::string& data) {
  Reader r(data);
  if (!r.has(44) || data.compare(0, 4, "TZif") != 0) return std::nullopt;
  char version = data[4];
  auto header = [&](uint32_t c[6]) {
    r.skip(20);  // magic, version, reserved
    for (int k = 0; k < 6; ++k) c[k] = r.u32();
  };
  uint32_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  header(c);
  bool v2 = version >= '2';
  if (v2) {
    size_t v1 = size_t{c[3]} * 5 + size_t{c[4]} * 6 + c[5] + size_t{c[2]} * 8 + c[1] + c[0];
    if (!r.has(v1 + 44)) return std::nullopt;
    r.skip(v1);
    header(c);
  }
  size_t tsize = v2 ? 8 : 4;
  size_t need = size_t{c[3]} * (tsize + 1) + size_t{c[4]} * 6 + c[5] + size_t{c[2]} * (tsize + 4) + c[1] + c[0];
  if (!r.has(need) || c[4] == 0) return std::nullopt;
  Zone z;
  for (uint32_t k = 0; k < c[3]; ++k) {
    z.transitions.push_back(v2 ? r.i64() : static_cast<int32_t>(r.u32()));
  }
  for (uint32_t k = 0; k < c[3]; ++k) {
    uint8_t t = r.u8();
    if (t >= c[4]) return std::nullopt;
    z.type_of.push_back(t);
  }
  for (uint32_t k = 0; k < c[4]; ++k) {
    z.offsets.push_back(static_cast<int32_t>(r.u32()));
    r.skip(2);  // isdst, desigidx
  }
  r.skip(c[5] + size_t{c[2]} * (tsize + 4) + c[1] + c[0]);
  if (v2 && r.pos() < data.size() && data[r.pos()] == '\n') {
    size_t end = data.find('\n', r.pos() + 1);
    if (end != std::string::npos) {
      std::string_view footer(data.data() + r.pos() + 1, end - r.pos() - 1);
      PosixTz tz;
      if (!footer.empty() && parse_posix(footer, tz)) z.extend = tz;
    }
  }
  return z;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name[0] == '/' || name[0] == '\\') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    std::string_view seg = name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (seg == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return name.find('\0') == std::string_view::npos;
}

std::shared_ptr<const Zone> load(const std::vector<std::string>& directories, const std::string& name) {
  constexpr std::streamsize kMaxFile = 1 << 20;
  for (const std::string& dir : directories) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    if (!in) continue;
    std::string data;
    data.resize(static_cast<size_t>(kMaxFile));
    in.read(data.data(), kMaxFile);
    data.resize(static_cast<size_t>(in.gcount()));
    if (auto z = parse_tzif(data)) return std::make_shared<const Zone>(std::move(*z));
  }
  return nullptr;
}

}  // namespace

bool posix_rule_offset(std::string_view rule, int64_t unix_seconds, int32_t& offset) {
  PosixTz tz;
  if (!parse_posix(rule, tz)) return false;
  offset = posix_offset_at(tz, unix_seconds);
  return true;
}

struct TimeZoneDatabase::Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const Zone>> zones;  // null: not found
};

std::vector<std::string> TimeZoneDatabase::default_directories() {
  return {"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"};
}

TimeZoneDatabase::TimeZoneDatabase() : TimeZoneDatabase(default_directories()) {}

TimeZoneDatabase::TimeZoneDatabase(std::vector<std::string> directories)
    : directories_(std::move(directories)), cache_(std::make_unique<Cache>()) {}

TimeZoneDatabase::~TimeZoneDatabase() = default;

bool TimeZoneDatabase::offset(std::string_view name, int64_t unix_seconds, int32_t& offset, std::string& err) const {
  if (name == "Local" || !valid_name(name)) {
    err = name == "Local" ? "unknown time zone Local (the host's zone is not used)" : "time: invalid location name";
    return false;
  }
  std::string key(name);
  std::shared_ptr<const Zone> zone;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(cache_->mu);
    auto it = cache_->zones.find(key);
    if (it != cache_->zones.end()) {
      zone = it->second;
      cached = true;
    }
  }
  if (!cached) {
    zone = load(directories_, key);  // read outside the lock
    std::lock_guard<std::mutex> lock(cache_->mu);
    if (cache_->zones.size() < kMaxCached) cache_->zones.emplace(key, zone);
  }
  if (!zone) {
    err = "unknown time zone " + key;
    return false;
  }
  offset = zone->offset_at(unix_seconds);
  return true;
}

}  // namespace draplane::cel::timeutil
