// Building blocks of validation.h shared by the per-kind files: name formats with
// upstream's exact messages, and the field-level checks that several kinds use
// (object meta, node selectors, driver/pool/device names, qualified names, raw JSON,
// device tolerations and taints). Internal to the api module; callers use validation.h.
//
// Format functions (`*_errors`) return upstream's message strings (empty = valid); the
// `validate_*` functions return FieldErrors on a path.
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"
#include "api/types.h"
#include "api/validation.h"

namespace draplane::api::vcore {

// ---- formats (k8s.io/apimachinery util/validation and api/validate/content)

// IsDNS1123Label. `bytes_unit`: content's MaxLenError says "bytes", util's (used by
// most name checks) says "characters".
std::vector<std::string> dns1123_label_errors(std::string_view value, bool bytes_unit = false);
std::vector<std::string> dns1123_subdomain_errors(std::string_view value, bool bytes_unit = false);
// IsDNS1035Label: a DNS-1123 label that starts with a letter.
std::vector<std::string> dns1035_label_errors(std::string_view value);
// IsQualifiedName / IsLabelKey: optional DNS-subdomain prefix, '/', name <= 63.
std::vector<std::string> qualified_name_errors(std::string_view value);
std::vector<std::string> label_value_errors(std::string_view value);
std::vector<std::string> c_identifier_errors(std::string_view value);
bool is_semver(std::string_view value);
// RFC 4122 UUID in normalized lower-case form.
bool is_normalized_uuid(std::string_view value);

// ---- name validators: (name, is_prefix) -> messages, like apimachinery's ValidateNameFunc
using NameFn = std::function<std::vector<std::string>(std::string_view)>;
std::vector<std::string> name_is_dns_subdomain(std::string_view name);
std::vector<std::string> name_is_dns_label(std::string_view name);

// ---- field validators

// ValidateObjectMeta on create: name required ("name or generateName is required")
// and valid per `name_fn`, namespace required (namespaced) or forbidden, generation
// >= 0, labels, annotations, ownerReferences, finalizers.
FieldErrorList validate_object_meta(const ObjectMeta& meta, bool namespaced, const NameFn& name_fn,
                                    const FieldPath& path);
// ValidateObjectMetaUpdate: immutable name/namespace/uid/creationTimestamp/...,
// resourceVersion required, generation not decremented, no new finalizers while
// deleting, plus labels/annotations/ownerReferences/finalizers of the new meta.
FieldErrorList validate_object_meta_update(const ObjectMeta& new_meta, const ObjectMeta& old_meta,
                                           const FieldPath& path);
// ValidateTemplateObjectMeta: only labels and annotations may be set.
FieldErrorList validate_template_object_meta(const ObjectMeta& meta, const FieldPath& path);
FieldErrorList validate_labels(const std::map<std::string, std::string>& labels, const FieldPath& path);
FieldErrorList validate_annotations(const std::map<std::string, std::string>& annotations,
                                    const FieldPath& path);
// metav1validation.ValidateLabelName (qualified name; empty is invalid).
FieldErrorList validate_label_name(std::string_view name, const FieldPath& path);
FieldErrorList validate_label_value(std::string_view value, const FieldPath& path);
// corevalidation.ValidateDNS1123Label / Subdomain: Invalid per message.
FieldErrorList validate_dns_label(std::string_view value, const FieldPath& path);
FieldErrorList validate_dns_subdomain(std::string_view value, const FieldPath& path);
FieldErrorList validate_node_name(std::string_view name, const FieldPath& path);
// ValidateNodeSelector (allowInvalidLabelValue = false).
FieldErrorList validate_node_selector(const NodeSelector& selector, const FieldPath& path);

// ---- resource.k8s.io building blocks
FieldErrorList validate_driver_name(std::string_view driver, const FieldPath& path);
FieldErrorList validate_pool_name(std::string_view pool, const FieldPath& path);
FieldErrorList validate_device_name(std::string_view device, const FieldPath& path);
FieldErrorList validate_request_name(std::string_view name, const FieldPath& path);
FieldErrorList validate_device_class_name(std::string_view name, const FieldPath& path);
FieldErrorList validate_qualified_name(std::string_view name, const FieldPath& path);
FieldErrorList validate_fully_qualified_name(std::string_view name, const FieldPath& path);
FieldErrorList validate_c_identifier(std::string_view id, const FieldPath& path);
FieldErrorList validate_uid(std::string_view uid, const FieldPath& path);
// RawExtension: required, <= max_length bytes (unless stored), a JSON object.
FieldErrorList validate_raw_json_object(const RawJson& raw, const FieldPath& path, bool stored,
                                        int max_length);
FieldErrorList validate_opaque_config(const std::optional<OpaqueDeviceConfiguration>& opaque,
                                      const FieldPath& config_path, bool stored);
// Selectors (<= 32) with the CEL checker of `options`; `stored` skips compilation.
FieldErrorList validate_selectors(const std::vector<DeviceSelector>& selectors, const FieldPath& path,
                                  const ValidationOptions& options, bool stored);
FieldErrorList validate_device_toleration(const DeviceToleration& t, const FieldPath& path);
// `old`: the taint this one updates (null on create); the effect is then checked
// only when it changed (upstream validateDeviceTaint with its oldTaint).
FieldErrorList validate_device_taint(const DeviceTaint& t, const FieldPath& path, const DeviceTaint* old = nullptr);
// metav1validation.ValidateConditions: type (label name, unique), status, observedGeneration,
// lastTransitionTime, reason and message.
FieldErrorList validate_conditions(const std::vector<Condition>& conditions, const FieldPath& path);
FieldErrorList validate_binding_parameters(const std::vector<std::string>& conditions,
                                           const std::vector<std::string>& failure_conditions,
                                           const FieldPath& path);

// A request or "request/subrequest" reference of a claim: request name -> subrequest
// names (empty set for `exactly` requests).
struct RequestNames {
  std::map<std::string, std::vector<std::string>> names;
  bool has(std::string_view reference) const;
};
RequestNames gather_request_names(const DeviceClaim& claim);
FieldErrorList validate_request_name_ref(std::string_view name, const FieldPath& path,
                                         const RequestNames& names);
// Unique, <= max, each a valid reference.
FieldErrorList validate_request_refs(const std::vector<std::string>& refs, const FieldPath& path,
                                     const RequestNames& names);

// Truncates a map key for use in a path like upstream (middle "...", min 16).
std::string truncate_key(std::string_view key, size_t max_len);

}  // namespace draplane::api::vcore
