// Node equivalence classes in DynamicResources' Filter: nodes whose views
// offer exactly the same devices reuse the first one's allocator answer.
#include <gtest/gtest.h>

#include <set>

#include "harness.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

// One pool of `devices` GPUs visible from every node labelled rack=r1 (a
// network-attached pool: the slice has a node selector, no node name).
api::ResourceSlice rack_slice(int devices) {
  api::ResourceSlice s = gpu_slice("unused", devices);
  s.metadata.name = "rack-gpus";
  s.spec.pool = api::ResourcePool{"rack", 1, 1};
  s.spec.nodeName.reset();
  api::NodeSelector sel;
  sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{{"rack", "In", {"r1"}}}, {}});
  s.spec.nodeSelector = sel;
  return s;
}

TEST(NodeEquivalence, NodesSeeingTheSamePoolShareOneAllocatorRun) {
  Harness h;
  for (const char* n : {"n1", "n2", "n3"}) h.add(node(n, {{"rack", "r1"}}));
  h.add(rack_slice(2));
  h.add(gpu_class());
  for (const char* c : {"c1", "c2", "c3"}) h.add(claim(c));
  h.add(pod("p1", {"c1"}));
  h.run();
  // n1 ran the allocator; n2 and n3 have the same view and reuse its answer.
  EXPECT_EQ(h.sched.stats().allocator_runs, 1);
  EXPECT_EQ(h.sched.stats().equivalent_node_hits, 2);
  EXPECT_EQ(h.pod("p1").spec.nodeName, "n1");

  h.add(pod("p2", {"c2"}));
  h.run();
  EXPECT_FALSE(h.pod("p2").spec.nodeName.empty());
  // The same answers as without the classes: two different devices.
  std::set<std::string> devices;
  for (const char* c : {"c1", "c2"}) {
    ASSERT_TRUE(h.claim(c).status.allocation.has_value()) << c;
    devices.insert(h.claim(c).status.allocation->devices.results.at(0).device);
  }
  EXPECT_EQ(devices.size(), 2u);

  // Nothing left: every node fails with the same explanation.
  h.add(pod("p3", {"c3"}));
  h.run();
  EXPECT_TRUE(h.pod("p3").spec.nodeName.empty());
  EXPECT_NE(h.condition_message("p3").find("0/3 nodes are available: 3 cannot allocate all claims"), std::string::npos)
      << h.condition_message("p3");
}

TEST(NodeEquivalence, NodeLocalDevicesAreNeverShared) {
  Harness h;
  for (const char* n : {"n1", "n2"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 1));
  }
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(pod("p1", {"c1"}));
  h.run();
  EXPECT_EQ(h.sched.stats().equivalent_node_hits, 0);
  EXPECT_EQ(h.sched.stats().allocator_runs, 2);
}

}  // namespace
}  // namespace draplane::sched
