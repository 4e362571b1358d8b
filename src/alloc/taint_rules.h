// DeviceTaintRules applied to the published inventory, as upstream's
// ResourceSlice tracker (k8s.io/dynamic-resource-allocation/resourceslice/tracker)
// does for kube-scheduler and kube-controller-manager: every device a rule's
// spec.deviceSelector matches gets the rule's taint appended to the taints its
// driver published, with the rule's timeAdded. Readers (the scheduler's
// snapshot, `draplane allocate`, the eviction controller) then see no
// difference between a driver's taint and a rule's.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::alloc {

// Whether toleration `t` tolerates `taint` (upstream resourceclaim.ToleratesTaint):
// effect, key (empty: any) and value (Equal) or any value (Exists).
bool tolerates(const api::DeviceToleration& t, const api::DeviceTaint& taint);

// Whether `rule` selects the device driver/pool/device: every field set in
// spec.deviceSelector must be equal (an empty selector matches every device);
// a rule without deviceSelector matches none (upstream ruleMatchesDevice).
bool rule_matches_device(const api::DeviceTaintRule& rule, const std::string& driver, const std::string& pool,
                         const std::string& device);

// `slices` with the taints of `rules` added to the devices they select. Rules
// are applied in name order (the order of upstream's lister), each after the
// device's own taints; every effect is added (the allocator ignores None).
std::vector<api::ResourceSlice> apply_taint_rules(std::vector<api::ResourceSlice> slices,
                                                  const std::vector<api::DeviceTaintRule>& rules);

}  // namespace draplane::alloc
