// DeviceClass validation (upstream ValidateDeviceClass / ValidateDeviceClassUpdate).
#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

// v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io that
// stays a qualified name behind the quota prefix "requests.".
bool is_extended_resource_name(std::string_view name) {
  bool native = name.find('/') == std::string_view::npos ||
                name.find("kubernetes.io/") != std::string_view::npos;
  if (native || name.starts_with("requests.")) return false;
  return vcore::qualified_name_errors("requests." + std::string(name)).empty();
}

// validate.LongName (content package: lengths in bytes).
std::vector<std::string> class_name_errors(std::string_view name) {
  return vcore::dns1123_subdomain_errors(name, /*bytes_unit=*/true);
}

}  // namespace

FieldErrorList validate_device_class_spec(const DeviceClassSpec& spec, const DeviceClassSpec* old_spec,
                                          const FieldPath& path, const ValidationOptions& options) {
  FieldErrorList errs;
  // Unchanged selectors (or configs) count as stored: they were valid when stored.
  bool selectors_stored = old_spec != nullptr && old_spec->selectors == spec.selectors;
  append_errors(errs, vcore::validate_selectors(spec.selectors, path.child("selectors"), options, selectors_stored));
  bool config_stored = old_spec != nullptr && old_spec->config == spec.config;
  FieldPath cp = path.child("config");
  if (spec.config.size() > static_cast<size_t>(kDeviceConfigMaxSize)) {
    errs.push_back(field_too_many(cp, static_cast<int64_t>(spec.config.size()), kDeviceConfigMaxSize));
  } else {
    for (size_t i = 0; i < spec.config.size(); ++i) {
      append_errors(errs, vcore::validate_opaque_config(spec.config[i].opaque, cp.index(i), config_stored));
    }
  }
  if (spec.extendedResourceName && !is_extended_resource_name(*spec.extendedResourceName)) {
    errs.push_back(field_invalid(path.child("extendedResourceName"), *spec.extendedResourceName,
                                 "must be a valid extended resource name"));
  }
  return errs;
}

FieldErrorList validate_device_class(const DeviceClass& c, const ValidationOptions& options) {
  FieldErrorList errs = vcore::validate_object_meta(c.metadata, /*namespaced=*/false, class_name_errors,
                                                    FieldPath("metadata"));
  append_errors(errs, validate_device_class_spec(c.spec, nullptr, FieldPath("spec"), options));
  return errs;
}

FieldErrorList validate_device_class_update(const DeviceClass& c, const DeviceClass& old,
                                            const ValidationOptions& options) {
  FieldErrorList errs = vcore::validate_object_meta(c.metadata, false, class_name_errors, FieldPath("metadata"));
  append_errors(errs, vcore::validate_object_meta_update(c.metadata, old.metadata, FieldPath("metadata")));
  append_errors(errs, validate_device_class_spec(c.spec, &old.spec, FieldPath("spec"), options));
  return errs;
}

}  // namespace draplane::api
