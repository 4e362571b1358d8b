// Validation of scheduling.k8s.io/v1 PriorityClass (upstream
// pkg/apis/scheduling/validation: ValidatePriorityClass and its Update form,
// and the system classes of pkg/apis/scheduling/v1's helpers), paths and
// messages as upstream's.
#include "api/validation_core.h"

namespace draplane::api {
namespace {

constexpr std::string_view kSystemPrefix = "system-";

PriorityClass system_class(const char* name, int32_t value, const char* description) {
  PriorityClass pc;
  pc.typeMeta = TypeMeta{"scheduling.k8s.io/v1", "PriorityClass"};
  pc.metadata.name = name;
  pc.value = value;
  pc.description = description;
  pc.preemptionPolicy = kPreemptLowerPriority;
  return pc;
}

// IsKnownSystemPriorityClass: empty when `pc` is one of the built-in classes
// with their value and globalDefault, else why not.
std::string not_known_system_class(const PriorityClass& pc) {
  for (const PriorityClass& s : system_priority_classes()) {
    if (s.metadata.name != pc.metadata.name) continue;
    if (s.value != pc.value) {
      return "value of " + s.metadata.name + " PriorityClass must be " + std::to_string(s.value);
    }
    if (s.globalDefault != pc.globalDefault) {
      return "globalDefault of " + s.metadata.name + " PriorityClass must be " + (s.globalDefault ? "true" : "false");
    }
    return "";
  }
  return pc.metadata.name + " is not a known system priority class";
}

}  // namespace

const std::vector<PriorityClass>& system_priority_classes() {
  static const std::vector<PriorityClass> kClasses = {
      system_class("system-node-critical", kSystemCriticalPriority + 1000,
                   "Used for system critical pods that must not be moved from their current node."),
      system_class("system-cluster-critical", kSystemCriticalPriority,
                   "Used for system critical pods that must run in the cluster, but can be moved to another node if "
                   "necessary."),
  };
  return kClasses;
}

FieldErrorList validate_preemption_policy(const std::string& policy, const FieldPath& path) {
  if (policy == kPreemptLowerPriority || policy == kPreemptNever) return {};
  if (policy.empty()) return {field_required(path, "")};
  return {field_not_supported(path, policy, {kPreemptLowerPriority, kPreemptNever})};
}

FieldErrorList validate_priority_class(const PriorityClass& pc) {
  FieldErrorList errs =
      vcore::validate_object_meta(pc.metadata, /*namespaced=*/false, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  if (pc.metadata.name.starts_with(kSystemPrefix)) {
    if (std::string why = not_known_system_class(pc); !why.empty()) {
      errs.push_back(field_forbidden(FieldPath("metadata.name"),
                                     "priority class names with '" + std::string(kSystemPrefix) +
                                         "' prefix are reserved for system use only. error: " + why));
    }
  } else if (pc.value > kHighestUserDefinablePriority) {
    errs.push_back(field_forbidden(FieldPath("value"), "maximum allowed value of a user defined priority is " +
                                                           std::to_string(kHighestUserDefinablePriority)));
  }
  if (pc.preemptionPolicy) append_errors(errs, validate_preemption_policy(*pc.preemptionPolicy, FieldPath("preemptionPolicy")));
  return errs;
}

FieldErrorList validate_priority_class_update(const PriorityClass& pc, const PriorityClass& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(pc.metadata, old.metadata, FieldPath("metadata"));
  if (pc.value != old.value) errs.push_back(field_forbidden(FieldPath("value"), "may not be changed in an update."));
  if (pc.preemptionPolicy != old.preemptionPolicy) {
    errs.push_back(field_invalid(FieldPath("preemptionPolicy"),
                                 pc.preemptionPolicy ? BadValue(*pc.preemptionPolicy) : BadValue::null(),
                                 "field is immutable"));
  }
  return errs;
}

}  // namespace draplane::api
