// CEL's timestamp and duration functions (cel-go's standard library, with the
// DefaultUTCTimeZone option Kubernetes sets): conversions, arithmetic with
// overflow checks, and the timestamp/duration accessors.
#include <limits>

#include "cel/functions.h"
#include "cel/overload_adder.h"
#include "cel/time.h"

namespace draplane::cel::lib {

namespace {

namespace tu = timeutil;

const Type kI(TypeKind::kInt), kS(TypeKind::kString), kT(TypeKind::kTimestamp), kDur(TypeKind::kDuration);

Value timestamp_overflow() { return Value::error("timestamp overflow"); }
Value int_overflow() { return Value::error("integer overflow"); }

Value ts_from_string(const Value* a) {
  tu::Timestamp t;
  std::string err;
  if (!tu::parse_rfc3339(a[0].str(), t, err)) {
    return Value::error("type conversion error from 'string' to 'google.protobuf.Timestamp': " + err);
  }
  if (!tu::in_range(t.seconds)) return timestamp_overflow();
  return Value::timestamp(t.seconds, t.nanos, t.offset);
}
Value ts_from_int(const Value* a) {
  if (!tu::in_range(a[0].i)) return timestamp_overflow();
  return Value::timestamp(a[0].i, 0);
}
Value dur_from_string(const Value* a) {
  int64_t d;
  std::string err;
  if (!tu::parse_duration(a[0].str(), d, err)) {
    return Value::error("type conversion error from 'string' to 'google.protobuf.Duration': " + err);
  }
  return Value::duration(d);
}
Value identity(const Value* a) { return a[0]; }
Value int_from_ts(const Value* a) { return Value::integer(a[0].ts_seconds()); }
Value int_from_dur(const Value* a) { return Value::integer(a[0].i); }
Value string_from_ts(const Value* a) {
  return Value::string(tu::format_rfc3339({a[0].ts_seconds(), a[0].ts_nanos(), a[0].ts_offset()}));
}
Value string_from_dur(const Value* a) { return Value::string(tu::format_duration(a[0].i)); }

// cel-go's addTimeDurationChecked: seconds and nanoseconds separately, then the
// range check; the result keeps the timestamp's offset.
Value ts_plus(const Value& ts, int64_t d) {
  int64_t sec;
  if (__builtin_add_overflow(ts.ts_seconds(), d / tu::kNanosPerSecond, &sec)) return int_overflow();
  int64_t nsec = ts.ts_nanos() + d % tu::kNanosPerSecond;
  if (nsec < 0) {
    nsec += tu::kNanosPerSecond;
    if (__builtin_sub_overflow(sec, 1, &sec)) return int_overflow();
  } else if (nsec >= tu::kNanosPerSecond) {
    nsec -= tu::kNanosPerSecond;
    if (__builtin_add_overflow(sec, 1, &sec)) return int_overflow();
  }
  if (!tu::in_range(sec)) return timestamp_overflow();
  return Value::timestamp(sec, static_cast<int32_t>(nsec), ts.ts_offset());
}
Value add_ts_dur(const Value* a) { return ts_plus(a[0], a[1].i); }
Value add_dur_ts(const Value* a) { return ts_plus(a[1], a[0].i); }
Value sub_ts_dur(const Value* a) {
  if (a[1].i == std::numeric_limits<int64_t>::min()) return int_overflow();
  return ts_plus(a[0], -a[1].i);
}
Value sub_ts_ts(const Value* a) {
  int64_t sec, ns, r;
  if (__builtin_sub_overflow(a[0].ts_seconds(), a[1].ts_seconds(), &sec) ||
      __builtin_mul_overflow(sec, tu::kNanosPerSecond, &ns) ||
      __builtin_add_overflow(ns, static_cast<int64_t>(a[0].ts_nanos()) - a[1].ts_nanos(), &r)) {
    return int_overflow();
  }
  return Value::duration(r);
}
Value add_dur_dur(const Value* a) {
  int64_t r;
  if (__builtin_add_overflow(a[0].i, a[1].i, &r)) return int_overflow();
  return Value::duration(r);
}
Value sub_dur_dur(const Value* a) {
  int64_t r;
  if (__builtin_sub_overflow(a[0].i, a[1].i, &r)) return int_overflow();
  return Value::duration(r);
}

// Timestamp accessors: the civil fields in UTC, or in the zone given.
enum class Field { kYear, kMonth, kDayOfYear, kDayOfMonth, kDate, kDayOfWeek, kHours, kMinutes, kSeconds };

template <Field F>
Value field_at(const Value& ts, int32_t offset) {
  tu::Civil c = tu::civil_from_seconds(ts.ts_seconds() + offset);
  switch (F) {
    case Field::kYear: return Value::integer(c.year);
    case Field::kMonth: return Value::integer(c.month - 1);
    case Field::kDayOfYear: return Value::integer(c.yday);
    case Field::kDayOfMonth: return Value::integer(c.day - 1);
    case Field::kDate: return Value::integer(c.day);
    case Field::kDayOfWeek: return Value::integer(c.wday);
    case Field::kHours: return Value::integer(c.hour);
    case Field::kMinutes: return Value::integer(c.minute);
    case Field::kSeconds: return Value::integer(c.second);
  }
  return Value::integer(0);
}
template <Field F>
Value ts_field(const Value* a) {
  return field_at<F>(a[0], 0);
}
template <Field F>
Value ts_field_tz(const CallContext& ctx, const Value* a) {
  int32_t offset;
  std::string err;
  if (!tu::zone_offset(ctx.time_zones, a[1].str(), a[0].ts_seconds(), offset, err)) return Value::error(err);
  return field_at<F>(a[0], offset);
}
Value ts_millis(const Value* a) { return Value::integer(a[0].ts_nanos() / 1000000); }
Value ts_millis_tz(const CallContext& ctx, const Value* a) {
  int32_t offset;
  std::string err;
  if (!tu::zone_offset(ctx.time_zones, a[1].str(), a[0].ts_seconds(), offset, err)) return Value::error(err);
  return ts_millis(a);
}
// Duration accessors: the whole duration in the unit, truncated (cel-go).
Value dur_hours(const Value* a) { return Value::integer(a[0].i / 3600000000000); }
Value dur_minutes(const Value* a) { return Value::integer(a[0].i / 60000000000); }
Value dur_seconds(const Value* a) { return Value::integer(a[0].i / tu::kNanosPerSecond); }
Value dur_millis(const Value* a) { return Value::integer(a[0].i / 1000000); }

}  // namespace

void register_time(std::vector<Overload>& out) {
  const OverloadAdder add(out);
  add("timestamp_to_timestamp", "timestamp", false, {kT}, kT, identity);
  add("int64_to_timestamp", "timestamp", false, {kI}, kT, ts_from_int);
  add("string_to_timestamp", "timestamp", false, {kS}, kT, ts_from_string);
  add("duration_to_duration", "duration", false, {kDur}, kDur, identity);
  add("string_to_duration", "duration", false, {kS}, kDur, dur_from_string);
  add("timestamp_to_int64", "int", false, {kT}, kI, int_from_ts);
  add("duration_to_int64", "int", false, {kDur}, kI, int_from_dur);
  add("timestamp_to_string", "string", false, {kT}, kS, string_from_ts);
  add("duration_to_string", "string", false, {kDur}, kS, string_from_dur);
  add("add_timestamp_duration", "_+_", false, {kT, kDur}, kT, add_ts_dur);
  add("add_duration_timestamp", "_+_", false, {kDur, kT}, kT, add_dur_ts);
  add("add_duration_duration", "_+_", false, {kDur, kDur}, kDur, add_dur_dur);
  add("subtract_timestamp_duration", "_-_", false, {kT, kDur}, kT, sub_ts_dur);
  add("subtract_timestamp_timestamp", "_-_", false, {kT, kT}, kDur, sub_ts_ts);
  add("subtract_duration_duration", "_-_", false, {kDur, kDur}, kDur, sub_dur_dur);
  // <, <=, >, >= on timestamps and durations are declared with the other
  // orderings in stdlib.cc.

  struct Accessor {
    const char* fn;
    const char* id;
    FnImpl plain;
    CtxFnImpl tz;  // resolves the zone in the program's TimeZoneDatabase
  };
  const Accessor accessors[] = {
      {"getFullYear", "timestamp_to_year", ts_field<Field::kYear>, ts_field_tz<Field::kYear>},
      {"getMonth", "timestamp_to_month", ts_field<Field::kMonth>, ts_field_tz<Field::kMonth>},
      {"getDayOfYear", "timestamp_to_day_of_year", ts_field<Field::kDayOfYear>, ts_field_tz<Field::kDayOfYear>},
      {"getDayOfMonth", "timestamp_to_day_of_month", ts_field<Field::kDayOfMonth>, ts_field_tz<Field::kDayOfMonth>},
      {"getDate", "timestamp_to_day_of_month_1_based", ts_field<Field::kDate>, ts_field_tz<Field::kDate>},
      {"getDayOfWeek", "timestamp_to_day_of_week", ts_field<Field::kDayOfWeek>, ts_field_tz<Field::kDayOfWeek>},
      {"getHours", "timestamp_to_hours", ts_field<Field::kHours>, ts_field_tz<Field::kHours>},
      {"getMinutes", "timestamp_to_minutes", ts_field<Field::kMinutes>, ts_field_tz<Field::kMinutes>},
      {"getSeconds", "timestamp_to_seconds", ts_field<Field::kSeconds>, ts_field_tz<Field::kSeconds>},
      {"getMilliseconds", "timestamp_to_milliseconds", ts_millis, ts_millis_tz},
  };
  for (const auto& acc : accessors) {
    add(acc.id, acc.fn, true, {kT}, kI, acc.plain);
    add(std::string(acc.id) + "_with_tz", acc.fn, true, {kT, kS}, kI, nullptr);
    out.back().ctx_impl = acc.tz;
  }
  add("duration_to_hours", "getHours", true, {kDur}, kI, dur_hours);
  add("duration_to_minutes", "getMinutes", true, {kDur}, kI, dur_minutes);
  add("duration_to_seconds", "getSeconds", true, {kDur}, kI, dur_seconds);
  add("duration_to_milliseconds", "getMilliseconds", true, {kDur}, kI, dur_millis);
}

}  // namespace draplane::cel::lib
