// ResourceSlice validation (upstream ValidateResourceSlice / ValidateResourceSliceUpdate):
// node selection, pool, devices (attributes, capacity, counters, taints, binding
// conditions) and shared counter sets.
#include <set>

#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

constexpr size_t kAttributeKeyMaxLength = kDeviceMaxDomainLength + 1 + kDeviceMaxIDLength;

// Go's %#v of the internal resource.DeviceAttribute, with pointer targets shown by
// value instead of by address (addresses would make the message non-deterministic).
std::string render_attribute(const DeviceAttribute& a) {
  auto ptr = [](const char* type, const std::optional<std::string>& v) {
    return std::string("(*") + type + ")(" + (v ? *v : "nil") + ")";
  };
  std::optional<std::string> i = a.int_ ? std::optional<std::string>(std::to_string(*a.int_)) : std::nullopt;
  std::optional<std::string> b = a.bool_ ? std::optional<std::string>(*a.bool_ ? "true" : "false") : std::nullopt;
  std::optional<std::string> s = a.string_ ? std::optional<std::string>(go_quote(*a.string_)) : std::nullopt;
  std::optional<std::string> v = a.version ? std::optional<std::string>(go_quote(*a.version)) : std::nullopt;
  return "resource.DeviceAttribute{IntValue:" + ptr("int64", i) + ", BoolValue:" + ptr("bool", b) +
         ", StringValue:" + ptr("string", s) + ", VersionValue:" + ptr("string", v) + "}";
}

FieldErrorList validate_attribute(const DeviceAttribute& a, const FieldPath& path) {
  FieldErrorList errs;
  int fields = 0;
  if (a.bool_) ++fields;
  if (a.int_) ++fields;
  if (a.string_) {
    ++fields;
    if (a.string_->size() > static_cast<size_t>(kDeviceAttributeMaxValueLength)) {
      errs.push_back(field_too_long(path.child("string"), kDeviceAttributeMaxValueLength));
    }
  }
  if (a.version) {
    ++fields;
    if (!vcore::is_semver(*a.version)) {
      errs.push_back(field_invalid(path.child("version"), *a.version, "must be a string compatible with semver.org spec 2.0.0"));
    }
    if (a.version->size() > static_cast<size_t>(kDeviceAttributeMaxValueLength)) {
      errs.push_back(field_too_long(path.child("version"), kDeviceAttributeMaxValueLength));
    }
  }
  if (fields == 0) {
    errs.push_back(field_invalid(path, "", "exactly one value must be specified"));
  } else if (fields > 1) {
    errs.push_back(field_invalid(path, BadValue::raw(render_attribute(a)), "exactly one value must be specified"));
  }
  return errs;
}

// validateMap of counters: <= max entries (short-circuit), DNS-label keys reported on
// the map path; every parsed quantity is a valid counter value.
FieldErrorList validate_counters(const std::map<std::string, Counter>& counters, int max, const FieldPath& path) {
  if (counters.empty()) return {field_required(path)};
  if (counters.size() > static_cast<size_t>(max)) {
    return {field_too_many(path, static_cast<int64_t>(counters.size()), max)};
  }
  FieldErrorList errs;
  for (const auto& [name, c] : counters) append_errors(errs, vcore::validate_dns_label(name, path));
  return errs;
}

// A counter set or a device's consumption of one: its DNS-label name (required)
// under `name_field`, and its counters under "counters".
FieldErrorList validate_named_counters(const std::string& name, const char* name_field,
                                       const std::map<std::string, Counter>& counters, int max,
                                       const FieldPath& path) {
  FieldErrorList errs;
  if (name.empty()) {
    errs.push_back(field_required(path.child(name_field)));
  } else {
    append_errors(errs, vcore::validate_dns_label(name, path.child(name_field)));
  }
  append_errors(errs, validate_counters(counters, max, path.child("counters")));
  return errs;
}

FieldErrorList validate_counter_set(const CounterSet& set, const FieldPath& path) {
  return validate_named_counters(set.name, "name", set.counters,
                                 kResourceSliceMaxCountersPerCounterSet, path);
}

FieldErrorList validate_consumption(const DeviceCounterConsumption& c, const FieldPath& path) {
  return validate_named_counters(c.counterSet, "counterSet", c.counters,
                                 kResourceSliceMaxCountersPerDeviceCounterConsumption, path);
}

// A slice's counter sets or a device's counter consumptions: at most `max` (then
// nothing else is checked), each valid, then each name unique.
template <typename T>
void validate_counter_list(const std::vector<T>& list, int max, const std::string T::*name,
                           FieldErrorList (*validate)(const T&, const FieldPath&),
                           const FieldPath& path, FieldErrorList& errs) {
  if (list.size() > static_cast<size_t>(max)) {
    errs.push_back(field_too_many(path, static_cast<int64_t>(list.size()), max));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) append_errors(errs, validate(list[i], path.index(i)));
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string& n = list[i].*name;
    if (!seen.insert(n).second) errs.push_back(field_duplicate(path.index(i), n));
  }
}

void per_device_node_selection(const Device& d, bool per_device, const FieldPath& path, FieldErrorList& errs) {
  if (!per_device) {
    if (d.nodeName || d.nodeSelector || d.allNodes) {
      errs.push_back(field_invalid(path, BadValue::null(),
                                   "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                   "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"));
    }
    return;
  }
  std::vector<std::string> set;
  if (d.nodeName) {
    if (!d.nodeName->empty()) {
      set.push_back("`nodeName`");
      append_errors(errs, vcore::validate_node_name(*d.nodeName, path.child("nodeName")));
    } else {
      errs.push_back(field_invalid(path.child("nodeName"), *d.nodeName, "must not be empty"));
    }
  }
  if (d.nodeSelector) {
    set.push_back("`nodeSelector`");
    append_errors(errs, vcore::validate_node_selector(*d.nodeSelector, path.child("nodeSelector")));
  }
  if (d.allNodes) {
    if (*d.allNodes) {
      set.push_back("`allNodes`");
    } else {
      errs.push_back(field_invalid(path.child("allNodes"), BadValue::boolean(false), "must be either unset or set to true"));
    }
  }
  constexpr const char* kMsg =
      "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set "
      "to true in the ResourceSlice spec";
  if (set.empty()) {
    errs.push_back(field_required(path, kMsg));
  } else if (set.size() > 1) {
    std::string joined = "{";
    for (size_t i = 0; i < set.size(); ++i) joined += (i ? ", " : "") + set[i];
    errs.push_back(field_invalid(path, joined + "}", kMsg));
  }
}

FieldErrorList validate_device(const Device& d, bool per_device, const FieldPath& path) {
  FieldErrorList errs = vcore::validate_device_name(d.name, path.child("name"));
  size_t total = d.attributes.size() + d.capacity.size();
  if (total > static_cast<size_t>(kResourceSliceMaxAttributesAndCapacitiesPerDevice)) {
    errs.push_back(field_invalid(path, static_cast<int64_t>(total),
                                 "the total number of attributes and capacities must not exceed " +
                                     std::to_string(kResourceSliceMaxAttributesAndCapacitiesPerDevice)));
  }
  FieldPath ap = path.child("attributes");
  for (const auto& [name, attr] : d.attributes) {
    append_errors(errs, vcore::validate_qualified_name(name, ap));
    append_errors(errs, validate_attribute(attr, ap.key(vcore::truncate_key(name, kAttributeKeyMaxLength))));
  }
  append_errors(errs, validate_device_capacity(d.capacity, d.allowMultipleAllocations.value_or(false),
                                               path.child("capacity")));
  FieldPath tp = path.child("taints");
  if (d.taints.size() > static_cast<size_t>(kDeviceTaintsMaxLength)) {
    errs.push_back(field_too_many(tp, static_cast<int64_t>(d.taints.size()), kDeviceTaintsMaxLength));
  } else {
    for (size_t i = 0; i < d.taints.size(); ++i) append_errors(errs, vcore::validate_device_taint(d.taints[i], tp.index(i)));
  }
  validate_counter_list(d.consumesCounters, kResourceSliceMaxDeviceCounterConsumptionsPerDevice,
                        &DeviceCounterConsumption::counterSet, validate_consumption,
                        path.child("consumesCounters"), errs);
  per_device_node_selection(d, per_device, path, errs);
  append_errors(errs, vcore::validate_binding_parameters(d.bindingConditions, d.bindingFailureConditions, path));
  return errs;
}

void immutable_string(FieldErrorList& errs, const std::string& v, const std::string& old, const FieldPath& path) {
  if (v != old) errs.push_back(field_invalid(path, v, "field is immutable"));
}

}  // namespace

FieldErrorList validate_resource_slice_spec(const ResourceSliceSpec& spec, const ResourceSliceSpec* old_spec,
                                            const FieldPath& path) {
  FieldErrorList errs = vcore::validate_driver_name(spec.driver, path.child("driver"));
  FieldPath pp = path.child("pool");
  append_errors(errs, vcore::validate_pool_name(spec.pool.name, pp.child("name")));
  if (spec.pool.resourceSliceCount <= 0) {
    errs.push_back(field_invalid(pp.child("resourceSliceCount"), spec.pool.resourceSliceCount, "must be greater than zero"));
  }
  if (spec.pool.generation < 0) {
    errs.push_back(field_invalid(pp.child("generation"), spec.pool.generation, "must be greater than or equal to zero"));
  }
  if (old_spec) {
    immutable_string(errs, spec.pool.name, old_spec->pool.name, pp.child("name"));
    immutable_string(errs, spec.driver, old_spec->driver, path.child("driver"));
    if (spec.nodeName != old_spec->nodeName) {
      errs.push_back(field_invalid(path.child("nodeName"), spec.nodeName ? BadValue(*spec.nodeName) : BadValue::null(),
                                   "field is immutable"));
    }
  }

  std::vector<std::string> set;
  if (spec.nodeName) {
    if (!spec.nodeName->empty()) {
      set.push_back("`nodeName`");
      append_errors(errs, vcore::validate_node_name(*spec.nodeName, path.child("nodeName")));
    } else {
      errs.push_back(field_invalid(path.child("nodeName"), "", "must be either unset or set to a non-empty string"));
    }
  }
  if (spec.nodeSelector) {
    set.push_back("`nodeSelector`");
    append_errors(errs, vcore::validate_node_selector(*spec.nodeSelector, path.child("nodeSelector")));
    if (spec.nodeSelector->nodeSelectorTerms.size() != 1) {
      errs.push_back(field_invalid(path.child("nodeSelector").child("nodeSelectorTerms"),
                                   BadValue::raw("[]core.NodeSelectorTerm{...}"),
                                   "must have exactly one node selector term"));
    }
  }
  if (spec.allNodes) {
    if (*spec.allNodes) {
      set.push_back("`allNodes`");
    } else {
      errs.push_back(field_invalid(path.child("allNodes"), BadValue::boolean(false), "must be either unset or set to true"));
    }
  }
  if (spec.perDeviceNodeSelection) {
    if (*spec.perDeviceNodeSelection) {
      set.push_back("`perDeviceNodeSelection`");
    } else {
      errs.push_back(field_invalid(path.child("perDeviceNodeSelection"), BadValue::boolean(false),
                                   "must be either unset or set to true"));
    }
  }
  if (set.empty()) {
    errs.push_back(field_required(
        path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"));
  } else if (set.size() > 1) {
    std::string joined = "{";
    for (size_t i = 0; i < set.size(); ++i) joined += (i ? ", " : "") + set[i];
    errs.push_back(field_invalid(path, joined + "}",
                                 "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
                                 "required, but multiple fields are set"));
  }

  if (!spec.sharedCounters.empty() && !spec.devices.empty()) {
    errs.push_back(field_invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"));
  }

  bool advanced = false;
  for (const auto& d : spec.devices) advanced = advanced || !d.taints.empty() || !d.consumesCounters.empty();
  const int max_devices = advanced ? kResourceSliceMaxDevicesWithAdvancedFeatures : kResourceSliceMaxDevices;
  bool per_device = spec.perDeviceNodeSelection.value_or(false);
  FieldPath dp = path.child("devices");
  if (spec.devices.size() > static_cast<size_t>(max_devices)) {
    errs.push_back(field_too_many(dp, static_cast<int64_t>(spec.devices.size()), max_devices));
  } else {
    for (size_t i = 0; i < spec.devices.size(); ++i) append_errors(errs, validate_device(spec.devices[i], per_device, dp.index(i)));
    std::set<std::string> seen;
    for (size_t i = 0; i < spec.devices.size(); ++i) {
      if (!seen.insert(spec.devices[i].name).second) errs.push_back(field_duplicate(dp.index(i), spec.devices[i].name));
    }
  }

  validate_counter_list(spec.sharedCounters, kResourceSliceMaxCounterSets, &CounterSet::name,
                        validate_counter_set, path.child("sharedCounters"), errs);
  return errs;
}

FieldErrorList validate_resource_slice(const ResourceSlice& s, const ValidationOptions& options) {
  (void)options;
  FieldErrorList errs = vcore::validate_object_meta(s.metadata, /*namespaced=*/false, vcore::name_is_dns_subdomain,
                                                    FieldPath("metadata"));
  append_errors(errs, validate_resource_slice_spec(s.spec, nullptr, FieldPath("spec")));
  return errs;
}

}  // namespace draplane::api
