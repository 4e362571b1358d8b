#include "common/split.h"

namespace draplane::common {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (size_t next; (next = s.find(sep, pos)) != std::string_view::npos; pos = next + 1) {
    out.push_back(s.substr(pos, next - pos));
  }
  out.push_back(s.substr(pos));
  return out;
}

}  // namespace draplane::common
