// NodeView's incremental refresh: after any change of the AllocatedState, a
// view refreshed for the changed pools shows what a view built afresh shows
// (counters, overdrawn pools, the packing order). The scheduler relies on it
// twice: it refreshes views instead of rebuilding them, and it takes two views
// of equal structure on one state to show equal allocations.
#include "alloc/node_view.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "builders.h"

namespace draplane::alloc {
namespace node_view_test {

using namespace testing;  // NOLINT: builders

// Pools of partitionable GPUs (a whole device, halves and quarters of one
// counter set), a shareable device and a plain one; some pools seen by every
// node, some by node-1 only, one by node-2 only.
std::vector<api::ResourceSlice> inventory() {
  std::vector<api::ResourceSlice> out;
  for (int p = 0; p < 6; ++p) {
    const std::string pool = "pool-" + std::to_string(p);
    const std::string node = p % 3 == 0 ? "" : p == 5 ? "node-2" : "node-1";
    std::vector<api::Device> devices = {with_counters(device("whole"), "gpu", {{"mem", 8}}),
                                        with_counters(device("half-0"), "gpu", {{"mem", 4}}),
                                        with_counters(device("half-1"), "gpu", {{"mem", 4}}),
                                        with_counters(device("quarter-0"), "gpu", {{"mem", 2}}),
                                        with_counters(device("quarter-1"), "gpu", {{"mem", 2}}),
                                        shareable(device("shared")),
                                        device("plain")};
    out.push_back(slice(pool + "-devices", node, pool, devices, 1, 2));
    out.push_back(counter_slice(pool + "-counters", node, pool, "gpu", {{"mem", 8}}));
  }
  return out;
}

void expect_same(const NodeView& refreshed, const NodeView& fresh, int step) {
  ASSERT_EQ(refreshed.pools().size(), fresh.pools().size()) << "step " << step;
  for (size_t i = 0; i < fresh.pools().size(); ++i) {
    EXPECT_EQ(refreshed.pools()[i].available, fresh.pools()[i].available) << "step " << step << " pool " << i;
    EXPECT_EQ(refreshed.pools()[i].overdrawn, fresh.pools()[i].overdrawn) << "step " << step << " pool " << i;
  }
  EXPECT_EQ(refreshed.packing_order(), fresh.packing_order()) << "step " << step;
  EXPECT_EQ(refreshed.blocked(), fresh.blocked()) << "step " << step;
  for (uint32_t c = 0; c < fresh.candidates().size(); ++c) {
    EXPECT_EQ(refreshed.packing_position(c), fresh.packing_position(c)) << "step " << step;
    EXPECT_EQ(refreshed.next_unblocked(c), fresh.next_unblocked(c)) << "step " << step;
    EXPECT_EQ(refreshed.next_unblocked_position(c), fresh.next_unblocked_position(c)) << "step " << step;
    // The next unblocked candidate is the first one from c on with no mark.
    uint32_t expected = c;
    while (expected < fresh.blocked().size() && fresh.blocked()[expected] != 0) ++expected;
    EXPECT_EQ(fresh.next_unblocked(c), expected) << "step " << step;
  }
}

TEST(NodeView, AnIncrementallyRefreshedViewEqualsAFreshOne) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  AllocatedState state(*snap);
  const api::Node n = node("node-1");
  auto view = NodeView::build(*snap, state, n);
  ASSERT_TRUE(view.has_value()) << view.error().message();
  const std::vector<std::string> names = {"whole", "half-0", "half-1", "quarter-0", "quarter-1", "shared", "plain"};
  std::mt19937 rng(29);
  std::vector<api::AllocationResult> live;
  for (int step = 0; step < 400; ++step) {
    api::AllocationResult changed;
    if (!live.empty() && rng() % 3 == 0) {
      const size_t i = rng() % live.size();
      changed = live[i];
      live.erase(live.begin() + static_cast<long>(i));
      state.remove(changed);
    } else {
      // One or two devices of one or two pools (overdrawing allowed: the
      // state counts what it is told).
      std::vector<std::string> devices;
      const int count = 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < count; ++k) devices.push_back(names[rng() % names.size()]);
      changed = *allocated("c", devices, "pool-" + std::to_string(rng() % 6)).status.allocation;
      if (rng() % 4 == 0) {
        changed.devices.results.push_back(
            allocated("c", {names[rng() % names.size()]}, "pool-" + std::to_string(rng() % 6))
                .status.allocation->devices.results[0]);
      }
      state.add(changed);
      live.push_back(changed);
    }
    std::set<std::string> pools;
    for (const auto& r : changed.devices.results) pools.insert(r.driver + "/" + r.pool);
    const std::vector<uint32_t> found = view->refresh_allocations(pools);
    // The view has every pool (node-2's pool-5 through its counter slice,
    // which every node sees, as one offering node-1 nothing).
    std::set<std::string> got;
    for (uint32_t pi : found) got.insert(view->pools()[pi].id());
    EXPECT_EQ(got, pools) << "step " << step;
    auto fresh = NodeView::build(*snap, state, n);
    ASSERT_TRUE(fresh.has_value());
    expect_same(*view, *fresh, step);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(NodeView, APoolsCandidatesAreItsOwn) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  const AllocatedState state(*snap);
  const api::Node target = node("node-1");  // the view keeps a pointer to it
  auto view = NodeView::build(*snap, state, target);
  ASSERT_TRUE(view.has_value());
  size_t total = 0;
  for (uint32_t pi = 0; pi < view->pools().size(); ++pi) {
    const auto [first, last] = view->pool_candidates(pi);
    for (uint32_t c = first; c < last; ++c) EXPECT_EQ(view->candidates()[c].pool, pi);
    total += last - first;
  }
  EXPECT_EQ(total, view->candidates().size());
  EXPECT_EQ(total, 5u * 7u);  // pools 0-4 seen by node-1, 7 devices each
  EXPECT_TRUE(view->pools_named({"driver-b/pool-1", "driver-a/pool-9", "no-slash", ""}).empty());
  const auto one = view->pools_named({"driver-a/pool-3"});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(view->pools()[one[0]].pool, "pool-3");
  // node-2's pool: seen through its counter slice, offering node-1 nothing.
  const auto foreign = view->pools_named({"driver-a/pool-5"});
  ASSERT_EQ(foreign.size(), 1u);
  EXPECT_TRUE(view->pools()[foreign[0]].foreign);
  EXPECT_EQ(view->pool_candidates(foreign[0]).first, view->pool_candidates(foreign[0]).second);
}

// Views a scheduler may share between nodes: nothing in them names a node,
// and the same selection. Nodes that no slice names select the same; a node
// named by a slice, or offered a device that binds to it, has no selection to
// share; a per-device node selection that picks different devices tells
// selections apart. Equal selections, views of the same candidates.
TEST(NodeView, NodeIndependentViewsWithTheSameSelectionAreTheSame) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  const AllocatedState state(*snap);
  const api::Node n3 = node("node-3"), n4 = node("node-4"), n1 = node("node-1");
  auto v3 = NodeView::build(*snap, state, n3), v4 = NodeView::build(*snap, state, n4);
  auto v1 = NodeView::build(*snap, state, n1);
  ASSERT_TRUE(v3.has_value() && v4.has_value() && v1.has_value());
  EXPECT_TRUE(v3->node_independent());
  EXPECT_FALSE(v1->node_independent()) << "slices name node-1";
  const auto s3 = NodeView::selection(*snap, n3), s4 = NodeView::selection(*snap, n4);
  ASSERT_TRUE(s3.has_value());
  EXPECT_EQ(s3, s4);
  EXPECT_FALSE(NodeView::selection(*snap, n1).has_value());
  ASSERT_EQ(v3->candidates().size(), v4->candidates().size());
  for (size_t c = 0; c < v3->candidates().size(); ++c) EXPECT_EQ(v3->candidates()[c].device, v4->candidates()[c].device);

  // Per-device selection: one device for zone a, one for every node.
  api::ResourceSlice per_device = slice("fabric", "", "fabric", {device("zonal"), device("anywhere")});
  per_device.spec.allNodes.reset();
  per_device.spec.perDeviceNodeSelection = true;
  api::NodeSelectorTerm term;
  term.matchExpressions.push_back(api::NodeSelectorRequirement{"zone", "In", {"a"}});
  per_device.spec.devices[0].nodeSelector = api::NodeSelector{{term}};
  per_device.spec.devices[1].allNodes = true;
  auto zonal = Snapshot::build({per_device}, {device_class("class-a")});
  const AllocatedState zonal_state(*zonal);
  const api::Node a1 = node("a1", {{"zone", "a"}}), a2 = node("a2", {{"zone", "a"}}), b1 = node("b1", {{"zone", "b"}});
  auto va1 = NodeView::build(*zonal, zonal_state, a1), vb1 = NodeView::build(*zonal, zonal_state, b1);
  ASSERT_TRUE(va1.has_value() && vb1.has_value());
  EXPECT_TRUE(va1->node_independent());
  EXPECT_EQ(NodeView::selection(*zonal, a1), NodeView::selection(*zonal, a2));
  EXPECT_NE(NodeView::selection(*zonal, a1), NodeView::selection(*zonal, b1)) << "b1 may not use the zonal device";
  EXPECT_TRUE(va1->candidates()[0].node_ok);
  EXPECT_FALSE(vb1->candidates()[0].node_ok);

  // A device bound to its node, or selected by name, names the node in its allocation.
  for (int variant = 0; variant < 2; ++variant) {
    api::ResourceSlice named = per_device;
    if (variant == 0) {
      named.spec.devices[1].bindsToNode = true;
    } else {
      named.spec.devices[1].allNodes.reset();
      named.spec.devices[1].nodeName = "a1";
    }
    auto snap2 = Snapshot::build({named}, {device_class("class-a")});
    const AllocatedState state2(*snap2);
    auto v = NodeView::build(*snap2, state2, a1);
    ASSERT_TRUE(v.has_value());
    EXPECT_FALSE(v->node_independent()) << "variant " << variant;
    EXPECT_FALSE(NodeView::selection(*snap2, a1).has_value()) << "variant " << variant;
  }

  // A selector that cannot be evaluated: no selection (build() reports the error).
  api::ResourceSlice broken = slice("broken", "", "broken", {device("d")});
  broken.spec.allNodes.reset();
  api::NodeSelectorTerm bad;
  bad.matchExpressions.push_back(api::NodeSelectorRequirement{"zone", "Gt", {"a"}});
  broken.spec.nodeSelector = api::NodeSelector{{bad}};
  auto snap3 = Snapshot::build({broken}, {device_class("class-a")});
  EXPECT_FALSE(NodeView::selection(*snap3, a1).has_value());
  EXPECT_FALSE(NodeView::build(*snap3, AllocatedState(*snap3), a1).has_value());
}

// The jumps over blocked candidates cross 64-candidate words: checked
// against a scan on a pool of 200 devices, some taken, in both orders.
TEST(NodeView, NextUnblockedMatchesAScan) {
  std::vector<api::Device> devices;
  std::vector<std::string> taken;
  for (int i = 0; i < 200; ++i) {
    devices.push_back(device("d" + std::to_string(i)));
    if (i % 7 != 3 && (i < 60 || i > 130)) taken.push_back(devices.back().name);
  }
  auto snap = Snapshot::build({slice("devices", "node-1", "pool-1", devices)}, {device_class("class-a")});
  const AllocatedState state(*snap, {allocated("old", taken)});
  const api::Node target = node("node-1");  // the view keeps a pointer to it
  auto view = NodeView::build(*snap, state, target);
  ASSERT_TRUE(view.has_value());
  const auto n = static_cast<uint32_t>(view->candidates().size());
  ASSERT_EQ(n, 200u);
  for (uint32_t from = 0; from <= n; ++from) {
    uint32_t c = from, pos = from;
    while (c < n && view->blocked()[c] != 0) ++c;
    while (pos < n && view->blocked()[view->packing_order()[pos]] != 0) ++pos;
    EXPECT_EQ(view->next_unblocked(from), c) << from;
    EXPECT_EQ(view->next_unblocked_position(from), pos) << from;
  }
}

}  // namespace node_view_test
}  // namespace draplane::alloc
