// Named time zones for the CEL timestamp accessors: IANA names ("Europe/Paris",
// "US/Central") read from the system's TZif files (RFC 8536, versions 1-4,
// including the POSIX TZ rule that extends a zone past its last transition), as
// Go's time.LoadLocation reads them.
//
// Zone files are searched in /usr/share/zoneinfo, /usr/share/lib/zoneinfo,
// /usr/lib/locale/TZ and /etc/zoneinfo (Go's list), parsed once and cached for
// the life of the process; the cache is internally synchronized. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace draplane::cel::timeutil {

// The UTC offset (seconds east) of zone `name` at Unix time `unix_seconds`.
// False with Go's message when the name is malformed ("time: invalid location
// name") or not found ("unknown time zone Mars/Base"). "Local" is not resolved.
bool named_zone_offset(std::string_view name, int64_t unix_seconds, int32_t& offset, std::string& err);

// Parses a POSIX TZ rule string ("EST5EDT,M3.2.0,M11.1.0") and returns the
// offset it gives at `unix_seconds`. False when the rule is malformed. Exposed
// for tests.
bool posix_rule_offset(std::string_view rule, int64_t unix_seconds, int32_t& offset);

}  // namespace draplane::cel::timeutil
