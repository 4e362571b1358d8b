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
