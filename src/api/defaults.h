// Defaulting as the Kubernetes API server applies it on create/update, for the
// kinds draplane models (k8s.io/kubernetes pkg/apis/resource/v1/defaults.go and
// pkg/apis/core/v1/defaults.go):
//   ResourceClaim / ResourceClaimTemplate: exactly and firstAvailable[]
//     allocationMode "" -> ExactCount; count unset -> 1 when ExactCount;
//     every DeviceToleration operator "" -> Equal (also in status results).
//   ResourceSlice, DeviceTaintRule: device taint timeAdded "" -> options.now (when given).
//   Pod: restartPolicy Always, schedulerName default-scheduler,
//     terminationGracePeriodSeconds 30, dnsPolicy ClusterFirst,
//     enableServiceLinks true, securityContext {}; containers: limits copied to
//     requests where a request is missing, terminationMessagePath
//     /dev/termination-log, terminationMessagePolicy File, imagePullPolicy
//     Always for :latest or untagged images else IfNotPresent.
//   Node: status.allocatable <- status.capacity when empty.
//   Namespace: status.phase "" -> Active.
//   Secret: type Opaque; stringData merged into data (base64) and cleared.
//   Service: type ClusterIP, sessionAffinity None, internalTrafficPolicy Cluster,
//     ports' protocol TCP and targetPort = port.
//   PersistentVolumeClaim: volumeMode Filesystem, status.phase Pending.
//   Deployment: replicas 1, strategy RollingUpdate with maxUnavailable and
//     maxSurge 25%, revisionHistoryLimit 10, progressDeadlineSeconds 600;
//     ReplicaSet: replicas 1; Job: completions and parallelism 1 (parallelism
//     1 when only completions is given), backoffLimit 6 (MaxInt32 with
//     backoffLimitPerIndex), completionMode NonIndexed, suspend false,
//     podReplacementPolicy TerminatingOrFailed; their templates' pod specs as Pods'.
// DeviceClass has no defaults. Defaulting is idempotent.
//
// Thread-safety: mutates only its argument.
#pragma once

#include <string>

#include "api/types.h"

namespace draplane::api {

struct DefaultOptions {
  // RFC 3339 time used for fields the server stamps with "now" (device taint
  // timeAdded). Empty leaves them unset: libraries take no wall clock.
  std::string now;
};

void apply_defaults(Object& object, const DefaultOptions& options);
inline void apply_defaults(Object& object) { apply_defaults(object, DefaultOptions{}); }

// The pieces, for callers that hold a typed object.
void apply_defaults(ResourceClaimSpec& spec);
void apply_defaults(ResourceClaimStatus& status);
void apply_defaults(PodSpec& spec);

}  // namespace draplane::api
