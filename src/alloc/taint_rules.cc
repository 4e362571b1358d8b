#include "alloc/taint_rules.h"

#include <algorithm>

namespace draplane::alloc {

bool tolerates(const api::DeviceToleration& t, const api::DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.operator_.empty() || t.operator_ == "Equal") return t.value == taint.value;
  return t.operator_ == "Exists";
}

bool rule_matches_device(const api::DeviceTaintRule& rule, const std::string& driver, const std::string& pool,
                         const std::string& device) {
  const auto& sel = rule.spec.deviceSelector;
  if (!sel) return false;
  return (!sel->driver || *sel->driver == driver) && (!sel->pool || *sel->pool == pool) &&
         (!sel->device || *sel->device == device);
}

std::vector<api::ResourceSlice> apply_taint_rules(std::vector<api::ResourceSlice> slices,
                                                  const std::vector<api::DeviceTaintRule>& rules) {
  if (rules.empty()) return slices;
  std::vector<const api::DeviceTaintRule*> ordered;
  ordered.reserve(rules.size());
  for (const auto& r : rules) ordered.push_back(&r);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  for (auto& slice : slices) {
    for (auto& device : slice.spec.devices) {
      for (const auto* rule : ordered) {
        if (rule_matches_device(*rule, slice.spec.driver, slice.spec.pool.name, device.name)) {
          device.taints.push_back(rule->spec.taint);
        }
      }
    }
  }
  return slices;
}

}  // namespace draplane::alloc
