// Device capacity of a ResourceSlice device: requestPolicy rules for consumable
// capacity (upstream validateRequestPolicy and friends, with the
// DRAFractionalCapacityRange gate off: step arithmetic on integer Value()s).
#include <limits>
#include <set>

#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

constexpr size_t kCapacityKeyMaxLength = kDeviceMaxDomainLength + 1 + kDeviceMaxIDLength;

FieldErrorList validate_valid_values(const Quantity& def, const Quantity& max_capacity,
                                     const std::vector<Quantity>& values, const FieldPath& path) {
  FieldErrorList errs;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    if (values[i].compare(values[i + 1]) > 0) {
      errs.push_back(field_invalid(path.index(i + 1), values[i + 1].to_string(), "values must be sorted in ascending order"));
    }
  }
  bool found_default = false;
  if (values.size() > static_cast<size_t>(kCapacityRequestPolicyDiscreteMaxOptions)) {
    errs.push_back(field_too_many(path, static_cast<int64_t>(values.size()), kCapacityRequestPolicyDiscreteMaxOptions));
  } else {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].compare(max_capacity) > 0) {
        errs.push_back(field_invalid(path.index(i), values[i].to_string(),
                                     "option is larger than capacity value: " + max_capacity.to_string()));
      }
      if (values[i].compare(def) == 0) found_default = true;
    }
    std::set<int64_t> keys;  // quantityKeyInt: the rounded-up integer value
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t key = values[i].value();
      if (!keys.insert(key).second) errs.push_back(field_duplicate(path.index(i), std::to_string(key)));
    }
  }
  if (!found_default) {
    errs.push_back(field_invalid(path, def.to_string(), "default value is not valid according to the requestPolicy"));
  }
  return errs;
}

// validateInt64Range: [0, MaxInt64], where Value() can be reasoned with.
FieldErrorList int64_range(const Quantity& q, const FieldPath& path) {
  if (q.sign() < 0) return {field_invalid(path, q.to_string(), "must be greater than or equal to 0")};
  if (q.compare(Quantity::from_int(std::numeric_limits<int64_t>::max())) > 0) {
    return {field_invalid(path, q.to_string(), "must not be larger than 9223372036854775807")};
  }
  return {};
}

FieldErrorList step_multiple(const Quantity& value, const Quantity& min, const Quantity& step, const FieldPath& path) {
  int64_t s = step.value(), m = min.value(), v = value.value();
  if (s != 0 && (v - m) % s != 0) {
    return {field_invalid(path, value.to_string(),
                          "value is not a multiple of a given step (" + step.to_string() + ") from (" +
                              min.to_string() + ")")};
  }
  return {};
}

FieldErrorList validate_range(const Quantity& def, const Quantity& max_capacity, const CapacityRequestPolicyRange& r,
                              const FieldPath& path) {
  FieldErrorList errs;
  if (!r.min) {
    errs.push_back(field_required(path.child("min"), "required when validRange is defined"));
    return errs;
  }
  const Quantity& min = *r.min;
  if (min.compare(max_capacity) > 0) {
    errs.push_back(field_invalid(path.child("min"), min.to_string(),
                                 "min is larger than capacity value: " + max_capacity.to_string()));
  }
  if (def.compare(min) < 0) {
    errs.push_back(field_invalid(path.child("default"), def.to_string(), "default is less than min: " + min.to_string()));
  }
  if (r.max) {
    if (min.compare(*r.max) > 0) {
      errs.push_back(field_invalid(path.child("max"), min.to_string(), "min is larger than max: " + r.max->to_string()));
    }
    if (r.max->compare(max_capacity) > 0) {
      errs.push_back(field_invalid(path.child("max"), r.max->to_string(),
                                   "max is larger than capacity value: " + max_capacity.to_string()));
    }
    if (def.compare(*r.max) > 0) {
      errs.push_back(field_invalid(path.child("default"), def.to_string(), "default is more than max: " + r.max->to_string()));
    }
  }
  if (r.step) {
    const Quantity& step = *r.step;
    if (step.sign() <= 0) {
      errs.push_back(field_invalid(path.child("step"), step.to_string(), "must be greater than zero"));
    } else {
      auto added = min.add(step);
      if (added.has_value() && added->compare(max_capacity) > 0) {
        errs.push_back(field_invalid(path.child("step"), step.to_string(),
                                     "one step " + added->to_string() + " is larger than capacity value: " +
                                         max_capacity.to_string()));
      }
      FieldErrorList unsafe = int64_range(def, path.child("default"));
      append_errors(unsafe, int64_range(min, path.child("min")));
      if (r.max) append_errors(unsafe, int64_range(*r.max, path.child("max")));
      append_errors(unsafe, int64_range(step, path.child("step")));
      if (!unsafe.empty()) {
        append_errors(errs, std::move(unsafe));
      } else {
        append_errors(errs, step_multiple(def, min, step, path.child("step")));
        if (r.max) append_errors(errs, step_multiple(*r.max, min, step, path.child("step")));
      }
    }
  }
  return errs;
}

FieldErrorList validate_request_policy(const Quantity& max_capacity, const CapacityRequestPolicy& policy,
                                       const FieldPath& path) {
  if (!policy.validValues.empty() && policy.validRange) {
    return {field_forbidden(path, "exactly one policy can be specified, cannot specify \"validValues\" and "
                                  "\"validRange\" at the same time")};
  }
  if (!policy.validValues.empty()) {
    if (!policy.default_) return {field_required(path.child("default"), "required when validValues is defined")};
    return validate_valid_values(*policy.default_, max_capacity, policy.validValues, path.child("validValues"));
  }
  if (policy.validRange) {
    if (!policy.default_) return {field_required(path.child("default"), "required when validRange is defined")};
    return validate_range(*policy.default_, max_capacity, *policy.validRange, path.child("validRange"));
  }
  return {};
}

}  // namespace

FieldErrorList validate_device_capacity(const std::map<std::string, DeviceCapacity>& capacity,
                                        bool allow_multiple_allocations, const FieldPath& path) {
  FieldErrorList errs;
  for (const auto& [name, cap] : capacity) {
    FieldPath kp = path.key(vcore::truncate_key(name, kCapacityKeyMaxLength));
    append_errors(errs, vcore::validate_qualified_name(name, path));
    if (!cap.requestPolicy) continue;
    if (allow_multiple_allocations) {
      append_errors(errs, validate_request_policy(cap.value, *cap.requestPolicy, kp.child("requestPolicy")));
    } else {
      errs.push_back(field_forbidden(kp.child("requestPolicy"), "allowMultipleAllocations must be true"));
    }
  }
  return errs;
}

}  // namespace draplane::api
