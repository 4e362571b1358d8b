// metav1.Time's reading of its JSON string: time.Parse(time.RFC3339, s), with
// Go's error messages (what kube-apiserver answers for a malformed time).
#include "api/decode_limits.h"

#include <string>
#include <string_view>

#include "common/civil_date.h"
#include "common/go_quote.h"

namespace draplane::api {
namespace {

constexpr std::string_view kLayout = "2006-01-02T15:04:05Z07:00";

using common::go_time_quote;

bool digit(std::string_view s, size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; }

// time.getnum: one or two digits (exactly two when fixed); -1 when bad.
int getnum(std::string_view& s, bool fixed) {
  if (!digit(s, 0)) return -1;
  if (!digit(s, 1)) {
    if (fixed) return -1;
    int n = s[0] - '0';
    s.remove_prefix(1);
    return n;
  }
  int n = (s[0] - '0') * 10 + (s[1] - '0');
  s.remove_prefix(2);
  return n;
}

}  // namespace

std::optional<std::string> rfc3339_error(std::string_view value) {
  const std::string head = "parsing time " + go_time_quote(value);
  auto cannot = [&](std::string_view rest, std::string_view elem) {
    return head + " as " + go_time_quote(kLayout) + ": cannot parse " + go_time_quote(rest) + " as " + go_time_quote(elem);
  };
  auto range = [&](std::string_view what) { return head + ": " + std::string(what) + " out of range"; };
  std::string_view v = value;
  // 2006
  if (v.size() < 4 || !digit(v, 0) || !digit(v, 1) || !digit(v, 2) || !digit(v, 3)) return cannot(v, "2006");
  int year = (v[0] - '0') * 1000 + (v[1] - '0') * 100 + (v[2] - '0') * 10 + (v[3] - '0');
  v.remove_prefix(4);
  // -01 -02 T15 :04 :05: a literal prefix, then a number (hour may have one digit).
  struct Element {
    char prefix;
    std::string_view std;
    bool fixed;
    int max;  // exclusive (the day is checked against its month at the end, as Go does)
    std::string_view name;
  };
  static constexpr Element kElements[] = {{'-', "01", true, 13, "month"}, {'-', "02", true, 100, "day"},
                                          {'T', "15", false, 24, "hour"}, {':', "04", true, 60, "minute"},
                                          {':', "05", true, 60, "second"}};
  int nums[5] = {};
  for (int i = 0; i < 5; ++i) {
    const Element& e = kElements[i];
    if (v.empty() || v[0] != e.prefix) return cannot(v, std::string(1, e.prefix));
    v.remove_prefix(1);
    std::string_view before = v;
    int n = getnum(v, e.fixed);
    if (n < 0) return cannot(before, e.std);
    if (n >= e.max || (i == 0 && n == 0)) return range(e.name);
    nums[i] = n;
  }
  // A fractional second, though the layout has none (Go accepts it).
  if (v.size() >= 2 && (v[0] == '.' || v[0] == ',') && digit(v, 1)) {
    size_t i = 1;
    while (digit(v, i)) ++i;
    v.remove_prefix(i);
  }
  // Z07:00
  if (!v.empty() && v[0] == 'Z') {
    v.remove_prefix(1);
  } else {
    std::string_view before = v;
    if (v.size() < 6 || v[3] != ':' || (v[0] != '+' && v[0] != '-')) return cannot(before, "Z07:00");
    std::string_view hh = v.substr(1, 2), mm = v.substr(4, 2);
    int h = getnum(hh, true), m = getnum(mm, true);
    if (h < 0 || m < 0) return cannot(before, "Z07:00");
    if (h > 24) return range("time zone offset hour");
    if (m > 60) return range("time zone offset minute");
    v.remove_prefix(6);
  }
  if (!v.empty()) return head + ": extra text: " + go_time_quote(v);
  if (nums[1] < 1 || nums[1] > common::days_in_month(year, nums[0])) return range("day");
  return std::nullopt;
}

}  // namespace draplane::api
