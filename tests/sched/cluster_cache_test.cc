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
