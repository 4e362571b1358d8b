// RFC 3339 times as Kubernetes writes them: metav1.Time has whole seconds in
// UTC ("2006-01-02T15:04:05Z"), metav1.MicroTime six fractional digits
// ("2006-01-02T15:04:05.000000Z"). The parser reads what those types accept
// (time.RFC3339 / RFC3339Nano: any fraction, "Z" or a "+07:00" offset).
//
// Not the API decoder's validator (api/codec_time.cc), which must reproduce
// Go's time.Parse error texts; this one only says whether a time was read.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace draplane::common {

using WallTime = std::chrono::system_clock::time_point;

// metav1.Time: "2006-01-02T15:04:05Z" (a fraction of a second is dropped).
std::string format_rfc3339(int64_t unix_seconds);
std::string format_rfc3339(WallTime t);
// metav1.MicroTime: "2006-01-02T15:04:05.000000Z".
std::string format_rfc3339_micro(WallTime t);

// Unix seconds of t, rounded down (also before 1970).
int64_t unix_seconds_of(WallTime t);

// The instant `text` names, to the microsecond; nullopt when it is not RFC 3339.
std::optional<WallTime> parse_rfc3339_time(std::string_view text);
// The same, as Unix seconds rounded down.
std::optional<int64_t> parse_rfc3339(std::string_view text);

}  // namespace draplane::common
