// The cache's device inventory stays as published while claims are assumed
// and forgotten: only its allocated state (and the views' counts) change, in
// place, without a rebuild of the snapshot or a view.
#include "sched/cluster_cache.h"

#include <gtest/gtest.h>

#include "harness.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT: builders

api::ResourceClaim allocated_claim(const std::string& name, const std::string& device) {
  api::ResourceClaim c = claim(name);
  api::AllocationResult a;
  a.devices.results.push_back({"gpu", kDriver, "n1", device, {}, {}, {}, {}, {}, {}});
  c.status.allocation = a;
  return c;
}

// One node with two GPUs.
class ClusterCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.upsert_node(node("n1"));
    cache.upsert_slice(gpu_slice("n1", 2));
    cache.upsert_class(gpu_class());
  }
  ClusterCache cache;
};

TEST_F(ClusterCacheTest, AssumedClaimsChangeTheAllocatedStateNotTheSnapshot) {
  const alloc::Snapshot* snap = &cache.snapshot();
  const auto slices = snap->slices();
  const auto devices = snap->devices();
  const auto classes = snap->classes();
  ASSERT_TRUE(cache.node_view("n1").has_value());
  EXPECT_EQ(cache.free_devices("n1"), 2);
  const uint32_t gpu0 = *snap->find_key(kDriver, "n1", "gpu-0");

  cache.assume_claim(allocated_claim("c", "gpu-0"));
  EXPECT_EQ(&cache.snapshot(), snap);
  EXPECT_NE(cache.allocated().in_use(gpu0), nullptr);
  EXPECT_EQ(cache.free_devices("n1"), 1);

  cache.forget_claim("default/c");
  EXPECT_EQ(&cache.snapshot(), snap);
  EXPECT_EQ(cache.allocated(), alloc::AllocatedState(*snap));
  EXPECT_EQ(cache.free_devices("n1"), 2);

  EXPECT_EQ(snap->slices(), slices);
  EXPECT_EQ(snap->devices(), devices);
  EXPECT_EQ(snap->classes(), classes);
  EXPECT_EQ(cache.snapshot_builds(), 1);
  EXPECT_EQ(cache.view_builds(), 1);
}

// A claim allocated while the snapshot is stale is counted by the rebuild.
TEST_F(ClusterCacheTest, RebuildCountsAllocationsMadeWhileStale) {
  (void)cache.snapshot();
  cache.upsert_slice(gpu_slice("n1", 3));  // stale from here
  cache.upsert_claim(allocated_claim("c", "gpu-1"));
  const alloc::Snapshot& snap = cache.snapshot();
  EXPECT_EQ(cache.snapshot_builds(), 2);
  EXPECT_NE(cache.allocated().in_use(*snap.find_key(kDriver, "n1", "gpu-1")), nullptr);
  EXPECT_EQ(cache.allocated().in_use(*snap.find_key(kDriver, "n1", "gpu-0")), nullptr);
  EXPECT_EQ(cache.free_devices("n1"), 2);
}

// Nodes that see the same network-attached pool and nothing of their own
// share one view: one count per allocation, the epochs of all of them move,
// and the view outlives the node it was built for. A node with devices of its
// own keeps its own view.
TEST_F(ClusterCacheTest, NodesSeeingTheSamePoolsShareOneView) {
  api::ResourceSlice fabric = gpu_slice("fabric", 2);
  fabric.spec.nodeName.reset();
  fabric.spec.allNodes = true;
  cache.upsert_slice(fabric);
  for (const char* n : {"m1", "m2", "m3"}) cache.upsert_node(node(n));
  auto m1 = cache.node_view("m1"), m2 = cache.node_view("m2"), m3 = cache.node_view("m3");
  auto n1 = cache.node_view("n1");
  ASSERT_TRUE(m1.has_value() && m2.has_value() && m3.has_value() && n1.has_value());
  EXPECT_EQ(*m1, *m2);
  EXPECT_EQ(*m1, *m3);
  EXPECT_NE(*n1, *m1) << "n1 has GPUs of its own";
  EXPECT_TRUE((*m1)->node_independent());
  EXPECT_FALSE((*n1)->node_independent());
  EXPECT_EQ(cache.views_kept(), 2u);
  EXPECT_EQ(cache.view_id("m1"), cache.view_id("m3"));
  EXPECT_EQ(cache.view_nodes(cache.view_id("m1"))->size(), 3u);
  EXPECT_EQ(cache.free_devices("m2"), 2);

  (void)cache.take_node_changes();
  const uint64_t before = cache.view_epoch("m2");
  const uint64_t n1_before = cache.view_epoch("n1");
  api::ResourceClaim c = claim("c");
  api::AllocationResult a;
  a.devices.results.push_back({"gpu", kDriver, "fabric", "gpu-1", {}, {}, {}, {}, {}, {}});
  c.status.allocation = a;
  cache.assume_claim(c);
  EXPECT_NE(cache.view_epoch("m2"), before);
  EXPECT_EQ(cache.view_epoch("m2"), cache.view_epoch("m3"));
  EXPECT_NE(cache.view_epoch("n1"), n1_before) << "n1 sees the fabric too";
  EXPECT_EQ(cache.free_devices("m1"), 1);
  ClusterCache::NodeChanges changes = cache.take_node_changes();
  EXPECT_FALSE(changes.all);
  EXPECT_TRUE(changes.nodes.empty());
  EXPECT_EQ(changes.views.size(), 2u) << "the shared view and n1's, once each";

  // The view was built for m1: deleting m1 leaves it to the others, naming one of them.
  cache.delete_node("m1");
  auto after = cache.node_view("m2");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(*after, *m2);
  EXPECT_EQ((*after)->node().metadata.name, "m2");
  EXPECT_EQ(cache.view_nodes(cache.view_id("m2"))->size(), 2u);

  // Relabelled, a node leaves the view and (seeing the same) joins it again.
  api::Node m3_relabelled = node("m3", {{"zone", "b"}});
  const uint64_t m3_before = cache.view_epoch("m3");
  cache.upsert_node(m3_relabelled);
  EXPECT_NE(cache.view_epoch("m3"), m3_before);
  EXPECT_EQ(*cache.node_view("m3"), *m2);
  EXPECT_EQ(cache.views_kept(), 2u);
}

// What a node's active pods request is kept as pods come, finish and go.
TEST_F(ClusterCacheTest, RequestsOfTheActivePodsOnANode) {
  auto bound = [](const std::string& name, int cpu, const std::string& phase = "Running") {
    api::Pod p = pod(name);
    p.spec.nodeName = "n1";
    p.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_int(cpu);
    p.spec.containers[0].resources.requests["memory"] = api::Quantity::from_int(int64_t{cpu} << 30);
    p.status.phase = phase;
    return p;
  };
  cache.upsert_pod(bound("a", 1));
  cache.upsert_pod(bound("b", 2));
  EXPECT_EQ(cache.requested("n1").cpu_milli, 3000);
  EXPECT_EQ(cache.requested("n1").memory, int64_t{3} << 30);
  EXPECT_EQ(cache.pods_on_node("n1"), 2);
  cache.upsert_pod(bound("a", 1, "Succeeded"));  // finished: no longer counted
  EXPECT_EQ(cache.requested("n1").cpu_milli, 2000);
  EXPECT_EQ(cache.pods_on_node("n1"), 1);
  cache.upsert_pod(bound("b", 4));  // resized in place
  EXPECT_EQ(cache.requested("n1").cpu_milli, 4000);
  cache.delete_pod("default/b");
  EXPECT_EQ(cache.requested("n1").cpu_milli, 0);
  EXPECT_EQ(cache.requested("n1").memory, 0);
  EXPECT_EQ(cache.pods_on_node("n1"), 0);
  // Assumed bound before the pod's own event says so.
  api::Pod c = bound("c", 2);
  c.spec.nodeName.clear();
  cache.upsert_pod(c);
  cache.assume_bound("default/c", "n1");
  EXPECT_EQ(cache.requested("n1").cpu_milli, 2000);
  cache.forget_bound("default/c");
  EXPECT_EQ(cache.requested("n1").cpu_milli, 0);
}

}  // namespace
}  // namespace draplane::sched

namespace draplane::sched {
namespace {

// DeviceTaintRules are inventory: their taints are in the snapshot's devices
// as if published; a status-only update keeps the snapshot.
TEST_F(ClusterCacheTest, TaintRulesTaintTheSnapshotsDevices) {
  api::DeviceTaintRule rule;
  rule.metadata.name = "drain";
  rule.spec.deviceSelector = api::DeviceTaintSelector{kDriver, std::nullopt, "gpu-1"};
  rule.spec.taint = api::DeviceTaint{"example.com/drain", "", "NoSchedule", "2026-12-01T10:00:00Z"};
  auto taints_of = [&](const std::string& device) {
    const alloc::Snapshot& snap = cache.snapshot();
    return snap.device(*snap.find_key(kDriver, "n1", device)).taints;
  };
  EXPECT_TRUE(taints_of("gpu-1").empty());
  const int64_t builds = cache.snapshot_builds();

  EXPECT_TRUE(cache.upsert_rule(rule));
  EXPECT_TRUE(cache.snapshot_stale());
  EXPECT_TRUE(taints_of("gpu-0").empty());
  EXPECT_EQ(taints_of("gpu-1"), std::vector<api::DeviceTaint>{rule.spec.taint});
  EXPECT_EQ(cache.snapshot_builds(), builds + 1);

  rule.status.conditions.push_back({"EvictionInProgress", "False", 1, "2026-12-01T10:00:01Z", "OtherEffect", ""});
  EXPECT_FALSE(cache.upsert_rule(rule));
  EXPECT_FALSE(cache.snapshot_stale());

  cache.delete_rule("drain");
  EXPECT_TRUE(taints_of("gpu-1").empty());
  EXPECT_EQ(cache.snapshot_builds(), builds + 2);
}

}  // namespace
}  // namespace draplane::sched
