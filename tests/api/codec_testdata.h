// The codec's test manifests (tests/api/testdata/codec), read whole.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace draplane::api {

inline std::string read_testdata(const std::string& name) {
  std::ifstream in(std::string(DRAPLANE_SOURCE_DIR) + "/tests/api/testdata/codec/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace draplane::api
