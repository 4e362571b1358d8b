#include "sched/rest_binder.h"

#include "api/codec.h"
#include "client/resource_path.h"

namespace draplane::sched {
namespace {

using client::resources::kResourceClaims;

client::Path claim_path(const api::ResourceClaim& c) { return kResourceClaims.ns(c.metadata.namespace_).name(c.metadata.name); }
client::Path pod_path(const api::Pod& pod) {
  return client::resources::kPods.ns(pod.metadata.namespace_).name(pod.metadata.name);
}

api::ResourceClaim with_type(api::ResourceClaim c) {
  c.typeMeta = {api::kResourceV1, "ResourceClaim"};
  return c;
}

// JSON strings need escaping only for names the API accepts (DNS names): none
// of '"' or '\\' can occur, so plain concatenation is safe here.
std::string binding_json(const api::Pod& pod, const std::string& node) {
  return R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + pod.metadata.name + R"(","namespace":")" +
         pod.metadata.namespace_ + R"(","uid":")" + pod.metadata.uid +
         R"("},"target":{"apiVersion":"v1","kind":"Node","name":")" + node + R"("}})";
}

}  // namespace

Result<api::ResourceClaim> RestBinder::create_claim(const api::ResourceClaim& claim) {
  ASSIGN_OR_RETURN(std::string body, client_.post(kResourceClaims.ns(claim.metadata.namespace_), api::to_json(with_type(claim))));
  return api::decode_as<api::ResourceClaim>(body);
}

Result<api::ResourceClaim> RestBinder::update_claim(const api::ResourceClaim& claim) {
  ASSIGN_OR_RETURN(std::string body, client_.put(claim_path(claim),
                                                 api::to_json(with_type(claim))));
  return api::decode_as<api::ResourceClaim>(body);
}

Result<api::ResourceClaim> RestBinder::update_claim_status(const api::ResourceClaim& claim) {
  ASSIGN_OR_RETURN(std::string body,
                   client_.put(claim_path(claim).sub("status"),
                               api::to_json(with_type(claim))));
  return api::decode_as<api::ResourceClaim>(body);
}

Result<void> RestBinder::bind(const api::Pod& pod, const std::string& node) {
  ASSIGN_OR_RETURN(std::string body, client_.post(pod_path(pod).sub("binding"), binding_json(pod, node)));
  (void)body;
  return {};
}

namespace {

// Read-modify-write of an object's status at `path`, retried on conflicts.
// First the caller's copy (the scheduler's cache): its resourceVersion guards
// the update, so an object that changed meanwhile (a pod bound, say) is
// refused and read afresh; the GET a write costs otherwise was a tenth of a
// busy cluster's requests (Unschedulable conditions of waiting pods). An
// object replaced under the same name (another uid) is not written.
template <typename T>
Result<void> write_status(client::RestClient& client, const client::Path& path, const T& cached,
                          api::TypeMeta type, const std::function<void(T&)>& mutate) {
  const std::string what = type.kind == "Pod" ? "pod" : type.kind;
  Status last;
  for (int attempt = 0; attempt < 4; ++attempt) {
    T obj;
    if (attempt == 0 && !cached.metadata.resourceVersion.empty()) {
      obj = cached;
    } else {
      ASSIGN_OR_RETURN(std::string current, client.get(path));
      ASSIGN_OR_RETURN(obj, api::decode_as<T>(current));
    }
    if (!cached.metadata.uid.empty() && obj.metadata.uid != cached.metadata.uid) {
      return not_found_error(what + " " + cached.metadata.namespace_ + "/" + cached.metadata.name +
                             " was replaced");
    }
    mutate(obj);
    obj.typeMeta = type;
    auto r = client.put(path.sub("status"), api::to_json(obj));
    if (r.has_value()) return {};
    last = r.error();
    if (last.code() != Code::kConflict) break;
  }
  return last;
}

}  // namespace

Result<void> RestBinder::update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) {
  return write_status<api::Pod>(client_, pod_path(pod), pod, {"v1", "Pod"}, mutate);
}

Result<void> RestBinder::update_pod_group_status(const api::PodGroup& group,
                                                 const std::function<void(api::PodGroup&)>& mutate) {
  const client::Path path = client::resources::kPodGroups.ns(group.metadata.namespace_).name(group.metadata.name);
  return write_status<api::PodGroup>(client_, path, group, {"scheduling.k8s.io/v1beta1", "PodGroup"}, mutate);
}

Result<void> RestBinder::delete_pod(const api::Pod& pod) {
  // No gracePeriodSeconds: the server applies the pod's own, as upstream's
  // preemption deletes with empty options (and the UID precondition here).
  const std::string opts = "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"" +
                           pod.metadata.uid + "\"}}";
  ASSIGN_OR_RETURN(client::Response r, client_.request("DELETE", pod_path(pod).str(), opts));
  if (r.status >= 200 && r.status < 300) return {};
  return client::status_from_response(r);
}

void RestBinder::record_event(const api::Pod& pod, const char* type, const char* reason, const char* action,
                              const std::string& message) {
  if (recorder_ == nullptr) return;
  client::ObjectReference ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.namespace_ = pod.metadata.namespace_;
  ref.name = pod.metadata.name;
  ref.uid = pod.metadata.uid;
  // kube-scheduler's recorder per profile: reportingController is the
  // profile's name, reportingInstance <name>-<hostname>.
  std::string controller = pod.spec.schedulerName.empty() ? "default-scheduler" : pod.spec.schedulerName;
  std::string instance = controller + "-" + hostname_;
  recorder_->record(ref, type, reason, action, message, std::move(controller), std::move(instance));
}

}  // namespace draplane::sched
