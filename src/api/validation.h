// Validation of the object model, as the Kubernetes API server does it on create and
// update (k8s.io/kubernetes pkg/apis/resource/validation and the DRA parts of
// pkg/apis/core/validation), with the same field paths and messages.
//
// Every function returns all errors at once (an empty list means valid); none stops
// at the first problem except where upstream short-circuits (a list over its maximum
// size reports only "Too many"). Objects are expected to be defaulted first
// (defaults.h): an undefaulted allocationMode or toleration operator is reported
// as upstream would report an empty value.
//
// CEL selectors: the api module must not depend on cel (layering is api <- cel), so
// compiling selector expressions is delegated to ValidationOptions::selector_checker,
// which the caller supplies (the CEL module provides one). Without it, only the
// expression length is checked.
//
// Thread-safety: pure functions; the checker must be safe to call from the thread
// that calls validate.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "api/field_error.h"
#include "api/types.h"
#include "common/result.h"

namespace draplane::api {

// Limits of resource.k8s.io (pkg/apis/resource/types.go).
inline constexpr int kResourceSliceMaxDevices = 128;
inline constexpr int kResourceSliceMaxDevicesWithAdvancedFeatures = 64;  // taints or counters
inline constexpr int kPoolNameMaxLength = 253;
inline constexpr int kDeviceMaxDomainLength = 63;
inline constexpr int kDeviceMaxIDLength = 32;
inline constexpr int kDeviceAttributeMaxValueLength = 64;
inline constexpr int kResourceSliceMaxAttributesAndCapacitiesPerDevice = 32;
inline constexpr int kResourceSliceMaxCounterSets = 8;
inline constexpr int kResourceSliceMaxCountersPerCounterSet = 32;
inline constexpr int kResourceSliceMaxDeviceCounterConsumptionsPerDevice = 2;
inline constexpr int kResourceSliceMaxCountersPerDeviceCounterConsumption = 32;
inline constexpr int kDeviceTaintsMaxLength = 16;
inline constexpr int kDeviceTolerationsMaxLength = 16;
inline constexpr int kBindingConditionsMaxSize = 4;
inline constexpr int kBindingFailureConditionsMaxSize = 4;
inline constexpr int kCapacityRequestPolicyDiscreteMaxOptions = 10;
inline constexpr int kDeviceRequestsMaxSize = 32;
inline constexpr int kFirstAvailableDeviceRequestMaxSize = 8;
inline constexpr int kDeviceSelectorsMaxSize = 32;
inline constexpr int kDeviceConstraintsMaxSize = 32;
inline constexpr int kDeviceConfigMaxSize = 32;
inline constexpr int kCELSelectorExpressionMaxLength = 10 * 1024;
inline constexpr int kOpaqueParametersMaxLength = 10 * 1024;
inline constexpr int kAllocationResultsMaxSize = 32;
inline constexpr int kResourceClaimReservedForMaxSize = 256;
inline constexpr int kAllocatedDeviceStatusMaxConditions = 8;
inline constexpr int kAllocatedDeviceStatusDataMaxLength = 10 * 1024;
inline constexpr int kNetworkDeviceDataInterfaceNameMaxLength = 256;
inline constexpr int kNetworkDeviceDataHardwareAddressMaxLength = 128;
inline constexpr int kNetworkDeviceDataMaxIPs = 16;
inline constexpr int kDeviceTaintRuleStatusMaxConditions = 8;

// The namespace label that allows adminAccess requests.
inline constexpr const char* kAdminAccessNamespaceLabel = "resource.kubernetes.io/admin-access";

struct ValidationOptions {
  // Compiles one CEL selector expression. Return OK when it compiles; Code::kInvalid
  // with the compiler's message (reported as `Invalid value: "<expr>": <message>` on
  // the `...cel.expression` path); Code::kForbidden when its estimated cost exceeds
  // the limit (reported as `Forbidden: too complex, exceeds cost limit`); any other
  // code is reported as an internal error. Empty: expressions are not compiled.
  std::function<Status(std::string_view expression)> selector_checker;
  // Also validate ResourceClaim.status (as a status update from an empty status),
  // which the API server ignores on create. `draplane validate` and `allocate`
  // enable it because their inputs carry allocations.
  bool validate_claim_status = false;
};

// Validation on create of any object; dispatches on the kind.
// Whether `s` selects an object labelled `labels` (metav1.LabelSelectorAsSelector
// ().Matches): every matchLabels pair and every expression holds.
bool selector_matches(const LabelSelector& s, const std::map<std::string, std::string>& labels);

FieldErrorList validate(const Object& object, const ValidationOptions& options = {});

FieldErrorList validate_device_class(const DeviceClass& c, const ValidationOptions& options = {});
FieldErrorList validate_resource_slice(const ResourceSlice& s, const ValidationOptions& options = {});
FieldErrorList validate_resource_claim(const ResourceClaim& c, const ValidationOptions& options = {});
FieldErrorList validate_resource_claim_template(const ResourceClaimTemplate& t,
                                                const ValidationOptions& options = {});
FieldErrorList validate_pod(const Pod& p, const ValidationOptions& options = {});
FieldErrorList validate_node(const Node& n, const ValidationOptions& options = {});
FieldErrorList validate_namespace(const Namespace& n, const ValidationOptions& options = {});
// DeviceTaintRule (upstream ValidateDeviceTaintRule / ...Update / ...StatusUpdate): the
// selector's driver, pool and device names; the taint's key, value and effect (on
// update the effect is checked only when it changes, so a stored rule stays
// updatable); status conditions as metav1 conditions, at most 8.
FieldErrorList validate_device_taint_rule(const DeviceTaintRule& rule);
FieldErrorList validate_device_taint_rule_update(const DeviceTaintRule& rule, const DeviceTaintRule& old);
FieldErrorList validate_device_taint_rule_status_update(const DeviceTaintRule& rule, const DeviceTaintRule& old);

// core/v1 ConfigMap, Secret, ServiceAccount, Service, PersistentVolumeClaim
// (validation_config.cc; upstream's ValidateConfigMap, ValidateSecret, ... and
// their Update forms): keys as config keys, the 1 MiB total, immutable data once
// `immutable` is set, a Secret's type immutable and its type's required keys,
// Service ports, type and selector, a claim's access modes and storage request.
FieldErrorList validate_config_map(const ConfigMap& c);
FieldErrorList validate_config_map_update(const ConfigMap& c, const ConfigMap& old);
FieldErrorList validate_secret(const Secret& s);
FieldErrorList validate_secret_update(const Secret& s, const Secret& old);
FieldErrorList validate_service_account(const ServiceAccount& sa);
FieldErrorList validate_service(const Service& s);
FieldErrorList validate_persistent_volume_claim(const PersistentVolumeClaim& c);
FieldErrorList validate_persistent_volume_claim_update(const PersistentVolumeClaim& c,
                                                       const PersistentVolumeClaim& old);

// apps/v1 Deployment, ReplicaSet and batch/v1 Job (validation_workloads.cc):
// counts non-negative, the selector required, well formed and matching the
// template's labels, the template's restartPolicy (Always; OnFailure or Never for
// Jobs), a Deployment's strategy, a Job's completion mode and per-index backoff;
// on update the selector is immutable, and a Job's template, completions (but
// for elastic Indexed Jobs) and completion mode.
FieldErrorList validate_deployment(const Deployment& d);
FieldErrorList validate_deployment_update(const Deployment& d, const Deployment& old);
FieldErrorList validate_replica_set(const ReplicaSet& r);
FieldErrorList validate_replica_set_update(const ReplicaSet& r, const ReplicaSet& old);
FieldErrorList validate_job(const Job& j);
FieldErrorList validate_job_update(const Job& j, const Job& old);

// scheduling.k8s.io/v1 PriorityClass (validation_priority_class.cc; upstream's
// ValidatePriorityClass): a DNS subdomain name; a name starting with system- only
// for the built-in classes with their value and globalDefault; other values at
// most 1000000000; preemptionPolicy PreemptLowerPriority or Never. On update value
// and preemptionPolicy are immutable. (Only one globalDefault is the server's
// admission check, across objects.)
FieldErrorList validate_priority_class(const PriorityClass& pc);
FieldErrorList validate_priority_class_update(const PriorityClass& pc, const PriorityClass& old);
// A pod's or class's preemptionPolicy (upstream's ValidatePreemptionPolicy).
FieldErrorList validate_preemption_policy(const std::string& policy, const FieldPath& path);
// The built-in classes kube-apiserver creates at start: system-node-critical
// (2000001000) and system-cluster-critical (2000000000), neither default.
const std::vector<PriorityClass>& system_priority_classes();

// Validation of an update (`new_object` replaces `old_object`, same kind; a kind
// mismatch is one Internal error). Checks metadata immutability (name, namespace,
// uid, creationTimestamp, ...), resourceVersion set, and per kind:
// ResourceSlice: driver, pool name and nodeName immutable, spec revalidated;
// ResourceClaim and template: spec immutable;
// DeviceClass: spec revalidated (unchanged selectors are not recompiled).
FieldErrorList validate_update(const Object& old_object, const Object& new_object,
                               const ValidationOptions& options = {});

// Update of ResourceClaim.status (the /status subresource): reservedFor needs an
// allocation, unique uids, at most 256, no additions while the claim is being deleted;
// a set allocation is immutable (it may be cleared), a new one is validated;
// status.devices entries must name allocated devices.
FieldErrorList validate_claim_status_update(const ResourceClaim& new_claim,
                                            const ResourceClaim& old_claim);

// Admission rule (upstream registry/resource AuthorizedForAdmin): a claim or template
// whose `exactly` request asks for adminAccess may only be created in a namespace
// labelled `resource.kubernetes.io/admin-access: "true"`. Like upstream, only the first
// such request is reported, on the path upstream uses (without `exactly`):
//   spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace
FieldErrorList validate_admin_access(const std::vector<DeviceRequest>& requests,
                                     const std::map<std::string, std::string>& namespace_labels);
// The same rule for a status update that newly grants adminAccess in
// status.allocation.devices.results (path status.allocation.devices.results[i].adminAccess);
// nothing is checked when the old allocation already granted it.
FieldErrorList validate_admin_access_status(
    const std::vector<DeviceRequestAllocationResult>& new_results,
    const std::vector<DeviceRequestAllocationResult>& old_results,
    const std::map<std::string, std::string>& namespace_labels);

}  // namespace draplane::api
