// Time support for CEL's google.protobuf.Timestamp and google.protobuf.Duration,
// with the semantics of cel-go (which Kubernetes uses): timestamps are Unix
// seconds + nanoseconds in [0001-01-01T00:00:00Z, 9999-12-31T23:59:59.999999999Z]
// and remember the UTC offset they were written with; durations are int64
// nanoseconds (Go's time.Duration, about ±292 years). Parsing follows Go's
// time.Parse(time.RFC3339, s) and time.ParseDuration; printing follows Go's
// RFC3339Nano and CEL's "<seconds>s" form.
//
// Time zones for the timestamp accessors (getHours('...') etc.) are resolved as
// cel-go does: a string containing ':' is a fixed "[+-]HH:MM" offset; otherwise
// it is a location name: "UTC" (or ""), or an IANA name looked up in the
// TimeZoneDatabase the caller passes (TZif files, as Go's time.LoadLocation reads
// them; see tz.h). "Local" is rejected: the host's zone must not change a
// selector's meaning.
//
// Pure functions; zone lookups go through the given database. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace draplane::cel::timeutil {

class TimeZoneDatabase;

inline constexpr int64_t kMinUnixSeconds = -62135596800;  // 0001-01-01T00:00:00Z
inline constexpr int64_t kMaxUnixSeconds = 253402300799;  // 9999-12-31T23:59:59Z
inline constexpr int64_t kNanosPerSecond = 1000000000;

struct Timestamp {
  int64_t seconds = 0;  // since the Unix epoch, UTC
  int32_t nanos = 0;    // [0, 1e9)
  int32_t offset = 0;   // UTC offset the value was written with, seconds east
};

// Go's time.Parse(time.RFC3339, s): "2006-01-02T15:04:05[.frac](Z|±hh:mm)".
// On failure returns false and sets `err` to a Go-style reason. Does not check
// the CEL range (see in_range).
bool parse_rfc3339(std::string_view s, Timestamp& out, std::string& err);

// Whether Unix `seconds` lies in CEL's timestamp range.
inline bool in_range(int64_t seconds) { return seconds >= kMinUnixSeconds && seconds <= kMaxUnixSeconds; }

// Go's t.Format(time.RFC3339Nano) in the timestamp's own offset:
// "2009-02-13T23:31:30.5Z", "2021-01-01T05:30:00+05:30".
std::string format_rfc3339(const Timestamp& t);

// Go's time.ParseDuration ("1h30m", "-1.5s", "100ms", "2us", "0"). On failure
// returns false with Go's message (`time: invalid duration "x"`, `time: unknown
// unit "d" in duration "1d"`, `time: missing unit in duration "1"`).
bool parse_duration(std::string_view s, int64_t& nanos, std::string& err);

// CEL's string(duration): the seconds as the shortest decimal plus "s"
// ("5400s", "1.5s", "-0.000000001s").
std::string format_duration(int64_t nanos);

// The civil (proleptic Gregorian) fields of a local time given as seconds since
// 1970-01-01T00:00:00 in that zone.
struct Civil {
  int64_t year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0, minute = 0, second = 0;
  int yday = 0;  // 0-based day of the year
  int wday = 4;  // 0 = Sunday
};
Civil civil_from_seconds(int64_t local_seconds);

// The UTC offset (seconds east) of time zone `tz` at Unix time `unix_seconds`,
// resolved as described above, named zones in `zones`. False with a message such
// as `unknown time zone Mars/Base` when it cannot be resolved (every named zone
// when `zones` is null).
bool zone_offset(const TimeZoneDatabase* zones, std::string_view tz, int64_t unix_seconds, int32_t& offset,
                 std::string& err);

}  // namespace draplane::cel::timeutil
