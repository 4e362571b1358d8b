// The victim search over alike nodes (plugins/preemption.h, NodeClasses):
// nodes of one group whose victims look alike are examined once, and the
// answer is the one a node-by-node search gives; victims that differ in where
// their devices are or in which claims they hold keep their nodes apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "harness.h"

namespace draplane::sched::preemption_alike_nodes_test {
namespace {

using namespace ::draplane::sched::testing;  // NOLINT

SchedulerOptions with_groups(bool on) {
  SchedulerOptions o;
  o.node_classes = on;
  return o;
}

struct Cluster : Harness {
  Cluster(bool node_groups, const std::vector<std::string>& nodes) : Harness(with_groups(node_groups)) {
    add(gpu_class());
    for (const auto& n : nodes) {
      add(node(n));
      api::ResourceSlice s = gpu_slice(n, 2);
      for (size_t i = 0; i < s.spec.devices.size(); ++i) {
        s.spec.devices[i].attributes["index"].int_ = static_cast<int64_t>(i);
      }
      add(s);
    }
  }
  // A pod running on `node` since `start` whose claim holds `devices` (none:
  // a pod without claims).
  // `sharers`: further pods (names) on the node that use the same claim.
  void running(const std::string& name, const std::string& node_name, const std::vector<std::string>& devices,
               int32_t priority, const std::string& start, const std::vector<std::string>& sharers = {}) {
    api::Pod p = testing::pod(name, devices.empty() ? std::vector<std::string>{} : std::vector<std::string>{name});
    if (!devices.empty()) {
      api::ResourceClaim c = testing::claim(name, static_cast<int64_t>(devices.size()));
      c.status.allocation.emplace();
      for (const auto& device : devices) {
        api::DeviceRequestAllocationResult r;
        r.request = "gpu";
        r.driver = kDriver;
        r.pool = node_name;
        r.device = device;
        c.status.allocation->devices.results.push_back(r);
      }
      c.status.reservedFor.push_back(api::ResourceClaimConsumerReference{"", "pods", name, "uid-" + name});
      for (const auto& other : sharers) {
        c.status.reservedFor.push_back(api::ResourceClaimConsumerReference{"", "pods", other, "uid-" + other});
      }
      add(c);
    }
    p.spec.priority = priority;
    p.spec.nodeName = node_name;
    p.status.phase = "Running";
    p.status.startTime = start;
    add(p);
    for (const auto& other : sharers) {
      api::Pod q = p;
      q.metadata.name = other;
      q.metadata.uid.clear();
      add(q);
    }
  }
  // The preemptor: `gpus` GPUs (`selector`: CEL on them).
  void arrive(const std::string& selector = "", int gpus = 1) {
    api::ResourceClaim c = testing::claim("urgent", gpus);
    if (!selector.empty()) {
      c.spec.devices.requests[0].exactly->selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{selector}});
    }
    add(c);
    api::Pod p = testing::pod("urgent", {"urgent"});
    p.spec.priority = 1000;
    add(p);
    run();
  }
  std::vector<std::string> preempted() {
    std::vector<std::string> out;
    for (const auto& [key, p] : api.pods) {
      if (!p.metadata.deletionTimestamp.empty()) out.push_back(p.metadata.name);
    }
    return out;
  }
};

// Four full nodes of one group, their pods alike but for priority: one node
// is examined (all out, then one reprieve; putting the last pod back too would
// leave nobody out, known not to fit), the other three read off it, and
// the victim is the node-by-node search's: the newer pod of the node whose
// pods matter least.
TEST(PreemptionAlikeNodes, AreExaminedOnceWithTheSameVictim) {
  for (bool groups : {true, false}) {
    SCOPED_TRACE(groups ? "node groups" : "node by node");
    Cluster h(groups, {"n0", "n1", "n2", "n3"});
    const int32_t priority[] = {3, 2, 1, 4};
    for (int n = 0; n < 4; ++n) {
      const std::string node_name = "n" + std::to_string(n);
      h.running(node_name + "-old", node_name, {"gpu-0"}, priority[n], "2026-01-01T00:00:00Z");
      h.running(node_name + "-new", node_name, {"gpu-1"}, priority[n], "2026-02-01T00:00:00Z");
    }
    h.arrive();
    EXPECT_EQ(h.preempted(), std::vector<std::string>{"n2-new"});
    EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "n2");
    EXPECT_EQ(h.sched.stats().preemption_checks, groups ? 2 : 8);
    EXPECT_EQ(h.sched.stats().preemption_reused_nodes, groups ? 3 : 0);
  }
}

// Two full nodes of one group whose pods hold their GPUs the other way round;
// the preemptor needs the GPU of index 1. On `a` the older pod keeps gpu-0 and
// the newer goes; on `b` the older pod holds gpu-1 and must go itself. Read
// off `a`, `b` would lose its newer pod and the preemptor still not fit.
TEST(PreemptionAlikeNodes, VictimsHoldingOtherDevicesAreNotAlike) {
  for (bool groups : {true, false}) {
    SCOPED_TRACE(groups ? "node groups" : "node by node");
    Cluster h(groups, {"a", "b"});
    h.running("a-old", "a", {"gpu-0"}, 5, "2026-01-01T00:00:00Z");
    h.running("a-new", "a", {"gpu-1"}, 5, "2026-02-01T00:00:00Z");
    h.running("b-old", "b", {"gpu-1"}, 1, "2026-01-01T00:00:00Z");
    h.running("b-new", "b", {"gpu-0"}, 1, "2026-02-01T00:00:00Z");
    h.arrive("device.attributes['gpu.nvidia.com'].index == 1");
    EXPECT_EQ(h.preempted(), std::vector<std::string>{"b-old"});
    EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "b");
    EXPECT_EQ(h.sched.stats().preemption_reused_nodes, 0);
  }
}

// Two full nodes of one group (both GPUs in use, two pods) where the older
// pod holds both GPUs on `a` and none on `b`: on `a` the older pod goes, on
// `b` the newer one. Victims whose claims differ are not alike.
TEST(PreemptionAlikeNodes, VictimsHoldingOtherClaimsAreNotAlike) {
  for (bool groups : {true, false}) {
    SCOPED_TRACE(groups ? "node groups" : "node by node");
    Cluster h(groups, {"a", "b"});
    h.running("a-old", "a", {"gpu-0", "gpu-1"}, 5, "2026-01-01T00:00:00Z");
    h.running("a-new", "a", {}, 5, "2026-02-01T00:00:00Z");
    h.running("b-old", "b", {}, 1, "2026-01-01T00:00:00Z");
    h.running("b-new", "b", {"gpu-0", "gpu-1"}, 1, "2026-02-01T00:00:00Z");
    h.arrive();
    EXPECT_EQ(h.preempted(), std::vector<std::string>{"b-new"});
    EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "b");
    EXPECT_EQ(h.sched.stats().preemption_reused_nodes, 0);
  }
}

// A claim two pods share is freed only when both go: such a node is examined
// on its own (here the shared claim keeps the GPU in use whichever one goes,
// so the only free GPU comes from the other pod).
TEST(PreemptionAlikeNodes, SharedClaimsAreExaminedNodeByNode) {
  Cluster h(true, {"a", "b"});
  for (const std::string n : {"a", "b"}) {
    h.running(n + "-own", n, {"gpu-0"}, 1, "2026-03-01T00:00:00Z");
    api::ResourceClaim shared = testing::claim(n + "-shared");
    api::DeviceRequestAllocationResult r;
    r.request = "gpu";
    r.driver = kDriver;
    r.pool = n;
    r.device = "gpu-1";
    shared.status.allocation.emplace();
    shared.status.allocation->devices.results.push_back(r);
    for (const std::string& p : {n + "-x", n + "-y"}) {
      shared.status.reservedFor.push_back(api::ResourceClaimConsumerReference{"", "pods", p, "uid-" + p});
    }
    h.add(shared);
    for (const std::string& p : {n + "-x", n + "-y"}) {
      api::Pod pod = testing::pod(p, {n + "-shared"});
      pod.spec.priority = 1;
      pod.spec.nodeName = n;
      pod.status.phase = "Running";
      pod.status.startTime = "2026-01-01T00:00:00Z";
      h.add(pod);
    }
  }
  h.arrive();
  EXPECT_EQ(h.preempted(), std::vector<std::string>{"a-own"});
  EXPECT_EQ(h.sched.stats().preemption_reused_nodes, 0);
  EXPECT_EQ(h.sched.stats().preemption_checks, 6);  // each node: all out, then two reprieves
}

// Random full clusters (nodes of 2 or 4 GPUs, held by pods of random
// priorities and ages, one or two GPUs a claim, some claims shared, some pods
// without claims) and a random preemptor: the same victims and node with the
// node groups as node by node, and some nodes' outcomes reused.
TEST(PreemptionAlikeNodes, SameVictimsAsNodeByNodeOnRandomClusters) {
  const std::vector<std::string> starts = {"2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"};
  int64_t reused = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<std::string> names;
    std::mt19937 rng(seed);
    const int nodes = 3 + static_cast<int>(rng() % 6);
    for (int n = 0; n < nodes; ++n) names.push_back("n" + std::to_string(n));
    Cluster grouped(true, names), single(false, names);
    auto both = [&](auto&& f) {
      f(grouped);
      f(single);
    };
    // Two layouts (GPUs, which GPUs each claim holds, shared or not, a pod
    // without claims or not); each node takes one, its pods' priorities and
    // ages drawn on their own.
    struct Layout {
      int gpus = 2;
      std::vector<std::pair<std::vector<std::string>, bool>> claims;  // devices, shared
      bool claimless = false;
    };
    std::vector<Layout> layouts(2);
    for (Layout& l : layouts) {
      l.gpus = rng() % 3 == 0 ? 4 : 2;
      std::vector<std::string> devices;
      for (int g = 0; g < l.gpus; ++g) devices.push_back("gpu-" + std::to_string(g));
      std::shuffle(devices.begin(), devices.end(), rng);
      for (size_t at = 0; at < devices.size();) {
        const size_t take = std::min<size_t>(devices.size() - at, 1 + rng() % 2);
        l.claims.emplace_back(std::vector<std::string>(devices.begin() + at, devices.begin() + at + take), rng() % 5 == 0);
        at += take;
      }
      l.claimless = rng() % 3 == 0;
    }
    for (int n = 0; n < nodes; ++n) {
      const Layout& l = layouts[rng() % layouts.size()];
      // The cluster's slices have two GPUs a node; a node of four gets two more.
      if (l.gpus == 4) {
        api::ResourceSlice s = gpu_slice(names[n], 4);
        for (size_t i = 0; i < s.spec.devices.size(); ++i) s.spec.devices[i].attributes["index"].int_ = static_cast<int64_t>(i);
        both([&](Cluster& c) { c.add(s); });
      }
      int pods = 0;
      auto next = [&] { return names[n] + "-p" + std::to_string(pods++); };
      for (const auto& claim : l.claims) {
        const std::vector<std::string>& held = claim.first;  // (clang 14 captures no structured binding)
        const std::string name = next();
        std::vector<std::string> sharers;
        if (claim.second) sharers.push_back(next());
        const int32_t priority = static_cast<int32_t>(rng() % 3);
        const std::string& start = starts[rng() % starts.size()];
        both([&](Cluster& c) { c.running(name, names[n], held, priority, start, sharers); });
      }
      if (l.claimless) {
        const std::string name = next();
        const int32_t priority = static_cast<int32_t>(rng() % 3);
        const std::string& start = starts[rng() % starts.size()];
        both([&](Cluster& c) { c.running(name, names[n], {}, priority, start); });
      }
    }
    const int want = 1 + static_cast<int>(rng() % 2);
    const std::string selector =
        rng() % 3 == 0 ? "device.attributes['gpu.nvidia.com'].index == " + std::to_string(rng() % 2) : "";
    both([&](Cluster& c) { c.arrive(selector, want); });
    EXPECT_EQ(grouped.preempted(), single.preempted());
    EXPECT_EQ(grouped.pod("urgent").status.nominatedNodeName, single.pod("urgent").status.nominatedNodeName);
    EXPECT_LE(grouped.sched.stats().preemption_checks, single.sched.stats().preemption_checks);
    reused += grouped.sched.stats().preemption_reused_nodes;
  }
  EXPECT_GT(reused, 60);
}

}  // namespace
}  // namespace draplane::sched::preemption_alike_nodes_test
