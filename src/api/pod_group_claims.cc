#include "api/pod_group_claims.h"

namespace draplane::api {

const std::string* pod_group_name_of(const Pod& pod) {
  if (!pod.spec.schedulingGroup || !pod.spec.schedulingGroup->podGroupName) return nullptr;
  return &*pod.spec.schedulingGroup->podGroupName;
}

const PodGroupResourceClaim* group_claim_for(const Pod& pod, const PodGroup* group,
                                             const PodResourceClaim& pod_claim) {
  if (group == nullptr) return nullptr;
  const std::string* name = pod_group_name_of(pod);
  if (name == nullptr || *name != group->metadata.name || pod.metadata.namespace_ != group->metadata.namespace_) {
    return nullptr;
  }
  for (const auto& c : group->spec.resourceClaims) {
    if (c.name == pod_claim.name && c.resourceClaimName == pod_claim.resourceClaimName &&
        c.resourceClaimTemplateName == pod_claim.resourceClaimTemplateName) {
      return &c;
    }
  }
  return nullptr;
}

ResourceClaimConsumerReference pod_group_consumer(const PodGroup& group) {
  return {kSchedulingGroup, kPodGroupsResource, group.metadata.name, group.metadata.uid};
}

bool is_pod_group_consumer(const ResourceClaimConsumerReference& r) {
  return r.apiGroup == kSchedulingGroup && r.resource == kPodGroupsResource;
}

bool reserved_for_pod_or_group(const ResourceClaim& claim, const Pod& pod) {
  const std::string* group = pod_group_name_of(pod);
  for (const auto& r : claim.status.reservedFor) {
    if (r.apiGroup.empty() && r.resource == "pods" && r.uid == pod.metadata.uid) return true;
    if (group != nullptr && is_pod_group_consumer(r) && r.name == *group) return true;
  }
  return false;
}

std::optional<OwnerReference> owning_pod_group(const ResourceClaim& claim) {
  const std::string prefix = std::string(kSchedulingGroup) + "/";
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.controller.value_or(false) && o.kind == "PodGroup" && o.apiVersion.rfind(prefix, 0) == 0) return o;
  }
  return std::nullopt;
}

}  // namespace draplane::api
