// Preemption through the scheduler (plugins/preemption.h): victims chosen by
// the real filters on the cache, evicted (DisruptionTarget, graceful delete),
// the preemptor nominated, then bound once the victims' claims are released.
#include <gtest/gtest.h>

#include "harness.h"
#include "sched/plugins/preemption.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

api::Pod prio_pod(const std::string& name, std::vector<std::string> claims, int32_t priority) {
  api::Pod p = pod(name, std::move(claims));
  p.spec.priority = priority;
  return p;
}

const api::PodCondition* condition(const api::Pod& p, const std::string& type) {
  for (const auto& c : p.status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

struct Cluster : Harness {
  explicit Cluster(const std::vector<std::pair<std::string, int>>& nodes) { add_gpu_nodes(nodes); }
  void add_pod(const std::string& name, int32_t priority, std::map<std::string, std::string> annotations = {}) {
    add(testing::claim(name));
    api::Pod p = prio_pod(name, {name}, priority);
    p.metadata.annotations = std::move(annotations);
    add(p);
  }
  // A pod arrives and the scheduler runs until idle.
  void arrive(const std::string& name, int32_t priority) {
    add_pod(name, priority);
    run();
  }
  bool preempted(const std::string& name) {
    auto it = api.pods.find("default/" + name);
    if (it == api.pods.end()) return true;  // gone already
    const api::PodCondition* c = condition(it->second, "DisruptionTarget");
    return c != nullptr && c->status == "True" && c->reason == "PreemptionByScheduler" &&
           !it->second.metadata.deletionTimestamp.empty();
  }
};

// A pod that has not started (no status.startTime: bound, its containers not
// up yet) counts as starting now, as upstream's GetPodStartTime: of two equal
// victims it is the less important, so the one running since January stays.
TEST(PreemptionScheduler, APodNotStartedYetIsTheNewestVictim) {
  Cluster h({{"n1", 2}});
  h.add_pod("running", 0);
  h.add_pod("starting", 0);
  h.run();
  ASSERT_EQ(h.pod("running").spec.nodeName, "n1");
  ASSERT_EQ(h.pod("starting").spec.nodeName, "n1");
  api::Pod running = h.pod("running");
  running.status.startTime = "2026-01-01T00:00:00Z";
  h.add(running);
  h.arrive("urgent", 1000);
  EXPECT_TRUE(h.preempted("starting"));
  EXPECT_FALSE(h.preempted("running"));
}

// Members of a PodGroup with the basic policy are scheduled one by one, and
// are victims one by one: one GPU needed, one member evicted (a gang would go whole).
TEST(PreemptionScheduler, BasicPodGroupMembersAreVictimsOneByOne) {
  Cluster h({{"n1", 2}});
  h.add(testing::pod_group("web", 0));
  for (const char* n : {"w0", "w1"}) {
    h.add(testing::claim(n));
    api::Pod p = testing::group_member("web", n);
    p.spec.priority = 0;
    h.add(p);
  }
  h.run();
  ASSERT_EQ(h.pod("w0").spec.nodeName, "n1");
  ASSERT_EQ(h.pod("w1").spec.nodeName, "n1");
  h.arrive("urgent", 1000);
  EXPECT_EQ(h.api.deleted.size(), 1u);
  EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "n1");
}

TEST(PreemptionScheduler, HighPriorityPodPreemptsAndGetsTheGpu) {
  Cluster h({{"n1", 1}});
  h.add_pod("batch", 0);
  h.run();
  ASSERT_EQ(h.pod("batch").spec.nodeName, "n1");
  h.arrive("urgent", 1000);
  // The victim is marked and deleted; the preemptor is nominated and waits.
  ASSERT_TRUE(h.preempted("batch"));
  const api::PodCondition* dt = condition(h.pod("batch"), "DisruptionTarget");
  EXPECT_EQ(dt->message, "default-scheduler: preempting to accommodate a higher priority pod default/urgent");
  EXPECT_EQ(h.api.deleted, std::vector<std::string>{"default/batch"});
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "");
  EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "n1");
  bool event = false;
  for (const auto& e : h.api.recorded) event |= e == "Normal Preempted Preempting default/batch: Preempted by pod uid-urgent on node n1";
  EXPECT_TRUE(event);
  // Still terminating: no second round of victims.
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 1u);
  h.finish_deletions();
  EXPECT_FALSE(h.claim("batch").status.allocation);
  h.run();
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "n1");
  EXPECT_TRUE(h.claim("urgent").status.allocation);
}

// Neither preemptionPolicy Never nor an equal priority preempts.
TEST(PreemptionScheduler, PreemptionPolicyNeverDoesNotPreempt) {
  Cluster h({{"n1", 1}});
  h.add_pod("batch", 0);
  h.run();
  h.add(claim("urgent"));
  api::Pod p = prio_pod("urgent", {"urgent"}, 1000);
  p.spec.preemptionPolicy = "Never";
  h.add(p);
  h.run();
  EXPECT_FALSE(h.preempted("batch"));
  EXPECT_TRUE(h.api.deleted.empty());
  EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, "");
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "");
  // Equal priority is no reason either.
  h.add_pod("peer", 0);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty());
  EXPECT_EQ(h.pod("peer").status.nominatedNodeName, "");
}

// The freed device is held for the nominated pod: a lower-priority pod that
// arrives before the preemptor's retry does not take it.
TEST(PreemptionScheduler, NominatedPodKeepsTheFreedDevice) {
  Cluster h({{"n1", 1}});
  h.add_pod("batch", 0);
  h.run();
  h.arrive("urgent", 1000);
  ASSERT_EQ(h.pod("urgent").status.nominatedNodeName, "n1");
  h.finish_deletions();
  // The preemptor is in its backoff now; a new pod is tried first.
  h.add_pod("late", 0);
  CycleResult r = h.sched.schedule_one();
  h.deliver();
  EXPECT_EQ(r.pod, "default/late");
  EXPECT_EQ(h.pod("late").spec.nodeName, "");
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("late").spec.nodeName, "");
}

// A pending pod shares the nominated preemptor's claim: the preemptor is not
// held during its cycle (holding would assume the claim allocated and reserved
// for the preemptor, and the pending pod's write would carry that reservation
// for a pod that is not bound). Both end on the node, sharing the device.
TEST(PreemptionScheduler, NominatedPodSharingTheClaimIsNotHeld) {
  Cluster h({{"n1", 1}});
  h.add_pod("batch", 0);
  h.run();
  h.arrive("urgent", 1000);
  ASSERT_EQ(h.pod("urgent").status.nominatedNodeName, "n1");
  h.finish_deletions();
  h.add(prio_pod("late", {"urgent"}, 0));
  CycleResult r = h.sched.schedule_one();
  h.deliver();
  EXPECT_EQ(r.pod, "default/late");
  EXPECT_EQ(h.pod("late").spec.nodeName, "n1");
  for (const auto& c : h.claim("urgent").status.reservedFor) EXPECT_NE(c.uid, "uid-urgent") << "reserved for an unbound pod";
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "n1");
}

// The victim is gone but the claim controller has not released its claim
// yet: the preemptor waits for that instead of evicting another pod.
TEST(PreemptionScheduler, WaitsForTheVictimsClaimsNotForMoreVictims) {
  Cluster h({{"n1", 2}});
  h.add_pod("batch1", 0);
  h.add_pod("batch2", 0);
  h.run();
  h.arrive("urgent", 1000);
  ASSERT_EQ(h.api.deleted.size(), 1u);
  h.finish_deletions(/*release_claims=*/false);
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 1u) << "a second victim was evicted";
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "");
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(30));
  h.run();
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "n1");
}

// Two pods share one claim: the device frees only when both go.
TEST(PreemptionScheduler, SharedClaimFreesOnlyWhenAllItsPodsGo) {
  Cluster h({{"n1", 1}});
  h.add(claim("shared"));
  h.add(prio_pod("a", {"shared"}, 1));
  h.add(prio_pod("b", {"shared"}, 2));
  h.run();
  ASSERT_EQ(h.pod("a").spec.nodeName, "n1");
  ASSERT_EQ(h.pod("b").spec.nodeName, "n1");
  h.arrive("urgent", 1000);
  EXPECT_TRUE(h.preempted("a"));
  EXPECT_TRUE(h.preempted("b"));
  h.finish_deletions();
  h.run();
  EXPECT_EQ(h.pod("urgent").spec.nodeName, "n1");
}

// Fewest victims win: one lone pod rather than a gang of two.
TEST(PreemptionScheduler, PrefersFewerVictimsOverAGang) {
  Cluster h({{"n1", 1}, {"n2", 1}, {"n3", 1}});
  std::map<std::string, std::string> gang{{"draplane.io/gang", "train"}, {"draplane.io/gang-min-member", "2"}};
  h.add_pod("g0", 0, gang);
  h.add_pod("g1", 0, gang);
  h.add_pod("solo", 0);
  h.run();
  ASSERT_NE(h.pod("solo").spec.nodeName, "");
  h.arrive("urgent", 1000);
  EXPECT_TRUE(h.preempted("solo"));
  EXPECT_FALSE(h.preempted("g0"));
  EXPECT_FALSE(h.preempted("g1"));
  EXPECT_EQ(h.pod("urgent").status.nominatedNodeName, h.pod("solo").spec.nodeName);
}

// A gang is evicted whole: its member on the other node goes too.
TEST(PreemptionScheduler, GangIsPreemptedWhole) {
  Cluster h({{"n1", 1}, {"n2", 1}});
  std::map<std::string, std::string> gang{{"draplane.io/gang", "train"}, {"draplane.io/gang-min-member", "2"}};
  h.add_pod("g0", 0, gang);
  h.add_pod("g1", 0, gang);
  h.run();
  for (const char* m : {"g0", "g1"}) ASSERT_NE(h.pod(m).spec.nodeName, "") << m;
  h.arrive("urgent", 1000);
  for (const char* m : {"g0", "g1"}) EXPECT_TRUE(h.preempted(m)) << m << " spared";
  h.finish_deletions();
  h.run();
  EXPECT_NE(h.pod("urgent").spec.nodeName, "");
}

}  // namespace
}  // namespace draplane::sched
