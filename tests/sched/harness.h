// Test harness for the scheduler: an in-memory "API server" behind the Binder
// interface (resourceVersions, preconditions, injected conflicts) that turns
// each write into the watch event a real server would send, plus builders.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sched/binder.h"
#include "common/clock.h"
#include "sched/scheduler.h"

namespace draplane::sched::testing {

inline const char* kDriver = "gpu.nvidia.com";

class FakeApi : public Binder {
 public:
  std::map<std::string, api::ResourceClaim> claims;
  std::map<std::string, api::Pod> pods;
  std::deque<Event> events;  // watch events not yet delivered
  int64_t rv = 100;
  int conflicts_to_inject = 0;  // next N claim status updates fail with Conflict
  int bind_failures_to_inject = 0;
  int pod_status_failures_to_inject = 0;  // next N pod status updates fail (server unavailable)
  int status_writes = 0;
  int pod_status_writes = 0;
  int created = 0;
  // The scheduler's bind workers call in from their threads (bind_workers > 0).
  std::recursive_mutex mu;

  Result<api::ResourceClaim> create_claim(const api::ResourceClaim& claim) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    api::ResourceClaim c = claim;
    c.metadata.name = c.metadata.generateName + "x" + std::to_string(++created);
    c.metadata.uid = "uid-" + c.metadata.name;
    c.metadata.resourceVersion = std::to_string(++rv);
    c.status = {};
    claims[object_key(c.metadata)] = c;
    events.push_back(Event{Event::Op::kUpsert, c});
    return c;
  }
  Result<api::ResourceClaim> update_claim(const api::ResourceClaim& claim) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    auto it = claims.find(object_key(claim.metadata));
    if (it == claims.end()) return not_found_error("resourceclaims \"" + claim.metadata.name + "\" not found");
    if (it->second.metadata.resourceVersion != claim.metadata.resourceVersion) return conflict_error("stale");
    api::ResourceClaim c = claim;
    c.status = it->second.status;
    c.metadata.resourceVersion = std::to_string(++rv);
    it->second = c;
    events.push_back(Event{Event::Op::kUpsert, c});
    return c;
  }
  Result<api::ResourceClaim> update_claim_status(const api::ResourceClaim& claim) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    auto it = claims.find(object_key(claim.metadata));
    if (it == claims.end()) return not_found_error("resourceclaims \"" + claim.metadata.name + "\" not found");
    if (conflicts_to_inject > 0) {
      --conflicts_to_inject;
      return conflict_error("Operation cannot be fulfilled on resourceclaims \"" + claim.metadata.name +
                            "\": the object has been modified");
    }
    if (it->second.metadata.resourceVersion != claim.metadata.resourceVersion) return conflict_error("stale");
    ++status_writes;
    it->second.status = claim.status;
    it->second.metadata.resourceVersion = std::to_string(++rv);
    events.push_back(Event{Event::Op::kUpsert, it->second});
    return it->second;
  }
  Result<void> bind(const api::Pod& pod, const std::string& node) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    if (bind_failures_to_inject > 0) {
      --bind_failures_to_inject;
      return Status(Code::kUnavailable, "connection refused");
    }
    auto& p = pods.at(object_key(pod.metadata));
    if (!p.spec.nodeName.empty()) return conflict_error("pod already assigned");
    p.spec.nodeName = node;
    p.metadata.resourceVersion = std::to_string(++rv);
    events.push_back(Event{Event::Op::kUpsert, p});
    return {};
  }
  // Runs before each pod status update, outside `mu` (a test can hold one back).
  std::function<void()> before_pod_status_update;

  Result<void> update_pod_status(const api::Pod& pod, const std::function<void(api::Pod&)>& mutate) override {
    if (before_pod_status_update) before_pod_status_update();
    std::lock_guard<std::recursive_mutex> l(mu);
    if (pod_status_failures_to_inject > 0) {
      --pod_status_failures_to_inject;
      return Status(Code::kUnavailable, "connection refused");
    }
    auto& p = pods.at(object_key(pod.metadata));
    ++pod_status_writes;
    mutate(p);
    p.metadata.resourceVersion = std::to_string(++rv);
    events.push_back(Event{Event::Op::kUpsert, p});
    return {};
  }
  // Graceful deletion, as the API server starts it: the pod gets a
  // deletionTimestamp (finish_deletions() in tests removes it).
  std::vector<std::string> deleted;
  Result<void> delete_pod(const api::Pod& pod) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    auto it = pods.find(object_key(pod.metadata));
    if (it == pods.end() || it->second.metadata.uid != pod.metadata.uid) return not_found_error("pod not found");
    deleted.push_back(object_key(pod.metadata));
    if (!it->second.metadata.deletionTimestamp.empty()) return {};
    it->second.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    it->second.metadata.resourceVersion = std::to_string(++rv);
    events.push_back(Event{Event::Op::kUpsert, it->second});
    return {};
  }
  std::map<std::string, api::PodGroup> pod_groups;
  int pod_group_status_writes = 0;
  Result<void> update_pod_group_status(const api::PodGroup& group,
                                       const std::function<void(api::PodGroup&)>& mutate) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    auto it = pod_groups.find(object_key(group.metadata));
    if (it == pod_groups.end()) return not_found_error("podgroups \"" + group.metadata.name + "\" not found");
    ++pod_group_status_writes;
    mutate(it->second);
    it->second.metadata.resourceVersion = std::to_string(++rv);
    events.push_back(Event{Event::Op::kUpsert, it->second});
    return {};
  }
  // Events the scheduler recorded: "<type> <reason> <action> <ns>/<pod>: <message>".
  std::vector<std::string> recorded;
  void record_event(const api::Pod& pod, const char* type, const char* reason, const char* action,
                    const std::string& message) override {
    std::lock_guard<std::recursive_mutex> l(mu);
    recorded.push_back(std::string(type) + " " + reason + " " + action + " " + pod.metadata.namespace_ + "/" +
                       pod.metadata.name + ": " + message);
  }
};

// Scheduler + fake API + clock; add() stores an object and delivers its event.
struct Harness {
  common::FakeClock clock;
  FakeApi api;
  Scheduler sched;

  explicit Harness(SchedulerOptions o = {}) : sched(api, clock, o) {}

  template <typename T>
  void add(T obj) {
    obj.metadata.resourceVersion = std::to_string(++api.rv);
    if constexpr (std::is_same_v<T, api::Pod>) {
      if (obj.metadata.uid.empty()) obj.metadata.uid = "uid-" + obj.metadata.name;
      api.pods[object_key(obj.metadata)] = obj;
    }
    if constexpr (std::is_same_v<T, api::ResourceClaim>) {
      if (obj.metadata.uid.empty()) obj.metadata.uid = "uid-" + obj.metadata.name;
      api.claims[object_key(obj.metadata)] = obj;
    }
    if constexpr (std::is_same_v<T, api::PodGroup>) api.pod_groups[object_key(obj.metadata)] = obj;
    sched.handle(Event{Event::Op::kUpsert, obj});
  }
  // Delivers pending watch events.
  void deliver() {
    sched.quiesce();
    while (!api.events.empty()) {
      Event e = std::move(api.events.front());
      api.events.pop_front();
      sched.handle(e);
    }
  }
  // Schedules until nothing is ready, delivering watch events after each cycle.
  void run() {
    for (int i = 0; i < 100000; ++i) {
      CycleResult r = sched.schedule_one();
      deliver();
      if (r.outcome == Outcome::kIdle) return;
    }
  }
  // What the node agent and the claim controller do after graceful deletes
  // (FakeApi::delete_pod): the terminating pods go, then claims no remaining
  // pod reserves are deallocated (claim_logic drops the gone pods from
  // reservedFor, then deallocates).
  // `release_claims` false: the pods go, the claims stay as they were (the
  // claim controller has not caught up yet).
  void finish_deletions(bool release_claims = true) {
    std::vector<std::string> gone;
    for (const auto& [key, p] : api.pods) {
      if (!p.metadata.deletionTimestamp.empty()) gone.push_back(key);
    }
    for (const auto& key : gone) {
      api::Pod p = api.pods.at(key);
      api.pods.erase(key);
      api.events.push_back(Event{Event::Op::kDelete, p});
    }
    for (auto& [key, c] : api.claims) {
      if (!release_claims || !c.status.allocation) continue;
      api::ResourceClaim next = c;
      const std::string ns = c.metadata.namespace_;  // clang 14 captures no structured binding
      std::erase_if(next.status.reservedFor, [&](const auto& r) { return !api.pods.count(ns + "/" + r.name); });
      if (next.status.reservedFor.empty()) next.status.allocation.reset();
      if (next.status == c.status) continue;
      ASSERT_TRUE(api.update_claim_status(next).has_value());
    }
    deliver();
  }
  // The GPU class, then each node (name, GPUs) with its slice of GPUs.
  void add_gpu_nodes(const std::vector<std::pair<std::string, int>>& nodes);
  const api::Pod& pod(const std::string& name) { return api.pods.at("default/" + name); }
  const api::ResourceClaim& claim(const std::string& name) { return api.claims.at("default/" + name); }
  std::string condition_message(const std::string& pod_name) {
    for (const auto& c : pod(pod_name).status.conditions) {
      if (c.type == "PodScheduled") return c.reason + ": " + c.message;
    }
    return "";
  }
};

// ---------------------------------------------------------------- builders

inline api::Node node(const std::string& name, std::map<std::string, std::string> labels = {}) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  n.metadata.labels["kubernetes.io/hostname"] = name;
  n.status.allocatable["pods"] = api::Quantity::from_int(110);
  return n;
}

inline api::ResourceSlice gpu_slice(const std::string& node_name, int gpus, const std::string& product = "H100") {
  api::ResourceSlice s;
  s.metadata.name = node_name + "-gpus";
  s.spec.driver = kDriver;
  s.spec.pool = api::ResourcePool{node_name, 1, 1};
  s.spec.nodeName = node_name;
  for (int i = 0; i < gpus; ++i) {
    api::Device d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["type"].string_ = "gpu";
    d.attributes["productName"].string_ = product;
    s.spec.devices.push_back(d);
  }
  return s;
}

inline api::DeviceClass gpu_class(const std::string& name = "gpu.nvidia.com") {
  api::DeviceClass c;
  c.metadata.name = name;
  c.spec.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}});
  return c;
}

inline api::ResourceClaim claim(const std::string& name, int64_t count = 1, const std::string& cls = "gpu.nvidia.com") {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "default";
  api::DeviceRequest r;
  r.name = "gpu";
  api::ExactDeviceRequest ex;
  ex.deviceClassName = cls;
  ex.allocationMode = "ExactCount";
  ex.count = count;
  r.exactly = ex;
  c.spec.devices.requests.push_back(r);
  return c;
}

inline api::Pod pod(const std::string& name, std::vector<std::string> claim_names = {}) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "default";
  api::Container c;
  c.name = "main";
  for (size_t i = 0; i < claim_names.size(); ++i) {
    api::PodResourceClaim rc;
    rc.name = "c" + std::to_string(i);
    rc.resourceClaimName = claim_names[i];
    p.spec.resourceClaims.push_back(rc);
    c.resources.claims.push_back(api::ResourceClaimRef{rc.name, ""});
  }
  p.spec.containers.push_back(c);
  p.status.phase = "Pending";
  return p;
}

// PodGroup "default/<name>" (uid "uid-<name>", generation 1): a gang of
// `min_count` members, or of the basic policy when `min_count` is 0.
inline api::PodGroup pod_group(const std::string& name, int min_count) {
  api::PodGroup g;
  g.metadata.name = name;
  g.metadata.namespace_ = "default";
  g.metadata.uid = "uid-" + name;
  g.metadata.generation = 1;
  if (min_count > 0) g.spec.schedulingPolicy.gang = api::GangSchedulingPolicy{min_count};
  else g.spec.schedulingPolicy.basic = api::BasicSchedulingPolicy{};
  return g;
}

// A pod of PodGroup `group` using its own claim `name` (the claim is not made).
inline api::Pod group_member(const std::string& group, const std::string& name) {
  api::Pod p = pod(name, {name});
  p.spec.schedulingGroup = api::PodSchedulingGroup{group};
  return p;
}

inline void Harness::add_gpu_nodes(const std::vector<std::pair<std::string, int>>& nodes) {
  add(gpu_class());
  for (const auto& [n, gpus] : nodes) {
    add(node(n));
    add(gpu_slice(n, gpus));
  }
}

}  // namespace draplane::sched::testing
