// draplane's policy on hand-worked nodes (each expected value computed in the
// comment above it), and its learner of the task distribution.
#include "sim/draplane_policy.h"

#include <gtest/gtest.h>

#include "hand_nodes.h"

namespace draplane::sim {
namespace {

using testing::demand;
using testing::node;

TEST(ShapeLearner, LearnsWhatArrivedAndRefreshesAtPowersOfTwoThenEvery1024) {
  ShapeLearner l;
  EXPECT_FALSE(l.refresh_due());
  EXPECT_EQ(l.cpu_per_milli(), 0);
  l.observe(demand(8000, 1, 1000));  // 8000 CPU for 1000 milli
  EXPECT_TRUE(l.refresh_due());      // 1
  l.observe(demand(32000, 0, 0));    // CPU-only: not part of the GPU tasks' ratio
  EXPECT_TRUE(l.refresh_due());      // 2
  l.observe(demand(4000, 1, 500));   // (8000 + 4000) / (1000 + 500) = 8
  EXPECT_FALSE(l.refresh_due());     // 3
  EXPECT_DOUBLE_EQ(l.cpu_per_milli(), 8.0);
  auto shapes = l.shapes();  // all three, 1/3 each (coverage 1: nothing dropped)
  ASSERT_EQ(shapes.size(), 3u);
  for (const auto& s : shapes) EXPECT_DOUBLE_EQ(s.frequency, 1.0 / 3);
  while (l.seen() < 1024) l.observe(demand(1000, 0, 0));
  EXPECT_TRUE(l.refresh_due());
  l.observe(demand(1000, 0, 0));
  EXPECT_FALSE(l.refresh_due());
  while (l.seen() < 2048) l.observe(demand(1000, 0, 0));
  EXPECT_TRUE(l.refresh_due());
}

// One learned shape: a whole GPU with 8 cores (8 CPU milli per GPU milli).
// A CPU-only task of 8 cores on node A (16 cores, 2 free GPUs): before, 2000
// idle milli, 16000/8 = 2000 fed -> 0 stranded, and the shape fits (0
// fragmented). After, 8000 CPU feeds 1000 of the 2000 idle: 1000 stranded,
// weighted 4 -> 4000; the shape still fits (8000 CPU) -> FGD's part stays 0.
// Score = -(4000) * 16 = -64000. On node B (64 cores) nothing strands: 0.
// FGD's measure sees no difference between the two (0 on both).
TEST(DraplaneScore, CpuHeavyTasksGoWhereCpuDoesNotStrandGpus) {
  ShapeLearner l;
  l.observe(demand(8000, 1, 1000));
  std::vector<TypicalShape> shapes;
  FragmentationMemo memo(&shapes);
  apply_learned(l, shapes, memo);
  NodeState a = node(16000, {1000, 1000}), b = node(64000, {1000, 1000});
  Demand cpu_only = demand(8000, 0, 0);
  EXPECT_EQ(memo(a), 0);
  EXPECT_EQ(draplane_score(a, cpu_only, memo, memo(a)), -64000);
  EXPECT_EQ(draplane_score(b, cpu_only, memo, memo(b)), 0);
  FragmentationMemo fgd(&shapes);  // no stranding term
  EXPECT_EQ(fgd(after_whole(a, cpu_only)), 0);
}

// Shapes learned: a share of 300 (cpu 1000) and a whole GPU (cpu 1000), 1/2
// each; 1 CPU milli per GPU milli, nodes with CPU to spare (no stranding).
// A 300 share on [1000, 400]: on GPU 0 -> [700, 400]: the whole shape cannot
// use either (1/2 * 1100), the share can use both (0) -> 550; on GPU 1 ->
// [1000, 100]: the whole shape cannot use 100 (1/2 * 100), the share cannot
// use 100 (1/2 * 100) -> 100. GPU 1 (best fit here). Before: [1000, 400]:
// 1/2 * 400 + 0 = 200 -> score (200 - 100) * 16 = 1600.
TEST(DraplaneScore, ShareGoesWhereFragmentationGrowsLeast) {
  ShapeLearner l;
  l.observe(demand(1000, 1, 300));
  l.observe(demand(1000, 1, 1000));
  std::vector<TypicalShape> shapes;
  FragmentationMemo memo(&shapes);
  apply_learned(l, shapes, memo);
  NodeState n = node(64000, {1000, 400});
  Demand share = demand(1000, 1, 300);
  EXPECT_EQ(draplane_share_gpu(n, share, memo), 1);
  EXPECT_DOUBLE_EQ(memo(n), 200);
  EXPECT_EQ(draplane_score(n, share, memo, memo(n)), 1600);
}

}  // namespace
}  // namespace draplane::sim
