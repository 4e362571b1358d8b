#include "bench/check.h"

#include <algorithm>
#include <map>
#include <set>

#include "controllers/claim_logic.h"

namespace draplane::bench {
namespace {

// False when the allocation is pinned to other nodes by name (the only
// node-specific selector the scheduler writes).
bool allocation_admits(const api::AllocationResult& a, const std::string& node) {
  if (!a.nodeSelector) return true;
  for (const auto& term : a.nodeSelector->nodeSelectorTerms) {
    bool pinned = false, here = false;
    for (const auto& f : term.matchFields) {
      if (f.key != "metadata.name") continue;
      pinned = true;
      here = here || std::find(f.values.begin(), f.values.end(), node) != f.values.end();
    }
    if (!pinned || here) return true;
  }
  return false;
}

void check_devices(const std::vector<api::ResourceClaim>& claims, std::vector<std::string>& errors) {
  std::map<std::string, std::string> owner;  // driver/pool/device -> claim
  for (const auto& c : claims) {
    if (!c.status.allocation) continue;
    const std::string key = c.metadata.namespace_ + "/" + c.metadata.name;
    for (const auto& r : c.status.allocation->devices.results) {
      const std::string dev = r.driver + "/" + r.pool + "/" + r.device;
      auto [it, fresh] = owner.emplace(dev, key);
      if (!fresh && it->second != key) {
        errors.push_back("device " + dev + " allocated to both " + it->second + " and " + key);
      }
    }
  }
}

void check_pod(const api::Pod& pod, const std::map<std::string, const api::ResourceClaim*>& by_key,
               std::vector<std::string>& errors) {
  const std::string pkey = pod.metadata.namespace_ + "/" + pod.metadata.name;
  for (const auto& name : controllers::claim_names_of(pod)) {
    auto it = by_key.find(pod.metadata.namespace_ + "/" + name);
    if (it == by_key.end()) {
      errors.push_back("pod " + pkey + " bound to " + pod.spec.nodeName + ": its claim " + name + " does not exist");
      continue;
    }
    const api::ResourceClaim& c = *it->second;
    if (!c.status.allocation) {
      errors.push_back("pod " + pkey + ": claim " + name + " is bound but not allocated");
    } else if (!allocation_admits(*c.status.allocation, pod.spec.nodeName)) {
      errors.push_back("pod " + pkey + ": claim " + name + " is allocated for other nodes than " + pod.spec.nodeName);
    }
    if (!controllers::reserved_for(c, pod.metadata.uid)) {
      errors.push_back("pod " + pkey + ": claim " + name + " is not reserved for it");
    }
  }
  // A pod with claims that names none of them in its status (a template not
  // turned into a claim) shows as a missing claim above only when recorded.
  for (const auto& pc : pod.spec.resourceClaims) {
    if (pc.resourceClaimTemplateName && !controllers::claim_name_for(pod, pc)) {
      errors.push_back("pod " + pkey + " is bound but its claim " + pc.name + " was never created");
    }
  }
}

}  // namespace

std::vector<std::string> check_state(const std::vector<api::Pod>& pods, const std::vector<api::ResourceClaim>& claims,
                                     const Expectation& expect) {
  std::vector<std::string> errors;
  check_devices(claims, errors);
  std::map<std::string, const api::ResourceClaim*> by_key;
  for (const auto& c : claims) by_key[c.metadata.namespace_ + "/" + c.metadata.name] = &c;
  int bound = 0, unbound = 0;
  for (const auto& p : pods) {
    const bool measured = p.metadata.namespace_ == expect.measured_namespace;
    if (p.spec.nodeName.empty()) {
      if (measured) ++unbound;
      continue;
    }
    if (measured) ++bound;
    check_pod(p, by_key, errors);
  }
  if (bound != expect.bound) {
    errors.push_back(std::to_string(bound) + " measured pods bound, the workload implies " + std::to_string(expect.bound));
  }
  if (unbound != expect.unschedulable) {
    errors.push_back(std::to_string(unbound) + " measured pods unbound, the workload implies " +
                     std::to_string(expect.unschedulable));
  }
  return errors;
}

}  // namespace draplane::bench
