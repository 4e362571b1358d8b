// The versions served by conversion, as kube-apiserver serves them: objects are
// kept in the storage version; a request body of the served version is
// converted to it before the common path, and every object that goes out is
// converted to the requested version. resource.k8s.io v1beta1/v1beta2 are
// stored as resource.k8s.io/v1 (api/conversion.h); events.k8s.io/v1 Events as
// core/v1 Events (event_conversion.cc).
#include "api/conversion.h"
#include "server/internal/api_impl.h"
#include "server/internal/event_conversion.h"

namespace draplane::server {

std::optional<ApiError> to_storage_version(const ResourceInfo& r, Json& object) {
  if (!r.converted) return std::nullopt;
  if (is_events_v1(r)) {
    event_to_core(object);
    return std::nullopt;
  }
  auto v1 = api::convert_json(to_string(object), api::kResourceV1);
  if (!v1.has_value()) {
    return bad_request(r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind + ": " +
                       v1.error().message());
  }
  auto parsed = parse_json(*v1);
  if (!parsed.has_value()) return from_code(Code::kInternal, "conversion: " + parsed.error().message());
  object = std::move(parsed).value();
  return std::nullopt;
}

std::string served_text(const ResourceInfo& r, std::string stored_json) {
  if (!r.converted) return stored_json;
  if (is_events_v1(r)) {
    auto parsed = parse_json(stored_json);
    if (!parsed.has_value()) return stored_json;
    event_to_events_v1(*parsed);
    return to_string(*parsed);
  }
  auto out = api::convert_json(stored_json, r.group_version());
  // Stored objects are v1 written by this server; should one not convert, it
  // goes out as stored rather than not at all.
  return out.has_value() ? std::move(out).value() : stored_json;
}

void to_served_version(const ResourceInfo& r, Json& object) {
  if (!r.converted) return;
  if (is_events_v1(r)) {
    event_to_events_v1(object);
    return;
  }
  auto parsed = parse_json(served_text(r, to_string(object)));
  if (parsed.has_value()) object = std::move(parsed).value();
}

}  // namespace draplane::server
