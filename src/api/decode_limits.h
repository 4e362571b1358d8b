// What the decoders refuse or repair in hostile input, as kube-apiserver's
// decoders (Go's encoding/json, go-yaml v2, metav1.Time) do: nesting depth,
// invalid UTF-8, malformed times. The codec (codec.h) applies them; the API
// server uses them on its own JSON reading.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/utf8.h"

namespace draplane::api {

// The deepest nesting of arrays and objects a JSON document may have, as in Go's
// encoding/json (and so kube-apiserver): deeper input is refused with
// "exceeded max depth" instead of exhausting the stack of the recursive parser
// and of every walk over the tree. YAML is bounded by yaml-cpp (1999 levels).
inline constexpr int kMaxNestingDepth = 10000;

// Go's error for time.Parse(time.RFC3339, value) (how metav1.Time reads a JSON
// string), e.g. `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot
// parse "yesterday" as "2006"`; nullopt when the value is a valid time.
std::optional<std::string> rfc3339_error(std::string_view value);

// Whether `text` is valid UTF-8, and `text` with each byte that does not start
// a valid sequence replaced by U+FFFD: what Go's encoding/json (and so
// kube-apiserver) makes of invalid UTF-8 in a JSON string (common/utf8.h).
using draplane::coerce_utf8;
using draplane::valid_utf8;

}  // namespace draplane::api
