// The pure parts of the Job controller (after kubernetes pkg/controller/job):
// label selectors, completion-index sets ("0-2,5"), the pod made from a Job's
// template, pod failure policy matching, and the pod-failure backoff.
//
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "api/types.h"

namespace draplane::controllers {

using api::kJobCompletionIndex;
using api::kJobControllerUid;
using api::kJobIndexFailureCount;
using api::kJobName;
using api::kJobTrackingFinalizer;
// draplane's gang shorthand (sched/gang.h), copied from a Job to its pods.
inline constexpr const char* kGangAnnotation = "draplane.io/gang";
inline constexpr const char* kGangMinMemberAnnotation = "draplane.io/gang-min-member";

// "1,3-5" <-> {1,3,4,5}. Entries outside [0, limit) and malformed ones are
// dropped, as upstream's parseIndexesFromString does.
std::set<int> parse_indexes(const std::string& text, int limit);
std::string format_indexes(const std::set<int>& indexes);

// The pod's completion index (annotation, else label); nullopt when absent or
// not a non-negative number.
std::optional<int> completion_index(const api::Pod& pod);

// The failures recorded for the pod's index when it was created (annotation
// batch.kubernetes.io/job-index-failure-count, 0 when absent).
int index_failure_count(const api::Pod& pod);

// The pod the controller creates for `job` (name empty, generateName set):
// the template's metadata and spec, the Job's labels (controller-uid,
// job-name), a controlling ownerReference, the job-tracking finalizer and, for
// Indexed Jobs, the completion index as annotation, label, JOB_COMPLETION_INDEX
// env var (fieldRef to the annotation) and hostname `<job>-<index>`. The gang
// annotations of the Job are copied to the pod.
api::Pod pod_from_job(const api::Job& job, std::optional<int> index, int index_failures);

// Workload API integration (KEP-5547, Job.spec.scheduling): a Job with
// spec.scheduling gets a Workload (one pod group template, kJobPodGroupTemplate)
// and a PodGroup, both named after the Job and owned by it, and its pods are
// created with spec.schedulingGroup.podGroupName naming that PodGroup. A gang
// without minCount takes the Job's parallelism; no policy is basic.
inline constexpr const char* kJobPodGroupTemplate = "job";
api::Workload workload_for_job(const api::Job& job);
api::PodGroup pod_group_for_job(const api::Job& job);

// What a podFailurePolicy rule says about a failed pod.
enum class FailureAction { kCount, kIgnore, kFailJob, kFailIndex };
struct FailureVerdict {
  FailureAction action = FailureAction::kCount;
  std::string message;  // for FailJob: the condition message upstream writes
};
// The first rule of job.spec.podFailurePolicy matching the failed pod (exit
// codes of terminated containers: In / NotIn, exit code 0 never matches; or a
// pod condition of the given type and status); kCount when none matches.
FailureVerdict match_pod_failure_policy(const api::Job& job, const api::Pod& pod);

// The delay before a failed pod is replaced: base * 2^(failures-1), at most cap;
// zero without failures.
std::chrono::milliseconds pod_failure_backoff(int failures, std::chrono::milliseconds base,
                                              std::chrono::milliseconds cap);

// The integer member `name` of job.spec.extra (maxFailedIndexes), if set.
std::optional<int64_t> job_spec_extra_int(const api::Job& job, const char* name);

}  // namespace draplane::controllers
