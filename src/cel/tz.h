// Named time zones for the CEL timestamp accessors: IANA names ("Europe/Paris",
// "US/Central") read from the system's TZif files (RFC 8536, versions 1-4,
// including the POSIX TZ rule that extends a zone past its last transition), as
// Go's time.LoadLocation reads them.
//
// A TimeZoneDatabase searches its directories (by default Go's list:
// /usr/share/zoneinfo, /usr/share/lib/zoneinfo, /usr/lib/locale/TZ,
// /etc/zoneinfo) and keeps each zone it parsed (and each name it did not find)
// for its own life. There is no process-wide cache: whoever owns the CEL
// programs (cel::ProgramCache, or compile()'s options) owns the database, and
// tests give one a directory of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace draplane::cel::timeutil {

class TimeZoneDatabase {
 public:
  // Go's search list (time.platformZoneSources).
  static std::vector<std::string> default_directories();

  TimeZoneDatabase();  // default_directories()
  explicit TimeZoneDatabase(std::vector<std::string> directories);
  ~TimeZoneDatabase();
  TimeZoneDatabase(const TimeZoneDatabase&) = delete;
  TimeZoneDatabase& operator=(const TimeZoneDatabase&) = delete;

  // The UTC offset (seconds east) of zone `name` at Unix time `unix_seconds`.
  // False with Go's message when the name is malformed ("time: invalid location
  // name") or not found ("unknown time zone Mars/Base"). "Local" is not resolved.
  // Thread-safe: the cache inside is synchronized.
  bool offset(std::string_view name, int64_t unix_seconds, int32_t& offset, std::string& err) const;

  // How many names the cache holds at most (names can be computed at run time).
  static constexpr size_t kMaxCached = 1024;

 private:
  struct Cache;
  std::vector<std::string> directories_;
  std::unique_ptr<Cache> cache_;
};

// Parses a POSIX TZ rule string ("EST5EDT,M3.2.0,M11.1.0") and returns the
// offset it gives at `unix_seconds`. False when the rule is malformed. Exposed
// for tests.
bool posix_rule_offset(std::string_view rule, int64_t unix_seconds, int32_t& offset);

}  // namespace draplane::cel::timeutil
