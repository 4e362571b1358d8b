// KAI queues through the scheduler (plugins/queues.h): fair-share admission
// and reclaim by preemption between queues.
#include <gtest/gtest.h>

#include <set>

#include "api/workload.h"
#include "harness.h"
#include "sched/plugins/queues.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

std::string queue_json(const std::string& name, const std::string& gpu, const std::string& parent = "") {
  std::string spec = "\"resources\":{\"gpu\":" + gpu + "}";
  if (!parent.empty()) spec += ",\"parentQueue\":\"" + parent + "\"";
  return "{\"apiVersion\":\"scheduling.run.ai/v2\",\"kind\":\"Queue\",\"metadata\":{\"name\":\"" + name +
         "\"},\"spec\":{" + spec + "}}";
}
const char* kShareAll = "{\"quota\":0,\"limit\":-1,\"overQuotaWeight\":1}";

struct QueueCluster : Harness {
  explicit QueueCluster(int nodes, int gpus) {
    std::vector<std::pair<std::string, int>> list;
    for (int i = 0; i < nodes; ++i) list.emplace_back("n" + std::to_string(i), gpus);
    add_gpu_nodes(list);
  }
  void add_queue(const std::string& name, const std::string& gpu = kShareAll, const std::string& parent = "") {
    sched.post_queue(queue_json(name, gpu, parent), false);
    deliver();
  }
  void submit(const std::string& queue, int n, int from = 0) {
    for (int i = from; i < from + n; ++i) {
      std::string name = queue + "-" + std::to_string(i);
      add(testing::claim(name));
      api::Pod p = testing::pod(name, {name});
      p.metadata.labels["kai.scheduler/queue"] = queue;
      add(p);
    }
  }
  // Queues qa and qb share alike; qa alone has pods (16), so it borrows qb's share.
  void qa_borrows_all() {
    add_queue("qa");
    add_queue("qb");
    submit("qa", 16);
    run();
  }
  int bound(const std::string& queue) {
    int n = 0;
    for (const auto& [k, p] : api.pods) {
      auto it = p.metadata.labels.find("kai.scheduler/queue");
      if (it != p.metadata.labels.end() && it->second == queue && !p.spec.nodeName.empty() &&
          p.metadata.deletionTimestamp.empty())
        ++n;
    }
    return n;
  }
};

TEST(QueuesScheduler, ParseQueue) {
  auto q = plugins::parse_queue(queue_json("team", "{\"quota\":2.5,\"limit\":8,\"overQuotaWeight\":3}", "org"));
  ASSERT_TRUE(q.has_value()) << q.error().message();
  EXPECT_EQ(q->name, "team");
  EXPECT_EQ(q->parent, "org");
  EXPECT_EQ(q->resources[fair::kGpu].quota, 2500);
  EXPECT_EQ(q->resources[fair::kGpu].limit, 8000);
  EXPECT_EQ(q->resources[fair::kGpu].over_quota_weight, 3);
  EXPECT_EQ(q->resources[fair::kCpu].limit, fair::kUnlimited);  // not given: no cap
  auto bad = plugins::parse_queue(queue_json("team", "{\"quota\":\"x\"}"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "spec.resources.gpu.quota: Invalid value: must be a number");
}

// The runner writes each queue's status every few seconds; the event that
// comes back carries the same spec and must not retry every parked pod. A
// changed spec does.
TEST(QueuesScheduler, QueueStatusWritesDoNotWakeParkedPods) {
  QueueCluster h(1, 1);
  h.add_queue("qa");
  h.submit("qa", 2);
  h.run();
  ASSERT_EQ(h.bound("qa"), 1);
  const int64_t cycles = h.sched.stats().cycles;
  h.add_queue("qa");  // the same spec, as after a status write
  h.run();
  EXPECT_EQ(h.sched.stats().cycles, cycles);
  h.add_queue("qa", "{\"quota\":1,\"limit\":-1,\"overQuotaWeight\":2}");
  h.run();
  EXPECT_GT(h.sched.stats().cycles, cycles);
}

TEST(QueuesScheduler, EqualWeightsShareSixteenGpusEightEight) {
  QueueCluster h(2, 8);
  h.add_queue("qa");
  h.add_queue("qb");
  h.submit("qa", 16);
  h.submit("qb", 16);
  h.run();
  EXPECT_EQ(h.bound("qa"), 8);
  EXPECT_EQ(h.bound("qb"), 8);
  EXPECT_TRUE(h.api.deleted.empty());
}

TEST(QueuesScheduler, IdleQueueLendsAllAndReclaimsItsHalf) {
  QueueCluster h(2, 8);
  h.qa_borrows_all();
  EXPECT_EQ(h.bound("qa"), 16);  // qb is idle: qa's fair share is all 16
  h.submit("qb", 8);
  h.run();
  // Each qb pod reclaims one qa pod (equal priority: only the queues allow it).
  EXPECT_EQ(h.api.deleted.size(), 8u);
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.bound("qa"), 8);
  EXPECT_EQ(h.bound("qb"), 8);
}

// More pods wait in qb than its share: the evictions under way count, so no
// more of qa's pods are evicted than qb's share needs (each later preemptor
// sees qa's leaving pods gone and qb's nominated pods placed).
TEST(QueuesScheduler, ReclaimStopsAtTheReclaimersShare) {
  QueueCluster h(2, 8);
  h.qa_borrows_all();
  ASSERT_EQ(h.bound("qa"), 16);
  h.submit("qb", 12);
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 8u);
  h.clock.advance(std::chrono::seconds(30));
  h.run();  // victims still terminating: no further round of evictions
  EXPECT_EQ(h.api.deleted.size(), 8u);
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.bound("qa"), 8);
  EXPECT_EQ(h.bound("qb"), 8);
}

// A queue within its quota is not reclaimed from; one without a queue
// label is outside the queues entirely.
TEST(QueuesScheduler, NoReclaimBelowTheVictimsQuota) {
  QueueCluster h(1, 8);
  h.add_queue("qa", "{\"quota\":8,\"limit\":-1,\"overQuotaWeight\":1}");
  h.add_queue("qb");
  h.submit("qa", 8);
  h.run();
  EXPECT_EQ(h.bound("qa"), 8);
  h.submit("qb", 2);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty());
  EXPECT_EQ(h.bound("qb"), 0);
}

// A pod of `gpus` GPUs in `queue`, placed on `node` ("": anywhere), of `priority`.
api::Pod queue_pod_on(QueueCluster& h, const std::string& queue, const std::string& name, int gpus,
                      const std::string& node = "", int32_t priority = 0) {
  h.add(testing::claim(name, gpus));
  api::Pod p = testing::pod(name, {name});
  p.metadata.labels["kai.scheduler/queue"] = queue;
  if (!node.empty()) p.spec.nodeSelector["kubernetes.io/hostname"] = node;
  if (priority != 0) p.spec.priority = priority;
  h.add(p);
  return p;
}

// Each victim alone would leave its queue above its share; together they would
// not: the reclaim is judged on a node's victims all at once.
TEST(QueuesScheduler, ReclaimsAreJudgedTogether) {
  QueueCluster h(2, 6);
  h.add_queue("qa");
  h.add_queue("qb");
  h.add_queue("qc");
  for (int i = 0; i < 6; ++i) {
    queue_pod_on(h, "qa", "qa-" + std::to_string(i), 1, "n0");
    queue_pod_on(h, "qc", "qc-" + std::to_string(i), 1, "n1");
  }
  h.run();
  ASSERT_EQ(h.bound("qa"), 6);
  ASSERT_EQ(h.bound("qc"), 6);
  // qb asks 4 GPUs on one node: shares become 4/4/4, and taking four of qa's
  // (or qc's) six would leave it at 2, below its share.
  queue_pod_on(h, "qb", "qb-big", 4);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty()) << h.api.deleted.size() << " evicted";
  EXPECT_EQ(h.bound("qb"), 0);
  // Two GPUs: taking two of qa's six leaves it at its share of 4.
  queue_pod_on(h, "qb", "qb-small", 2);
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 2u);
}

TEST(QueuesScheduler, LimitCapsAQueue) {
  QueueCluster h(1, 8);
  h.add_queue("qa", "{\"quota\":0,\"limit\":3,\"overQuotaWeight\":1}");
  h.submit("qa", 5);
  h.run();
  EXPECT_EQ(h.bound("qa"), 3);
  EXPECT_EQ(h.condition_message("qa-4"), "Unschedulable: 0/1 nodes are available: queue \"qa\" would exceed its gpu limit.");
}

// At its limit a queue takes no more, but a pod of higher priority in it
// preempts one of lower priority in the same queue (KAI's in-queue
// preemption); one of equal priority waits.
TEST(QueuesScheduler, AtItsLimitAQueuePreemptsWithinItselfByPriority) {
  QueueCluster h(1, 8);
  h.add_queue("qa", "{\"quota\":0,\"limit\":2,\"overQuotaWeight\":1}");
  h.submit("qa", 2);
  h.run();
  ASSERT_EQ(h.bound("qa"), 2);
  queue_pod_on(h, "qa", "qa-peer", 1);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty());
  EXPECT_EQ(h.pod("qa-peer").spec.nodeName, "");
  queue_pod_on(h, "qa", "qa-urgent", 1, "", 1000);
  h.run();
  ASSERT_EQ(h.api.deleted.size(), 1u);
  EXPECT_EQ(h.pod("qa-urgent").status.nominatedNodeName, "n0");
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("qa-urgent").spec.nodeName, "n0");
  EXPECT_EQ(h.bound("qa"), 2) << "still at its limit";
  // A pod of a queue that does not exist looks for no victims at all (no
  // what-if check is run: its PreFilter failure is unresolvable).
  const int64_t checks = h.sched.stats().preemption_checks;
  EXPECT_GT(checks, 0);
  queue_pod_on(h, "nosuch", "lost", 1, "", 2000);
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 1u);
  EXPECT_EQ(h.sched.stats().preemption_checks, checks);
  EXPECT_EQ(h.pod("lost").spec.nodeName, "");
}

// A claim a PodGroup shares (KEP-5729) is one set of devices: a gang of four
// sharing four GPUs holds four of its queue's GPUs, not sixteen.
TEST(QueuesScheduler, AGroupsSharedClaimCountsOnce) {
  QueueCluster h(1, 8);
  h.add_queue("qa");
  api::PodGroup g = testing::pod_group("train", 4);
  g.spec.resourceClaims.push_back(api::PodGroupResourceClaim{"domain", std::string("domain"), std::nullopt});
  h.add(g);
  h.add(testing::claim("domain", 4));
  for (int i = 0; i < 4; ++i) {
    api::Pod p = testing::pod("w" + std::to_string(i));
    p.metadata.labels["kai.scheduler/queue"] = "qa";
    p.spec.schedulingGroup = api::PodSchedulingGroup{std::string("train")};
    api::PodResourceClaim e;
    e.name = "domain";
    e.resourceClaimName = "domain";
    p.spec.resourceClaims.push_back(e);
    h.add(p);
  }
  h.run();
  ASSERT_EQ(h.bound("qa"), 4) << h.condition_message("w0");
  auto reports = h.sched.current_queue_reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].allocated[fair::kGpu], 4000);
}

// A claim pods share by naming it is one set of devices too: three pods on
// one 2-GPU claim hold two of their queue's GPUs (each 2/3, rounded up to the
// milli-GPU), and when one goes the other two carry it all.
TEST(QueuesScheduler, APodsSharedClaimCountsOnce) {
  QueueCluster h(1, 8);
  h.add_queue("qa");
  h.add(testing::claim("shared", 2));
  for (int i = 0; i < 3; ++i) {
    api::Pod p = testing::pod("user-" + std::to_string(i), {"shared"});
    p.metadata.labels["kai.scheduler/queue"] = "qa";
    h.add(p);
  }
  h.run();
  ASSERT_EQ(h.bound("qa"), 3) << h.condition_message("user-0");
  auto reports = h.sched.current_queue_reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].allocated[fair::kGpu], 3 * 667);
  api::Pod gone = h.pod("user-2");
  h.api.pods.erase("default/user-2");
  h.sched.handle(Event{Event::Op::kDelete, gone});
  reports = h.sched.current_queue_reports();
  EXPECT_EQ(reports[0].allocated[fair::kGpu], 2000);
}

// In a victim search the pods left on a shared claim carry all of it: a pod
// of higher priority keeps a 2-GPU claim it shares with a lower one, so in
// a queue at its 2-GPU limit evicting the lower one frees nothing the queue
// may use, and nobody is evicted (counted as before the search, the pod left
// would hold one GPU and the eviction would seem to make room).
TEST(QueuesScheduler, AVictimsSharedClaimStaysChargedToThoseLeft) {
  QueueCluster h(1, 3);
  h.add_queue("qa", "{\"quota\":0,\"limit\":2,\"overQuotaWeight\":1}");
  h.add(testing::claim("shared", 2));
  for (const auto& [name, priority] : std::vector<std::pair<std::string, int32_t>>{{"low", 0}, {"high", 2000}}) {
    api::Pod p = testing::pod(name, {"shared"});
    p.metadata.labels["kai.scheduler/queue"] = "qa";
    p.spec.priority = priority;
    h.add(p);
  }
  h.run();
  ASSERT_EQ(h.bound("qa"), 2);
  queue_pod_on(h, "qa", "urgent", 1, "", 1000);
  h.run();
  EXPECT_GT(h.sched.stats().preemption_checks, 0);
  EXPECT_TRUE(h.api.deleted.empty());
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "");
}

TEST(QueuesScheduler, OnlyLeafQueuesTakePods) {
  QueueCluster h(1, 8);
  h.add_queue("org");
  h.add_queue("team", kShareAll, "org");
  h.submit("org", 1);
  h.submit("team", 1);
  h.submit("nosuch", 1);
  h.run();
  EXPECT_EQ(h.bound("team"), 1);
  EXPECT_EQ(h.condition_message("org-0"),
            "Unschedulable: 0/1 nodes are available: queue \"org\" has child queues; only leaf queues take pods.");
  EXPECT_EQ(h.condition_message("nosuch-0"), "Unschedulable: 0/1 nodes are available: queue \"nosuch\" does not exist.");
}

// A victim search takes pods out of the cache and puts them back, telling the
// queues which pods (and pods of which claims) it moved; the totals after it
// are those before, pod for pod. Here every node is examined and no node can
// serve the 8-GPU preemptor even emptied, so nothing is evicted.
TEST(QueuesScheduler, VictimSearchesLeaveTheQueueTotalsAsTheyWere) {
  QueueCluster h(3, 4);
  h.add_queue("qa");
  h.add_queue("qb");
  h.submit("qa", 5);
  h.submit("qb", 3);
  api::Pod cpu_only = testing::pod("qa-cpu");  // no claim: put back by the pod alone
  cpu_only.metadata.labels["kai.scheduler/queue"] = "qa";
  cpu_only.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_int(1);
  h.add(cpu_only);
  h.run();
  ASSERT_EQ(h.bound("qa") + h.bound("qb"), 9);
  auto before = h.sched.current_queue_reports();
  EXPECT_EQ(before[0].allocated[fair::kCpu], 1000);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].allocated[fair::kGpu], 5000);
  EXPECT_EQ(before[1].allocated[fair::kGpu], 3000);
  queue_pod_on(h, "qb", "big", 8, "", 1000);
  h.run();
  EXPECT_GT(h.sched.stats().preemption_checks, 0);
  for (const auto& [key, p] : h.api.pods) EXPECT_TRUE(p.metadata.deletionTimestamp.empty()) << key;
  auto after = h.sched.current_queue_reports();
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].allocated, before[i].allocated) << after[i].name;
  }
  EXPECT_EQ(after[1].requested[fair::kGpu], 3000 + 8000);  // the pending preemptor is asked for
}

// What the cluster offers is kept between cycles and counted again when a
// node changes: a node's allocatable CPU doubled doubles a queue's CPU share
// (its pods ask for more than the cluster has).
TEST(QueuesScheduler, ANodesNewAllocatableMovesTheShares) {
  QueueCluster h(1, 8);
  api::Node n = node("n0");
  n.status.allocatable["cpu"] = api::Quantity::from_int(4);
  h.add(n);
  h.add_queue("qa");
  for (int i = 0; i < 3; ++i) {
    api::Pod p = testing::pod("cpu-" + std::to_string(i));
    p.metadata.labels["kai.scheduler/queue"] = "qa";
    p.spec.containers[0].resources.requests["cpu"] = api::Quantity::from_int(4);
    h.add(p);
  }
  h.run();
  auto before = h.sched.current_queue_reports();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].fair_share[fair::kCpu], 4000);
  n.status.allocatable["cpu"] = api::Quantity::from_int(8);
  h.add(n);
  auto after = h.sched.current_queue_reports();
  EXPECT_EQ(after[0].fair_share[fair::kCpu], 8000);
}

}  // namespace
}  // namespace draplane::sched
