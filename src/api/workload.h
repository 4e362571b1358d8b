// scheduling.k8s.io/v1beta1 Workload and PodGroup (Kubernetes 1.37, KEP-4671,
// feature gate GenericWorkload; SPEC §6; types in api/types.h): the
// gang-scheduling objects' constants and validation as upstream's declarative
// rules (pkg/apis/scheduling/v1beta1 validations and the handwritten
// pkg/apis/scheduling/validation).
//
// Thread-safety: pure functions.
#pragma once

#include "api/field_error.h"
#include "api/types.h"

namespace draplane::api {

inline constexpr const char* kSchedulingV1beta1 = "scheduling.k8s.io/v1beta1";
inline constexpr int kWorkloadMaxPodGroupTemplates = 8;
inline constexpr int kMaxPodGroupResourceClaims = 4;
// PodGroup condition types and reasons (SPEC §6).
inline constexpr const char* kPodGroupInitiallyScheduled = "PodGroupInitiallyScheduled";
inline constexpr const char* kPodGroupDisruptionTarget = "DisruptionTarget";
inline constexpr const char* kPodGroupReasonUnschedulable = "Unschedulable";
inline constexpr const char* kPodGroupReasonSchedulerError = "SchedulerError";
inline constexpr const char* kPodGroupReasonPreemptionByScheduler = "PreemptionByScheduler";

// Validate_Workload on create and update (controllerRef immutable; templates
// may not be added or removed; a template's basic policy is immutable, its
// gang may not be set or cleared, gang.minCount may change).
FieldErrorList validate_workload(const Workload& w);
FieldErrorList validate_workload_update(const Workload& w, const Workload& old);
// Validate_PodGroup on create, update (workloadRef, resourceClaims,
// disruptionMode, priorityClassName, priority immutable; the policy as a
// template's) and status update (conditions, resourceClaimStatuses).
FieldErrorList validate_pod_group(const PodGroup& g);
FieldErrorList validate_pod_group_update(const PodGroup& g, const PodGroup& old);
FieldErrorList validate_pod_group_status_update(const PodGroup& g, const PodGroup& old);

// Job.spec.scheduling (KEP-5547): the policy union, gang.minCount >= 1 when
// set, disruptionMode, resourceClaims; on update it may be neither set nor
// cleared, and only schedulingPolicy.gang.minCount may change.
FieldErrorList validate_job_scheduling(const JobSchedulingConfiguration& s, const FieldPath& path);
FieldErrorList validate_job_scheduling_update(const std::optional<JobSchedulingConfiguration>& now,
                                              const std::optional<JobSchedulingConfiguration>& old,
                                              const FieldPath& path);

// The gang minCount of a policy, 0 for basic (no gang).
inline int32_t gang_min_count(const PodGroupSchedulingPolicy& p) { return p.gang ? p.gang->minCount : 0; }

}  // namespace draplane::api
