#include "sched/scheduler.h"

#include <gtest/gtest.h>
#include <deque>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "harness.h"
#include "sched/pod_claims.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

// Node n1 with one GPU, and the GPU class.
void one_gpu_node(Harness& h) {
  h.add(node("n1"));
  h.add(gpu_slice("n1", 1));
  h.add(gpu_class());
}

// The same, its GPU taken by pod a (claim a): the next pod asking for one waits.
void one_gpu_taken(Harness& h) {
  one_gpu_node(h);
  h.add(claim("a"));
  h.add(pod("a", {"a"}));
  h.run();
  ASSERT_EQ(h.pod("a").spec.nodeName, "n1");
}

std::set<std::string> devices_of(const api::ResourceClaim& c) {
  std::set<std::string> out;
  if (!c.status.allocation) return out;
  for (const auto& r : c.status.allocation->devices.results) out.insert(r.pool + "/" + r.device);
  return out;
}

TEST(Scheduler, AllocatesReservesAndBindsOneClaim) {
  Harness h;
  h.add(node("n1"));
  h.add(gpu_slice("n1", 2));
  h.add(gpu_class());
  h.add(claim("c", 2));
  h.add(pod("p", {"c"}));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
  const auto& c = h.claim("c");
  ASSERT_TRUE(c.status.allocation);
  EXPECT_EQ(devices_of(c), (std::set<std::string>{"n1/gpu-0", "n1/gpu-1"}));
  ASSERT_EQ(c.status.reservedFor.size(), 1u);
  EXPECT_EQ(c.status.reservedFor[0].resource, "pods");
  EXPECT_EQ(c.status.reservedFor[0].name, "p");
  EXPECT_EQ(c.status.reservedFor[0].uid, "uid-p");
  EXPECT_EQ(c.metadata.finalizers, std::vector<std::string>{"resource.kubernetes.io/delete-protection"});
  // Node-local devices: the allocation is pinned to the node by name.
  ASSERT_TRUE(c.status.allocation->nodeSelector);
  EXPECT_EQ(c.status.allocation->nodeSelector->nodeSelectorTerms[0].matchFields[0].values,
            std::vector<std::string>{"n1"});
  EXPECT_EQ(h.sched.stats().bound, 1);
  EXPECT_EQ(h.api.status_writes, 1);  // allocation and reservedFor in one update
}

TEST(Scheduler, SharedClaimIsAllocatedOnceAndReservedByEachPod) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 1));
  h.add(gpu_slice("n2", 1));
  h.add(gpu_class());
  h.add(claim("shared"));
  h.add(pod("a", {"shared"}));
  h.add(pod("b", {"shared"}));
  h.add(pod("c", {"shared"}));
  h.run();
  const auto& c = h.claim("shared");
  ASSERT_TRUE(c.status.allocation);
  EXPECT_EQ(c.status.allocation->devices.results.size(), 1u);
  std::string node = h.pod("a").spec.nodeName;
  ASSERT_FALSE(node.empty());
  EXPECT_EQ(h.pod("b").spec.nodeName, node);  // the claim pins every user to its node
  EXPECT_EQ(h.pod("c").spec.nodeName, node);
  std::vector<std::string> names;
  for (const auto& r : c.status.reservedFor) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
  // The other node's GPU is still free for someone else.
  h.add(claim("other"));
  h.add(pod("d", {"other"}));
  h.run();
  EXPECT_NE(h.pod("d").spec.nodeName, node);
  EXPECT_FALSE(h.pod("d").spec.nodeName.empty());
}

TEST(Scheduler, SharedClaimAllocatedForAnotherNodeExcludesOtherNodes) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 1));
  h.add(gpu_class());
  h.add(claim("shared"));
  h.add(pod("a", {"shared"}));
  h.run();
  ASSERT_EQ(h.pod("a").spec.nodeName, "n1");
  // n1 is now full of pods: the second user cannot go elsewhere.
  api::Node full = node("n1");
  full.status.allocatable["pods"] = api::Quantity::from_int(1);
  h.add(full);
  h.add(pod("b", {"shared"}));
  h.run();
  EXPECT_EQ(h.pod("b").spec.nodeName, "");
  EXPECT_EQ(h.condition_message("b"),
            "Unschedulable: 0/2 nodes are available: 1 Too many pods, 1 resourceclaim not available on the node.");
}

// kube-scheduler's events: Scheduled after the binding, FailedScheduling with
// the Unschedulable condition's message on every failed attempt.
TEST(Scheduler, RecordsScheduledAndFailedSchedulingEvents) {
  Harness h;
  one_gpu_taken(h);
  EXPECT_EQ(h.api.recorded,
            std::vector<std::string>{"Normal Scheduled Binding default/a: Successfully assigned default/a to n1"});
  h.add(claim("b"));
  h.add(pod("b", {"b"}));
  h.run();
  ASSERT_EQ(h.api.recorded.size(), 2u);
  std::string condition = h.condition_message("b");
  ASSERT_EQ(condition.rfind("Unschedulable: ", 0), 0u) << condition;
  EXPECT_EQ(h.api.recorded[1], "Warning FailedScheduling Scheduling default/b: " + condition.substr(15));
  // Another attempt (the cluster changed) fails again: reported again, for the recorder to aggregate.
  h.add(node("n2"));
  h.run();
  ASSERT_EQ(h.api.recorded.size(), 3u);
  EXPECT_EQ(h.api.recorded[2].rfind("Warning FailedScheduling Scheduling default/b: ", 0), 0u) << h.api.recorded[2];
}

TEST(Scheduler, ExtendedResourceServedByDeviceClass) {
  Harness h;
  h.add(node("n1"));
  h.add(gpu_slice("n1", 4));
  api::DeviceClass cls = gpu_class();
  cls.spec.extendedResourceName = "nvidia.com/gpu";
  h.add(cls);
  api::Pod p = pod("train");
  p.spec.containers[0].resources.limits["nvidia.com/gpu"] = api::Quantity::from_int(2);
  api::Container side;
  side.name = "side";
  side.resources.limits["nvidia.com/gpu"] = api::Quantity::from_int(1);
  p.spec.containers.push_back(side);
  h.add(p);
  h.run();
  ASSERT_EQ(h.pod("train").spec.nodeName, "n1");
  const auto& st = h.pod("train").status.extendedResourceClaimStatus;
  ASSERT_TRUE(st);
  EXPECT_EQ(st->resourceClaimName, "train-extended-resources-x1");
  ASSERT_EQ(st->requestMappings.size(), 2u);
  EXPECT_EQ(st->requestMappings[0], (api::ContainerExtendedResourceRequest{"main", "nvidia.com/gpu", "container-0-request-0"}));
  EXPECT_EQ(st->requestMappings[1], (api::ContainerExtendedResourceRequest{"side", "nvidia.com/gpu", "container-1-request-0"}));
  const auto& c = h.claim("train-extended-resources-x1");
  EXPECT_EQ(c.metadata.generateName, "train-extended-resources-");
  EXPECT_EQ(c.metadata.annotations.at("resource.kubernetes.io/extended-resource-claim"), "true");
  ASSERT_EQ(c.metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(c.metadata.ownerReferences[0].name, "train");
  ASSERT_EQ(c.spec.devices.requests.size(), 2u);
  EXPECT_EQ(c.spec.devices.requests[0].exactly->count, 2);
  EXPECT_EQ(c.spec.devices.requests[0].exactly->deviceClassName, "gpu.nvidia.com");
  ASSERT_TRUE(c.status.allocation);
  EXPECT_EQ(c.status.allocation->devices.results.size(), 3u);
  EXPECT_EQ(c.status.reservedFor.size(), 1u);
  // The next pods get the remaining GPU, then nothing: no device twice.
  for (const char* name : {"next", "last"}) {
    api::Pod q = pod(name);
    q.spec.containers[0].resources.limits["nvidia.com/gpu"] = api::Quantity::from_int(1);
    h.add(q);
  }
  h.run();
  EXPECT_EQ(h.pod("next").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("last").spec.nodeName, "");
  EXPECT_EQ(h.condition_message("last"),
            "Unschedulable: 0/1 nodes are available: 1 cannot allocate all claims. 1 node(s): claim "
            "default/last-extended-resources-: request container-0-request-0: 1 device needed; 4 match class "
            "gpu.nvidia.com, 4 are in use; only 0 usable.");
  std::set<std::string> used;
  for (const auto& [key, cl] : h.api.claims) {
    for (const auto& d : devices_of(cl)) EXPECT_TRUE(used.insert(d).second) << d;
  }
  EXPECT_EQ(used.size(), 4u);
}

// Waits (up to 2 s) until a binding thread has bound the pod `key` in the
// fake API; its completion waits for quiesce().
bool wait_bound_by_worker(Harness& h, const std::string& key) {
  for (int i = 0; i < 2000; ++i) {
    {
      std::lock_guard<std::recursive_mutex> l(h.api.mu);
      if (!h.api.pods.at(key).spec.nodeName.empty()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The created extended-resource claim's events (its allocation included) may
// reach the scheduler before its binding completes, while the placeholder that
// held its devices is still assumed: forgetting the placeholder then must not
// free the devices the claim holds.
TEST(Scheduler, ExtendedClaimSeenBeforeItsBindingCompletesKeepsItsDevices) {
  SchedulerOptions o;
  o.bind_workers = 1;
  Harness h(o);
  h.add(node("n1"));
  h.add(gpu_slice("n1", 2));
  api::DeviceClass cls = gpu_class();
  cls.spec.extendedResourceName = "nvidia.com/gpu";
  h.add(cls);
  auto gpu_pod = [](const char* name) {
    api::Pod p = pod(name);
    p.spec.containers[0].resources.limits["nvidia.com/gpu"] = api::Quantity::from_int(1);
    return p;
  };
  h.add(gpu_pod("first"));
  ASSERT_EQ(h.sched.schedule_one().outcome, Outcome::kBinding);
  // The bind worker writes the claim and binds; its completion waits for quiesce().
  ASSERT_TRUE(wait_bound_by_worker(h, "default/first"));
  std::deque<Event> early;
  {
    std::lock_guard<std::recursive_mutex> l(h.api.mu);
    early.swap(h.api.events);
  }
  ASSERT_FALSE(early.empty());
  for (auto& e : early) h.sched.handle(std::move(e));
  h.sched.quiesce();
  h.deliver();
  h.add(gpu_pod("second"));
  h.add(gpu_pod("third"));
  h.run();
  EXPECT_EQ(h.pod("second").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("third").spec.nodeName, "");
  std::set<std::string> used;
  for (const auto& [key, cl] : h.api.claims) {
    for (const auto& d : devices_of(cl)) EXPECT_TRUE(used.insert(d).second) << d;
  }
  EXPECT_EQ(used.size(), 2u);
}

// A pod deleted (and its claim with it) while its binding is in flight: the
// claim's deletion reaches the scheduler before the binding's answer, which
// must not bring the claim back as an assumption holding its device (found by
// `draplane bench` with binding threads: a device held for good).
TEST(Scheduler, AClaimDeletedBeforeItsBindingCompletesFreesItsDevice) {
  SchedulerOptions o;
  o.bind_workers = 1;
  Harness h(o);
  h.add(node("n1"));
  h.add(gpu_slice("n1", 1));
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(pod("first", {"c1"}));
  ASSERT_EQ(h.sched.schedule_one().outcome, Outcome::kBinding);
  ASSERT_TRUE(wait_bound_by_worker(h, "default/first"));
  // The writes' events, then the deletions, all before the binding's answer.
  std::deque<Event> early;
  api::Pod bound_pod;
  api::ResourceClaim written;
  {
    std::lock_guard<std::recursive_mutex> l(h.api.mu);
    early.swap(h.api.events);
    bound_pod = h.api.pods.at("default/first");
    written = h.api.claims.at("default/c1");
    h.api.pods.erase("default/first");
    h.api.claims.erase("default/c1");
  }
  ASSERT_FALSE(bound_pod.spec.nodeName.empty());
  ASSERT_TRUE(written.status.allocation.has_value());
  for (auto& e : early) h.sched.handle(std::move(e));
  h.sched.handle(Event{Event::Op::kDelete, bound_pod});
  h.sched.handle(Event{Event::Op::kDelete, written});
  h.sched.quiesce();
  h.deliver();
  // The GPU is free again for the next pod.
  h.add(claim("c2"));
  h.add(pod("second", {"c2"}));
  h.run();
  EXPECT_EQ(h.pod("second").spec.nodeName, "n1") << h.condition_message("second");
}

TEST(Scheduler, ExtendedResourceFromNodeAllocatableIsNotDra) {
  Harness h;
  api::Node n = node("dp");
  n.status.allocatable["nvidia.com/gpu"] = api::Quantity::from_int(2);
  h.add(n);
  api::DeviceClass cls = gpu_class();
  cls.spec.extendedResourceName = "nvidia.com/gpu";
  h.add(cls);
  for (const char* name : {"a", "b"}) {
    api::Pod p = pod(name);
    p.spec.containers[0].resources.limits["nvidia.com/gpu"] = api::Quantity::from_int(2);
    h.add(p);
  }
  h.run();
  EXPECT_EQ(h.pod("a").spec.nodeName, "dp");
  EXPECT_FALSE(h.pod("a").status.extendedResourceClaimStatus);
  EXPECT_EQ(h.api.created, 0);
  EXPECT_EQ(h.condition_message("b"), "Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

TEST(Scheduler, ExtendedResourceClassChoice) {
  std::map<std::string, api::DeviceClass> classes;
  auto add = [&](const std::string& name, const std::string& created, std::optional<std::string> ext) {
    api::DeviceClass c = gpu_class(name);
    c.metadata.creationTimestamp = created;
    c.spec.extendedResourceName = ext;
    classes[name] = c;
  };
  add("b-old", "2026-01-01T00:00:00Z", "example.com/gpu");
  add("c-new", "2026-02-01T00:00:00Z", "example.com/gpu");
  add("a-new", "2026-02-01T00:00:00Z", "example.com/gpu");
  add("plain", "2026-03-01T00:00:00Z", std::nullopt);
  struct Case {
    std::string resource;
    std::string want;  // "" = none
  } cases[] = {
      {"example.com/gpu", "a-new"},  // newest, then first name
      {"deviceclass.resource.kubernetes.io/plain", "plain"},
      {"deviceclass.resource.kubernetes.io/missing", ""},
      {"other.com/gpu", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.resource);
    const api::DeviceClass* got = class_for_extended(classes, c.resource);
    EXPECT_EQ(got == nullptr ? std::string() : got->metadata.name, c.want);
  }
  EXPECT_TRUE(is_extended_resource("nvidia.com/gpu"));
  EXPECT_TRUE(is_extended_resource("deviceclass.resource.kubernetes.io/x"));
  EXPECT_FALSE(is_extended_resource("cpu"));
  EXPECT_FALSE(is_extended_resource("kubernetes.io/foo"));
  EXPECT_FALSE(is_extended_resource("hugepages.kubernetes.io/x"));
  EXPECT_FALSE(is_extended_resource("requests.nvidia.com/gpu"));
}

TEST(Scheduler, UnschedulableMessageAggregatesPerNode) {
  Harness h;
  h.add(node("n1", {{"zone", "a"}}));
  h.add(node("n2", {{"zone", "a"}}));
  h.add(node("n3", {{"zone", "b"}}));
  for (const char* n : {"n1", "n2", "n3"}) h.add(gpu_slice(n, 2));
  h.add(gpu_class());
  // One GPU of n1 and of n2 is taken.
  for (const char* n : {"n1", "n2"}) {
    std::string cname = std::string("hold-") + n;
    h.add(claim(cname));
    api::Pod p = pod(cname, {cname});
    p.spec.nodeSelector["kubernetes.io/hostname"] = n;
    h.add(p);
  }
  h.run();
  ASSERT_EQ(h.pod("hold-n1").spec.nodeName, "n1");
  ASSERT_EQ(h.pod("hold-n2").spec.nodeName, "n2");
  h.add(claim("big", 2));
  api::Pod p = pod("p", {"big"});
  p.spec.nodeSelector["zone"] = "a";
  h.add(p);
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "");
  EXPECT_EQ(h.condition_message("p"),
            "Unschedulable: 0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "2 cannot allocate all claims. 2 node(s): claim default/big: request gpu: 2 devices needed; "
            "2 match class gpu.nvidia.com, 1 is in use; only 1 usable.");
  EXPECT_TRUE(h.sched.queue().is_unschedulable("default/p"));
  // Freeing a GPU on n1 (the claim is deallocated) lets the pod fit after its backoff.
  api::ResourceClaim freed = h.claim("hold-n1");
  freed.status = {};
  h.add(freed);
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
}

// A DeviceTaintRule's NoSchedule taint keeps its device from new claims, named
// in the pod's condition like a driver's taint; deleting the rule lets the pod in.
TEST(Scheduler, DeviceTaintRuleBlocksItsDevicesUntilDeleted) {
  Harness h;
  one_gpu_node(h);
  api::DeviceTaintRule rule;
  rule.metadata.name = "drain";
  rule.spec.deviceSelector = api::DeviceTaintSelector{kDriver, std::nullopt, std::nullopt};
  rule.spec.taint = api::DeviceTaint{"example.com/drain", "", "NoSchedule", "2026-12-01T10:00:00Z"};
  h.add(rule);
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "");
  std::string msg = h.condition_message("p");
  EXPECT_NE(msg.find("1 is tainted example.com/drain:NoSchedule"), std::string::npos) << msg;
  h.sched.handle(Event{Event::Op::kDelete, rule});
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
}

TEST(Scheduler, UnknownClassKeepsPodPendingWithReason) {
  Harness h;
  h.add(node("n1"));
  h.add(gpu_slice("n1", 1));
  h.add(claim("c", 1, "missing-class"));
  h.add(pod("p", {"c"}));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "");
  std::string msg = h.condition_message("p");
  EXPECT_EQ(msg.rfind("Unschedulable: 0/1 nodes are available: 1 cannot allocate all claims. 1 node(s): ", 0), 0u) << msg;
  EXPECT_NE(msg.find("missing-class"), std::string::npos) << msg;
  h.add(gpu_class("missing-class"));
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
}

TEST(Scheduler, WaitsForClaimFromTemplate) {
  Harness h;
  one_gpu_node(h);
  api::Pod p = pod("p");
  api::PodResourceClaim rc;
  rc.name = "gpu";
  rc.resourceClaimTemplateName = "tmpl";
  p.spec.resourceClaims.push_back(rc);
  h.add(p);
  const std::string rv = h.pod("p").metadata.resourceVersion;
  CycleResult first = h.sched.schedule_one();
  EXPECT_EQ(first.outcome, Outcome::kUnschedulable);
  EXPECT_EQ(first.message,
            "0/1 nodes are available: pod \"default/p\": ResourceClaim not created yet from "
            "template \"tmpl\" (spec.resourceClaims[0]).");
  h.run();
  // The controller is about to create the claim: no condition is written for
  // that wait (kube-scheduler's PreEnqueue), nor any other write.
  EXPECT_EQ(h.condition_message("p"), "");
  EXPECT_EQ(h.pod("p").metadata.resourceVersion, rv);
  // The controller creates the claim (owned by the pod) and records it.
  api::ResourceClaim c = claim("p-gpu-abcde");
  c.metadata.ownerReferences.push_back(api::OwnerReference{"v1", "Pod", "p", "uid-p", true, true});
  h.add(c);
  api::Pod updated = h.pod("p");
  updated.status.resourceClaimStatuses.push_back(api::PodResourceClaimStatus{"gpu", "p-gpu-abcde"});
  h.add(updated);
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
  EXPECT_EQ(h.claim("p-gpu-abcde").status.reservedFor.size(), 1u);
}

TEST(Scheduler, NewClaimWakesOnlyThePodsNamingIt) {
  Harness h;
  h.add(node("n1"));
  h.add(gpu_slice("n1", 2));
  h.add(gpu_class());
  h.add(pod("a", {"claim-a"}));  // both claims do not exist yet
  h.add(pod("b", {"claim-b"}));
  h.run();
  ASSERT_EQ(h.sched.stats().unschedulable, 2);
  h.add(claim("claim-a"));
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("a").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("b").spec.nodeName, "");
  EXPECT_EQ(h.sched.stats().unschedulable, 2) << "b was not retried for a claim it does not use";
  EXPECT_TRUE(h.sched.queue().is_unschedulable("default/b"));
}

TEST(Scheduler, ConflictUnreservesAndRetriesAfterBackoff) {
  Harness h;
  one_gpu_node(h);
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.api.conflicts_to_inject = 1;
  CycleResult r = h.sched.schedule_one();
  h.deliver();
  EXPECT_EQ(r.outcome, Outcome::kRetry);
  EXPECT_EQ(h.sched.stats().conflicts, 1);
  EXPECT_FALSE(h.claim("c").status.allocation);
  // Unreserved: the device counts as free again in the cache.
  EXPECT_EQ(h.sched.cache().free_devices("n1"), 1);
  EXPECT_EQ(h.sched.cache().claim("default/c")->status.allocation.has_value(), false);
  // Not ready before the backoff ends.
  EXPECT_EQ(h.sched.schedule_one().outcome, Outcome::kIdle);
  h.clock.advance(std::chrono::seconds(1));
  r = h.sched.schedule_one();
  h.deliver();
  EXPECT_EQ(r.outcome, Outcome::kBound);
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
}

TEST(Scheduler, BindFailureTakesBackWrittenReservation) {
  Harness h;
  one_gpu_node(h);
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.api.bind_failures_to_inject = 1;
  CycleResult r = h.sched.schedule_one();
  h.deliver();
  EXPECT_EQ(r.outcome, Outcome::kRetry);
  EXPECT_EQ(r.message, "bind to node n1: connection refused");
  EXPECT_FALSE(h.claim("c").status.allocation);
  EXPECT_TRUE(h.claim("c").status.reservedFor.empty());
  h.clock.advance(std::chrono::seconds(1));
  h.run();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
  EXPECT_TRUE(h.claim("c").status.allocation);
}

// 200 pods race for 16 GPUs on 2 nodes; watch events lag (delivered only at
// the end), so only the assume cache prevents double allocation.
TEST(Scheduler, TwoHundredPodsRaceForSixteenGpus) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 8));
  h.add(gpu_slice("n2", 8));
  h.add(gpu_class());
  for (int i = 0; i < 200; ++i) {
    std::string name = "p" + std::to_string(i);
    h.add(claim(name));
    h.add(pod(name, {name}));
  }
  int cycles = h.sched.run_until_idle();
  EXPECT_EQ(cycles, 200);
  h.deliver();
  std::set<std::string> used;
  int bound = 0, allocated = 0;
  for (int i = 0; i < 200; ++i) {
    std::string name = "p" + std::to_string(i);
    if (!h.pod(name).spec.nodeName.empty()) ++bound;
    for (const auto& d : devices_of(h.claim(name))) {
      ++allocated;
      EXPECT_TRUE(used.insert(d).second) << "device given twice: " << d;
      EXPECT_EQ(d.substr(0, 2), h.pod(name).spec.nodeName);
    }
  }
  EXPECT_EQ(bound, 16);
  EXPECT_EQ(allocated, 16);
  EXPECT_EQ(h.sched.stats().unschedulable, 184);
  EXPECT_EQ(h.sched.cache().snapshot_builds(), 1);  // incremental: no rebuild per pod
}

// Idle time builds what the first pod would wait for, once the agents have
// stopped publishing for a moment; the pod then finds it ready.
TEST(Scheduler, WarmUpBuildsTheSnapshotAndViewsWhenTheInventoryIsQuiet) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 2));
  h.add(gpu_slice("n2", 2));
  h.add(gpu_class());
  EXPECT_FALSE(h.sched.warm_up());  // the class just arrived
  EXPECT_EQ(h.sched.cache().snapshot_builds(), 0);
  h.clock.advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(h.sched.warm_up());
  EXPECT_EQ(h.sched.cache().snapshot_builds(), 1);
  EXPECT_EQ(h.sched.cache().view_builds(), 2);
  EXPECT_FALSE(h.sched.warm_up());  // nothing stale
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.run();
  EXPECT_FALSE(h.pod("p").spec.nodeName.empty());
  EXPECT_EQ(h.sched.cache().snapshot_builds(), 1);
  EXPECT_EQ(h.sched.cache().view_builds(), 2);
  // A new slice makes it stale again; built after the next quiet period.
  h.add(gpu_slice("n3", 1));
  EXPECT_FALSE(h.sched.warm_up());
  h.clock.advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(h.sched.warm_up());
  EXPECT_EQ(h.sched.cache().snapshot_builds(), 2);
}

// The same race with the binding cycles on worker threads: the next pods are
// scheduled while earlier writes are in flight, and no device goes twice.
TEST(Scheduler, AsyncBindingNeverGivesADeviceTwice) {
  SchedulerOptions o;
  o.bind_workers = 4;
  Harness h(o);
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 8));
  h.add(gpu_slice("n2", 8));
  h.add(gpu_class());
  for (int i = 0; i < 60; ++i) {
    std::string name = "p" + std::to_string(i);
    h.add(claim(name));
    h.add(pod(name, {name}));
  }
  h.sched.run_until_idle();
  h.deliver();
  EXPECT_EQ(h.sched.in_flight(), 0);
  std::set<std::string> used;
  int bound = 0;
  for (int i = 0; i < 60; ++i) {
    std::string name = "p" + std::to_string(i);
    if (!h.pod(name).spec.nodeName.empty()) ++bound;
    for (const auto& d : devices_of(h.claim(name))) {
      EXPECT_TRUE(used.insert(d).second) << "device given twice: " << d;
      EXPECT_EQ(d.substr(0, 2), h.pod(name).spec.nodeName);
    }
  }
  EXPECT_EQ(bound, 16);
  EXPECT_EQ(used.size(), 16u);
  EXPECT_EQ(h.sched.stats().bound, 16);
  // The waiting pods got their condition from a worker too.
  EXPECT_EQ(h.condition_message("p59").rfind("Unschedulable: 0/2 nodes are available", 0), 0u)
      << h.condition_message("p59");
}

// A failed binding write on a worker takes the reservation back and retries.
TEST(Scheduler, AsyncBindFailureRetriesAfterBackoff) {
  SchedulerOptions o;
  o.bind_workers = 2;
  Harness h(o);
  one_gpu_node(h);
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.api.bind_failures_to_inject = 1;
  h.sched.run_until_idle();
  h.deliver();
  EXPECT_EQ(h.pod("p").spec.nodeName, "");
  EXPECT_FALSE(h.claim("c").status.allocation) << "the written allocation is taken back";
  EXPECT_EQ(h.sched.stats().retries, 1);
  h.clock.advance(std::chrono::seconds(2));
  h.sched.run_until_idle();
  h.deliver();
  EXPECT_EQ(h.pod("p").spec.nodeName, "n1");
  EXPECT_TRUE(h.claim("c").status.allocation);
}

// A waiting pod retried after a device frees on one node runs the allocator
// there only: its failures elsewhere hold while those nodes' views are unchanged.
TEST(Scheduler, RetryRunsAllocatorOnlyWhereDevicesChanged) {
  Harness h;
  for (const char* n : {"n1", "n2", "n3"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 1));
  }
  h.add(gpu_class());
  for (int i = 0; i < 3; ++i) {
    std::string name = "p" + std::to_string(i);
    h.add(claim(name));
    h.add(pod(name, {name}));
  }
  h.run();
  h.add(claim("late"));
  h.add(pod("late", {"late"}));
  h.run();
  ASSERT_EQ(h.pod("late").spec.nodeName, "");
  int64_t runs = h.sched.stats().allocator_runs;
  const std::string freed_node = h.pod("p1").spec.nodeName;
  // p1 ends: its claim is deallocated and the pod deleted.
  api::ResourceClaim c1 = h.claim("p1");
  c1.status = {};
  h.sched.handle(Event{Event::Op::kDelete, h.pod("p1")});
  h.add(c1);
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("late").spec.nodeName, freed_node);
  EXPECT_EQ(h.sched.stats().allocator_runs - runs, 1) << "only the node whose device freed is tried again";
}

TEST(Scheduler, PodsOfOneClaimShapeShareRememberedFailures) {
  Harness h;
  for (const char* n : {"n1", "n2", "n3"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 1));
  }
  h.add(gpu_class());
  for (int i = 0; i < 3; ++i) {
    std::string name = "hold" + std::to_string(i);
    h.add(claim(name));
    h.add(pod(name, {name}));
  }
  h.run();
  ASSERT_EQ(h.sched.stats().bound, 3);
  // The first waiting pod runs the allocator on every full node ...
  h.add(claim("w1"));
  h.add(pod("w1", {"w1"}));
  h.run();
  int64_t runs = h.sched.stats().allocator_runs;
  // ... a second one whose claim has the same spec learns the three failures from it,
  // explained with its own claim's name.
  h.clock.advance(std::chrono::milliseconds(10));
  h.add(claim("w2"));
  h.add(pod("w2", {"w2"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, runs);
  EXPECT_GE(h.sched.stats().shape_memo_hits, 3);
  EXPECT_EQ(h.condition_message("w2"),
            "Unschedulable: 0/3 nodes are available: 3 cannot allocate all claims. 3 node(s): claim default/w2: "
            "request gpu: 1 device needed; 1 match class gpu.nvidia.com, 1 is in use; only 0 usable.");
  EXPECT_EQ(h.condition_message("w1"),
            "Unschedulable: 0/3 nodes are available: 3 cannot allocate all claims. 3 node(s): claim default/w1: "
            "request gpu: 1 device needed; 1 match class gpu.nvidia.com, 1 is in use; only 0 usable.");
  // A claim asking for something else does not share them.
  h.clock.advance(std::chrono::milliseconds(10));
  h.add(claim("two", 2));
  h.add(pod("two", {"two"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, runs + 1);  // the three full nodes are one class
  EXPECT_NE(h.condition_message("two").find("claim default/two: request gpu: 2 devices needed"), std::string::npos)
      << h.condition_message("two");
  // A freed device is still found: the memo holds only while the node's view is unchanged.
  const std::string freed_node = h.pod("hold1").spec.nodeName;
  api::ResourceClaim c = h.claim("hold1");
  c.status = {};
  h.sched.handle(Event{Event::Op::kDelete, h.pod("hold1")});
  h.add(c);
  h.clock.advance(std::chrono::seconds(2));
  h.run();

  // The pod waiting longest takes it.
  EXPECT_EQ(h.pod("w1").spec.nodeName, freed_node);
  EXPECT_EQ(h.pod("w2").spec.nodeName, "");
}

// A waiting pod's Unschedulable message is rewritten at most once per second
// when only its numbers change (not on every retry); a new explanation at once.
TEST(Scheduler, UnschedulableMessageRewrittenAtMostOncePerSecond) {
  Harness h;
  one_gpu_node(h);
  h.add(claim("a"));
  h.add(pod("a", {"a"}));
  h.add(claim("b"));
  h.add(pod("b", {"b"}));
  h.run();
  ASSERT_EQ(h.pod("b").spec.nodeName, "");
  EXPECT_EQ(h.condition_message("b").rfind("Unschedulable: 0/1 nodes are available: 1 cannot allocate", 0), 0u)
      << h.condition_message("b");
  // A second full node: b is retried and would say "0/2 ... 2 nodes".
  h.add(node("n2"));
  h.add(gpu_slice("n2", 1));
  h.add(claim("c"));
  h.add(pod("c", {"c"}));
  h.run();
  ASSERT_EQ(h.pod("c").spec.nodeName, "n2");
  ASSERT_GE(h.sched.stats().unschedulable, 2);
  EXPECT_EQ(h.condition_message("b").rfind("Unschedulable: 0/1 nodes are available: 1 cannot allocate", 0), 0u)
      << h.condition_message("b");
  h.clock.advance(std::chrono::seconds(2));
  h.add(node("n1", {{"zone", "east"}}));  // a label change retries it again
  h.run();
  EXPECT_EQ(h.condition_message("b").rfind("Unschedulable: 0/2 nodes are available: 2 cannot allocate", 0), 0u)
      << h.condition_message("b");
}

// The cache may lag behind the scheduler's own condition write: a retry with
// the same explanation must not write it again from the older copy.
TEST(Scheduler, UnschedulableConditionNotRewrittenBeforeTheCacheShowsIt) {
  Harness h;
  ASSERT_NO_FATAL_FAILURE(one_gpu_taken(h));
  h.add(claim("b"));
  h.add(pod("b", {"b"}));
  ASSERT_EQ(h.sched.schedule_one().outcome, Outcome::kUnschedulable);
  h.sched.quiesce();
  EXPECT_EQ(h.api.pod_status_writes, 1);
  EXPECT_EQ(h.api.events.size(), 1u);  // the condition's update, not delivered yet
  h.clock.advance(std::chrono::seconds(2));
  h.add(node("n1", {{"zone", "east"}}));  // retries b
  ASSERT_EQ(h.sched.schedule_one().outcome, Outcome::kUnschedulable);
  h.sched.quiesce();
  EXPECT_EQ(h.api.pod_status_writes, 1);
  // Long after, the cache is the judge again: it shows no condition (say the
  // write was lost), so the retry writes it.
  h.api.events.clear();
  h.clock.advance(std::chrono::seconds(10));
  h.add(node("n1", {{"zone", "west"}}));
  ASSERT_EQ(h.sched.schedule_one().outcome, Outcome::kUnschedulable);
  h.sched.quiesce();
  EXPECT_EQ(h.api.pod_status_writes, 2);
}

// A condition write that fails is not taken as written: the pod is retried
// after a backoff and the condition shows, though nothing in the cluster changed.
TEST(Scheduler, FailedUnschedulableConditionWriteIsRetried) {
  Harness h;
  ASSERT_NO_FATAL_FAILURE(one_gpu_taken(h));
  h.api.pod_status_failures_to_inject = 1;
  h.add(claim("b"));
  h.add(pod("b", {"b"}));
  h.run();
  EXPECT_EQ(h.api.pod_status_writes, 0);
  EXPECT_EQ(h.condition_message("b"), "");
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.api.pod_status_writes, 1);
  EXPECT_EQ(h.condition_message("b").rfind("Unschedulable: 0/1 nodes are available: 1 cannot allocate", 0), 0u)
      << h.condition_message("b");
  // Written now: further retries with the same explanation write nothing.
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.api.pod_status_writes, 1);
}

// Writes of one pod's condition land in order: with several bind workers, a
// newer message queued while an older write is still running waits for it, or
// the older (after a conflict, say) lands last and the pod shows a stale reason
// that, on a quiet cluster, nothing would correct.
TEST(Scheduler, ConditionWritesForOnePodLandInOrder) {
  SchedulerOptions o;
  o.bind_workers = 2;
  Harness h(o);
  ASSERT_NO_FATAL_FAILURE(one_gpu_taken(h));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> updates{0};
  h.api.before_pod_status_update = [&] {
    if (updates.fetch_add(1) == 0) released.wait();  // the first write hangs until released
  };
  h.add(pod("b", {"b"}));  // its claim does not exist yet
  EXPECT_EQ(h.sched.schedule_one().outcome, Outcome::kUnschedulable);
  for (int i = 0; i < 500 && updates.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(updates.load(), 1) << "the first condition write did not start";
  h.add(claim("b"));  // now the GPU is what is missing: a new explanation
  CycleResult second = h.sched.schedule_one();
  EXPECT_EQ(second.outcome, Outcome::kUnschedulable);
  EXPECT_NE(second.message.find("cannot allocate"), std::string::npos) << second.message;
  // A free worker must not run the newer write while the older one hangs.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(updates.load(), 1);
  release.set_value();
  h.sched.quiesce();
  EXPECT_EQ(updates.load(), 2);
  EXPECT_EQ(h.condition_message("b"), "Unschedulable: " + second.message);
}

TEST(Scheduler, FirstAvailablePrefersH100AcrossNodes) {
  Harness h;
  h.add(node("a-node"));
  h.add(node("h-node"));
  h.add(gpu_slice("a-node", 2, "A100"));
  h.add(gpu_slice("h-node", 2, "H100"));
  h.add(gpu_class());
  auto fa_claim = [](const std::string& name) {
    api::ResourceClaim c;
    c.metadata.name = name;
    c.metadata.namespace_ = "default";
    api::DeviceRequest r;
    r.name = "gpu";
    for (const char* product : {"H100", "A100"}) {
      api::DeviceSubRequest s;
      s.name = std::string(product) == "H100" ? "h100" : "a100";
      s.deviceClassName = "gpu.nvidia.com";
      s.selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{
          std::string("device.attributes['gpu.nvidia.com'].productName == '") + product + "'"}});
      r.firstAvailable.push_back(s);
    }
    c.spec.devices.requests.push_back(r);
    return c;
  };
  std::vector<std::string> got;
  for (int i = 0; i < 5; ++i) {
    std::string name = "j" + std::to_string(i);
    h.add(fa_claim(name));
    h.add(pod(name, {name}));
    h.run();
    const auto& c = h.claim(name);
    got.push_back(h.pod(name).spec.nodeName + ":" +
                  (c.status.allocation ? c.status.allocation->devices.results[0].request : std::string("-")));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"h-node:gpu/h100", "h-node:gpu/h100", "a-node:gpu/a100",
                                           "a-node:gpu/a100", ":-"}));
}

TEST(Scheduler, PackingPrefersPartlyUsedNode) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 4));
  h.add(gpu_slice("n2", 4));
  h.add(gpu_class());
  std::vector<std::string> nodes;
  for (int i = 0; i < 5; ++i) {
    std::string name = "p" + std::to_string(i);
    h.add(claim(name));
    h.add(pod(name, {name}));
    h.run();
    nodes.push_back(h.pod(name).spec.nodeName);
  }
  // Fill one node before touching the other, keeping whole GPUs free there.
  EXPECT_EQ(nodes, (std::vector<std::string>{"n1", "n1", "n1", "n1", "n2"}));
  // A 4-GPU claim still fits on n2? No: n2 has 3 free. It stays pending.
  h.add(claim("big", 4));
  h.add(pod("big", {"big"}));
  h.run();
  EXPECT_EQ(h.pod("big").spec.nodeName, "");
}

TEST(Scheduler, PriorityOrderAndSchedulerName) {
  Harness h;
  one_gpu_node(h);
  h.add(claim("low"));
  h.add(claim("high"));
  h.add(claim("other"));
  api::Pod other = pod("other", {"other"});
  other.spec.schedulerName = "someone-else";
  other.spec.priority = 1000;
  h.add(other);
  api::Pod low = pod("low", {"low"});
  low.spec.priority = 1;
  h.add(low);
  api::Pod high = pod("high", {"high"});
  high.spec.priority = 100;
  high.spec.schedulerName = "draplane";
  h.add(high);
  h.run();
  EXPECT_EQ(h.pod("high").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("low").spec.nodeName, "");
  EXPECT_EQ(h.pod("other").spec.nodeName, "");
  EXPECT_TRUE(h.pod("other").status.conditions.empty());  // not ours: untouched
}

TEST(Scheduler, DeletedPodFreesSlotAndRequeues) {
  Harness h;
  api::Node n = node("n1");
  n.status.allocatable["pods"] = api::Quantity::from_int(1);
  h.add(n);
  h.add(pod("a"));
  h.add(pod("b"));
  h.run();
  EXPECT_EQ(h.pod("a").spec.nodeName, "n1");
  EXPECT_EQ(h.condition_message("b"), "Unschedulable: 0/1 nodes are available: 1 Too many pods.");
  h.sched.handle(Event{Event::Op::kDelete, h.pod("a")});
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("b").spec.nodeName, "n1");
}

// A heartbeat (status conditions only) does not retry waiting pods; a label
// change that may let them fit does.
TEST(Scheduler, NodeHeartbeatDoesNotRetryWaitingPods) {
  Harness h;
  h.add(node("n1"));
  api::Pod p = pod("a");
  p.spec.nodeSelector["zone"] = "east";
  h.add(p);
  h.run();
  ASSERT_EQ(h.sched.stats().unschedulable, 1);
  api::Node beat = node("n1");
  beat.status.conditions.text = R"([{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:10Z"}])";
  h.add(beat);
  h.run();
  EXPECT_EQ(h.sched.stats().unschedulable, 1);
  EXPECT_EQ(h.pod("a").spec.nodeName, "");
  EXPECT_EQ(h.sched.cache().view_builds(), 0);  // the pod never reached allocation
  h.add(node("n1", {{"zone", "east"}}));
  h.run();
  EXPECT_EQ(h.pod("a").spec.nodeName, "n1");
}

TEST(Scheduler, NoNodes) {
  Harness h;
  h.add(pod("a"));
  h.run();
  EXPECT_EQ(h.condition_message("a"), "Unschedulable: no nodes available to schedule pods");
}

}  // namespace
}  // namespace draplane::sched
