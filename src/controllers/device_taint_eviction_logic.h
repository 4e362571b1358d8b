// The decisions of the device taint eviction controller as pure functions
// (after kubernetes pkg/controller/devicetainteviction), so that they are
// tested without an API server:
//
// - when a pod must go: a scheduled pod whose allocated claims (reserved for
//   it) hold a device with a NoExecute taint, from its ResourceSlice or from a
//   DeviceTaintRule, that the allocation's tolerations (the ones recorded in
//   status.allocation.devices.results[].tolerations) do not tolerate for ever.
//   A taint is due at its timeAdded, or timeAdded + the smallest tolerationSeconds
//   of the NoExecute tolerations that match it; a claim at its earliest due
//   taint, a pod at its earliest claim. Only tolerations with effect NoExecute
//   count, as upstream's claimEvictionTime has it.
// - the EvictionInProgress condition of a DeviceTaintRule's status, with
//   upstream's reasons and messages.
//
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::controllers {

using WallTime = std::chrono::system_clock::time_point;

inline constexpr const char* kDisruptionTarget = "DisruptionTarget";
inline constexpr const char* kDeviceTaintEvictionReason = "DeletionByDeviceTaintManager";
inline constexpr const char* kDeviceTaintEvictionMessage = "Device Taint manager: deleting due to NoExecute taint";
inline constexpr const char* kEvictionInProgress = "EvictionInProgress";

// One NoExecute taint on an allocated device, and where it comes from.
struct EvictingTaint {
  std::string driver, pool, device;
  api::DeviceTaint taint;
  std::string rule;      // DeviceTaintRule name; "" for a taint the slice publishes
  std::string rule_uid;  // its UID
  bool operator==(const EvictingTaint&) const = default;
};

// "gpu.nvidia.com/node-1/gpu-0 key=value:NoExecute (DeviceTaintRule drain)".
std::string describe(const EvictingTaint& t);

struct PodEviction {
  std::string ns, name, uid;
  WallTime when;
  std::vector<EvictingTaint> reasons;  // every untolerated taint, rules first by name, then devices
  bool operator==(const PodEviction&) const = default;
};

// The inventory the controller reads: published slices and the rules.
struct TaintInventory {
  // "driver/pool/device" -> the NoExecute taints its slice publishes (the
  // newest generation of the pool only).
  std::map<std::string, std::vector<api::DeviceTaint>> slice_taints;
  std::vector<api::DeviceTaintRule> rules;  // NoExecute ones only, by name
};
TaintInventory taint_inventory(const std::vector<api::ResourceSlice>& slices,
                               const std::vector<api::DeviceTaintRule>& rules);
// The same over slices the caller keeps (not copied).
TaintInventory taint_inventory(const std::vector<const api::ResourceSlice*>& slices,
                               const std::vector<api::DeviceTaintRule>& rules);

// When pods using `claim` must be evicted and why; nullopt when never (no
// allocation, or every NoExecute taint on its devices tolerated for ever).
struct ClaimEviction {
  WallTime when;
  std::vector<EvictingTaint> reasons;
};
std::optional<ClaimEviction> claim_eviction(const api::ResourceClaim& claim, const TaintInventory& inv);

// When `pod` must be evicted: nullopt when it is not scheduled, already being
// deleted or terminal, or none of its claims (looked up by "namespace/name" in
// `claims`, reserved for the pod, owned by it when generated from a template)
// must go.
std::optional<PodEviction> pod_eviction(const api::Pod& pod, const std::map<std::string, api::ResourceClaim>& claims,
                                        const TaintInventory& inv);

// pod_eviction of every pod: "namespace/name" -> eviction.
std::map<std::string, PodEviction> plan_evictions(const std::map<std::string, api::Pod>& pods,
                                                  const std::map<std::string, api::ResourceClaim>& claims,
                                                  const TaintInventory& inv);

// What the rule's status condition says (lastTransitionTime left empty).
struct RuleCounts {
  int64_t pending_pods = 0, pending_namespaces = 0;  // pods waiting for eviction because of the rule
  int64_t evicted_pods = 0;                          // by this controller since it started
  // effect None only: devices selected in slices and in allocations.
  int64_t published_devices = 0, allocated_devices = 0;
};
RuleCounts rule_counts(const api::DeviceTaintRule& rule, const std::map<std::string, api::Pod>& pods,
                       const std::map<std::string, api::ResourceClaim>& claims,
                       const std::vector<api::ResourceSlice>& slices, const std::vector<api::DeviceTaintRule>& rules,
                       int64_t evicted_pods);
api::Condition rule_condition(const api::DeviceTaintRule& rule, const RuleCounts& counts);

// The rule's status with `condition` in place of its EvictionInProgress (a
// change of anything but lastTransitionTime stamps `now`); nullopt when the
// status already says so.
std::optional<api::DeviceTaintRuleStatus> updated_rule_status(const api::DeviceTaintRule& rule,
                                                              api::Condition condition, const std::string& now);

// The pod status with DisruptionTarget=True (reason and message as upstream);
// nullopt when it is there already with that reason and message.
std::optional<api::PodStatus> with_disruption_target(const api::PodStatus& status, const std::string& now);

}  // namespace draplane::controllers
