#include "controllers/claim_logic.h"

#include <algorithm>

#include "api/pod_group_claims.h"
#include "api/workload.h"

namespace draplane::controllers {

std::string claim_generate_name(std::string_view owner_name, std::string_view claim_name) {
  std::string name = std::string(owner_name) + "-" + std::string(claim_name) + "-";
  if (name.size() <= kMaxGenerateNameBase) return name;
  // Both parts cut in proportion to their lengths, as upstream: cutting the
  // end alone would lose the claim's name whenever the owner's is long.
  const size_t n = name.size();
  return std::string(owner_name.substr(0, owner_name.size() * kMaxGenerateNameBase / n)) + "-" +
         std::string(claim_name.substr(0, claim_name.size() * kMaxGenerateNameBase / n));
}

namespace {

api::ResourceClaim claim_from(const api::ObjectMeta& owner_meta, const std::string& claim_name,
                              const api::ResourceClaimTemplate& tmpl, api::OwnerReference owner) {
  api::ResourceClaim claim;
  claim.typeMeta = {api::kResourceV1, "ResourceClaim"};
  claim.metadata.generateName = claim_generate_name(owner_meta.name, claim_name);
  claim.metadata.namespace_ = owner_meta.namespace_;
  claim.metadata.labels = tmpl.spec.metadata.labels;
  claim.metadata.annotations = tmpl.spec.metadata.annotations;
  claim.metadata.annotations[kPodClaimNameAnnotation] = claim_name;
  owner.name = owner_meta.name;
  owner.uid = owner_meta.uid;
  owner.controller = true;
  claim.metadata.ownerReferences.push_back(std::move(owner));
  claim.spec = tmpl.spec.spec;
  return claim;
}

}  // namespace

api::ResourceClaim claim_from_template(const api::Pod& pod, const api::PodResourceClaim& pod_claim,
                                       const api::ResourceClaimTemplate& tmpl) {
  api::OwnerReference owner;
  owner.apiVersion = "v1";
  owner.kind = "Pod";
  owner.blockOwnerDeletion = true;
  return claim_from(pod.metadata, pod_claim.name, tmpl, std::move(owner));
}

api::ResourceClaim claim_from_group_template(const api::PodGroup& group, const api::PodGroupResourceClaim& group_claim,
                                             const api::ResourceClaimTemplate& tmpl) {
  api::OwnerReference owner;
  owner.apiVersion = api::kSchedulingV1beta1;
  owner.kind = "PodGroup";
  return claim_from(group.metadata, group_claim.name, tmpl, std::move(owner));
}

bool is_pod_terminal(const api::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

bool is_pod_done(const api::Pod& pod) {
  return is_pod_terminal(pod) || (!pod.metadata.deletionTimestamp.empty() && pod.spec.nodeName.empty());
}

std::optional<std::string> claim_name_for(const api::Pod& pod, const api::PodResourceClaim& pod_claim) {
  if (pod_claim.resourceClaimName) return *pod_claim.resourceClaimName;
  for (const auto& s : pod.status.resourceClaimStatuses) {
    if (s.name == pod_claim.name) return s.resourceClaimName;
  }
  return std::nullopt;
}

std::vector<std::string> claim_names_of(const api::Pod& pod) {
  std::vector<std::string> out;
  for (const auto& pc : pod.spec.resourceClaims) {
    if (auto n = claim_name_for(pod, pc)) out.push_back(*n);
  }
  if (pod.status.extendedResourceClaimStatus && !pod.status.extendedResourceClaimStatus->resourceClaimName.empty()) {
    out.push_back(pod.status.extendedResourceClaimStatus->resourceClaimName);
  }
  return out;
}

std::optional<api::OwnerReference> owning_pod(const api::ResourceClaim& claim) {
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.apiVersion == "v1" && o.kind == "Pod" && o.controller.value_or(false)) return o;
  }
  return std::nullopt;
}

bool reserved_for(const api::ResourceClaim& claim, const std::string& pod_uid) {
  return std::any_of(claim.status.reservedFor.begin(), claim.status.reservedFor.end(),
                     [&](const auto& r) { return r.uid == pod_uid; });
}

ClaimDecision decide_claim(const api::ResourceClaim& claim, const PodLookup& pods, const PodGroupLookup& groups) {
  ClaimDecision d;
  d.status = claim.status;
  const std::string& ns = claim.metadata.namespace_;
  std::vector<api::ResourceClaimConsumerReference> valid;
  for (const auto& r : claim.status.reservedFor) {
    // A PodGroup holds its claim until the group itself is gone (KEP-5729):
    // its pods ending does not release it.
    if (api::is_pod_group_consumer(r) && groups) {
      std::optional<api::PodGroup> g = groups(ns, r.name);
      if (!g) {
        d.dropped.push_back("podgroup " + r.name + " (deleted)");
      } else if (g->metadata.uid != r.uid) {
        d.dropped.push_back("podgroup " + r.name + " (replaced)");
      } else {
        valid.push_back(r);
      }
      continue;
    }
    // Pods and groups are understood; anything else stays (upstream keeps
    // unknown consumers because it cannot tell whether they still use the claim).
    if (!r.apiGroup.empty() || r.resource != "pods") {
      valid.push_back(r);
      continue;
    }
    std::optional<api::Pod> pod = pods(ns, r.name, r.uid);
    if (!pod) {
      d.dropped.push_back("pod " + r.name + " (deleted)");
    } else if (pod->metadata.uid != r.uid) {
      d.dropped.push_back("pod " + r.name + " (replaced)");
    } else if (is_pod_done(*pod)) {
      d.dropped.push_back("pod " + r.name + " (done)");
    } else {
      valid.push_back(r);
    }
  }
  const auto& fin = claim.metadata.finalizers;
  const bool protected_ = std::find(fin.begin(), fin.end(), kDeleteProtectionFinalizer) != fin.end();
  if (valid.size() < claim.status.reservedFor.size()) {
    d.update_status = true;
    d.status.reservedFor = valid;
    // Allocated by the scheduler (it adds the finalizer): deallocate once the
    // last consumer is gone, so the devices are free for others.
    if (protected_ && valid.empty()) {
      d.status.allocation.reset();
      d.remove_finalizer = true;
    }
  } else if (protected_ && valid.empty() && !claim.metadata.deletionTimestamp.empty()) {
    // A claim being deleted that nothing uses: release it so the deletion can
    // finish. (Not for a live unreserved claim: the scheduler adds the finalizer
    // before it writes the allocation.)
    if (claim.status.allocation) {
      d.update_status = true;
      d.status.allocation.reset();
    }
    d.remove_finalizer = true;
  }
  if (valid.empty()) {
    if (auto owner = owning_pod(claim)) {
      std::optional<api::Pod> pod = pods(ns, owner->name, owner->uid);
      if (!pod || pod->metadata.uid != owner->uid || is_pod_done(*pod)) {
        d.delete_claim = claim.metadata.deletionTimestamp.empty();
      }
    }
  }
  return d;
}

}  // namespace draplane::controllers
