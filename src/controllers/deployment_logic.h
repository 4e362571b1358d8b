// The decisions of the Deployment controller as pure functions (after
// kubernetes pkg/controller/deployment and its util/deployment_util.go):
//
// - maxSurge / maxUnavailable from an int or a percent, rounded as upstream
//   (surge up, unavailable down; both 0 makes unavailable 1);
// - the pod-template-hash of a template and the ReplicaSet made from it
//   ("<deployment>-<hash>", the hash label in its template and selector);
// - which ReplicaSet is the new one (its template equals the Deployment's but
//   for the hash label), revisions and the annotations copied to ReplicaSets;
// - how many replicas the new ReplicaSet may have in a rolling update, and
//   the proportional scaling of all of them when the Deployment is resized
//   mid-rollout;
// - the Deployment's status and its Available / Progressing conditions.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"

namespace draplane::controllers {

inline constexpr const char* kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr const char* kRevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history";
inline constexpr const char* kDesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas";
inline constexpr const char* kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
inline constexpr const char* kPodTemplateHashLabel = "pod-template-hash";

// Progressing / Available condition reasons (deployment_util.go).
inline constexpr const char* kNewRSCreatedReason = "NewReplicaSetCreated";
inline constexpr const char* kFoundNewRSReason = "FoundNewReplicaSet";
inline constexpr const char* kNewRSAvailableReason = "NewReplicaSetAvailable";
inline constexpr const char* kTimedOutReason = "ProgressDeadlineExceeded";
inline constexpr const char* kPausedReason = "DeploymentPaused";
inline constexpr const char* kResumedReason = "DeploymentResumed";
inline constexpr const char* kRSUpdatedReason = "ReplicaSetUpdated";
inline constexpr const char* kMinimumReplicasAvailable = "MinimumReplicasAvailable";
inline constexpr const char* kMinimumReplicasUnavailable = "MinimumReplicasUnavailable";

int32_t replicas_of(const api::Deployment& d);
int32_t replicas_of(const api::ReplicaSet& rs);

// intstr.GetScaledValueFromIntOrPercent: a JSON number, or "N%" of `total`
// rounded up or down; `fallback` when unset or unreadable.
int32_t scaled_value(const api::RawJson& value, int32_t total, bool round_up, int32_t fallback);
// ResolveFenceposts: {maxSurge, maxUnavailable} of a RollingUpdate Deployment
// (defaults 25% each).
std::pair<int32_t, int32_t> resolve_fenceposts(const api::Deployment& d);
// MaxSurge and MaxUnavailable (0 for Recreate; unavailable at most replicas).
int32_t max_surge(const api::Deployment& d);
int32_t max_unavailable(const api::Deployment& d);
bool is_rolling_update(const api::Deployment& d);

// The pod-template-hash: FNV-1a (32 bit) of the template's canonical JSON and
// the collision count, as upstream's ComputeHash encodes it (SafeEncodeString).
std::string pod_template_hash(const api::PodTemplateSpec& t, std::optional<int32_t> collision_count);
// Templates equal but for the pod-template-hash label.
bool equal_ignore_hash(const api::PodTemplateSpec& a, const api::PodTemplateSpec& b);

// deployment.kubernetes.io/revision of `meta` (0 when unset or not a number).
int64_t revision_of(const api::ObjectMeta& meta);

// Oldest first (then by name): upstream's ReplicaSetsByCreationTimestamp.
void sort_by_creation(std::vector<api::ReplicaSet>& sets);
// The index in `sets` (sorted by creation) of the ReplicaSet whose template is
// the Deployment's, or -1.
int find_new_replica_set(const api::Deployment& d, const std::vector<api::ReplicaSet>& sets);

// The ReplicaSet for the Deployment's current template (not yet created):
// "<name>-<hash>", the hash label in template, selector and labels, a
// controlling reference to `d`, minReadySeconds.
api::ReplicaSet new_replica_set(const api::Deployment& d);

// SetNewReplicaSetAnnotations: copies the Deployment's annotations (but the
// deployment controller's own and kubectl's last-applied-configuration),
// raises the revision to `new_revision` (keeping the old one in
// revision-history), and for a ReplicaSet being created the replicas
// annotations. True when anything changed.
bool set_new_replica_set_annotations(const api::Deployment& d, api::ReplicaSet& rs, int64_t new_revision,
                                     bool exists);
// desired-replicas and max-replicas; true when they changed.
bool set_replicas_annotations(api::ReplicaSet& rs, int32_t desired, int32_t max);

// NewRSNewReplicas: the replicas the new ReplicaSet may have now.
int32_t new_rs_new_replicas(const api::Deployment& d, const std::vector<api::ReplicaSet>& all,
                            const api::ReplicaSet& new_rs);

// Sums of spec.replicas, status.replicas, readyReplicas, availableReplicas.
int32_t spec_replicas(const std::vector<const api::ReplicaSet*>& sets);
int32_t actual_replicas(const std::vector<const api::ReplicaSet*>& sets);
int32_t available_replicas(const std::vector<const api::ReplicaSet*>& sets);

// The target size of each ReplicaSet when a Deployment with several active
// ReplicaSets is resized (upstream's proportional scaling in scale()): by name.
// `active` are the ReplicaSets with replicas > 0, newest last is not assumed.
std::map<std::string, int32_t> proportional_sizes(const api::Deployment& d, std::vector<api::ReplicaSet> active);

// SetDeploymentCondition: no change when the type has the same status and
// reason; the transition time is kept when only the reason changes.
void set_condition(api::DeploymentStatus& st, api::WorkloadCondition c);
const api::WorkloadCondition* find_condition(const api::DeploymentStatus& st, const std::string& type);
void remove_condition(api::DeploymentStatus& st, const std::string& type);
api::WorkloadCondition new_condition(const std::string& type, const std::string& status, const std::string& reason,
                                     const std::string& message, int64_t now_unix);

// calculateStatus: counts from `all` (including `new_rs` when not null), the
// Available condition.
api::DeploymentStatus calculate_status(const api::Deployment& d, const std::vector<const api::ReplicaSet*>& all,
                                       const api::ReplicaSet* new_rs, int64_t now_unix);
// DeploymentComplete, DeploymentProgressing, DeploymentTimedOut.
bool deployment_complete(const api::Deployment& d, const api::DeploymentStatus& st);
bool deployment_progressing(const api::Deployment& d, const api::DeploymentStatus& st);
bool deployment_timed_out(const api::Deployment& d, const api::DeploymentStatus& st, int64_t now_unix);
// syncRolloutStatus's Progressing condition on top of calculate_status.
api::DeploymentStatus rollout_status(const api::Deployment& d, const std::vector<const api::ReplicaSet*>& all,
                                     const api::ReplicaSet* new_rs, int64_t now_unix);

}  // namespace draplane::controllers
