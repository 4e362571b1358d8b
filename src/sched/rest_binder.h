// RestBinder: the Binder over the Kubernetes REST API (client::RestClient).
// Claims: POST / PUT / PUT status under /apis/resource.k8s.io/v1; pods: the
// binding subresource and a GET + PUT of pods/status (retried on conflict).
//
// Thread-safety: as the RestClient it uses (safe from several threads).
#pragma once

#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "sched/binder.h"

namespace draplane::sched {

class RestBinder final : public Binder {
 public:
  // `client` must outlive the binder.
  explicit RestBinder(client::RestClient& client) : client_(client) {}
  // Events go to `recorder` (events.k8s.io/v1, reporting as the pod's
  // scheduler, instance <scheduler>-<hostname>); null: none. Must outlive the binder.
  void set_recorder(client::EventRecorder* recorder, std::string hostname) {
    recorder_ = recorder;
    hostname_ = std::move(hostname);
  }

  Result<api::ResourceClaim> create_claim(const api::ResourceClaim& claim) override;
  Result<api::ResourceClaim> update_claim(const api::ResourceClaim& claim) override;
  Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& claim) override;
  Result<void> bind(const api::Pod& pod, const std::string& node) override;
  Result<void> update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) override;
  Result<void> delete_pod(const api::Pod& pod) override;
  Result<void> update_pod_group_status(const api::PodGroup& group,
                                       const std::function<void(api::PodGroup&)>& mutate) override;
  void record_event(const api::Pod& pod, const char* type, const char* reason, const char* action,
                    const std::string& message) override;

 private:
  client::RestClient& client_;
  client::EventRecorder* recorder_ = nullptr;
  std::string hostname_;
};

}  // namespace draplane::sched
