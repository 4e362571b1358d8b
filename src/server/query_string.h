// The request target's path and query parameters, as Go's net/url reads them
// for kube-apiserver (url.ParseQuery): `+` is a space, %XX an escaped byte, and
// a pair whose escapes are malformed is dropped (ParseQuery skips it).
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace draplane::server {

// %XX and '+' decoded into `out`; false when an escape is malformed.
bool url_decode(std::string_view s, std::string& out);

// Splits "path?k=v&..." into the path and the decoded parameters (a repeated
// key keeps its last value).
void split_target(std::string_view target, std::string& path, std::map<std::string, std::string>& query);

}  // namespace draplane::server
