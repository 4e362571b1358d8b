#include <gtest/gtest.h>

#include "harness.h"
#include "api/workload.h"
#include "sched/gang.h"

namespace draplane::sched {
namespace {

using namespace testing;  // NOLINT

api::Pod gang_pod(const std::string& name, const std::string& claim_name, const std::string& min) {
  api::Pod p = pod(name, {claim_name});
  p.metadata.annotations["draplane.io/gang"] = "train";
  if (!min.empty()) p.metadata.annotations["draplane.io/gang-min-member"] = min;
  return p;
}

TEST(Gang, Parse) {
  struct Case {
    std::map<std::string, std::string> annotations;
    std::optional<int> want;  // min_member, nullopt = no gang
  } cases[] = {
      {{}, std::nullopt},
      {{{"draplane.io/gang", ""}}, std::nullopt},
      {{{"draplane.io/gang", "g"}}, 1},
      {{{"draplane.io/gang", "g"}, {"draplane.io/gang-min-member", "4"}}, 4},
      {{{"draplane.io/gang", "g"}, {"draplane.io/gang-min-member", "0"}}, 1},
      {{{"draplane.io/gang", "g"}, {"draplane.io/gang-min-member", "3x"}}, 1},
  };
  for (const auto& c : cases) {
    api::Pod p;
    p.metadata.annotations = c.annotations;
    auto g = gang_of(p);
    EXPECT_EQ(g ? std::optional<int>(g->min_member) : std::nullopt, c.want);
  }
}

TEST(Gang, AllOrNothing) {
  Harness h;
  h.add(node("n1"));
  h.add(node("n2"));
  h.add(gpu_slice("n1", 2));
  h.add(gpu_slice("n2", 2));
  h.add(gpu_class());
  for (const char* n : {"w0", "w1", "w2"}) {
    h.add(claim(n, 2));
    h.add(gang_pod(n, n, "3"));
  }
  h.run();
  // Two of three would fit: nothing is written or bound.
  for (const char* n : {"w0", "w1", "w2"}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(h.pod(n).spec.nodeName, "");
    EXPECT_FALSE(h.claim(n).status.allocation);
    EXPECT_TRUE(h.sched.queue().is_unschedulable("default/" + std::string(n)));
  }
  EXPECT_EQ(h.api.status_writes, 0);
  EXPECT_EQ(h.condition_message("w1"),
            "Unschedulable: gang default/train: only 2 of 3 pods fit (needs 6 devices of class gpu.nvidia.com); pod "
            "default/w2: 0/2 nodes are available: "
            "2 cannot allocate all claims. 2 node(s): claim default/w2: request gpu: 2 devices needed; 2 match "
            "class gpu.nvidia.com, 2 are in use; only 0 usable.");
  // Devices were not kept: an ordinary pod can use them.
  EXPECT_EQ(h.sched.cache().free_devices("n1"), 2);
  // A third node: the whole gang goes.
  h.add(node("n3"));
  h.add(gpu_slice("n3", 2));
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  std::set<std::string> nodes;
  for (const char* n : {"w0", "w1", "w2"}) nodes.insert(h.pod(n).spec.nodeName);
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(h.api.status_writes, 3);
}

TEST(Gang, WaitsForMinMembers) {
  Harness h;
  h.add(node("n1"));
  h.add(gpu_slice("n1", 2));
  h.add(gpu_class());
  h.add(claim("a"));
  h.add(gang_pod("a", "a", "2"));
  h.run();
  EXPECT_EQ(h.condition_message("a"),
            "Unschedulable: gang default/train: 1 of 2 pods (draplane.io/gang-min-member) exist");
  h.add(claim("b"));
  h.add(gang_pod("b", "b", "2"));
  h.clock.advance(std::chrono::seconds(2));
  h.sched.handle(Event{Event::Op::kUpsert, h.api.claims.at("default/a")});  // any change wakes parked pods
  h.run();
  EXPECT_EQ(h.pod("a").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("b").spec.nodeName, "n1");
}


// A slice of `gpus` GPUs on `node_name` whose GPUs share NVLink clique `clique`.
api::ResourceSlice clique_slice(const std::string& node_name, int gpus, const std::string& clique) {
  api::ResourceSlice s = gpu_slice(node_name, gpus);
  for (auto& d : s.spec.devices) d.attributes["clique"].string_ = clique;
  return s;
}

// A claim for `count` GPUs of one NVLink clique (matchAttribute).
api::ResourceClaim clique_claim(const std::string& name, int64_t count) {
  api::ResourceClaim c = claim(name, count);
  api::DeviceConstraint k;
  k.matchAttribute = std::string(kDriver) + "/clique";
  c.spec.devices.constraints.push_back(k);
  return c;
}

api::Pod member(const std::string& gang, const std::string& name, int min) {
  api::Pod p = pod(name, {name});
  p.metadata.annotations["draplane.io/gang"] = gang;
  p.metadata.annotations["draplane.io/gang-min-member"] = std::to_string(min);
  return p;
}

// A cluster of one node "n1" with `gpus` GPUs.
void one_node(Harness& h, int gpus) {
  h.add(gpu_class());
  h.add(node("n1"));
  h.add(gpu_slice("n1", gpus));
}

// The pod `name` ends: its claim is deallocated and the pod deleted.
void finish(Harness& h, const std::string& name) {
  api::ResourceClaim c = h.claim(name);
  c.status = {};
  h.sched.handle(Event{Event::Op::kDelete, h.pod(name)});
  h.api.pods.erase("default/" + name);
  h.add(c);
}

// Two nodes of 4 GPUs with pod "other" holding one: 7 free.
void seven_free_gpus(Harness& h) {
  h.add(gpu_class());
  for (const char* n : {"n1", "n2"}) {
    h.add(node(n));
    h.add(gpu_slice(n, 4));
  }
  h.add(claim("other"));
  h.add(pod("other", {"other"}));
  h.run();
  ASSERT_FALSE(h.pod("other").spec.nodeName.empty());
}

// Members w0..w<n-1> are unbound, hold no device and wait for a cluster change.
void expect_all_waiting(Harness& h, int n) {
  for (int i = 0; i < n; ++i) {
    const std::string name = "w" + std::to_string(i);
    SCOPED_TRACE(name);
    EXPECT_EQ(h.pod(name).spec.nodeName, "");
    EXPECT_FALSE(h.claim(name).status.allocation);
    EXPECT_TRUE(h.sched.queue().is_unschedulable("default/" + name));
  }
}

TEST(Gang, EightPodsOnSevenFreeGpusHoldNothingThenRun) {
  Harness h;
  seven_free_gpus(h);
  const int writes = h.api.status_writes;
  for (int i = 0; i < 8; ++i) {
    const std::string n = "w" + std::to_string(i);
    h.add(claim(n));
    h.add(member("train", n, 8));
  }
  h.run();
  expect_all_waiting(h, 8);
  EXPECT_EQ(h.api.status_writes, writes) << "no member's claim was written";
  EXPECT_EQ(h.sched.cache().free_devices("n1") + h.sched.cache().free_devices("n2"), 7) << "nothing held";
  EXPECT_NE(h.condition_message("w0").find("gang default/train: only 7 of 8 pods fit"), std::string::npos)
      << h.condition_message("w0");
  // The eighth GPU frees: the whole gang runs.
  finish(h, "other");
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  std::map<std::string, int> per_node;
  for (int i = 0; i < 8; ++i) {
    const std::string n = "w" + std::to_string(i);
    EXPECT_FALSE(h.pod(n).spec.nodeName.empty()) << n;
    ++per_node[h.pod(n).spec.nodeName];
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"n1", 4}, {"n2", 4}}));
}

TEST(Gang, TwoGangsForOneNvlinkDomainOneRunsTheOtherWaits) {
  Harness h;
  h.add(gpu_class());
  h.add(node("n1"));
  h.add(clique_slice("n1", 8, "nvl-0"));
  // Two gangs of two pods, each pod 4 GPUs of one clique: one gang fills the
  // domain. Their pods arrive interleaved; placing pods one by one would give
  // each gang half the domain and neither could complete.
  for (const char* n : {"a0", "b0", "a1", "b1"}) {
    h.add(clique_claim(n, 4));
    h.add(member(std::string(1, n[0]), n, 2));
  }
  h.run();
  EXPECT_EQ(h.pod("a0").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("a1").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("b0").spec.nodeName, "");
  EXPECT_EQ(h.pod("b1").spec.nodeName, "");
  EXPECT_FALSE(h.claim("b0").status.allocation);
  EXPECT_FALSE(h.claim("b1").status.allocation);
  EXPECT_NE(h.condition_message("b0").find("gang default/b: only 0 of 2 pods fit"), std::string::npos)
      << h.condition_message("b0");
  // Gang a ends: gang b gets the domain.
  finish(h, "a0");
  finish(h, "a1");
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  EXPECT_EQ(h.pod("b0").spec.nodeName, "n1");
  EXPECT_EQ(h.pod("b1").spec.nodeName, "n1");
}

TEST(Gang, LateMemberJoinsAPlacedGang) {
  Harness h;
  one_node(h, 4);
  for (const char* n : {"w0", "w1"}) {
    h.add(claim(n));
    h.add(member("train", n, 2));
  }
  h.run();
  ASSERT_EQ(h.pod("w0").spec.nodeName, "n1");
  ASSERT_EQ(h.pod("w1").spec.nodeName, "n1");
  // A third member (a replacement, or one over minCount) arrives alone: the
  // gang already has its two, so it is placed by itself.
  h.add(claim("w2"));
  h.add(member("train", "w2", 2));
  h.run();
  EXPECT_EQ(h.pod("w2").spec.nodeName, "n1") << h.condition_message("w2");
}

TEST(Gang, PartlyPlacedGangIsCompletedNotDuplicated) {
  Harness h;
  one_node(h, 3);
  // Two of a gang of three already run (placed by an earlier scheduler run).
  for (const char* n : {"w0", "w1"}) {
    h.add(claim(n));
    api::Pod p = member("train", n, 3);
    p.spec.nodeName = "n1";
    p.status.phase = "Running";
    h.add(p);
  }
  h.add(claim("w2"));
  h.add(member("train", "w2", 3));
  h.run();
  // The third completes the gang; it does not wait for three new pods.
  EXPECT_EQ(h.pod("w2").spec.nodeName, "n1") << h.condition_message("w2");
}

// ---------------------------------------------------------------- the Workload API's PodGroups

// Pods of PodGroup `group`, each with its own one-GPU claim.
void add_members(Harness& h, const std::string& group, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    h.add(claim(n));
    h.add(group_member(group, n));
  }
}

// The PodGroup's PodGroupInitiallyScheduled condition: "status reason: message".
std::string group_condition(Harness& h, const std::string& name) {
  for (const auto& c : h.api.pod_groups.at("default/" + name).status.conditions) {
    if (c.type == api::kPodGroupInitiallyScheduled) return c.status + " " + c.reason + ": " + c.message;
  }
  return "";
}

TEST(Gang, PodGroupOfEightOnSevenFreeGpusHoldsNothingThenRuns) {
  Harness h;
  seven_free_gpus(h);
  const int writes = h.api.status_writes;
  h.add(pod_group("train", 8));
  for (int i = 0; i < 8; ++i) {
    const std::string n = "w" + std::to_string(i);
    h.add(claim(n));
    h.add(group_member("train", n));
  }
  h.run();
  expect_all_waiting(h, 8);
  EXPECT_EQ(h.api.status_writes, writes) << "no member's claim was written";
  EXPECT_EQ(h.sched.cache().free_devices("n1") + h.sched.cache().free_devices("n2"), 7) << "nothing held";
  const std::string cond = group_condition(h, "train");
  EXPECT_EQ(cond.rfind("False Unschedulable: PodGroup default/train: only 7 of 8 pods fit (needs 8 devices of class "
                       "gpu.nvidia.com); pod default/w",
                       0),
            0u)
      << cond;
  // The eighth GPU frees: the whole gang runs, and the condition says so for good.
  finish(h, "other");
  h.clock.advance(std::chrono::seconds(2));
  h.run();
  for (int i = 0; i < 8; ++i) EXPECT_FALSE(h.pod("w" + std::to_string(i)).spec.nodeName.empty()) << i;
  EXPECT_EQ(group_condition(h, "train"), "True Scheduled: 8 of 8 pods (minCount) placed");
  EXPECT_EQ(h.api.pod_groups.at("default/train").status.conditions.at(0).observedGeneration, 1);
}

TEST(Gang, PodGroupConditionStaysTrueOnceScheduled) {
  Harness h;
  one_node(h, 2);
  h.add(pod_group("train", 2));
  add_members(h, "train", {"w0", "w1"});
  h.run();
  ASSERT_EQ(group_condition(h, "train"), "True Scheduled: 2 of 2 pods (minCount) placed");
  const int writes = h.api.pod_group_status_writes;
  // A later member that does not fit leaves the terminal condition alone.
  add_members(h, "train", {"w2"});
  h.run();
  EXPECT_EQ(h.pod("w2").spec.nodeName, "");
  EXPECT_EQ(group_condition(h, "train"), "True Scheduled: 2 of 2 pods (minCount) placed");
  EXPECT_EQ(h.api.pod_group_status_writes, writes);
}

TEST(Gang, PodsWaitForTheirPodGroupThenFollowItsPolicy) {
  Harness h;
  one_node(h, 1);
  // The members come first (a controller may create the PodGroup after them).
  add_members(h, "train", {"w0", "w1"});
  h.run();
  EXPECT_EQ(h.pod("w0").spec.nodeName, "");
  EXPECT_NE(h.condition_message("w0").find("waiting for PodGroup default/train"), std::string::npos)
      << h.condition_message("w0");
  // A basic PodGroup: no gang, so one pod runs on the one GPU although two cannot.
  h.add(pod_group("train", 0));
  h.run();
  int bound = 0;
  for (const char* n : {"w0", "w1"}) bound += h.pod(n).spec.nodeName.empty() ? 0 : 1;
  EXPECT_EQ(bound, 1);
  EXPECT_EQ(group_condition(h, "train"), "") << "basic groups get no gang condition";
}

TEST(Gang, PodGroupGangWaitsForMinCountPods) {
  Harness h;
  one_node(h, 4);
  h.add(pod_group("train", 3));
  add_members(h, "train", {"w0", "w1"});
  h.run();
  EXPECT_EQ(h.pod("w0").spec.nodeName, "");
  EXPECT_EQ(group_condition(h, "train"),
            "False Unschedulable: PodGroup default/train: 2 of 3 pods (spec.schedulingPolicy.gang.minCount) exist");
  add_members(h, "train", {"w2"});
  h.run();
  for (const char* n : {"w0", "w1", "w2"}) EXPECT_EQ(h.pod(n).spec.nodeName, "n1") << n;
}

}  // namespace
}  // namespace draplane::sched
