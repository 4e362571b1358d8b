// The decisions of the ReplicaSet controller as pure functions (after
// kubernetes pkg/controller/replicaset and pkg/controller/controller_utils.go),
// shared with the Deployment controller where upstream shares them:
//
// - label selectors (metav1.LabelSelector) and controller references;
// - the pod a ReplicaSet creates from its template;
// - which pods go first when a ReplicaSet scales down (ActivePodsWithRanks);
// - the ReplicaSet's status (replicas, fullyLabeledReplicas, readyReplicas,
//   availableReplicas with minReadySeconds, observedGeneration).
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

// Upstream's burstReplicas: pods created or deleted by one sync at most.
inline constexpr int kBurstReplicas = 500;

// metav1.LabelSelectorAsSelector(...).Matches(labels). A null selector
// matches nothing; an empty one matches everything.
bool selector_matches(const std::optional<api::LabelSelector>& selector,
                      const std::map<std::string, std::string>& labels);

// The ownerReference with controller: true, if any.
std::optional<api::OwnerReference> controller_of(const api::ObjectMeta& meta);

// A controlling, owner-deletion-blocking reference to an owner.
api::OwnerReference controller_ref(const std::string& api_version, const std::string& kind,
                                   const api::ObjectMeta& owner);

// Upstream's IsPodActive: not Succeeded or Failed and not being deleted.
bool pod_active(const api::Pod& pod);
// The pod's Ready condition is True.
bool pod_ready(const api::Pod& pod);
// Ready for at least `min_ready_seconds` at `now_unix` (IsPodAvailable).
bool pod_available(const api::Pod& pod, int32_t min_ready_seconds, int64_t now_unix);
// Seconds until a ready pod becomes available (0 when it is or never will be).
int64_t seconds_until_available(const api::Pod& pod, int32_t min_ready_seconds, int64_t now_unix);

// The pod a ReplicaSet creates: the template's labels, annotations, finalizers
// and spec, generateName "<rs>-", and a controlling reference to the RS.
api::Pod pod_from_template(const api::ReplicaSet& rs);

// The `count` pods of `pods` to delete first, in upstream's order: unscheduled
// before scheduled, Pending before Unknown before Running, not ready before
// ready, more related pods on the same node first (`related`: the pods of the
// ReplicaSet and of its siblings under the same owner), ready for less time
// first, more container restarts first, newer first.
std::vector<api::Pod> pods_to_delete(const std::vector<api::Pod>& pods, const std::vector<api::Pod>& related,
                                     int count);

// calculateStatus: `pods` are the active pods the ReplicaSet controls. The
// ReplicaFailure condition is set (reason, message) when `failure_reason` is
// not empty and removed otherwise.
api::ReplicaSetStatus replica_set_status(const api::ReplicaSet& rs, const std::vector<api::Pod>& pods,
                                         int64_t now_unix, const std::string& failure_reason = "",
                                         const std::string& failure_message = "");

}  // namespace draplane::controllers
