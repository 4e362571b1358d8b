// A gang as preemptor (issue 27; KEP-5710's aim: victims chosen so that the
// whole group fits): members are placed in turn with the earlier members'
// victims gone; all the victims are evicted, or none.
#include <gtest/gtest.h>

#include "api/workload.h"
#include "harness.h"

namespace draplane::sched::gang_preemption_test {
namespace {

using namespace ::draplane::sched::testing;  // NOLINT

struct GangCluster : Harness {
  explicit GangCluster(const std::vector<std::pair<std::string, int>>& nodes) { add_gpu_nodes(nodes); }
  // A pod of `priority` with its own claim for `gpus` GPUs (started in order).
  void single(const std::string& name, int32_t priority, int gpus = 1) {
    add(testing::claim(name, gpus));
    api::Pod p = testing::pod(name, {name});
    p.spec.priority = priority;
    // One start per minute, in the order the pods are added.
    const int m = started_++;
    p.status.startTime = "2026-01-01T" + std::string(m / 60 < 10 ? "0" : "") + std::to_string(m / 60) + ":" +
                         (m % 60 < 10 ? "0" : "") + std::to_string(m % 60) + ":00Z";
    add(p);
  }
  // PodGroup `group` (gang of `min`) and its members of `priority`, each
  // with its own claim for `gpus` GPUs.
  void gang(const std::string& group, int min, const std::vector<std::string>& members, int32_t priority,
            int gpus = 1) {
    add(testing::pod_group(group, min));
    for (const auto& m : members) {
      add(testing::claim(m, gpus));
      api::Pod p = testing::group_member(group, m);
      p.spec.priority = priority;
      add(p);
    }
  }
  std::set<std::string> deleted_set() const { return {api.deleted.begin(), api.deleted.end()}; }
  int started_ = 0;
};

TEST(GangPreemption, AGangEvictsWhatItNeedsAndRunsWhenTheVictimsAreGone) {
  GangCluster h({{"n1", 4}});
  for (const char* n : {"b0", "b1", "b2", "b3"}) h.single(n, 0);
  h.run();
  ASSERT_EQ(h.sched.cache().free_devices("n1"), 0);
  h.gang("train", 2, {"w0", "w1"}, 1000);
  h.run();
  // Two GPUs needed: the two most recently started batch pods go, no more.
  EXPECT_EQ(h.deleted_set(), (std::set<std::string>{"default/b2", "default/b3"}));
  for (const char* m : {"w0", "w1"}) {
    EXPECT_EQ(h.pod(m).spec.nodeName, "") << m;
    EXPECT_EQ(h.pod(m).status.nominatedNodeName, "n1") << m;
  }
  EXPECT_NE(h.condition_message("w0").find("preempting 2 lower-priority pod(s) for the gang"), std::string::npos)
      << h.condition_message("w0");
  // Still going: the gang waits, choosing no more victims.
  h.clock.advance(std::chrono::seconds(2));
  h.sched.handle(Event{Event::Op::kUpsert, h.api.claims.at("default/b0")});
  h.run();
  EXPECT_EQ(h.api.deleted.size(), 2u);
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  for (const char* m : {"w0", "w1"}) EXPECT_EQ(h.pod(m).spec.nodeName, "n1") << m;
  EXPECT_FALSE(h.pod("b0").spec.nodeName.empty());
  EXPECT_FALSE(h.pod("b1").spec.nodeName.empty());
}

TEST(GangPreemption, MembersPreemptOnDifferentNodes) {
  GangCluster h({{"n1", 2}, {"n2", 2}});
  h.single("b0", 0, 2);
  h.single("b1", 0, 2);
  h.run();
  ASSERT_FALSE(h.pod("b0").spec.nodeName.empty());
  ASSERT_FALSE(h.pod("b1").spec.nodeName.empty());
  // Two members of two GPUs each: one node is not enough, both batch pods go.
  h.gang("train", 2, {"w0", "w1"}, 1000, 2);
  h.run();
  EXPECT_EQ(h.deleted_set(), (std::set<std::string>{"default/b0", "default/b1"}));
  std::set<std::string> nominated{h.pod("w0").status.nominatedNodeName, h.pod("w1").status.nominatedNodeName};
  EXPECT_EQ(nominated, (std::set<std::string>{"n1", "n2"}));
  h.finish_deletions();
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  std::set<std::string> nodes{h.pod("w0").spec.nodeName, h.pod("w1").spec.nodeName};
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));
}

TEST(GangPreemption, NothingIsEvictedWhenTheGangCannotFitAnyway) {
  GangCluster h({{"n1", 4}});
  for (const char* n : {"b0", "b1"}) h.single(n, 0, 2);
  h.run();
  // Three members of two GPUs on one node of four: never, whatever goes.
  h.gang("train", 3, {"w0", "w1", "w2"}, 1000, 2);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty());
  for (const char* m : {"w0", "w1", "w2"}) EXPECT_EQ(h.pod(m).status.nominatedNodeName, "") << m;
  EXPECT_TRUE(h.pod("b0").metadata.deletionTimestamp.empty());
  EXPECT_EQ(h.pod("b0").spec.nodeName, "n1");
  // The cache is as before: the batch pods' devices are still in use.
  EXPECT_EQ(h.sched.cache().free_devices("n1"), 0);
}

TEST(GangPreemption, AGangOfEqualPriorityOrPolicyNeverEvictsNothing) {
  GangCluster h({{"n1", 2}});
  for (const char* n : {"b0", "b1"}) h.single(n, 500);
  h.run();
  h.gang("peers", 2, {"p0", "p1"}, 500);
  h.run();
  EXPECT_TRUE(h.api.deleted.empty());
  h.gang("polite", 2, {"q0", "q1"}, 1000);
  for (const char* m : {"q0", "q1"}) {
    api::Pod p = h.pod(m);
    p.spec.preemptionPolicy = "Never";
    h.add(p);
  }
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_NE(h.condition_message("q0").find("PodGroup default/polite"), std::string::npos)
      << "tried: " << h.condition_message("q0");
  EXPECT_TRUE(h.api.deleted.empty());
}

TEST(GangPreemption, AVictimGangGoesWhole) {
  GangCluster h({{"n1", 2}, {"n2", 2}});
  // A low-priority gang of two members of two GPUs: one on each node.
  h.gang("low", 2, {"l0", "l1"}, 0, 2);
  h.run();
  std::set<std::string> low_nodes{h.pod("l0").spec.nodeName, h.pod("l1").spec.nodeName};
  ASSERT_EQ(low_nodes, (std::set<std::string>{"n1", "n2"})) << h.condition_message("l0");
  // One member of two GPUs needs one node cleared; the victim's gang member
  // on the other node goes with it.
  h.gang("high", 1, {"h0"}, 1000, 2);
  h.run();
  EXPECT_EQ(h.deleted_set(), (std::set<std::string>{"default/l0", "default/l1"}));
}

}  // namespace
}  // namespace draplane::sched::gang_preemption_test
