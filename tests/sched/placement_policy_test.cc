// The scheduler's --policy (sched/policy_flag.h): the simulator's placement
// policies scoring nodes in the live scheduler (plugins/placement_score.cc).
#include <gtest/gtest.h>

#include "harness.h"
#include "sched/policy_flag.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

api::Node sized_node(const std::string& name, int64_t cpus) {
  api::Node n = node(name);
  n.status.allocatable["cpu"] = api::Quantity::from_int(cpus);
  n.status.allocatable["memory"] = api::Quantity::from_int(int64_t{256} << 30);
  return n;
}

api::Pod cpu_pod(const std::string& name, int64_t cpus, std::vector<std::string> claims = {}) {
  api::Pod p = pod(name, std::move(claims));
  p.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_int(cpus);
  return p;
}

// Node a: 16 CPUs, 2 GPUs; node b: 64 CPUs, 2 GPUs. Pod p1 (4 CPUs, 1 GPU)
// goes first, then p2 (12 CPUs, no GPU). Worked out by hand:
//  - p1: draplane has learned nothing yet (no shapes, no CPU per GPU): every
//    node scores 0 and the first by name, a, wins (as with every policy here).
//    It then learns one shape (4 CPUs, one whole GPU) and 4 milli CPU per
//    GPU milli.
//  - p2 on a: before, a has 12 CPUs and GPUs [1000, 0] left: the shape fits,
//    no GPU too small: fragmentation 0; stranding max(0, 1000 - 12000/4) = 0.
//    After, 0 CPUs: the shape cannot run, its 1000 idle milli are fragmented,
//    and stranded: 1000 + 4 x (1000 - 0/4) = 5000; score -5000 x 16.
//    p2 on b: 64 CPUs, [1000, 1000] before, 52 CPUs after: 0 both ways
//    (stranding 2000 - 52000/4 < 0); score 0. draplane puts p2 on b.
//  - first-fit: no score, the first node by name: a. packing: the node left
//    with the fewest free devices: a (1) before b (2). best-fit: (1 - (CPU
//    left/128000 + GPU milli left/8000)/2) x 100: a (0 CPUs, 1000 milli
//    after) 93, b (52000, 2000) 67: a.
std::string place_p2(const std::string& policy) {
  SchedulerOptions o;
  EXPECT_TRUE(apply_policy(policy, o).has_value());
  Harness h(o);
  h.add(sized_node("a", 16));
  h.add(sized_node("b", 64));
  h.add(gpu_slice("a", 2));
  h.add(gpu_slice("b", 2));
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(cpu_pod("p1", 4, {"c1"}));
  h.run();
  EXPECT_EQ(h.pod("p1").spec.nodeName, "a") << policy;
  h.add(cpu_pod("p2", 12));
  h.run();
  return h.pod("p2").spec.nodeName;
}

TEST(PlacementPolicy, PolicyChoiceChangesWhereAPodLands) {
  EXPECT_EQ(place_p2("draplane"), "b");
  EXPECT_EQ(place_p2("first-fit"), "a");
  EXPECT_EQ(place_p2("packing"), "a");
  EXPECT_EQ(place_p2("best-fit"), "a");
}

TEST(PlacementPolicy, DefaultIsDraplane) {
  SchedulerOptions o;
  ASSERT_TRUE(o.node_policy.has_value());
  EXPECT_EQ(placement::policy_name(*o.node_policy), kDefaultPolicy);
  EXPECT_EQ(kDefaultPolicy, "draplane");
}

TEST(PlacementPolicy, FirstFitIsTheUpstreamAllocatorWithoutScoring) {
  SchedulerOptions o;
  ASSERT_TRUE(apply_policy("first-fit", o).has_value());
  EXPECT_EQ(o.policy, alloc::Policy::kFirstFit);
  EXPECT_EQ(o.node_policy, placement::PolicyKind::kFirstFit);
  ASSERT_TRUE(apply_policy("packing", o).has_value());
  EXPECT_EQ(o.policy, alloc::Policy::kPacking);
  EXPECT_FALSE(o.node_policy.has_value());
}

TEST(PlacementPolicy, UnknownNameNamesTheFlagAndTheValidNames) {
  SchedulerOptions o;
  auto r = apply_policy("fastest", o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "--policy: unknown policy \"fastest\"; valid names: first-fit, random, dot-product, gpu-clustering, "
            "gpu-packing, best-fit, fgd, draplane, packing");
}

}  // namespace
}  // namespace draplane::sched
