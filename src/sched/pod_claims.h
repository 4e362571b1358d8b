// The claims a pod uses: spec.resourceClaims resolved to ResourceClaim objects
// (resourceClaimName directly; resourceClaimTemplateName through
// status.resourceClaimStatuses, the claim the template controller made), and
// the DeviceClass that serves an extended resource (resources.limits such as
// nvidia.com/gpu: 2) when a node does not offer it itself.
//
// Thread-safety: pure functions over a cache the caller owns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/pod_group_claims.h"
#include "api/types.h"
#include "sched/cluster_cache.h"

namespace draplane::sched {

using api::kDeleteProtectionFinalizer;
using api::kExtendedResourceClaimAnnotation;
using api::kPodClaimNameAnnotation;
inline constexpr const char* kImplicitExtendedPrefix = "deviceclass.resource.kubernetes.io/";

struct ResolvedClaims {
  std::vector<std::string> keys;  // "namespace/name", in spec order, without duplicates
  // Per key: the status.reservedFor entry the pod's use of it needs (the pod,
  // or its PodGroup when the entry binds to the group's claim, KEP-5729).
  std::vector<api::ResourceClaimConsumerReference> consumers;
  // Non-empty: the pod must wait (claim not created yet, missing, being deleted,
  // not owned by the pod, reservedFor full). Text as kube-scheduler's.
  std::string waiting;
  // The wait is for the claim controller to create a claim from a template: a
  // matter of moments, so no Unschedulable condition is written for it
  // (kube-scheduler's PreEnqueue holds such a pod back silently; pods created
  // in a burst otherwise each drew a status write that raced the
  // controller's own).
  bool awaiting_generated_claim = false;
};

// The pod as a claim's status.reservedFor entry.
inline api::ResourceClaimConsumerReference pod_consumer(const api::Pod& pod) {
  return api::ResourceClaimConsumerReference{"", "pods", pod.metadata.name, pod.metadata.uid};
}

// Resolves the pod's claims against the cache (assumed state included). The
// pod's own extended-resource claim, when status names one, is included.
// Entries a PodGroup shares (api/pod_group_claims.h) resolve as the pod's own
// (status.resourceClaimStatuses names a generated one) but may be owned and
// reserved by the group.
ResolvedClaims resolve_claims(const api::Pod& pod, const ClusterCache& cache);

// One extended resource of one container.
struct ExtendedNeed {
  int container = 0;  // index in spec.containers
  std::string container_name;
  std::string resource;
  int64_t count = 0;
  // The DeviceClass serving it (class_for_extended), empty when none: resolved
  // once per cycle by DynamicResources' PreFilter (a per-node lookup scanned
  // every class).
  std::string served_by;
};

// True for names Kubernetes treats as extended resources (a domain other than
// kubernetes.io, or the implicit deviceclass.resource.kubernetes.io/<class>).
bool is_extended_resource(const std::string& name);
// The pod's extended resources (limits, else requests), containers in order,
// names sorted within each container.
std::vector<ExtendedNeed> extended_needs(const api::Pod& pod);
// Class serving `resource`: spec.extendedResourceName equal (newest
// creationTimestamp first, then the lexicographically first name), or the
// implicit name of a class. Null when none.
const api::DeviceClass* class_for_extended(const std::map<std::string, api::DeviceClass>& classes,
                                           const std::string& resource);

// The pending claim (not yet created) that serves `needs` for `pod`: generateName
// "<pod>-extended-resources-", the annotation, an ownerReference to the pod,
// one ExactCount request per need named container-<i>-request-<j>. `mappings`
// receives status.extendedResourceClaimStatus.requestMappings. Each need's
// class is its served_by; needs no class serves are the caller's to reject
// beforehand.
api::ResourceClaim build_extended_claim(const api::Pod& pod, const std::vector<ExtendedNeed>& needs,
                                        std::vector<api::ContainerExtendedResourceRequest>* mappings);

}  // namespace draplane::sched
