// Per-kind pieces of validation.h that the kind files share with validation.cc (update
// validation and dispatch). Internal to the api module.
//
// Thread-safety: pure functions.
#pragma once

#include "api/field_error.h"
#include "api/types.h"
#include "api/validation.h"

namespace draplane::api {

// DeviceClass: `old_spec` (may be null) marks unchanged selectors/configs as stored.
FieldErrorList validate_device_class_spec(const DeviceClassSpec& spec, const DeviceClassSpec* old_spec,
                                          const FieldPath& path, const ValidationOptions& options);
FieldErrorList validate_device_class_update(const DeviceClass& c, const DeviceClass& old,
                                            const ValidationOptions& options);

// ResourceClaim spec at `path` (`spec` or `spec.spec` for templates).
FieldErrorList validate_resource_claim_spec(const ResourceClaimSpec& spec, const FieldPath& path,
                                            const ValidationOptions& options, bool stored);

// ResourceClaim status as a status update from `old_status`.
FieldErrorList validate_claim_status(const ResourceClaimStatus& status, const ResourceClaimStatus& old_status,
                                     bool claim_deleted, const DeviceClaim& spec_devices,
                                     const FieldPath& path);

// ResourceSlice spec; `old_spec` (may be null) adds the immutability rules.
FieldErrorList validate_resource_slice_spec(const ResourceSliceSpec& spec, const ResourceSliceSpec* old_spec,
                                            const FieldPath& path);

// Device capacity map of one device (requestPolicy rules).
FieldErrorList validate_device_capacity(const std::map<std::string, DeviceCapacity>& capacity,
                                        bool allow_multiple_allocations, const FieldPath& path);

// ValidatePodTemplateSpec: the template's labels and annotations, its pod spec
// as a Pod's (validation_pod.cc).
FieldErrorList validate_pod_template_spec(const PodTemplateSpec& t, const FieldPath& path);

}  // namespace draplane::api
