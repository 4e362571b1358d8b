// libFuzzer target for label and field selectors: parsed for a few resources
// and, when they parse, matched against a fixed object.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/json_util.h"
#include "server/resources.h"
#include "server/selectors.h"

namespace {

const draplane::server::Json& object() {
  static const draplane::server::Json o = [] {
    auto j = draplane::server::parse_json(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",)"
        R"("labels":{"app":"web","tier":"gpu","example.com/x":"1"}},"spec":{"nodeName":"n1",)"
        R"("schedulerName":"default-scheduler"},"status":{"phase":"Running"}})");
    return std::move(j).value();
  }();
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto s = draplane::server::Selector::parse_labels(text); s.has_value()) {
    (void)s->matches_labels(object());
    (void)s->pinned_name();
  }
  for (const char* resource : {"pods", "nodes", "namespaces"}) {
    const auto* r = draplane::server::find_resource("", "v1", resource);
    if (r == nullptr) continue;
    if (auto s = draplane::server::Selector::parse_fields(text, *r); s.has_value()) {
      (void)s->matches_fields(object());
      (void)s->pinned_name();
    }
  }
  if (const auto* r = draplane::server::find_resource("resource.k8s.io", "v1", "resourceslices")) {
    if (auto s = draplane::server::Selector::parse_fields(text, *r); s.has_value()) (void)s->matches_fields(object());
  }
  return 0;
}
