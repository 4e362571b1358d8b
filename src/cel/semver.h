// Semantic versions as Kubernetes' CEL semver library sees them (blang/semver/v4:
// MAJOR.MINOR.PATCH[-prerelease][+build], strict parsing, SemVer 2.0.0 ordering
// where build metadata is ignored), with the library's optional normalization
// (semverlib.go normalizeAndParse: "v1.2" -> "1.2.0", leading zeros dropped; a
// short version with prerelease/build data is an error).
//
// Plain value; thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace draplane::cel {

struct Semver {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::vector<std::string> pre;  // dot-separated prerelease identifiers
  std::string build;

  // nullopt when `text` is not a valid semantic version; `error` then gets
  // blang/semver's message ("No Major.Minor.Patch elements found", ...).
  static std::optional<Semver> parse(std::string_view text, bool normalize = false, std::string* error = nullptr);
  // -1, 0, 1 by SemVer precedence (build metadata ignored).
  int compare(const Semver& other) const;
  std::string to_string() const;
};

}  // namespace draplane::cel
