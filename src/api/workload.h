// scheduling.k8s.io/v1beta1 Workload and PodGroup (Kubernetes 1.37, KEP-4671,
// feature gate GenericWorkload; SPEC §6): the gang-scheduling objects, and
// their validation as upstream's pkg/apis/scheduling/validation.
//
// Not yet served nor in api::Object (types.h): the codec's field tables, a
// strategy and the scheduler's watch come with serving them (issue 27). Until
// then the scheduler's gangs are the draplane.io/gang annotation's.
//
// Thread-safety: plain value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/field_error.h"
#include "api/types.h"

namespace draplane::api {

inline constexpr int kWorkloadMaxPodGroupTemplates = 8;
// PodGroup condition types and reasons (SPEC §6).
inline constexpr const char* kPodGroupInitiallyScheduled = "PodGroupInitiallyScheduled";
inline constexpr const char* kPodGroupReasonUnschedulable = "Unschedulable";
inline constexpr const char* kPodGroupReasonSchedulerError = "SchedulerError";

struct TypedLocalObjectReference {
  std::string apiGroup;
  std::string kind;
  std::string name;
  bool operator==(const TypedLocalObjectReference&) const = default;
};

struct BasicSchedulingPolicy {
  bool operator==(const BasicSchedulingPolicy&) const = default;
};

struct GangSchedulingPolicy {
  int32_t minCount = 0;
  bool operator==(const GangSchedulingPolicy&) const = default;
};

// Exactly one member is set.
struct PodGroupSchedulingPolicy {
  std::optional<BasicSchedulingPolicy> basic;
  std::optional<GangSchedulingPolicy> gang;
  bool operator==(const PodGroupSchedulingPolicy&) const = default;
};

struct PodGroupTemplate {
  std::string name;
  PodGroupSchedulingPolicy schedulingPolicy;
  bool operator==(const PodGroupTemplate&) const = default;
};

struct WorkloadSpec {
  std::optional<TypedLocalObjectReference> controllerRef;
  std::vector<PodGroupTemplate> podGroupTemplates;
  bool operator==(const WorkloadSpec&) const = default;
};

struct Workload {
  ObjectMeta metadata;
  WorkloadSpec spec;
};

struct WorkloadPodGroupTemplateReference {
  std::string workloadName;
  std::string podGroupTemplateName;
  bool operator==(const WorkloadPodGroupTemplateReference&) const = default;
};

struct PodGroupTemplateReference {
  std::optional<WorkloadPodGroupTemplateReference> workload;
  bool operator==(const PodGroupTemplateReference&) const = default;
};

struct PodGroupSpec {
  std::optional<PodGroupTemplateReference> podGroupTemplateRef;
  PodGroupSchedulingPolicy schedulingPolicy;
  bool operator==(const PodGroupSpec&) const = default;
};

struct PodGroupStatus {
  std::vector<Condition> conditions;
};

struct PodGroup {
  ObjectMeta metadata;
  PodGroupSpec spec;
  PodGroupStatus status;
};

// ValidateWorkload / ValidateWorkloadUpdate (spec immutable).
FieldErrorList validate_workload(const Workload& w);
FieldErrorList validate_workload_update(const Workload& w, const Workload& old);
// ValidatePodGroup / ...Update (spec immutable) / ...StatusUpdate (conditions).
FieldErrorList validate_pod_group(const PodGroup& g);
FieldErrorList validate_pod_group_update(const PodGroup& g, const PodGroup& old);
FieldErrorList validate_pod_group_status_update(const PodGroup& g, const PodGroup& old);

}  // namespace draplane::api
