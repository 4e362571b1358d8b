// Fair share and reclaim, with numbers worked by hand in the comments.
#include "sched/fair_share.h"

#include <gtest/gtest.h>

namespace draplane::sched::fair {
namespace {

constexpr int64_t kGpus = 1000;  // one GPU in milli-GPUs

QueueInput queue(const std::string& name, int64_t gpu_quota, int64_t gpu_demand, const std::string& parent = "") {
  QueueInput q;
  q.name = name;
  q.parent = parent;
  q.resources[kGpu].quota = gpu_quota * kGpus;
  q.demand[kGpu] = gpu_demand * kGpus;
  return q;
}

const QueueShare& find(const std::vector<QueueShare>& shares, const std::string& name) {
  for (const auto& s : shares)
    if (s.name == name) return s;
  ADD_FAILURE() << "no queue " << name;
  static QueueShare none;
  return none;
}

int64_t gpus(const std::vector<QueueShare>& shares, const std::string& name) {
  return find(shares, name).fair_share[kGpu] / kGpus;
}

Amounts cluster(int64_t gpu_count) { return {gpu_count * kGpus, 64000, int64_t{256} << 30}; }

// Two queues, weight 1 each, no quota, both asking for all 16: each round
// offers 16 * 1/2 = 8, nobody is satisfied, so 8/8.
TEST(FairShare, EqualWeightsSplitUnderContention) {
  auto shares = compute_fair_shares({queue("a", 0, 16), queue("b", 0, 16)}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 8);
  EXPECT_EQ(gpus(shares, "b"), 8);
}

// b asks for nothing: a's offer is 16 * 1/1 = 16, its want is 16: all of it.
TEST(FairShare, IdleQueueLendsEverything) {
  auto shares = compute_fair_shares({queue("a", 0, 16), queue("b", 0, 0)}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 16);
  EXPECT_EQ(gpus(shares, "b"), 0);
}

// a holds all 16 when b comes back asking for 8 (quota 8 each): quotas give
// 8/8, nothing is left; a is 8 over its fair share and b, below quota, may
// reclaim those 8 from it, but not a 9th (a would go below its quota).
TEST(FairShare, ReturningQueueReclaimsItsQuota) {
  QueueInput a = queue("a", 8, 16);
  a.allocated[kGpu] = 16 * kGpus;
  QueueInput b = queue("b", 8, 8);
  auto shares = compute_fair_shares({a, b}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 8);
  EXPECT_EQ(gpus(shares, "b"), 8);
  EXPECT_EQ(find(shares, "a").over_fair_share[kGpu], 8 * kGpus);
  EXPECT_EQ(find(shares, "a").over_quota[kGpu], 8 * kGpus);
  EXPECT_EQ(find(shares, "b").over_fair_share[kGpu], 0);

  ReclaimSide rb{&find(shares, "b"), {8 * kGpus, kUnlimited, kUnlimited}};
  ReclaimSide ra{&find(shares, "a"), {8 * kGpus, kUnlimited, kUnlimited}};
  EXPECT_TRUE(reclaim_allowed(rb, {8 * kGpus, 0, 0}, ra, {8 * kGpus, 0, 0}));
  EXPECT_FALSE(reclaim_allowed(rb, {9 * kGpus, 0, 0}, ra, {9 * kGpus, 0, 0}));
  // a, at its share, may not take b's back.
  EXPECT_FALSE(reclaim_allowed(ra, {1 * kGpus, 0, 0}, rb, {1 * kGpus, 0, 0}));
}

// Without quotas (all over-quota), b's return still halves a: fair shares 8/8,
// a is 8 over its fair share, and b, within its fair share, reclaims 8.
TEST(FairShare, ReturningQueueReclaimsItsFairShare) {
  QueueInput a = queue("a", 0, 16);
  a.allocated[kGpu] = 16 * kGpus;
  auto shares = compute_fair_shares({a, queue("b", 0, 16)}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 8);
  ReclaimSide ra{&find(shares, "a"), {0, 0, 0}};
  ReclaimSide rb{&find(shares, "b"), {0, 0, 0}};
  EXPECT_TRUE(reclaim_allowed(rb, {8 * kGpus, 0, 0}, ra, {8 * kGpus, 0, 0}));
  EXPECT_FALSE(reclaim_allowed(rb, {9 * kGpus, 0, 0}, ra, {9 * kGpus, 0, 0}));
}

// Weights 2:1 on 15 GPUs: offers 10 and 5, exact. On 16: 10.67 and 5.33 are
// rounded down to 10 and 5; the 16th goes to the larger remainder (a's .67).
TEST(FairShare, WeightsTwoToOne) {
  QueueInput a = queue("a", 0, 100);
  a.resources[kGpu].over_quota_weight = 2;
  QueueInput b = queue("b", 0, 100);
  auto shares = compute_fair_shares({a, b}, cluster(15));
  EXPECT_EQ(gpus(shares, "a"), 10);
  EXPECT_EQ(gpus(shares, "b"), 5);
  shares = compute_fair_shares({a, b}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 11);
  EXPECT_EQ(gpus(shares, "b"), 5);
}

// Limits cap the share; what a limited queue cannot take goes to the others
// in the next round: a (limit 4) takes 4 of the offered 8, the next round
// offers b the remaining 12 of which it wants 12.
TEST(FairShare, LimitCapsAndTheRestIsRedistributed) {
  QueueInput a = queue("a", 0, 16);
  a.resources[kGpu].limit = 4 * kGpus;
  auto shares = compute_fair_shares({a, queue("b", 0, 16)}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 4);
  EXPECT_EQ(gpus(shares, "b"), 12);
}

// Quotas first: a (quota 10) gets 10 of 16 even though b weighs 3x; the 6
// left are divided 1:3 over quota.
TEST(FairShare, QuotaBeforeWeights) {
  QueueInput a = queue("a", 10, 16);
  QueueInput b = queue("b", 0, 16);
  b.resources[kGpu].over_quota_weight = 3;
  auto shares = compute_fair_shares({a, b}, cluster(16));
  // Over quota: 6 * 1/4 = 1.5 -> 1 for a, 6 * 3/4 = 4.5 -> 4 for b; one left,
  // remainders .5 and .5, name order gives it to a.
  EXPECT_EQ(gpus(shares, "a"), 12);
  EXPECT_EQ(gpus(shares, "b"), 4);
}

// Over-quota priority: the higher priority queue fills first.
TEST(FairShare, HigherPriorityFillsFirst) {
  QueueInput a = queue("a", 0, 12);
  a.priority = 200;
  auto shares = compute_fair_shares({a, queue("b", 0, 16)}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 12);
  EXPECT_EQ(gpus(shares, "b"), 4);
}

// Weight 0: nothing beyond quota even when the rest is idle.
TEST(FairShare, ZeroWeightStaysAtQuota) {
  QueueInput a = queue("a", 2, 16);
  a.resources[kGpu].over_quota_weight = 0;
  auto shares = compute_fair_shares({a}, cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 2);
}

// Hierarchy: departments d1 and d2 split 16 as 8/8; d1's teams t1 and t2
// split d1's 8 as 4/4; d2's only team t3 gets d2's 8. Parent demand is the
// sum of its children's.
TEST(FairShare, ChildrenDivideTheirParentsShare) {
  auto shares = compute_fair_shares({queue("d1", 0, 0), queue("d2", 0, 0), queue("t1", 0, 16, "d1"),
                                     queue("t2", 0, 16, "d1"), queue("t3", 0, 16, "d2")},
                                    cluster(16));
  EXPECT_EQ(gpus(shares, "d1"), 8);
  EXPECT_EQ(gpus(shares, "d2"), 8);
  EXPECT_EQ(gpus(shares, "t1"), 4);
  EXPECT_EQ(gpus(shares, "t2"), 4);
  EXPECT_EQ(gpus(shares, "t3"), 8);
  EXPECT_EQ(find(shares, "d1").demand[kGpu], 32 * kGpus);
}

// A team's limit inside a department: t1 limited to 2, t2 gets the other 6.
TEST(FairShare, HierarchyWithLimit) {
  QueueInput t1 = queue("t1", 0, 16, "d1");
  t1.resources[kGpu].limit = 2 * kGpus;
  auto shares = compute_fair_shares({queue("d1", 0, 0), queue("d2", 0, 16), t1, queue("t2", 0, 16, "d1")},
                                    cluster(16));
  EXPECT_EQ(gpus(shares, "d1"), 8);
  EXPECT_EQ(gpus(shares, "t1"), 2);
  EXPECT_EQ(gpus(shares, "t2"), 6);
}

// A queue whose parent is missing, or on a cycle, gets nothing.
TEST(FairShare, OrphansGetNoShare) {
  auto shares = compute_fair_shares({queue("a", 0, 16), queue("lost", 4, 16, "nope"), queue("x", 4, 4, "y"),
                                     queue("y", 4, 4, "x")},
                                    cluster(16));
  EXPECT_EQ(gpus(shares, "a"), 16);
  EXPECT_TRUE(find(shares, "lost").orphaned);
  EXPECT_EQ(gpus(shares, "lost"), 0);
  EXPECT_TRUE(find(shares, "x").orphaned);
  EXPECT_TRUE(find(shares, "y").orphaned);
}

// Each resource is divided on its own: a wants CPU, b wants GPUs.
TEST(FairShare, ResourcesDividedIndependently) {
  QueueInput a = queue("a", 0, 0);
  a.demand[kCpu] = 64000;
  QueueInput b = queue("b", 0, 16);
  b.demand[kCpu] = 8000;
  auto shares = compute_fair_shares({a, b}, cluster(16));
  EXPECT_EQ(find(shares, "a").fair_share[kCpu], 56000);
  EXPECT_EQ(find(shares, "b").fair_share[kCpu], 8000);
  EXPECT_EQ(gpus(shares, "b"), 16);
}

// Fractions of a GPU: 1.5 GPUs of demand each on 2 GPUs; offers of 1 each
// (whole GPUs), nothing left over; a 3rd GPU-half would not exist.
TEST(FairShare, FractionalDemand) {
  QueueInput a = queue("a", 0, 0);
  a.demand[kGpu] = 1500;
  QueueInput b = queue("b", 0, 0);
  b.demand[kGpu] = 500;
  auto shares = compute_fair_shares({a, b}, cluster(2));
  // Offers 1000 each: b wants 500 (satisfied); next round a is offered the
  // remaining 1000 of which it wants 500: 1500/500.
  EXPECT_EQ(find(shares, "a").fair_share[kGpu], 1500);
  EXPECT_EQ(find(shares, "b").fair_share[kGpu], 500);
}

TEST(FairShare, DominantShare) {
  QueueShare s;
  s.fair_share = {8000, 1000, 0};
  s.allocated = {4000, 1000, 0};
  EXPECT_DOUBLE_EQ(dominant_share(s), 1.0);
  s.allocated[kMemory] = 1;
  EXPECT_EQ(dominant_share(s), std::numeric_limits<double>::infinity());
}

TEST(FairShare, KaiUnits) {
  ResourceSpec gpu = from_kai_units(kGpu, 1.5, -1, 2);
  EXPECT_EQ(gpu.quota, 1500);
  EXPECT_EQ(gpu.limit, kUnlimited);
  EXPECT_EQ(gpu.over_quota_weight, 2);
  EXPECT_EQ(from_kai_units(kCpu, 2000, 4000, 1).limit, 4000);
  EXPECT_EQ(from_kai_units(kMemory, 4096, 0, 1).quota, int64_t{4096} * 1000 * 1000);
  EXPECT_EQ(from_kai_units(kMemory, -1, 0, 1).quota, kUnlimited);
}

TEST(FairShare, GpuFraction) {
  EXPECT_EQ(gpu_fraction_milli(10, 80), 125);  // a 10 GB slice of an 80 GB GPU
  EXPECT_EQ(gpu_fraction_milli(80, 80), 1000);
  EXPECT_EQ(gpu_fraction_milli(1, 1000000), 1);  // never rounded to nothing
  EXPECT_EQ(gpu_fraction_milli(0, 80), 0);
  EXPECT_EQ(gpu_fraction_milli(5, 0), 1000);  // no total: a whole device
}

}  // namespace
}  // namespace draplane::sched::fair
