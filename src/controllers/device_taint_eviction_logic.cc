#include "controllers/device_taint_eviction_logic.h"

#include <algorithm>
#include <set>

#include "alloc/taint_rules.h"
#include "api/pod_group_claims.h"
#include "common/rfc3339.h"
#include "controllers/claim_logic.h"

namespace draplane::controllers {
namespace {

constexpr const char* kNoExecute = "NoExecute";

std::string device_key(const std::string& driver, const std::string& pool, const std::string& device) {
  return driver + "/" + pool + "/" + device;
}

std::string taint_text(const api::DeviceTaint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

// Upstream's order of reasons: rules first (by name), then slice taints by device.
bool reason_less(const EvictingTaint& a, const EvictingTaint& b) {
  if (a.rule.empty() != b.rule.empty()) return !a.rule.empty();
  if (a.rule != b.rule) return a.rule < b.rule;
  return std::tie(a.driver, a.pool, a.device, a.taint.key, a.taint.value) <
         std::tie(b.driver, b.pool, b.device, b.taint.key, b.taint.value);
}

void add_reason(std::vector<EvictingTaint>& reasons, const EvictingTaint& t) {
  auto pos = std::lower_bound(reasons.begin(), reasons.end(), t, reason_less);
  if (pos == reasons.end() || !(*pos == t)) reasons.insert(pos, t);
}

// A taint without a parseable timeAdded (the API server always sets one) is due at once.
WallTime added_at(const api::DeviceTaint& t) {
  return common::parse_rfc3339_time(t.timeAdded).value_or(WallTime{});
}

// When `taint` on a device allocated with `tolerations` evicts; nullopt when a
// NoExecute toleration without tolerationSeconds matches it.
std::optional<WallTime> taint_due(const api::DeviceTaint& taint, const std::vector<api::DeviceToleration>& tolerations) {
  std::optional<int64_t> seconds;
  for (const auto& t : tolerations) {
    if (t.effect != kNoExecute || !alloc::tolerates(t, taint)) continue;
    if (!t.tolerationSeconds) return std::nullopt;
    int64_t s = std::max<int64_t>(0, *t.tolerationSeconds);
    seconds = seconds ? std::min(*seconds, s) : s;
  }
  return added_at(taint) + std::chrono::seconds(seconds.value_or(0));
}

// Slices of the newest generation of their pool: the pool's devices now.
std::vector<const api::ResourceSlice*> current_slices(const std::vector<const api::ResourceSlice*>& slices) {
  std::map<std::string, int64_t> newest;
  for (const auto* s : slices) {
    auto& g = newest.try_emplace(s->spec.driver + "/" + s->spec.pool.name, s->spec.pool.generation).first->second;
    g = std::max(g, s->spec.pool.generation);
  }
  std::vector<const api::ResourceSlice*> out;
  for (const auto* s : slices) {
    if (s->spec.pool.generation == newest[s->spec.driver + "/" + s->spec.pool.name]) out.push_back(s);
  }
  return out;
}

std::vector<const api::ResourceSlice*> pointers(const std::vector<api::ResourceSlice>& slices) {
  std::vector<const api::ResourceSlice*> out;
  out.reserve(slices.size());
  for (const auto& s : slices) out.push_back(&s);
  return out;
}

// Generated for the pod, or for the PodGroup it names (KEP-5729).
bool pod_claim_owned(const api::ResourceClaim& claim, const api::Pod& pod) {
  auto owner = owning_pod(claim);
  if (owner && owner->uid == pod.metadata.uid) return true;
  auto group = api::owning_pod_group(claim);
  const std::string* name = api::pod_group_name_of(pod);
  return group && name && group->name == *name;
}

}  // namespace

std::string describe(const EvictingTaint& t) {
  std::string out = device_key(t.driver, t.pool, t.device) + " " + taint_text(t.taint);
  if (!t.rule.empty()) out += " (DeviceTaintRule " + t.rule + ")";
  return out;
}

TaintInventory taint_inventory(const std::vector<api::ResourceSlice>& slices,
                               const std::vector<api::DeviceTaintRule>& rules) {
  return taint_inventory(pointers(slices), rules);
}

TaintInventory taint_inventory(const std::vector<const api::ResourceSlice*>& slices,
                               const std::vector<api::DeviceTaintRule>& rules) {
  TaintInventory inv;
  for (const auto* s : current_slices(slices)) {
    for (const auto& d : s->spec.devices) {
      for (const auto& t : d.taints) {
        if (t.effect == kNoExecute) inv.slice_taints[device_key(s->spec.driver, s->spec.pool.name, d.name)].push_back(t);
      }
    }
  }
  for (const auto& r : rules) {
    if (r.spec.taint.effect == kNoExecute) inv.rules.push_back(r);
  }
  std::sort(inv.rules.begin(), inv.rules.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  return inv;
}

std::optional<ClaimEviction> claim_eviction(const api::ResourceClaim& claim, const TaintInventory& inv) {
  if (!claim.status.allocation) return std::nullopt;
  std::optional<ClaimEviction> out;
  auto consider = [&](const api::DeviceRequestAllocationResult& r, EvictingTaint t) {
    auto due = taint_due(t.taint, r.tolerations);
    if (!due) return;
    if (!out) out = ClaimEviction{*due, {}};
    out->when = std::min(out->when, *due);
    add_reason(out->reasons, t);
  };
  for (const auto& r : claim.status.allocation->devices.results) {
    if (auto it = inv.slice_taints.find(device_key(r.driver, r.pool, r.device)); it != inv.slice_taints.end()) {
      for (const auto& taint : it->second) consider(r, EvictingTaint{r.driver, r.pool, r.device, taint, "", ""});
    }
    for (const auto& rule : inv.rules) {
      if (!alloc::rule_matches_device(rule, r.driver, r.pool, r.device)) continue;
      consider(r, EvictingTaint{r.driver, r.pool, r.device, rule.spec.taint, rule.metadata.name, rule.metadata.uid});
    }
  }
  return out;
}

std::optional<PodEviction> pod_eviction(const api::Pod& pod, const std::map<std::string, api::ResourceClaim>& claims,
                                        const TaintInventory& inv) {
  if (pod.spec.nodeName.empty() || !pod.metadata.deletionTimestamp.empty() || is_pod_terminal(pod)) {
    return std::nullopt;
  }
  std::optional<PodEviction> out;
  for (const auto& pc : pod.spec.resourceClaims) {
    std::optional<std::string> name = claim_name_for(pod, pc);
    if (!name) continue;
    auto it = claims.find(pod.metadata.namespace_ + "/" + *name);
    if (it == claims.end()) continue;
    const api::ResourceClaim& claim = it->second;
    // A generated claim counts only for the pod (or group) it was generated
    // for, and any claim only for a pod it is reserved for, directly or
    // through its PodGroup (not a successor with the same name).
    if (pc.resourceClaimTemplateName && !pod_claim_owned(claim, pod)) continue;
    if (!api::reserved_for_pod_or_group(claim, pod)) continue;
    auto ce = claim_eviction(claim, inv);
    if (!ce) continue;
    if (!out) out = PodEviction{pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, ce->when, {}};
    out->when = std::min(out->when, ce->when);
    for (const auto& r : ce->reasons) add_reason(out->reasons, r);
  }
  return out;
}

std::map<std::string, PodEviction> plan_evictions(const std::map<std::string, api::Pod>& pods,
                                                  const std::map<std::string, api::ResourceClaim>& claims,
                                                  const TaintInventory& inv) {
  std::map<std::string, PodEviction> out;
  if (inv.slice_taints.empty() && inv.rules.empty()) return out;
  for (const auto& [key, pod] : pods) {
    if (auto e = pod_eviction(pod, claims, inv)) out.emplace(key, std::move(*e));
  }
  return out;
}

RuleCounts rule_counts(const api::DeviceTaintRule& rule, const std::map<std::string, api::Pod>& pods,
                       const std::map<std::string, api::ResourceClaim>& claims,
                       const std::vector<api::ResourceSlice>& slices, const std::vector<api::DeviceTaintRule>& rules,
                       int64_t evicted_pods) {
  RuleCounts c;
  c.evicted_pods = evicted_pods;
  const std::string& effect = rule.spec.taint.effect;
  if (effect != kNoExecute && effect != "None") return c;
  TaintInventory inv;
  if (effect == kNoExecute) {
    inv = taint_inventory(slices, rules);
  } else {
    // Effect None: what NoExecute would do (upstream simulates the rule alone).
    api::DeviceTaintRule simulated = rule;
    simulated.spec.taint.effect = kNoExecute;
    inv = taint_inventory(std::vector<const api::ResourceSlice*>{}, {simulated});
    for (const auto* s : current_slices(pointers(slices))) {
      for (const auto& d : s->spec.devices) {
        if (alloc::rule_matches_device(rule, s->spec.driver, s->spec.pool.name, d.name)) ++c.published_devices;
      }
    }
    for (const auto& [key, claim] : claims) {
      if (!claim.status.allocation) continue;
      for (const auto& r : claim.status.allocation->devices.results) {
        if (alloc::rule_matches_device(rule, r.driver, r.pool, r.device)) ++c.allocated_devices;
      }
    }
  }
  std::set<std::string> namespaces;
  for (const auto& [key, e] : plan_evictions(pods, claims, inv)) {
    bool ours = std::any_of(e.reasons.begin(), e.reasons.end(), [&](const EvictingTaint& t) {
      return t.rule == rule.metadata.name && t.rule_uid == rule.metadata.uid;
    });
    if (!ours) continue;
    ++c.pending_pods;
    namespaces.insert(e.ns);
  }
  c.pending_namespaces = static_cast<int64_t>(namespaces.size());
  return c;
}

namespace {

std::string count_text(int64_t n, const char* one, const char* many) {
  return n == 1 ? std::string("1 ") + one : std::to_string(n) + " " + many;
}

}  // namespace

api::Condition rule_condition(const api::DeviceTaintRule& rule, const RuleCounts& c) {
  api::Condition cond;
  cond.type = kEvictionInProgress;
  cond.status = "False";
  cond.observedGeneration = rule.metadata.generation;
  const std::string& effect = rule.spec.taint.effect;
  if (effect == kNoExecute) {
    if (c.pending_pods > 0) {
      cond.reason = "PodsPendingEviction";
      cond.status = "True";
      cond.message = (c.pending_pods == 1 ? std::string("1 pod needs") : std::to_string(c.pending_pods) + " pods need") +
                     " to be evicted in " + count_text(c.pending_namespaces, "namespace.", "different namespaces.");
    } else {
      cond.reason = c.evicted_pods > 0 ? "Completed" : "NotStarted";
    }
  } else if (effect == "None") {
    cond.reason = "NoEffect";
    cond.message = count_text(c.published_devices, "published device selected. ", "published devices selected. ") +
                   count_text(c.allocated_devices, "allocated device selected. ", "allocated devices selected. ") +
                   (c.pending_pods == 1 ? std::string("1 pod would") : std::to_string(c.pending_pods) + " pods would") +
                   " be evicted in " + count_text(c.pending_namespaces, "namespace ", "different namespaces ") +
                   "if the effect was NoExecute. This information will not be updated again. Recreate the "
                   "DeviceTaintRule to trigger an update.";
  } else {
    cond.reason = "OtherEffect";
    cond.message = "Eviction only happens for the NoExecute effect.";
  }
  if (c.evicted_pods > 0) {
    if (!cond.message.empty()) cond.message += " ";
    cond.message += count_text(c.evicted_pods, "pod ", "pods ") + "evicted since starting the controller.";
  }
  return cond;
}

std::optional<api::DeviceTaintRuleStatus> updated_rule_status(const api::DeviceTaintRule& rule,
                                                              api::Condition condition, const std::string& now) {
  api::DeviceTaintRuleStatus status = rule.status;
  auto it = std::find_if(status.conditions.begin(), status.conditions.end(),
                         [&](const api::Condition& c) { return c.type == condition.type; });
  if (it != status.conditions.end()) {
    condition.lastTransitionTime = it->lastTransitionTime;
    if (*it == condition) return std::nullopt;
  }
  // Upstream bumps lastTransitionTime on every change (it paces the updates).
  condition.lastTransitionTime = now;
  if (it != status.conditions.end()) *it = std::move(condition);
  else status.conditions.push_back(std::move(condition));
  return status;
}

std::optional<api::PodStatus> with_disruption_target(const api::PodStatus& status, const std::string& now) {
  api::PodStatus out = status;
  auto it = std::find_if(out.conditions.begin(), out.conditions.end(),
                         [](const api::PodCondition& c) { return c.type == kDisruptionTarget; });
  if (it == out.conditions.end()) it = out.conditions.insert(out.conditions.end(), api::PodCondition{kDisruptionTarget, "", "", "", "", ""});
  if (it->status == "True" && it->reason == kDeviceTaintEvictionReason && it->message == kDeviceTaintEvictionMessage) {
    return std::nullopt;
  }
  // As upstream's UpdatePodCondition: the transition time moves with the status.
  if (it->status != "True") it->lastTransitionTime = now;
  it->status = "True";
  it->reason = kDeviceTaintEvictionReason;
  it->message = kDeviceTaintEvictionMessage;
  return out;
}

}  // namespace draplane::controllers
