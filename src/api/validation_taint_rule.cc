// DeviceTaintRule validation (upstream ValidateDeviceTaintRule, ...Update and
// ...StatusUpdate in pkg/apis/resource/validation).
#include "api/validation_core.h"

namespace draplane::api {
namespace {

FieldErrorList validate_selector(const std::optional<DeviceTaintSelector>& selector, const FieldPath& path) {
  FieldErrorList errs;
  if (!selector) return errs;
  if (selector->driver) append_errors(errs, vcore::validate_driver_name(*selector->driver, path.child("driver")));
  if (selector->pool) append_errors(errs, vcore::validate_pool_name(*selector->pool, path.child("pool")));
  if (selector->device) append_errors(errs, vcore::validate_device_name(*selector->device, path.child("device")));
  return errs;
}

FieldErrorList validate_spec(const DeviceTaintRuleSpec& spec, const DeviceTaintRuleSpec* old, const FieldPath& path) {
  FieldErrorList errs = validate_selector(spec.deviceSelector, path.child("deviceSelector"));
  append_errors(errs, vcore::validate_device_taint(spec.taint, path.child("taint"), old ? &old->taint : nullptr));
  return errs;
}

}  // namespace

FieldErrorList validate_device_taint_rule(const DeviceTaintRule& rule) {
  FieldErrorList errs =
      vcore::validate_object_meta(rule.metadata, /*namespaced=*/false, vcore::name_is_dns_subdomain, FieldPath("metadata"));
  append_errors(errs, validate_spec(rule.spec, nullptr, FieldPath("spec")));
  return errs;
}

FieldErrorList validate_device_taint_rule_update(const DeviceTaintRule& rule, const DeviceTaintRule& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(rule.metadata, old.metadata, FieldPath("metadata"));
  append_errors(errs, validate_spec(rule.spec, &old.spec, FieldPath("spec")));
  return errs;
}

FieldErrorList validate_device_taint_rule_status_update(const DeviceTaintRule& rule, const DeviceTaintRule& old) {
  FieldErrorList errs = vcore::validate_object_meta_update(rule.metadata, old.metadata, FieldPath("metadata"));
  FieldPath conditions = FieldPath("status").child("conditions");
  append_errors(errs, vcore::validate_conditions(rule.status.conditions, conditions));
  if (rule.status.conditions.size() > static_cast<size_t>(kDeviceTaintRuleStatusMaxConditions)) {
    errs.push_back(field_too_many(conditions, static_cast<int64_t>(rule.status.conditions.size()),
                                  kDeviceTaintRuleStatusMaxConditions));
  }
  return errs;
}

}  // namespace draplane::api
