// Node equivalence classes in DynamicResources' Filter: nodes whose views
// offer the same devices (up to node and pool names) in the same state reuse
// the first one's allocator answer, renamed for themselves.
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

// These tests watch DynamicResources' own classes: node by node, without the
// scheduler's node groups (node_classes_test.cc), which would try one node only.
SchedulerOptions node_by_node() {
  SchedulerOptions o;
  o.node_classes = false;
  return o;
}

TEST(NodeEquivalence, NodesSeeingTheSamePoolShareOneAllocatorRun) {
  Harness h(node_by_node());
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

// The node-local form of an allocation: its devices in the node's own pool
// and a node selector naming the node.
void expect_names_node(const api::ResourceClaim& c, const std::string& node) {
  ASSERT_TRUE(c.status.allocation.has_value()) << c.metadata.name;
  const api::AllocationResult& a = *c.status.allocation;
  for (const auto& r : a.devices.results) EXPECT_EQ(r.pool, node) << c.metadata.name;
  ASSERT_TRUE(a.nodeSelector.has_value());
  ASSERT_EQ(a.nodeSelector->nodeSelectorTerms.size(), 1u);
  ASSERT_EQ(a.nodeSelector->nodeSelectorTerms[0].matchFields.size(), 1u);
  EXPECT_EQ(a.nodeSelector->nodeSelectorTerms[0].matchFields[0].values, std::vector<std::string>{node});
}

TEST(NodeEquivalence, NodesWithEqualLocalDevicesShareOneAllocatorRun) {
  Harness h(node_by_node());
  for (const char* n : {"n1", "n2", "n3"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 2));
  }
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(pod("p1", {"c1"}));
  h.run();
  // One run on n1; n2 and n3 publish the same devices in their own pools.
  EXPECT_EQ(h.sched.stats().allocator_runs, 1);
  EXPECT_EQ(h.sched.stats().equivalent_node_hits, 2);
  const std::string first = h.pod("p1").spec.nodeName;
  ASSERT_FALSE(first.empty());
  expect_names_node(h.claim("c1"), first);

  // Six more GPUs' worth of pods: every claim names its own node's pool, and
  // no device is given twice.
  for (int i = 2; i <= 6; ++i) {
    const std::string name = "c" + std::to_string(i);
    h.add(claim(name));
    h.add(pod("p" + std::to_string(i), {name}));
    h.run();
  }
  std::set<std::string> devices;
  for (int i = 1; i <= 6; ++i) {
    const std::string name = "c" + std::to_string(i);
    const std::string on = h.pod("p" + std::to_string(i)).spec.nodeName;
    ASSERT_FALSE(on.empty()) << name;
    expect_names_node(h.claim(name), on);
    for (const auto& r : h.claim(name).status.allocation->devices.results) devices.insert(r.pool + "/" + r.device);
  }
  EXPECT_EQ(devices.size(), 6u);
  // Far fewer runs than pods x nodes (18): one per state of a node class.
  EXPECT_LT(h.sched.stats().allocator_runs, 12);
}

TEST(NodeEquivalence, TheChosenNodeMayBeOneThatBorrowedTheAnswer) {
  // The random placement policy scores equivalent nodes apart: the node
  // chosen is then, as here, not the one whose allocator run answered for
  // all eight, and its claim must name it, not the other.
  SchedulerOptions o;
  o.node_policy = placement::PolicyKind::kRandom;
  Harness h(o);
  for (int i = 1; i <= 8; ++i) {
    const std::string n = "n" + std::to_string(i);
    h.add(node(n));
    h.add(gpu_slice(n, 2));
  }
  h.add(gpu_class());
  h.add(claim("c"));
  h.add(pod("p", {"c"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, 1);
  const std::string on = h.pod("p").spec.nodeName;
  ASSERT_FALSE(on.empty());
  EXPECT_NE(on, "n1") << "the seed picked the node that ran the allocator: choose another layout";
  expect_names_node(h.claim("c"), on);
}

TEST(NodeEquivalence, DifferentDevicesOrStatesAreDifferentClasses) {
  Harness h(node_by_node());
  for (const char* n : {"n1", "n2"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 1));
  }
  h.add(node("n3"));
  h.add(gpu_slice("n3", 1, "A100"));  // other content
  h.add(gpu_class());
  h.add(claim("c1"));
  h.add(pod("p1", {"c1"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, 2);  // n1 (n2 borrows), n3
  EXPECT_EQ(h.sched.stats().equivalent_node_hits, 1);
  // n1 or n2 now holds a GPU: the two differ in state, and every node is tried.
  h.add(claim("c2", 2));
  h.add(pod("p2", {"c2"}));
  h.run();
  EXPECT_EQ(h.sched.stats().allocator_runs, 5);
  EXPECT_TRUE(h.pod("p2").spec.nodeName.empty());
}

}  // namespace
}  // namespace draplane::sched
