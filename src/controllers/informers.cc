#include "controllers/informers.h"

#include <algorithm>

#include "api/workload.h"

#include "controllers/informer_options.h"
#include "controllers/sync_workers.h"

namespace draplane::controllers {

using namespace client::resources;

template <typename T>
client::Informer<T>& Informers::get(const char* api_version, const char* kind, const client::ResourcePath& resource) {
  auto it = by_kind_.find(kind);
  if (it != by_kind_.end()) return *static_cast<client::Informer<T>*>(entries_[it->second].informer.get());
  auto informer = std::make_shared<client::Informer<T>>(rest_, informer_options(api_version, kind, resource));
  client::Informer<T>* raw = informer.get();
  entries_.push_back(Entry{informer, [raw] { raw->start(); }, [raw] { raw->stop(); },
                           [raw](int timeout_ms) { return raw->wait_synced(timeout_ms); }});
  by_kind_[kind] = entries_.size() - 1;
  return *raw;
}

client::Informer<api::Pod>& Informers::pods() { return get<api::Pod>("v1", "Pod", kPods); }
client::Informer<api::ResourceClaim>& Informers::claims() {
  return get<api::ResourceClaim>(api::kResourceV1, "ResourceClaim", kResourceClaims);
}
client::Informer<api::ResourceClaimTemplate>& Informers::claim_templates() {
  return get<api::ResourceClaimTemplate>(api::kResourceV1, "ResourceClaimTemplate", kResourceClaimTemplates);
}
client::Informer<api::PodGroup>& Informers::pod_groups() {
  return get<api::PodGroup>(api::kSchedulingV1beta1, "PodGroup", kPodGroups);
}
client::Informer<api::ResourceSlice>& Informers::slices() {
  return get<api::ResourceSlice>(api::kResourceV1, "ResourceSlice", kResourceSlices);
}
client::Informer<api::DeviceTaintRule>& Informers::device_taint_rules() {
  return get<api::DeviceTaintRule>(api::kResourceV1, "DeviceTaintRule", kDeviceTaintRules);
}
client::Informer<api::Job>& Informers::jobs() { return get<api::Job>("batch/v1", "Job", kJobs); }
client::Informer<api::ReplicaSet>& Informers::replica_sets() {
  return get<api::ReplicaSet>("apps/v1", "ReplicaSet", kReplicaSets);
}
client::Informer<api::Deployment>& Informers::deployments() {
  return get<api::Deployment>("apps/v1", "Deployment", kDeployments);
}

void Informers::start() {
  for (auto& e : entries_) {
    if (!std::exchange(e.started, true)) e.start();
  }
}

void Informers::stop() {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (std::exchange(it->started, false)) it->stop();
  }
}

bool Informers::wait_synced(int timeout_ms) const {
  return std::all_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.wait_synced(timeout_ms); });
}

void InformersRef::watch_with(SyncWorkers& workers) {
  if (own_) {
    workers.watch(*own_);
  } else {
    workers.wait_for(informers_);
  }
}

}  // namespace draplane::controllers
