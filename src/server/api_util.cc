// Small helpers of the API server: replies, time formatting, targets.
#include <ctime>

#include "server/internal/api_impl.h"

namespace draplane::server {

std::string Target::key() const {
  std::string k = resource->key_prefix();
  if (resource->namespaced) k += namespace_ + "/";
  return k + name;
}

std::string Target::prefix() const {
  std::string k = resource->key_prefix();
  if (resource->namespaced && !namespace_.empty()) k += namespace_ + "/";
  return k;
}

Reply json_reply(int code, std::string body) {
  Reply r;
  r.code = code;
  r.body = std::move(body);
  return r;
}

Reply error_reply(const ApiError& e) { return json_reply(e.http, status_json(e)); }

std::string human_duration(int64_t s) {
  // k8s.io/apimachinery/pkg/util/duration.HumanDuration
  if (s < 0) return "<invalid>";
  if (s < 120) return std::to_string(s) + "s";
  int64_t m = s / 60;
  if (m < 10) {
    int64_t rs = s % 60;
    return rs == 0 ? std::to_string(m) + "m" : std::to_string(m) + "m" + std::to_string(rs) + "s";
  }
  if (m < 180) return std::to_string(m) + "m";
  int64_t h = s / 3600;
  if (h < 8) {
    int64_t rm = (s / 60) % 60;
    return rm == 0 ? std::to_string(h) + "h" : std::to_string(h) + "h" + std::to_string(rm) + "m";
  }
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24 * 8) {
    int64_t rh = h % 24;
    return rh == 0 ? std::to_string(h / 24) + "d" : std::to_string(h / 24) + "d" + std::to_string(rh) + "h";
  }
  if (h < 24 * 365 * 2) return std::to_string(h / 24) + "d";
  if (h < 24 * 365 * 8) {
    int64_t dy = (h / 24) % 365;
    return dy == 0 ? std::to_string(h / 24 / 365) + "y" : std::to_string(h / 24 / 365) + "y" + std::to_string(dy) + "d";
  }
  return std::to_string(h / 24 / 365) + "y";
}

void set_resource_version(Json& object, int64_t rev) {
  if (!object.IsObject()) return;
  JsonValue& meta = ensure_object(object, "metadata", object.GetAllocator());
  set_string(meta, "resourceVersion", std::to_string(rev), object.GetAllocator());
}

bool wants_table(const std::string& accept) { return accept.find("as=Table") != std::string::npos; }

}  // namespace draplane::server
