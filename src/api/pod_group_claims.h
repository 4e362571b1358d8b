// ResourceClaims shared by the pods of a PodGroup (KEP-5729, Kubernetes 1.37
// gate DRAWorkloadResourceClaims; SPEC §6): the matching and ownership rules
// that the claim controller, the scheduler and the node agent must agree on
// (upstream: k8s.io/dynamic-resource-allocation/resourceclaim BindTo,
// IsForPod, IsReservedForPod).
//
// - A pod's spec.resourceClaims entry is the group's claim when the pod names
//   the PodGroup (spec.schedulingGroup.podGroupName, same namespace) and the
//   group's spec.resourceClaims has an entry equal in every field (name,
//   resourceClaimName, resourceClaimTemplateName). Any other entry is the
//   pod's own, as before.
// - Such a claim is reserved for the PodGroup (one status.reservedFor entry
//   {scheduling.k8s.io, podgroups, name, uid}), never for the member pods; a
//   pod counts as a consumer of a claim reserved for its group by name (a pod
//   does not know its group's UID).
// - A claim generated from a group's template is controlled by the PodGroup.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "api/types.h"

namespace draplane::api {

inline constexpr const char* kSchedulingGroup = "scheduling.k8s.io";
inline constexpr const char* kPodGroupsResource = "podgroups";

// The PodGroup the pod names (spec.schedulingGroup.podGroupName); null if none.
const std::string* pod_group_name_of(const Pod& pod);

// The entry of `group` that `pod_claim` of `pod` binds to, or null when the
// claim is the pod's own (no group, the pod is not a member, no equal entry).
const PodGroupResourceClaim* group_claim_for(const Pod& pod, const PodGroup* group, const PodResourceClaim& pod_claim);

// The status.reservedFor entry naming the group.
ResourceClaimConsumerReference pod_group_consumer(const PodGroup& group);
bool is_pod_group_consumer(const ResourceClaimConsumerReference& r);

// True when reservedFor lists the pod (by UID) or the PodGroup it names (by name).
bool reserved_for_pod_or_group(const ResourceClaim& claim, const Pod& pod);

// The controlling ownerReference of kind PodGroup (apiVersion scheduling.k8s.io/*).
std::optional<OwnerReference> owning_pod_group(const ResourceClaim& claim);

}  // namespace draplane::api
