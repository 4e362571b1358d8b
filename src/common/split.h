// split: Go's strings.Split for one separator character.
#pragma once

#include <string_view>
#include <vector>

namespace draplane::common {

// The pieces of `s` between each `sep`: "a,,b" -> {"a", "", "b"}, "" -> {""}.
// The views point into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);

}  // namespace draplane::common
