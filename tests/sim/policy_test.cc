// Policies and the fragmentation measure on hand-worked nodes; each expected
// value is computed in the comment above it.
#include "sim/policy.h"

#include <gtest/gtest.h>

#include "sim/model.h"
#include "hand_nodes.h"

namespace draplane::sim {
namespace {

using testing::demand;
using testing::node;

// Shapes: A = 1 GPU share of 500 (cpu 4000), 1/2; B = 2 whole GPUs (cpu 4000),
// 1/4; C = CPU only (cpu 4000), 1/4.
std::vector<TypicalShape> shapes() {
  return {{demand(4000, 1, 500), 0.5}, {demand(4000, 2, 1000), 0.25}, {demand(4000, 0, 0), 0.25}};
}

TEST(Fragmentation, HandWorked) {
  auto s = shapes();
  // left [1000, 600], 1600 idle: A fits, no GPU below 500 -> 0; B needs two
  // whole GPUs -> 0.25*1600 = 400; C asks no GPU -> 0.25*1600 = 400. Sum 800.
  EXPECT_DOUBLE_EQ(node_fragmentation(node(8000, {1000, 600}), s), 800);
  // left [1000, 300]: A fits, gpu1 (300 < 500) is lost to it -> 0.5*300 = 150;
  // B -> 0.25*1300 = 325; C -> 325. Sum 800.
  EXPECT_DOUBLE_EQ(node_fragmentation(node(8000, {1000, 300}), s), 800);
  // Same GPUs, 2000 CPU left: every shape lacks CPU -> all 1300 idle milli.
  EXPECT_DOUBLE_EQ(node_fragmentation(node(2000, {1000, 300}), s), 1300);
  // Two whole GPUs: B fits too -> only C counts: 0.25*2000 = 500.
  EXPECT_DOUBLE_EQ(node_fragmentation(node(8000, {1000, 1000}), s), 500);
  // No idle GPU, no fragment.
  EXPECT_DOUBLE_EQ(node_fragmentation(node(8000, {0, 0}), s), 0);
  // A shape restricted to another model cannot use the node at all.
  std::vector<TypicalShape> other{{demand(4000, 1, 500), 1.0}};
  other[0].demand.models = uint64_t{1} << 1;
  EXPECT_DOUBLE_EQ(node_fragmentation(node(8000, {1000, 600}, 0), other), 1600);
}

TEST(Fragmentation, MemoMatchesDirect) {
  auto s = shapes();
  FragmentationMemo memo(&s);
  NodeState a = node(8000, {1000, 300});
  NodeState b = node(8000, {300, 1000});  // same multiset of GPUs
  EXPECT_DOUBLE_EQ(memo(a), 800);
  EXPECT_DOUBLE_EQ(memo(b), 800);
  EXPECT_EQ(memo.size(), 1u);
}

TEST(Fgd, ScoreAndGpuChoice) {
  auto s = shapes();
  FragmentationMemo memo(&s);
  NodeState n = node(8000, {1000, 600});
  // Frag now 800 (above). A on gpu0 -> [500, 600], cpu 4000: A fits (0); B
  // lacks GPUs -> 0.25*1100; C -> 0.25*1100: 550. Decrease 250 ->
  // sigmoid(0.25) = 0.5622 -> 56. A on gpu1 -> [1000, 100]: A loses gpu1 ->
  // 0.5*100; B, C -> 0.25*1100 each: 600. Decrease 200 -> sigmoid(0.2) -> 54.
  Demand a = demand(4000, 1, 500);
  EXPECT_EQ(fgd_score(800, 550), 56);
  EXPECT_EQ(fgd_score(800, 600), 54);
  EXPECT_EQ(score_node(PolicyKind::kFgd, n, a, memo, 800), 56);
  Rng rng(1);
  EXPECT_EQ(choose_gpus(PolicyKind::kFgd, n, a, rng, memo, 800), std::vector<int>{0});
  // Best fit takes the tightest GPU instead: gpu1 (600 left).
  EXPECT_EQ(choose_gpus(PolicyKind::kBestFit, n, a, rng, memo, 800), std::vector<int>{1});
  // Whole GPUs: the first free ones by index, for every policy.
  EXPECT_EQ(choose_gpus(PolicyKind::kFgd, node(8000, {600, 1000, 1000}), demand(1000, 2, 1000), rng, memo, 0),
            (std::vector<int>{1, 2}));
  // First-fit leaves the choice to the allocator.
  EXPECT_TRUE(choose_gpus(PolicyKind::kFirstFit, n, a, rng, memo, 800).empty());
}

TEST(Fgd, CpuOnlyTaskCountsToo) {
  auto s = shapes();
  FragmentationMemo memo(&s);
  // [1000, 1000], cpu 8000: frag 500 (C only). A CPU-only task of 6000 leaves
  // 2000 CPU: every shape lacks CPU -> 2000. Decrease -1500 -> sigmoid(-1.5)
  // = 0.1824 -> 18.
  EXPECT_EQ(score_node(PolicyKind::kFgd, node(8000, {1000, 1000}), demand(6000, 0, 0), memo, 500), 18);
}

TEST(BestFit, HandWorked) {
  FragmentationMemo memo(nullptr);
  // (64000-8000)/128000*0.5 + (2000-1000)/8000*0.5 = 0.21875 + 0.0625 = 0.28125;
  // (1-0.28125)*100 = 71.875 -> 71.
  EXPECT_EQ(score_node(PolicyKind::kBestFit, node(64000, {1000, 1000}), demand(8000, 1, 1000), memo, 0), 71);
}

TEST(DotProduct, HandWorked) {
  FragmentationMemo memo(nullptr);
  // node (0.5, 0.25), task (0.0625, 0.125): dot 0.0625, /2 = 0.03125 -> 96.875 -> 96.
  EXPECT_EQ(score_node(PolicyKind::kDotProduct, node(64000, {1000, 1000}), demand(8000, 1, 1000), memo, 0), 96);
}

TEST(GpuPacking, HandWorked) {
  FragmentationMemo memo(nullptr);
  // Free node with 2 GPUs: max(33-2, 2) = 31.
  EXPECT_EQ(score_node(PolicyKind::kGpuPacking, node(64000, {1000, 1000}), demand(1000, 1, 300), memo, 0), 31);
  // A share on a used GPU with 400 left: 100 - (400*100/1000)/10 = 96.
  EXPECT_EQ(score_node(PolicyKind::kGpuPacking, node(64000, {1000, 400}), demand(1000, 1, 300), memo, 0), 96);
  // A whole GPU on a used node: max(50-1, 33) = 49.
  EXPECT_EQ(score_node(PolicyKind::kGpuPacking, node(64000, {1000, 400}), demand(1000, 1, 1000), memo, 0), 49);
  // No GPU asked: 0.
  EXPECT_EQ(score_node(PolicyKind::kGpuPacking, node(64000, {1000, 400}), demand(1000, 0, 0), memo, 0), 0);
}

TEST(GpuClustering, HandWorked) {
  FragmentationMemo memo(nullptr);
  NodeState shared = node(64000, {1000, 500});
  shared.affinity[0] = 2;  // two GPU-share tasks
  // 25*(8000-1500)/8000 = 20 (integer); same and only kind: +75 -> 95.
  EXPECT_EQ(score_node(PolicyKind::kGpuClustering, shared, demand(1000, 1, 300), memo, 0), 95);
  // A 1-GPU task there: another kind only -> 20.
  EXPECT_EQ(score_node(PolicyKind::kGpuClustering, shared, demand(1000, 1, 1000), memo, 0), 20);
  // Empty node: 25*6000/8000 = 18, +25 -> 43.
  EXPECT_EQ(score_node(PolicyKind::kGpuClustering, node(64000, {1000, 1000}), demand(1000, 1, 1000), memo, 0), 43);
  // Mixed node holding the task's kind: +50.
  shared.affinity[1] = 1;
  EXPECT_EQ(score_node(PolicyKind::kGpuClustering, shared, demand(1000, 1, 300), memo, 0), 70);
}

TEST(TypicalShapes, CoverageAndRenormalization) {
  std::vector<Demand> tasks;
  for (int i = 0; i < 6; ++i) tasks.push_back(demand(1000, 1, 500));
  for (int i = 0; i < 3; ++i) tasks.push_back(demand(2000, 1, 1000));
  tasks.push_back(demand(3000, 0, 0));
  // 95% of 10 = 9.5: 6, then 9, then 10 -> all three, frequencies as counted.
  auto all = typical_shapes(tasks, 0.95);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_DOUBLE_EQ(all[0].frequency, 0.6);
  EXPECT_EQ(all[1].demand.cpu, 2000);
  EXPECT_DOUBLE_EQ(all[2].frequency, 0.1);
  // 90% = 9: 6, then 9 -> two shapes, renormalized over 9 tasks.
  auto two = typical_shapes(tasks, 0.90);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_DOUBLE_EQ(two[0].frequency, 6.0 / 9);
  EXPECT_DOUBLE_EQ(two[1].frequency, 3.0 / 9);
}

TEST(Policies, ParseAndName) {
  for (auto p : all_policies()) {
    auto parsed = parse_policy(policy_name(p));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, p);
  }
  auto bad = parse_policy("tetris");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "unknown policy \"tetris\": accepted values are first-fit, random, dot-product, gpu-clustering, "
            "gpu-packing, best-fit, fgd, draplane");
}

TEST(Rng, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.below(1000);
    EXPECT_EQ(x, b.below(1000));
    EXPECT_LT(x, 1000u);
    differs |= x != c.below(1000);
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace draplane::sim
