#include "client/resource_path.h"

namespace draplane::client {
namespace {

std::string prefix(const ResourcePath& r) {
  if (r.group.empty()) return "/api/" + std::string(r.version);
  return "/apis/" + std::string(r.group) + "/" + std::string(r.version);
}

}  // namespace

Path ResourcePath::all() const { return Path(prefix(*this) + "/" + std::string(resource)); }

Path ResourcePath::ns(std::string_view n) const {
  return Path(prefix(*this) + "/namespaces/" + std::string(n) + "/" + std::string(resource));
}

}  // namespace draplane::client
