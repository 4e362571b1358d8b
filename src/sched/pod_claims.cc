#include "sched/pod_claims.h"

#include <algorithm>
#include <set>

namespace draplane::sched {
namespace {

bool owned_by(const api::ResourceClaim& claim, const api::Pod& pod) {
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.kind == "Pod" && o.name == pod.metadata.name && (pod.metadata.uid.empty() || o.uid == pod.metadata.uid)) {
      return true;
    }
  }
  return false;
}

// Generated for the pod's PodGroup (upstream's IsForPod with the group owner
// accepted: by the group's name, which is all a pod knows of it).
bool owned_by_group(const api::ResourceClaim& claim, const std::string* group) {
  if (group == nullptr) return false;
  auto o = api::owning_pod_group(claim);
  return o && o->name == *group;
}

constexpr size_t kReservedForMax = 256;

}  // namespace

ResolvedClaims resolve_claims(const api::Pod& pod, const ClusterCache& cache) {
  ResolvedClaims out;
  const std::string& ns = pod.metadata.namespace_;
  const std::string* group_name = api::pod_group_name_of(pod);
  const api::PodGroup* group = group_name ? cache.pod_group(ns + "/" + *group_name) : nullptr;
  if (group_name != nullptr && group == nullptr && !pod.spec.resourceClaims.empty()) {
    // Which entries the group shares is unknown until it exists.
    out.waiting = "podgroup.scheduling.k8s.io \"" + *group_name + "\" not found";
    return out;
  }
  std::set<std::string> seen;
  auto check = [&](const std::string& name, bool must_own, const api::ResourceClaimConsumerReference& consumer) {
    std::string key = ns + "/" + name;
    const api::ResourceClaim* c = cache.claim(key);
    if (c == nullptr) {
      out.waiting = "resourceclaim \"" + name + "\" not found";
      return false;
    }
    if (!c->metadata.deletionTimestamp.empty()) {
      out.waiting = "resourceclaim \"" + name + "\" is being deleted";
      return false;
    }
    if (must_own && !owned_by(*c, pod) && !owned_by_group(*c, group_name)) {
      out.waiting = "ResourceClaim " + key + " was not created for pod " + ns + "/" + pod.metadata.name +
                    (group_name ? " (neither pod nor PodGroup " + *group_name + " is the owner)"
                                : std::string(" (pod is not owner)"));
      return false;
    }
    if (!api::reserved_for_pod_or_group(*c, pod) && c->status.reservedFor.size() >= kReservedForMax) {
      out.waiting = "resourceclaim \"" + name + "\" is in use by " + std::to_string(kReservedForMax) +
                    " consumers, the maximum (status.reservedFor)";
      return false;
    }
    if (seen.insert(key).second) {
      out.keys.push_back(key);
      out.consumers.push_back(consumer);
    }
    return true;
  };
  for (size_t i = 0; i < pod.spec.resourceClaims.size(); ++i) {
    const auto& rc = pod.spec.resourceClaims[i];
    const api::ResourceClaimConsumerReference consumer =
        api::group_claim_for(pod, group, rc) ? api::pod_group_consumer(*group) : pod_consumer(pod);
    if (rc.resourceClaimName) {
      if (!check(*rc.resourceClaimName, false, consumer)) return out;
      continue;
    }
    if (!rc.resourceClaimTemplateName) continue;  // invalid pod; validation rejects it
    const api::PodResourceClaimStatus* st = nullptr;
    for (const auto& s : pod.status.resourceClaimStatuses) {
      if (s.name == rc.name) st = &s;
    }
    if (st == nullptr) {
      out.waiting = "pod \"" + ns + "/" + pod.metadata.name + "\": ResourceClaim not created yet from template \"" +
                    *rc.resourceClaimTemplateName + "\" (spec.resourceClaims[" + std::to_string(i) + "])";
      out.awaiting_generated_claim = true;
      return out;
    }
    if (!st->resourceClaimName) continue;  // the controller decided no claim is needed
    if (!check(*st->resourceClaimName, true, consumer)) return out;
  }
  if (pod.status.extendedResourceClaimStatus && !pod.status.extendedResourceClaimStatus->resourceClaimName.empty()) {
    std::string key = ns + "/" + pod.status.extendedResourceClaimStatus->resourceClaimName;
    if (cache.claim(key) != nullptr && seen.insert(key).second) {
      out.keys.push_back(key);
      out.consumers.push_back(pod_consumer(pod));
    }
  }
  return out;
}

bool is_extended_resource(const std::string& name) {
  if (name.rfind("requests.", 0) == 0) return false;
  if (name.rfind(kImplicitExtendedPrefix, 0) == 0) return name.size() > std::string(kImplicitExtendedPrefix).size();
  auto slash = name.find('/');
  if (slash == std::string::npos) return false;
  std::string domain = name.substr(0, slash);
  if (domain == "kubernetes.io") return false;
  const std::string suffix = ".kubernetes.io";
  return !(domain.size() > suffix.size() && domain.compare(domain.size() - suffix.size(), suffix.size(), suffix) == 0);
}

std::vector<ExtendedNeed> extended_needs(const api::Pod& pod) {
  std::vector<ExtendedNeed> out;
  for (size_t i = 0; i < pod.spec.containers.size(); ++i) {
    const auto& c = pod.spec.containers[i];
    std::map<std::string, int64_t> wanted;  // sorted names
    for (const auto& [name, q] : c.resources.requests) {
      if (is_extended_resource(name)) wanted[name] = q.value();
    }
    for (const auto& [name, q] : c.resources.limits) {
      if (is_extended_resource(name)) wanted[name] = q.value();  // limits win (they must be equal)
    }
    for (const auto& [name, n] : wanted) {
      if (n > 0) out.push_back(ExtendedNeed{static_cast<int>(i), c.name, name, n, {}});
    }
  }
  return out;
}

const api::DeviceClass* class_for_extended(const std::map<std::string, api::DeviceClass>& classes,
                                           const std::string& resource) {
  const api::DeviceClass* best = nullptr;
  for (const auto& [name, cls] : classes) {  // name order: ties go to the first
    if (!cls.spec.extendedResourceName || *cls.spec.extendedResourceName != resource) continue;
    if (best == nullptr || cls.metadata.creationTimestamp > best->metadata.creationTimestamp) best = &cls;
  }
  if (best != nullptr) return best;
  if (resource.rfind(kImplicitExtendedPrefix, 0) == 0) {
    auto it = classes.find(resource.substr(std::string(kImplicitExtendedPrefix).size()));
    if (it != classes.end()) return &it->second;
  }
  return nullptr;
}

api::ResourceClaim build_extended_claim(const api::Pod& pod, const std::vector<ExtendedNeed>& needs,
                                        std::vector<api::ContainerExtendedResourceRequest>* mappings) {
  api::ResourceClaim claim;
  claim.typeMeta = {api::kResourceV1, "ResourceClaim"};
  claim.metadata.namespace_ = pod.metadata.namespace_;
  claim.metadata.generateName = pod.metadata.name + "-extended-resources-";
  claim.metadata.annotations[kExtendedResourceClaimAnnotation] = "true";
  claim.metadata.ownerReferences.push_back(
      api::OwnerReference{"v1", "Pod", pod.metadata.name, pod.metadata.uid, true, true});
  std::map<int, int> per_container;
  for (const auto& need : needs) {
    int j = per_container[need.container]++;
    api::DeviceRequest r;
    r.name = "container-" + std::to_string(need.container) + "-request-" + std::to_string(j);
    api::ExactDeviceRequest ex;
    ex.deviceClassName = need.served_by;
    ex.allocationMode = api::kAllocationModeExactCount;
    ex.count = need.count;
    r.exactly = std::move(ex);
    if (mappings != nullptr) mappings->push_back({need.container_name, need.resource, r.name});
    claim.spec.devices.requests.push_back(std::move(r));
  }
  return claim;
}

}  // namespace draplane::sched
