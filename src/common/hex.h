// hex_encode: bytes as two hex digits each (Go's hex.EncodeToString, or
// fmt's %X when `upper`).
#pragma once

#include <string>
#include <string_view>

namespace draplane::common {

std::string hex_encode(std::string_view bytes, bool upper = false);

}  // namespace draplane::common
