// The pieces of `draplane bench` that decide its figures and its verdict:
// scheduler_perf's throughput sampling, the end-of-run check, the workloads'
// shapes.
#include <gtest/gtest.h>

#include "bench/bench.h"
#include "bench/check.h"
#include "bench/workloads.h"
#include "controllers/claim_logic.h"

namespace draplane::bench {
namespace {

TEST(SampleThroughput, SkipsTheFirstSampleAndDropsThePartialLastInterval) {
  // 10 pods bound in (0,1], 20 in (1,2], 30 in (2,3], 5 at 3.5 (partial).
  std::vector<double> at;
  for (int i = 0; i < 10; ++i) at.push_back(0.5);
  for (int i = 0; i < 20; ++i) at.push_back(1.5);
  for (int i = 0; i < 30; ++i) at.push_back(2.5);
  for (int i = 0; i < 5; ++i) at.push_back(3.5);
  Throughput t = sample_throughput(at);
  ASSERT_EQ(t.samples, 2);  // ticks 2 and 3; tick 1 only starts the count
  EXPECT_DOUBLE_EQ(t.average, 25);
  EXPECT_DOUBLE_EQ(t.p50, 20);  // sorted {20, 30}: index ceil(2*0.5)-1 = 0
  EXPECT_DOUBLE_EQ(t.p90, 30);
  EXPECT_DOUBLE_EQ(t.p99, 30);
}

TEST(SampleThroughput, MergesEmptyIntervalsIntoTheNextSample) {
  // Started at tick 1 (1 pod); nothing in (1,2]; 10 in (2,3]: 10 / 2 s,
  // recorded for both ticks. (The pod at 3.2 keeps the collector running
  // past tick 3.)
  std::vector<double> at{0.5};
  for (int i = 0; i < 10; ++i) at.push_back(2.5);
  at.push_back(3.2);
  Throughput t = sample_throughput(at);
  ASSERT_EQ(t.samples, 2);
  EXPECT_DOUBLE_EQ(t.average, 5);
  EXPECT_DOUBLE_EQ(t.p99, 5);
}

TEST(SampleThroughput, NoSampleForARunShorterThanTwoTicks) {
  EXPECT_EQ(sample_throughput({0.1, 0.2, 0.9}).samples, 0);
  EXPECT_EQ(sample_throughput({}).samples, 0);
}

TEST(Percentile, NearestRankAsSchedulerPerf) {
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile(v, 50), 5);
  EXPECT_EQ(percentile(v, 90), 9);
  EXPECT_EQ(percentile(v, 99), 10);
  EXPECT_EQ(percentile({}, 50), 0);
}

api::ResourceClaim claim(const std::string& name, const std::string& device, const std::string& pod_uid) {
  api::ResourceClaim c;
  c.metadata.name = name;
  c.metadata.namespace_ = "test";
  api::AllocationResult a;
  a.devices.results.push_back(api::DeviceRequestAllocationResult{});
  a.devices.results.back().request = "req-0";
  a.devices.results.back().driver = "d";
  a.devices.results.back().pool = "node-0";
  a.devices.results.back().device = device;
  api::NodeSelector s;
  s.nodeSelectorTerms.push_back(api::NodeSelectorTerm{});
  s.nodeSelectorTerms[0].matchFields.push_back(api::NodeSelectorRequirement{"metadata.name", "In", {"node-0"}});
  a.nodeSelector = s;
  c.status.allocation = a;
  if (!pod_uid.empty()) c.status.reservedFor.push_back(api::ResourceClaimConsumerReference{"", "pods", "x", pod_uid});
  return c;
}

api::Pod pod(const std::string& name, const std::string& uid, const std::string& claim_name, const std::string& node) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "test";
  p.metadata.uid = uid;
  p.spec.nodeName = node;
  api::PodResourceClaim rc;
  rc.name = "resource";
  rc.resourceClaimName = claim_name;
  p.spec.resourceClaims.push_back(rc);
  return p;
}

TEST(CheckState, RightStatePasses) {
  auto errors = check_state({pod("a", "ua", "c1", "node-0"), pod("b", "ub", "c2", "node-0")},
                            {claim("c1", "dev-0", "ua"), claim("c2", "dev-1", "ub")}, Expectation{"test", 2, 0});
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(CheckState, ADeviceGivenTwiceFails) {
  auto errors = check_state({pod("a", "ua", "c1", "node-0"), pod("b", "ub", "c2", "node-0")},
                            {claim("c1", "dev-0", "ua"), claim("c2", "dev-0", "ub")}, Expectation{"test", 2, 0});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "device d/node-0/dev-0 allocated to both test/c1 and test/c2");
}

TEST(CheckState, ABoundPodsClaimNotReservedUnallocatedOrElsewhereFails) {
  auto unreserved = claim("c1", "dev-0", "");
  auto unallocated = claim("c2", "dev-1", "ub");
  unallocated.status.allocation.reset();
  auto errors = check_state({pod("a", "ua", "c1", "node-0"), pod("b", "ub", "c2", "node-0"),
                             pod("c", "uc", "c3", "node-1"), pod("d", "ud", "missing", "node-0")},
                            {unreserved, unallocated, claim("c3", "dev-2", "uc")}, Expectation{"test", 4, 0});
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0], "pod test/a: claim c1 is not reserved for it");
  EXPECT_EQ(errors[1], "pod test/b: claim c2 is bound but not allocated");
  EXPECT_EQ(errors[2], "pod test/c: claim c3 is allocated for other nodes than node-1");
  EXPECT_EQ(errors[3], "pod test/d bound to node-0: its claim missing does not exist");
}

TEST(CheckState, CountsOtherThanTheShapeImpliesFail) {
  auto errors = check_state({pod("a", "ua", "c1", "node-0"), pod("b", "ub", "c2", "")},
                            {claim("c1", "dev-0", "ua")}, Expectation{"test", 2, 0});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "1 measured pods bound, the workload implies 2");
  EXPECT_EQ(errors[1], "1 measured pods unbound, the workload implies 0");
}

TEST(Workloads, EveryWorkloadBuildsAtATinySize) {
  for (const auto& w : workloads()) {
    auto plan = w.build(WorkloadParams{.nodes = 2, .duration_s = 0.1});
    ASSERT_TRUE(plan.has_value()) << w.name << ": " << plan.error().message();
    EXPECT_TRUE(plan->steady || !plan->pods.empty()) << w.name;
  }
}

TEST(Workloads, UpstreamCountsAt500Nodes) {
  // performance-config.yaml 5000pods_500nodes: 2,500 init + 2,500 measured on 5,000 devices.
  auto t = (*find_workload("SchedulingWithResourceClaimTemplate"))->build(WorkloadParams{.nodes = 500, .duration_s = 10});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->devices, 5000);
  EXPECT_EQ(t->init_pods.size(), 2500u);
  EXPECT_EQ(t->pods.size(), 2500u);
  // full_500nodes: 4,990 claims allocated up front.
  auto full = (*find_workload("SteadyStateClusterResourceClaimTemplate/full"))->build(WorkloadParams{.nodes = 500, .duration_s = 10});
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->allocated.size(), 4990u);
  EXPECT_EQ(full->batch, 10);
  // SchedulingWithResourceClaim: 500 claims per phase, 5 pods each, 2 devices per node.
  auto shared = (*find_workload("SchedulingWithResourceClaim"))->build(WorkloadParams{.nodes = 500, .duration_s = 10});
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(shared->claims.size(), 500u);
  EXPECT_EQ(shared->pods.size(), 2500u);
  EXPECT_EQ(shared->devices, 1000);
}

TEST(Workloads, UnknownNameListsTheKnownOnes) {
  auto w = find_workload("Nope");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message().find("SchedulingWithResourceClaimTemplate"), std::string::npos);
}

}  // namespace
}  // namespace draplane::bench
