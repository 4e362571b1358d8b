#include "sched/preemption.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "../alloc/builders.h"
#include "alloc/allocator.h"

namespace draplane::sched::preemption {
namespace {

PodInfo pod(const std::string& key, const std::string& node, int32_t priority, int64_t start = 0,
            const std::string& gang = "") {
  PodInfo p;
  p.key = key;
  p.node = node;
  p.priority = priority;
  p.start_time = start;
  p.gang = gang;
  return p;
}

Preemptor preemptor(int32_t priority, const std::string& policy = "") {
  return Preemptor{"default/urgent", priority, policy, "", nullptr, nullptr, nullptr};
}

// A node with `slots` pod slots per node; the preemptor takes one.
FitFn slot_fit(const std::vector<PodInfo>& pods, std::map<std::string, int> slots, std::vector<std::string>* log = nullptr) {
  return [&pods, slots, log](const std::string& node, const std::vector<const PodInfo*>& removed) -> Result<bool> {
    int used = 0;
    for (const PodInfo& p : pods)
      if (p.node == node) ++used;
    for (const PodInfo* p : removed) {
      EXPECT_EQ(p->node, node) << "the callback gets only the node's pods";
      --used;
    }
    if (log) log->push_back(node + ":" + std::to_string(removed.size()));
    return used + 1 <= slots.at(node);
  };
}

std::vector<std::string> keys(const Victims& v) {
  std::vector<std::string> out;
  for (const PodInfo& p : v.pods) out.push_back(p.key);
  return out;
}

TEST(Preemption, EvictsTheLowerPriorityPod) {
  std::vector<PodInfo> pods = {pod("default/batch", "n1", 0)};
  auto got = post_filter(preemptor(1000), {{"n1"}}, pods, slot_fit(pods, {{"n1", 1}}));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->outcome, Outcome::kNominated);
  EXPECT_EQ(got->victims.node, "n1");
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"default/batch"});
}

// Three slots, three pods: one must go. Reprieve most important first: a
// (10) and b (5) come back and still fit, c (1) does not.
TEST(Preemption, ReprievesMostImportantFirst) {
  std::vector<PodInfo> pods = {pod("ns/c", "n1", 1), pod("ns/a", "n1", 10), pod("ns/b", "n1", 5)};
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 3}}));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->outcome, Outcome::kNominated);
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"ns/c"});
}

// Equal priority: start time decides the reprieve order, the older pod is
// more important and stays.
TEST(Preemption, EqualPriorityVictimIsTheYoungerPod) {
  std::vector<PodInfo> pods = {pod("ns/young", "n1", 1, 200), pod("ns/old", "n1", 1, 100)};
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 2}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"ns/young"});
}

TEST(Preemption, EqualOrHigherPriorityIsNeverAVictim) {
  std::vector<PodInfo> pods = {pod("ns/same", "n1", 100), pod("ns/higher", "n2", 200)};
  auto got = post_filter(preemptor(100), {{"n1"}, {"n2"}, {"n3", false}}, pods,
                         slot_fit(pods, {{"n1", 1}, {"n2", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNoCandidate);
  EXPECT_EQ(got->message,
            "preemption: 0/3 nodes are available: 2 No preemption victims found for incoming pod, "
            "1 Preemption is not helpful for scheduling.");
}

TEST(Preemption, NeverPolicyNeverPreempts) {
  std::vector<PodInfo> pods = {pod("default/batch", "n1", 0)};
  int calls = 0;
  FitFn fit = [&](const std::string&, const std::vector<const PodInfo*>&) -> Result<bool> {
    ++calls;
    return true;
  };
  auto got = post_filter(preemptor(1000, "Never"), {{"n1"}}, pods, fit);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNotEligible);
  EXPECT_EQ(got->message, "not eligible due to preemptionPolicy=Never.");
  EXPECT_EQ(calls, 0);
}

TEST(Preemption, WaitsForTerminatingVictimsOnItsNominatedNode) {
  std::vector<PodInfo> pods = {pod("default/batch", "n1", 0)};
  pods[0].terminating = true;
  Preemptor p = preemptor(1000);
  p.nominated_node = "n1";
  auto got = post_filter(p, {{"n1"}}, pods, slot_fit(pods, {{"n1", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNotEligible);
  EXPECT_EQ(got->message, "not eligible due to a terminating pod on the nominated node.");
  p.nominated_node = "n2";  // elsewhere: preempts as usual
  got = post_filter(p, {{"n1"}}, pods, slot_fit(pods, {{"n1", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNominated);
}

// Node choice, one criterion at a time (each case ties the ones before).
TEST(Preemption, PicksNodeByUpstreamOrdering) {
  struct Case {
    std::string name;
    std::vector<PodInfo> pods;  // each node has one slot per pod: every pod must go... or not
    std::map<std::string, int> slots;
    std::string want;
  } cases[] = {
      {"lowest highest-victim priority", {pod("ns/a", "n1", 5), pod("ns/b", "n2", 3)}, {{"n1", 1}, {"n2", 1}}, "n2"},
      {"smallest priority sum",
       {pod("ns/a1", "n1", 3), pod("ns/a2", "n1", 3), pod("ns/b1", "n2", 3), pod("ns/b2", "n2", 1)},
       {{"n1", 1}, {"n2", 1}},
       "n2"},
      {"fewest victims",
       // With the 2^31 offset, 0 + 2 * -2^30 sums to 0 + 0: three victims against two.
       {pod("ns/a1", "n1", 0), pod("ns/a2", "n1", -(1 << 30)), pod("ns/a3", "n1", -(1 << 30)),
        pod("ns/b1", "n2", 0), pod("ns/b2", "n2", 0)},
       {{"n1", 1}, {"n2", 1}},
       "n2"},
      {"latest start of highest-priority victims",
       {pod("ns/a", "n1", 3, 100), pod("ns/b", "n2", 3, 500)},
       {{"n1", 1}, {"n2", 1}},
       "n2"},
      {"caller's order last", {pod("ns/a", "n1", 3, 100), pod("ns/b", "n2", 3, 100)}, {{"n1", 1}, {"n2", 1}}, "n1"},
      {"a node needing no victims at once", {pod("ns/a", "n1", 3)}, {{"n1", 1}, {"n2", 1}}, "n2"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = post_filter(preemptor(100), {{"n1"}, {"n2"}}, c.pods, slot_fit(c.pods, c.slots));
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->outcome, Outcome::kNominated);
    EXPECT_EQ(got->victims.node, c.want);
  }
}

// The smallest sum counts negative priorities with upstream's 2^31 offset:
// two victims of -10 cost more than one of 0.
TEST(Preemption, PrioritySumCountsNegativePriorities) {
  std::vector<PodInfo> pods = {pod("ns/a1", "n1", -10), pod("ns/a2", "n1", -10), pod("ns/b", "n2", -10)};
  auto got = post_filter(preemptor(100), {{"n1"}, {"n2"}}, pods, slot_fit(pods, {{"n1", 1}, {"n2", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->victims.node, "n2");
  EXPECT_EQ(got->victims.priority_sum, int64_t{-10} + (int64_t{1} << 31));
}

// A gang goes whole: its member on n2 is a victim too, and the gang's cost
// (two victims) loses against a single pod of the same priority elsewhere.
TEST(Preemption, GangsAreEvictedWhole) {
  std::vector<PodInfo> pods = {pod("ns/g-0", "n1", 1, 0, "ns/g"), pod("ns/g-1", "n2", 1, 0, "ns/g")};
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 1}, {"n2", 1}}));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->outcome, Outcome::kNominated);
  EXPECT_EQ(keys(got->victims), (std::vector<std::string>{"ns/g-0", "ns/g-1"}));

  pods.push_back(pod("ns/single", "n3", 1));
  got = post_filter(preemptor(100), {{"n1"}, {"n3"}}, pods, slot_fit(pods, {{"n1", 1}, {"n2", 1}, {"n3", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->victims.node, "n3");
}

// Reprieve keeps a gang whole too: with room for the gang's two members on
// n1 back, both stay; the single pod goes.
TEST(Preemption, GangsAreReprievedWhole) {
  std::vector<PodInfo> pods = {pod("ns/g-0", "n1", 5, 0, "ns/g"), pod("ns/g-1", "n1", 5, 0, "ns/g"),
                               pod("ns/s", "n1", 1)};
  std::vector<std::string> log;
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 3}}, &log));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"ns/s"});
  // All three removed, then the gang back (one removed), then the single (none removed: no fit).
  EXPECT_EQ(log, (std::vector<std::string>{"n1:3", "n1:1", "n1:0"}));
}

// A gang with one member the preemptor may not preempt is no victim at all.
TEST(Preemption, GangWithAHigherPriorityMemberIsProtected) {
  std::vector<PodInfo> pods = {pod("ns/g-0", "n1", 1, 0, "ns/g"), pod("ns/g-1", "n2", 100, 0, "ns/g")};
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 1}, {"n2", 1}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNoCandidate);
}

TEST(Preemption, FitErrorsStopTheSearch) {
  std::vector<PodInfo> pods = {pod("ns/a", "n1", 1)};
  FitFn fit = [](const std::string&, const std::vector<const PodInfo*>&) -> Result<bool> {
    return Status(Code::kInvalid, "could not retrieve device class");
  };
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, fit);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().message(), "could not retrieve device class");
}

// The callback runs the real allocator: node-1 is full (its one GPU held by
// a low-priority pod's claim); the high-priority pod's claim fits once that
// claim is released, so the low-priority pod is the victim. A pod of equal
// priority holding the GPU on node-2 is left alone.
TEST(Preemption, FreesADeviceWithTheRealAllocator) {
  // Builders by name: a using-directive would lose to sched::testing's
  // claim() when a unity unit holds a test file that uses that namespace.
  using alloc::testing::allocated, alloc::testing::claim, alloc::testing::device, alloc::testing::device_class,
      alloc::testing::request, alloc::testing::slice;
  auto snapshot = alloc::Snapshot::build(
      {slice("s1", "node-1", "pool-1", {device("gpu-0")}), slice("s2", "node-2", "pool-2", {device("gpu-0")})},
      {device_class("class-a")});
  ASSERT_TRUE(snapshot);
  std::map<std::string, api::ResourceClaim> claim_of = {
      {"default/batch", allocated("batch-gpu", {"gpu-0"}, "pool-1")},
      {"default/serving", allocated("serving-gpu", {"gpu-0"}, "pool-2")},
  };
  std::vector<PodInfo> pods = {pod("default/batch", "node-1", 0), pod("default/serving", "node-2", 1000)};
  api::ResourceClaim wanted = claim("urgent-gpu", {request("gpu", "class-a")});
  std::map<std::string, api::Node> nodes = {{"node-1", node("node-1")}, {"node-2", node("node-2")}};

  FitFn fit = [&](const std::string& node_name, const std::vector<const PodInfo*>& removed) -> Result<bool> {
    std::set<std::string> gone;
    for (const PodInfo* p : removed) gone.insert(p->key);
    std::vector<api::ResourceClaim> held;
    for (const auto& [key, c] : claim_of)
      if (!gone.contains(key)) held.push_back(c);
    alloc::AllocatedState state(*snapshot, held);
    auto got = alloc::allocate(*snapshot, state, {&wanted}, nodes.at(node_name));
    if (!got) return got.error();
    return got->fits;
  };
  // Without preemption it fits nowhere.
  ASSERT_FALSE(*fit("node-1", {}));
  ASSERT_FALSE(*fit("node-2", {}));

  auto got = post_filter(preemptor(1000), {{"node-1"}, {"node-2"}}, pods, fit);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  ASSERT_EQ(got->outcome, Outcome::kNominated);
  EXPECT_EQ(got->victims.node, "node-1");
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"default/batch"});
}

// A pod already being deleted (an earlier victim) is counted out first: the
// younger running pod is spared although the older one would be kept upstream.
TEST(Preemption, TerminatingPodsAreReprievedLast) {
  std::vector<PodInfo> pods = {pod("ns/old", "n1", 1, 100), pod("ns/new", "n1", 1, 200)};
  pods[0].terminating = true;
  auto got = post_filter(preemptor(100), {{"n1"}}, pods, slot_fit(pods, {{"n1", 2}}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"ns/old"});
}

// Upstream examines nodes until it has max(10%, 100) candidates: of 300
// nodes where preemption would work, the first 100 are looked at.
TEST(Preemption, StopsAfterEnoughCandidates) {
  std::vector<PodInfo> pods;
  std::vector<NodeCandidate> nodes;
  std::map<std::string, int> slots;
  for (int i = 0; i < 300; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "n%03d", i);
    pods.push_back(pod(std::string("ns/p") + name, name, 0));
    nodes.push_back({name});
    slots[name] = 1;
  }
  std::vector<std::string> log;
  auto got = post_filter(preemptor(100), nodes, pods, slot_fit(pods, slots, &log));
  ASSERT_TRUE(got.has_value());
  std::set<std::string> examined;
  for (const auto& l : log) examined.insert(l.substr(0, l.find(':')));
  EXPECT_EQ(examined.size(), 100u);
  EXPECT_EQ(got->victims.node, "n000");
}

// Nodes given one key by Preemptor::node_key are examined once: the second
// node's checks are read off the first's, and its victims are its own pods.
// A node without a key (nullopt) is examined on its own.
TEST(Preemption, AlikeNodesAreExaminedOnce) {
  std::vector<PodInfo> pods = {pod("ns/a-old", "a", 0, 100), pod("ns/a-new", "a", 0, 200),
                               pod("ns/b-old", "b", 1, 100), pod("ns/b-new", "b", 1, 200),
                               pod("ns/c-old", "c", 2, 100), pod("ns/c-new", "c", 2, 200)};
  std::vector<std::string> log;
  Preemptor p = preemptor(1000);
  p.node_key = [](const std::string& node, const std::vector<std::vector<const PodInfo*>>& units) {
    EXPECT_EQ(units.size(), 2u);
    return node == "c" ? std::nullopt : std::optional<std::string>("two of one kind");
  };
  auto got = post_filter(p, {{"c"}, {"b"}, {"a"}}, pods, slot_fit(pods, {{"a", 2}, {"b", 2}, {"c", 2}}, &log));
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->outcome, Outcome::kNominated);
  // c and b examined (all out, then each reprieved), a read off b.
  EXPECT_EQ(log, (std::vector<std::string>{"c:2", "c:1", "c:0", "b:2", "b:1", "b:0"}));
  EXPECT_EQ(got->victims.node, "a");
  EXPECT_EQ(keys(got->victims), std::vector<std::string>{"ns/a-new"});
}

// A node whose alike node was no candidate is none either, without checks.
TEST(Preemption, AlikeNodesShareBeingNoCandidate) {
  std::vector<PodInfo> pods = {pod("ns/a", "a", 0), pod("ns/b", "b", 0)};
  std::vector<std::string> log;
  Preemptor p = preemptor(1000);
  p.node_key = [](const std::string&, const std::vector<std::vector<const PodInfo*>>&) {
    return std::optional<std::string>("full");
  };
  auto got = post_filter(p, {{"a"}, {"b"}}, pods, slot_fit(pods, {{"a", 0}, {"b", 0}}, &log));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->outcome, Outcome::kNoCandidate);
  EXPECT_EQ(log, std::vector<std::string>{"a:1"});
  EXPECT_EQ(got->message, "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.");
}

}  // namespace
}  // namespace draplane::sched::preemption
