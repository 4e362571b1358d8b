// The decisions of the resource-claim controller as pure functions (after
// kubernetes pkg/controller/resourceclaim/controller.go), so that they are
// tested without an API server:
//
// - which claim a pod's resourceClaims entry names (resourceClaimName, or the
//   claim recorded in pod.status.resourceClaimStatuses for a template);
// - the ResourceClaim generated from a ResourceClaimTemplate for one pod claim;
// - what to do with a claim: drop stale status.reservedFor entries (pod gone,
//   replaced by another with the same name, or terminal), deallocate and drop
//   the delete-protection finalizer when nothing reserves it, delete a claim
//   generated for a pod that is done or gone;
// - the same for a PodGroup's claims (KEP-5729): made from the group's
//   templates, reserved for the group until it is gone. A group's generated
//   claim is deleted with the group by the API server's garbage collection
//   (ownerReferences), as upstream's garbage collector does.
//
// Pure functions; thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"

namespace draplane::controllers {

using api::kDeleteProtectionFinalizer;
using api::kPodClaimNameAnnotation;
// Upstream: leave room for "-" and 5 random characters in a 63-character name.
inline constexpr size_t kMaxGenerateNameBase = 57;

// `<owner>-<claim>-` (owner: the pod or PodGroup); longer than 57 characters,
// `<owner[:k]>-<claim[:m]>` with both cut in proportion to their lengths.
std::string claim_generate_name(std::string_view owner_name, std::string_view claim_name);

// The claim (generateName set, name empty) for `pod_claim` of `pod` made from
// `tmpl`: labels and annotations of tmpl.spec.metadata plus the pod-claim-name
// annotation, a controlling ownerReference to the pod (blockOwnerDeletion), and
// tmpl.spec.spec as spec.
api::ResourceClaim claim_from_template(const api::Pod& pod, const api::PodResourceClaim& pod_claim,
                                       const api::ResourceClaimTemplate& tmpl);

// The claim made from `tmpl` for `group_claim` of a PodGroup (KEP-5729): as
// for a pod, but controlled by the PodGroup (apiVersion
// scheduling.k8s.io/v1beta1, no blockOwnerDeletion, as upstream) and named
// `<group>-<claim>-`; the pod-claim-name annotation holds the group's entry name.
api::ResourceClaim claim_from_group_template(const api::PodGroup& group, const api::PodGroupResourceClaim& group_claim,
                                             const api::ResourceClaimTemplate& tmpl);

// Phase Succeeded or Failed.
bool is_pod_terminal(const api::Pod& pod);
// Terminal, or deleted before it was ever scheduled: it will not run again.
bool is_pod_done(const api::Pod& pod);

// The claim name a pod claim refers to: resourceClaimName, or for a template the
// name recorded in status.resourceClaimStatuses (nullopt when not created yet,
// or recorded as null: "no claim needed").
std::optional<std::string> claim_name_for(const api::Pod& pod, const api::PodResourceClaim& pod_claim);

// Every claim name the pod uses: direct, generated and the extended-resource claim.
std::vector<std::string> claim_names_of(const api::Pod& pod);

// The controlling ownerReference of kind Pod (apiVersion v1), if any.
std::optional<api::OwnerReference> owning_pod(const api::ResourceClaim& claim);

// True when the claim's reservedFor lists this pod's UID.
bool reserved_for(const api::ResourceClaim& claim, const std::string& pod_uid);

// Current state of a pod by namespace and name (nullopt: it does not exist).
// `uid` is the one the claim refers to (a reservation's, its owner's): a
// lookup that knows that pod to be gone may answer nullopt without asking.
using PodLookup =
    std::function<std::optional<api::Pod>(const std::string& ns, const std::string& name, const std::string& uid)>;

struct ClaimDecision {
  // Write status (reservedFor and maybe allocation) through the status subresource.
  bool update_status = false;
  api::ResourceClaimStatus status;
  // Then remove the delete-protection finalizer (an update of the object).
  bool remove_finalizer = false;
  // Delete the claim: it was generated for a pod that is done or gone.
  bool delete_claim = false;
  std::vector<std::string> dropped;  // "pod <name> (<why>)" for the log
};

// Current state of a PodGroup by namespace and name (nullopt: it does not exist).
using PodGroupLookup = std::function<std::optional<api::PodGroup>(const std::string& ns, const std::string& name)>;

// Decides what the controller does with `claim`, reading pods through `pods`
// and PodGroups through `groups`: a reservation for a PodGroup stays while the
// group exists (same UID); without `groups` such entries are kept as unknown.
ClaimDecision decide_claim(const api::ResourceClaim& claim, const PodLookup& pods, const PodGroupLookup& groups = {});

}  // namespace draplane::controllers
