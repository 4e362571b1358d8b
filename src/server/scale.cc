// The /scale subresource of Deployments and ReplicaSets, as kube-apiserver
// serves it: an autoscaling/v1 Scale {metadata (the object's name, namespace,
// uid, resourceVersion, creationTimestamp), spec.replicas, status.replicas and
// status.selector (the label selector as text)}. GET reads it; PUT and PATCH
// (merge, JSON and strategic merge patches of the Scale, what `kubectl scale`
// sends) write spec.replicas through an update of the object itself, so the
// object's strategy validates it and a Scale's resourceVersion is a precondition.
#include "server/internal/impl_class.h"
#include "server/strategies.h"

namespace draplane::server {
namespace {

int64_t replicas_of(const JsonValue& obj, std::initializer_list<std::string_view> path) {
  const JsonValue* v = find(obj, path);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

// The Scale of a stored object (as the API returns it).
Json scale_of(const JsonValue& obj) {
  Json s(rapidjson::kObjectType);
  auto& a = s.GetAllocator();
  set_string(s, "kind", "Scale", a);
  set_string(s, "apiVersion", "autoscaling/v1", a);
  JsonValue meta(rapidjson::kObjectType);
  for (const char* k : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    std::string v = get_string(obj, {"metadata", k});
    if (!v.empty()) set_string(meta, k, v, a);
  }
  set_member(s, "metadata", std::move(meta), a);
  JsonValue spec(rapidjson::kObjectType), status(rapidjson::kObjectType);
  set_member(spec, "replicas", JsonValue(replicas_of(obj, {"spec", "replicas"})), a);
  set_member(status, "replicas", JsonValue(replicas_of(obj, {"status", "replicas"})), a);
  std::string sel = label_selector_text(obj);
  if (!sel.empty()) set_string(status, "selector", sel, a);
  set_member(s, "spec", std::move(spec), a);
  set_member(s, "status", std::move(status), a);
  return s;
}

// A reply carrying an object: its Scale, else the reply as it is (an error).
Reply as_scale(Reply r) {
  if (r.code != 200 && r.code != 201) return r;
  auto obj = parse_json(r.body);
  if (!obj.has_value()) return r;
  r.body = to_string(scale_of(*obj));
  return r;
}

}  // namespace

Reply ApiServer::Impl::scale(const Request& req, const Target& t) {
  Target main = t;
  main.subresource.clear();
  Request read = req;
  read.method = "GET";
  read.body.clear();
  Reply current = get(read, main);
  if (req.method == "GET" || current.code != 200) return as_scale(std::move(current));
  if (req.method != "PUT" && req.method != "PATCH") return error_reply(method_not_allowed());

  auto stored = parse_json(current.body);
  if (!stored.has_value()) return error_reply(from_code(Code::kInternal, "stored object is not JSON"));
  Json scale = scale_of(*stored);
  auto& a = scale.GetAllocator();
  auto body = parse_json(req.body);
  if (!body.has_value()) return error_reply(bad_request(body.error().message()));
  std::string ct = req.content_type.substr(0, req.content_type.find(';'));
  if (req.method == "PUT") {
    scale.CopyFrom(*body, a);
  } else if (ct == "application/json-patch+json") {
    if (Status s = json_patch(scale, *body, a); !s.ok()) return error_reply(from_code(s.code(), s.message()));
  } else if (ct == "application/strategic-merge-patch+json") {
    strategic_merge_patch(scale, *body, a);
  } else {
    merge_patch(scale, *body, a);
  }
  const JsonValue* replicas = find(scale, {"spec", "replicas"});
  if (replicas == nullptr || !replicas->IsInt64()) {
    return error_reply(invalid(options_info("Scale"), t.name,
                               {api::field_required(api::FieldPath("spec").child("replicas"))}));
  }
  // The object's update: spec.replicas, and the Scale's resourceVersion as a precondition.
  Json patch(rapidjson::kObjectType);
  auto& pa = patch.GetAllocator();
  JsonValue spec(rapidjson::kObjectType);
  set_member(spec, "replicas", JsonValue(replicas->GetInt64()), pa);
  set_member(patch, "spec", std::move(spec), pa);
  std::string rv = get_string(scale, {"metadata", "resourceVersion"});
  if (req.method == "PUT" && !rv.empty()) {
    JsonValue meta(rapidjson::kObjectType);
    set_string(meta, "resourceVersion", rv, pa);
    set_member(patch, "metadata", std::move(meta), pa);
  }
  Request write = req;
  write.method = "PATCH";
  write.content_type = "application/merge-patch+json";
  write.body = to_string(patch);
  return as_scale(update(write, main, "application/merge-patch+json"));
}

}  // namespace draplane::server
