// Binder: every API write the scheduler makes, behind one interface, so tests
// run the scheduler against a fake (and inject conflicts) and production uses
// the REST client (rest_binder.h).
//
// Contract of each call: success returns the object as stored (new
// resourceVersion); kConflict means a precondition (metadata.resourceVersion)
// failed and the caller must re-read; other codes are transient or fatal for
// this attempt. Implementations must be safe to call from the scheduler's
// thread only (no further synchronization is required of them).
#pragma once

#include <functional>
#include <string>

#include "api/types.h"
#include "common/result.h"

namespace draplane::sched {

class Binder {
 public:
  virtual ~Binder() = default;
  // POST: creates a claim (metadata.generateName honoured).
  virtual Result<api::ResourceClaim> create_claim(const api::ResourceClaim& claim) = 0;
  // PUT of metadata/spec (the finalizer), precondition metadata.resourceVersion.
  virtual Result<api::ResourceClaim> update_claim(const api::ResourceClaim& claim) = 0;
  // PUT .../status: allocation and reservedFor, precondition metadata.resourceVersion.
  virtual Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& claim) = 0;
  // POST .../pods/<name>/binding with a v1 Binding to `node`.
  virtual Result<void> bind(const api::Pod& pod, const std::string& node) = 0;
  // Read-modify-write of a pod's status: `mutate` is applied to `pod` (when it
  // has a resourceVersion) or to the current pod, retried on conflicts with
  // the current pod by the implementation.
  virtual Result<void> update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) = 0;
  // DELETE of the pod with its own grace period (spec.terminationGracePeriodSeconds)
  // and its UID as precondition: preemption's eviction. Unsupported by default.
  virtual Result<void> delete_pod(const api::Pod& pod) {
    return Status(Code::kFailedPrecondition, "pod " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                                                 ": this binder does not delete pods");
  }
  // Read-modify-write of a PodGroup's status (its PodGroupInitiallyScheduled
  // condition), as update_pod_status. Not supported by default (tests and
  // simulation without PodGroups).
  virtual Result<void> update_pod_group_status(const api::PodGroup& group,
                                               const std::function<void(api::PodGroup&)>& mutate) {
    (void)group, (void)mutate;
    return Status(Code::kFailedPrecondition, "this binder writes no PodGroup status");
  }
  // An Event about `pod` (kube-scheduler's Scheduled, FailedScheduling), from
  // any thread. Must only enqueue: the scheduling cycle calls it. No-op by
  // default (tests, simulation).
  virtual void record_event(const api::Pod& pod, const char* type, const char* reason, const char* action,
                            const std::string& message) {
    (void)pod, (void)type, (void)reason, (void)action, (void)message;
  }
};

}  // namespace draplane::sched
