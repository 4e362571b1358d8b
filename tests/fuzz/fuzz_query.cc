// libFuzzer target for request targets: the path and query string split and
// decoded as the HTTP layer does, then the selector parameters parsed as a
// list or watch parses them.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "server/query_string.h"
#include "server/resources.h"
#include "server/selectors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view target(reinterpret_cast<const char*>(data), size);
  std::string path;
  std::map<std::string, std::string> query;
  draplane::server::split_target(target, path, query);
  static const draplane::server::ResourceInfo* pods = draplane::server::find_resource("", "v1", "pods");
  if (auto it = query.find("labelSelector"); it != query.end()) {
    (void)draplane::server::Selector::parse_labels(it->second);
  }
  if (auto it = query.find("fieldSelector"); it != query.end() && pods != nullptr) {
    (void)draplane::server::Selector::parse_fields(it->second, *pods);
  }
  return 0;
}
