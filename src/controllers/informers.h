// Informers: the informers of the controllers that run in one process, one
// per collection, as kube-controller-manager's SharedInformerFactory: each
// collection is listed and watched once and each event decoded once, however
// many controllers watch it (the claim, taint-eviction, Job and ReplicaSet
// controllers all watch pods). Objects are cached with managed fields
// stripped (informer_options.h).
//
// A controller asks for the informers it watches and adds its handlers in its
// constructor; the owner starts the informers after constructing every
// controller and stops them after stopping every controller (handlers call
// into the controllers). A controller given no shared Informers makes its own
// (InformersRef) and starts and stops them with itself.
//
// Thread-safety: the accessors and start() from one thread, before and at
// start; wait_synced() from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "client/informer.h"
#include "client/resource_path.h"

namespace draplane::controllers {

class SyncWorkers;

class Informers {
 public:
  // `rest` must outlive this.
  explicit Informers(client::RestClient& rest) : rest_(rest) {}
  ~Informers() { stop(); }
  Informers(const Informers&) = delete;
  Informers& operator=(const Informers&) = delete;

  client::Informer<api::Pod>& pods();
  client::Informer<api::ResourceClaim>& claims();
  client::Informer<api::ResourceClaimTemplate>& claim_templates();
  client::Informer<api::PodGroup>& pod_groups();
  client::Informer<api::ResourceSlice>& slices();
  client::Informer<api::DeviceTaintRule>& device_taint_rules();
  client::Informer<api::Job>& jobs();
  client::Informer<api::ReplicaSet>& replica_sets();
  client::Informer<api::Deployment>& deployments();

  // Starts the informers asked for, in the order asked; those started
  // already are left alone.
  void start();
  void stop();
  // Whether every informer asked for listed its objects within `timeout_ms` each.
  bool wait_synced(int timeout_ms) const;

 private:
  struct Entry {
    std::shared_ptr<void> informer;  // a client::Informer<T>
    std::function<void()> start, stop;
    std::function<bool(int)> wait_synced;
    bool started = false;
  };
  template <typename T>
  client::Informer<T>& get(const char* api_version, const char* kind, const client::ResourcePath& resource);

  client::RestClient& rest_;
  std::vector<Entry> entries_;
  std::map<std::string, size_t> by_kind_;  // kind -> index in entries_
};

// A controller's informers: the process's shared ones, else its own.
class InformersRef {
 public:
  // `shared` may be null: then the controller's own, over `rest`.
  InformersRef(client::RestClient& rest, Informers* shared)
      : own_(shared ? nullptr : std::make_unique<Informers>(rest)), informers_(shared ? *shared : *own_) {}
  Informers* operator->() { return &informers_; }
  // Own informers start and stop with `workers`; shared ones are only waited for.
  void watch_with(SyncWorkers& workers);
  // Starts, stops and waits for them as a controller without SyncWorkers
  // does: starting and stopping only its own.
  void start() {
    if (own_) own_->start();
  }
  void stop() {
    if (own_) own_->stop();
  }
  bool wait_synced(int timeout_ms) const { return informers_.wait_synced(timeout_ms); }

 private:
  std::unique_ptr<Informers> own_;
  Informers& informers_;
};

}  // namespace draplane::controllers
