#include "cmd/input.h"

#include <fstream>
#include <iostream>
#include <sstream>

namespace draplane::cmd {

Result<std::string> read_input(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_error(path + ": cannot open file");
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace draplane::cmd
