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

Result<void> RestBinder::update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) {
  Status last;
  for (int attempt = 0; attempt < 4; ++attempt) {
    // First the caller's copy (the scheduler's cache): its resourceVersion
    // guards the update, so a pod that changed meanwhile (bound, say) is
    // refused and read afresh; the GET a write costs otherwise was a tenth of
    // a busy cluster's requests (Unschedulable conditions of waiting pods).
    api::Pod p;
    if (attempt == 0 && !pod.metadata.resourceVersion.empty()) {
      p = pod;
    } else {
      ASSIGN_OR_RETURN(std::string current, client_.get(pod_path(pod)));
      ASSIGN_OR_RETURN(p, api::decode_as<api::Pod>(current));
    }
    if (!pod.metadata.uid.empty() && p.metadata.uid != pod.metadata.uid) {
      return not_found_error("pod " + pod.metadata.namespace_ + "/" + pod.metadata.name + " was replaced");
    }
    mutate(p);
    p.typeMeta = {"v1", "Pod"};
    auto r = client_.put(pod_path(pod).sub("status"), api::to_json(p));
    if (r.has_value()) return {};
    last = r.error();
    if (last.code() != Code::kConflict) break;
  }
  return last;
}

Result<void> RestBinder::update_pod_group_status(const api::PodGroup& group,
                                                 const std::function<void(api::PodGroup&)>& mutate) {
  const client::Path path =
      client::resources::kPodGroups.ns(group.metadata.namespace_).name(group.metadata.name);
  Status last;
  for (int attempt = 0; attempt < 4; ++attempt) {
    // The cache's copy first (its resourceVersion guards the write), then the current one.
    api::PodGroup g;
    if (attempt == 0 && !group.metadata.resourceVersion.empty()) {
      g = group;
    } else {
      ASSIGN_OR_RETURN(std::string current, client_.get(path));
      ASSIGN_OR_RETURN(g, api::decode_as<api::PodGroup>(current));
    }
    mutate(g);
    g.typeMeta = {"scheduling.k8s.io/v1beta1", "PodGroup"};
    auto r = client_.put(path.sub("status"), api::to_json(g));
    if (r.has_value()) return {};
    last = r.error();
    if (last.code() != Code::kConflict) break;
  }
  return last;
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
