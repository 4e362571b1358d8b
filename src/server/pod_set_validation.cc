#include "server/pod_set_validation.h"

#include "api/codec.h"
#include "api/codec_tree.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "server/api_error.h"

namespace draplane::server {
namespace {

void default_int(JsonValue& obj, const char* key, int value, JsonAlloc& a) {
  if (find(obj, {key}) == nullptr) set_member(obj, key, JsonValue(value), a);
}

// Upstream's SetDefaults_StatefulSet / SetDefaults_DaemonSet for the members checked here.
void set_defaults(PodSetKind kind, JsonValue& spec, JsonAlloc& a) {
  const bool sts = kind == PodSetKind::kStatefulSet;
  if (sts) {
    default_int(spec, "replicas", 1, a);
    if (find(spec, {"podManagementPolicy"}) == nullptr) set_string(spec, "podManagementPolicy", "OrderedReady", a);
  }
  default_int(spec, "revisionHistoryLimit", 10, a);
  JsonValue& strategy = ensure_object(spec, "updateStrategy", a);
  if (find(strategy, {"type"}) == nullptr) set_string(strategy, "type", "RollingUpdate", a);
  if (get_string(strategy, {"type"}) != "RollingUpdate") return;
  JsonValue& ru = ensure_object(strategy, "rollingUpdate", a);
  if (sts) {
    default_int(ru, "partition", 0, a);
  } else {
    default_int(ru, "maxUnavailable", 1, a);
    default_int(ru, "maxSurge", 0, a);
  }
}

// The members a ReplicaSet shares with the kind, as a ReplicaSet to validate.
Json as_replica_set(PodSetKind kind, const JsonValue& object) {
  Json rs(rapidjson::kObjectType);
  auto& a = rs.GetAllocator();
  set_string(rs, "apiVersion", "apps/v1", a);
  set_string(rs, "kind", "ReplicaSet", a);
  if (const JsonValue* m = find(object, {"metadata"})) set_member(rs, "metadata", JsonValue(*m, a), a);
  JsonValue spec(rapidjson::kObjectType);
  for (const char* k : {"replicas", "selector", "template", "minReadySeconds"}) {
    if (kind == PodSetKind::kDaemonSet && std::string_view(k) == "replicas") continue;
    if (const JsonValue* v = find(object, {"spec", k})) set_member(spec, k, JsonValue(*v, a), a);
  }
  set_member(rs, "spec", std::move(spec), a);
  return rs;
}

void check_own_members(PodSetKind kind, const JsonValue& spec, api::FieldErrorList& errs) {
  const api::FieldPath path("spec");
  const std::string type = get_string(spec, {"updateStrategy", "type"});
  if (type != "RollingUpdate" && type != "OnDelete") {
    errs.push_back(api::field_not_supported(path.child("updateStrategy", "type"), type, {"RollingUpdate", "OnDelete"}));
  } else if (type == "OnDelete" && find(spec, {"updateStrategy", "rollingUpdate"}) != nullptr) {
    errs.push_back(api::field_invalid(path.child("updateStrategy", "rollingUpdate"), api::BadValue::raw("{...}"),
                                      "only allowed for updateStrategy 'RollingUpdate'"));
  }
  const JsonValue* history = find(spec, {"revisionHistoryLimit"});
  if (history != nullptr && history->IsInt64() && history->GetInt64() < 0) {
    errs.push_back(api::field_invalid(path.child("revisionHistoryLimit"), history->GetInt64(),
                                      "must be greater than or equal to 0"));
  }
  if (kind != PodSetKind::kStatefulSet) return;
  const std::string policy = get_string(spec, {"podManagementPolicy"});
  if (policy != "OrderedReady" && policy != "Parallel") {
    errs.push_back(api::field_not_supported(path.child("podManagementPolicy"), policy, {"OrderedReady", "Parallel"}));
  }
}

}  // namespace

std::optional<ApiError> validate_pod_set(PodSetKind kind, const ResourceInfo& r, Json& object) {
  auto& a = object.GetAllocator();
  if (!object.IsObject()) return from_code(Code::kBadRequest, "the object is not a JSON object");
  JsonValue& spec = ensure_object(object, "spec", a);
  set_defaults(kind, spec, a);
  Json rs = as_replica_set(kind, object);
  auto decoded = api::decode_tree_lenient(rs);
  if (!decoded.has_value()) {
    return from_code(Code::kBadRequest, r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind +
                                            ": " + decoded.error().message());
  }
  api::apply_defaults(decoded->object);
  api::FieldErrorList errs = api::validate(decoded->object);
  const std::string word = kind == PodSetKind::kStatefulSet ? "statefulset" : "daemonset";
  for (auto& e : errs) {
    if (e.detail == "empty selector is invalid for deployment") e.detail = "empty selector is invalid for " + word;
  }
  check_own_members(kind, spec, errs);
  if (errs.empty()) return std::nullopt;
  return invalid(r, get_string(object, {"metadata", "name"}), std::move(errs));
}

}  // namespace draplane::server
