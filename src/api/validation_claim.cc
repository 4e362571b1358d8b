// ResourceClaim and ResourceClaimTemplate validation on create (upstream
// validateDeviceClaim and friends), plus the adminAccess admission rule.
#include <set>

#include "api/validation_core.h"
#include "api/validation_kinds.h"

namespace draplane::api {
namespace {

FieldErrorList validate_allocation_mode(const std::string& mode, std::optional<int64_t> count_opt,
                                        const FieldPath& mode_path, const FieldPath& count_path) {
  int64_t count = count_opt.value_or(0);
  if (mode == kAllocationModeAll) {
    if (count != 0) {
      return {field_invalid(count_path, count, "must not be specified when allocationMode is 'All'")};
    }
  } else if (mode == kAllocationModeExactCount) {
    if (count <= 0) return {field_invalid(count_path, count, "must be greater than zero")};
  } else {
    return {field_not_supported(mode_path, mode, {kAllocationModeAll, kAllocationModeExactCount})};
  }
  return {};
}

FieldErrorList validate_tolerations(const std::vector<DeviceToleration>& tolerations, const FieldPath& path) {
  // The limit is declarative upstream (+k8s:maxItems=16); checked here by hand.
  if (tolerations.size() > static_cast<size_t>(kDeviceTolerationsMaxLength)) {
    return {field_too_many(path, static_cast<int64_t>(tolerations.size()), kDeviceTolerationsMaxLength)};
  }
  FieldErrorList errs;
  for (size_t i = 0; i < tolerations.size(); ++i) {
    append_errors(errs, vcore::validate_device_toleration(tolerations[i], path.index(i)));
  }
  return errs;
}

FieldErrorList validate_capacity_requests(const std::optional<CapacityRequirements>& capacity,
                                          const FieldPath& path) {
  FieldErrorList errs;
  if (!capacity) return errs;
  FieldPath rp = path.child("requests");
  for (const auto& [name, q] : capacity->requests) {
    append_errors(errs, vcore::validate_qualified_name(name, rp));
    if (q.sign() < 0) {
      errs.push_back(field_invalid(rp.key(vcore::truncate_key(name, 96)), q.to_string(),
                                   "must be greater than or equal to 0"));
    }
  }
  return errs;
}

template <typename R>
FieldErrorList validate_common_request(const R& r, const FieldPath& path, const ValidationOptions& options,
                                       bool stored) {
  FieldErrorList errs = vcore::validate_device_class_name(r.deviceClassName, path.child("deviceClassName"));
  append_errors(errs, vcore::validate_selectors(r.selectors, path.child("selectors"), options, stored));
  append_errors(errs, validate_allocation_mode(r.allocationMode, r.count, path.child("allocationMode"),
                                               path.child("count")));
  append_errors(errs, validate_tolerations(r.tolerations, path.child("tolerations")));
  append_errors(errs, validate_capacity_requests(r.capacity, path.child("capacity")));
  return errs;
}

FieldErrorList validate_device_request(const DeviceRequest& request, const FieldPath& path,
                                       const ValidationOptions& options, bool stored) {
  FieldErrorList errs = vcore::validate_request_name(request.name, path.child("name"));
  bool has_first = !request.firstAvailable.empty();
  bool has_exactly = request.exactly.has_value();
  if (!has_first && !has_exactly) {
    errs.push_back(field_required(path, "exactly one of `exactly` or `firstAvailable` is required"));
  } else if (has_first && has_exactly) {
    errs.push_back(field_invalid(path, BadValue::null(),
                                 "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are "
                                 "set"));
  } else if (has_first) {
    FieldPath fp = path.child("firstAvailable");
    const auto& subs = request.firstAvailable;
    if (subs.size() > static_cast<size_t>(kFirstAvailableDeviceRequestMaxSize)) {
      errs.push_back(field_too_many(fp, static_cast<int64_t>(subs.size()), kFirstAvailableDeviceRequestMaxSize));
      return errs;
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < subs.size(); ++i) {
      append_errors(errs, vcore::validate_request_name(subs[i].name, fp.index(i).child("name")));
      append_errors(errs, validate_common_request(subs[i], fp.index(i), options, stored));
    }
    for (size_t i = 0; i < subs.size(); ++i) {
      if (!seen.insert(subs[i].name).second) errs.push_back(field_duplicate(fp.index(i), subs[i].name));
    }
  } else {
    append_errors(errs, validate_common_request(*request.exactly, path.child("exactly"), options, stored));
  }
  return errs;
}

FieldErrorList validate_constraint(const DeviceConstraint& c, const FieldPath& path, const vcore::RequestNames& names) {
  FieldErrorList errs = vcore::validate_request_refs(c.requests, path.child("requests"), names);
  if (c.matchAttribute && c.distinctAttribute) {
    // Upstream's hand-written code silently prefers matchAttribute here; draplane
    // rejects the ambiguity (docs/compat.md).
    errs.push_back(field_invalid(path, BadValue::null(),
                                 "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but "
                                 "multiple fields are set"));
  }
  if (c.matchAttribute) {
    append_errors(errs, vcore::validate_fully_qualified_name(*c.matchAttribute, path.child("matchAttribute")));
  } else if (c.distinctAttribute) {
    append_errors(errs, vcore::validate_fully_qualified_name(*c.distinctAttribute, path.child("distinctAttribute")));
  } else {
    // Upstream's message (DRAConsumableCapacity enabled), wording included.
    errs.push_back(field_required(path, "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, "
                                        "but multiple fields are set"));
  }
  return errs;
}

FieldErrorList validate_device_claim(const DeviceClaim& claim, const FieldPath& path,
                                     const ValidationOptions& options, bool stored) {
  FieldErrorList errs;
  vcore::RequestNames names = vcore::gather_request_names(claim);
  FieldPath rp = path.child("requests");
  if (claim.requests.size() > static_cast<size_t>(kDeviceRequestsMaxSize)) {
    errs.push_back(field_too_many(rp, static_cast<int64_t>(claim.requests.size()), kDeviceRequestsMaxSize));
  } else {
    for (size_t i = 0; i < claim.requests.size(); ++i) {
      append_errors(errs, validate_device_request(claim.requests[i], rp.index(i), options, stored));
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < claim.requests.size(); ++i) {
      if (!seen.insert(claim.requests[i].name).second) {
        errs.push_back(field_duplicate(rp.index(i), claim.requests[i].name));
      }
    }
  }
  FieldPath cp = path.child("constraints");
  if (claim.constraints.size() > static_cast<size_t>(kDeviceConstraintsMaxSize)) {
    errs.push_back(field_too_many(cp, static_cast<int64_t>(claim.constraints.size()), kDeviceConstraintsMaxSize));
  } else {
    for (size_t i = 0; i < claim.constraints.size(); ++i) {
      append_errors(errs, validate_constraint(claim.constraints[i], cp.index(i), names));
    }
  }
  FieldPath fp = path.child("config");
  if (claim.config.size() > static_cast<size_t>(kDeviceConfigMaxSize)) {
    errs.push_back(field_too_many(fp, static_cast<int64_t>(claim.config.size()), kDeviceConfigMaxSize));
  } else {
    for (size_t i = 0; i < claim.config.size(); ++i) {
      append_errors(errs, vcore::validate_request_refs(claim.config[i].requests, fp.index(i).child("requests"), names));
      append_errors(errs, vcore::validate_opaque_config(claim.config[i].opaque, fp.index(i), stored));
    }
  }
  return errs;
}

}  // namespace

FieldErrorList validate_resource_claim_spec(const ResourceClaimSpec& spec, const FieldPath& path,
                                            const ValidationOptions& options, bool stored) {
  return validate_device_claim(spec.devices, path.child("devices"), options, stored);
}

FieldErrorList validate_resource_claim(const ResourceClaim& c, const ValidationOptions& options) {
  FieldErrorList errs = vcore::validate_object_meta(c.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain,
                                                    FieldPath("metadata"));
  append_errors(errs, validate_resource_claim_spec(c.spec, FieldPath("spec"), options, false));
  if (options.validate_claim_status) {
    append_errors(errs, validate_claim_status(c.status, ResourceClaimStatus{}, !c.metadata.deletionTimestamp.empty(),
                                              c.spec.devices, FieldPath("status")));
  }
  return errs;
}

FieldErrorList validate_resource_claim_template(const ResourceClaimTemplate& t, const ValidationOptions& options) {
  FieldErrorList errs = vcore::validate_object_meta(t.metadata, /*namespaced=*/true, vcore::name_is_dns_subdomain,
                                                    FieldPath("metadata"));
  FieldPath sp("spec");
  append_errors(errs, vcore::validate_template_object_meta(t.spec.metadata, sp.child("metadata")));
  append_errors(errs, validate_resource_claim_spec(t.spec.spec, sp.child("spec"), options, false));
  return errs;
}

FieldErrorList validate_admin_access(const std::vector<DeviceRequest>& requests,
                                     const std::map<std::string, std::string>& namespace_labels) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].exactly || !requests[i].exactly->adminAccess.value_or(false)) continue;
    auto it = namespace_labels.find(kAdminAccessNamespaceLabel);
    if (it != namespace_labels.end() && it->second == "true") return {};
    return {field_forbidden(FieldPath("spec").child("devices").child("requests").index(i).child("adminAccess"),
                            std::string("admin access to devices requires the `") + kAdminAccessNamespaceLabel +
                                ": true` label on the containing namespace")};
  }
  return {};
}

FieldErrorList validate_admin_access_status(const std::vector<DeviceRequestAllocationResult>& new_results,
                                            const std::vector<DeviceRequestAllocationResult>& old_results,
                                            const std::map<std::string, std::string>& namespace_labels) {
  for (const auto& r : old_results) {
    if (r.adminAccess.value_or(false)) return {};  // granted before; allocation is immutable
  }
  for (size_t i = 0; i < new_results.size(); ++i) {
    if (!new_results[i].adminAccess.value_or(false)) continue;
    auto it = namespace_labels.find(kAdminAccessNamespaceLabel);
    if (it != namespace_labels.end() && it->second == "true") return {};
    return {field_forbidden(
        FieldPath("status").child("allocation").child("devices").child("results").index(i).child("adminAccess"),
        std::string("admin access to devices requires the `") + kAdminAccessNamespaceLabel +
            ": true` label on the containing namespace")};
  }
  return {};
}

}  // namespace draplane::api
