#include "cel/issues.h"

namespace draplane::cel {

std::string format_issues(std::string_view source, const std::vector<Issue>& issues) {
  std::string out;
  for (const auto& issue : issues) {
    size_t off = std::min<size_t>(static_cast<size_t>(issue.offset < 0 ? 0 : issue.offset), source.size());
    size_t line_start = 0;
    int line = 1;
    for (size_t i = 0; i < off; ++i) {
      if (source[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    int col = 1;
    for (size_t i = line_start; i < off; ++i) {
      // Count code points: skip UTF-8 continuation bytes.
      if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) ++col;
    }
    size_t line_end = source.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = source.size();
    if (!out.empty()) out += "\n";
    out += "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(col) + ": " + issue.message;
    out += "\n | ";
    out += source.substr(line_start, line_end - line_start);
    out += "\n | ";
    out += std::string(static_cast<size_t>(col - 1), '.');
    out += "^";
  }
  return out;
}

}  // namespace draplane::cel
