#include <gtest/gtest.h>

#include "harness.h"
#include "sched/fit_error.h"
#include "sched/node_filter.h"
#include "sched/queue.h"

namespace draplane::sched {
namespace {

using std::chrono::milliseconds;

TEST(SchedulingQueue, PriorityThenFifo) {
  common::FakeClock clock;
  SchedulingQueue q;
  q.add("a", 0, clock.now(), false);
  q.add("b", 10, clock.now(), false);
  q.add("c", 0, clock.now(), false);
  q.add("d", 10, clock.now(), false);
  std::vector<std::string> order;
  while (auto k = q.pop(clock.now())) order.push_back(*k);
  EXPECT_EQ(order, (std::vector<std::string>{"b", "d", "a", "c"}));
}

TEST(SchedulingQueue, BackoffDoublesUpToMax) {
  common::FakeClock clock;
  SchedulingQueue q(SchedulingQueue::Options{milliseconds(1000), milliseconds(3000)});
  q.add("p", 0, clock.now(), false);
  struct Step {
    int wait_ms;  // time to the earliest pop after a failure
  } steps[] = {{1000}, {2000}, {3000}, {3000}};
  for (const auto& s : steps) {
    SCOPED_TRACE(s.wait_ms);
    ASSERT_EQ(q.pop(clock.now()), std::optional<std::string>("p"));
    q.backoff("p", clock.now());
    clock.advance(milliseconds(s.wait_ms - 1));
    EXPECT_EQ(q.pop(clock.now()), std::nullopt);
    clock.advance(milliseconds(1));
  }
  EXPECT_EQ(q.attempts("p"), 4);
}

TEST(SchedulingQueue, UnschedulableWaitsForMoveAll) {
  common::FakeClock clock;
  SchedulingQueue q;
  q.add("p", 0, clock.now(), false);
  ASSERT_TRUE(q.pop(clock.now()));
  q.unschedulable("p", clock.now());
  clock.advance(milliseconds(5000));
  EXPECT_EQ(q.pop(clock.now()), std::nullopt);  // parked: no change happened
  EXPECT_TRUE(q.is_unschedulable("p"));
  q.add("p", 0, clock.now(), false);  // status-only update: stays parked
  EXPECT_EQ(q.pop(clock.now()), std::nullopt);
  q.move_all(clock.now());  // backoff (1s) already over: active at once
  EXPECT_EQ(q.pop(clock.now()), std::optional<std::string>("p"));
  q.unschedulable("p", clock.now());
  q.move_all(clock.now());  // second attempt: 2s backoff from the failure
  ASSERT_TRUE(q.next_ready());
  EXPECT_EQ(*q.next_ready() - clock.now(), milliseconds(2000));
  // A pod that is ready goes first; with nothing active the backing-off pod is
  // taken early (SchedulerPopFromBackoffQ) instead of idling.
  q.add("fresh", 0, clock.now(), false);
  EXPECT_EQ(q.pop(clock.now()), std::optional<std::string>("fresh"));
  EXPECT_EQ(q.pop(clock.now()), std::optional<std::string>("p"));
  q.unschedulable("p", clock.now());
  q.remove("fresh");
  q.remove("p");
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.next_ready(), std::nullopt);
}

api::Toleration tol(std::string key, std::string op, std::string value, std::string effect) {
  return api::Toleration{std::move(key), std::move(op), std::move(value), std::move(effect), std::nullopt};
}

TEST(NodeFilter, Table) {
  api::Node base = testing::node("n1", {{"zone", "a"}});
  struct Case {
    std::string name;
    std::function<void(api::Pod&, api::Node&)> setup;
    int pods_on_node;
    std::optional<std::string> want;
  } cases[] = {
      {"plain", [](api::Pod&, api::Node&) {}, 0, std::nullopt},
      {"node selector match", [](api::Pod& p, api::Node&) { p.spec.nodeSelector["zone"] = "a"; }, 0, std::nullopt},
      {"node selector mismatch", [](api::Pod& p, api::Node&) { p.spec.nodeSelector["zone"] = "b"; }, 0,
       "node(s) didn't match Pod's node affinity/selector"},
      {"required affinity NotIn",
       [](api::Pod& p, api::Node&) {
         api::NodeSelector sel;
         sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{{"zone", "NotIn", {"a"}}}, {}});
         p.spec.affinity = api::Affinity{api::NodeAffinity{sel, {}}, {}};
       },
       0, "node(s) didn't match Pod's node affinity/selector"},
      {"required affinity second term matches",
       [](api::Pod& p, api::Node&) {
         api::NodeSelector sel;
         sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{{"zone", "In", {"b"}}}, {}});
         sel.nodeSelectorTerms.push_back(api::NodeSelectorTerm{{}, {{"metadata.name", "In", {"n1"}}}});
         p.spec.affinity = api::Affinity{api::NodeAffinity{sel, {}}, {}};
       },
       0, std::nullopt},
      {"untolerated NoSchedule taint",
       [](api::Pod&, api::Node& n) { n.spec.taints.push_back({"gpu", "broken", "NoSchedule", ""}); }, 0,
       "node(s) had untolerated taint {gpu: broken}"},
      {"PreferNoSchedule ignored",
       [](api::Pod&, api::Node& n) { n.spec.taints.push_back({"gpu", "x", "PreferNoSchedule", ""}); }, 0,
       std::nullopt},
      {"tolerated by Equal",
       [](api::Pod& p, api::Node& n) {
         n.spec.taints.push_back({"gpu", "broken", "NoExecute", ""});
         p.spec.tolerations.push_back(tol("gpu", "Equal", "broken", "NoExecute"));
       },
       0, std::nullopt},
      {"Equal with other value does not tolerate",
       [](api::Pod& p, api::Node& n) {
         n.spec.taints.push_back({"gpu", "broken", "NoExecute", ""});
         p.spec.tolerations.push_back(tol("gpu", "", "fine", ""));
       },
       0, "node(s) had untolerated taint {gpu: broken}"},
      {"empty key Exists tolerates all",
       [](api::Pod& p, api::Node& n) {
         n.spec.taints.push_back({"gpu", "broken", "NoExecute", ""});
         p.spec.tolerations.push_back(tol("", "Exists", "", ""));
       },
       0, std::nullopt},
      {"effect mismatch",
       [](api::Pod& p, api::Node& n) {
         n.spec.taints.push_back({"gpu", "", "NoExecute", ""});
         p.spec.tolerations.push_back(tol("gpu", "Exists", "", "NoSchedule"));
       },
       0, "node(s) had untolerated taint {gpu: }"},
      {"unschedulable node", [](api::Pod&, api::Node& n) { n.spec.unschedulable = true; }, 0,
       "node(s) were unschedulable"},
      {"unschedulable tolerated",
       [](api::Pod& p, api::Node& n) {
         n.spec.unschedulable = true;
         p.spec.tolerations.push_back(tol("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"));
       },
       0, std::nullopt},
      {"pod limit reached", [](api::Pod&, api::Node&) {}, 110, "Too many pods"},
      {"pod limit not reached", [](api::Pod&, api::Node&) {}, 109, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod p = testing::pod("p");
    api::Node n = base;
    c.setup(p, n);
    EXPECT_EQ(filter_node(p, n, c.pods_on_node), c.want);
  }
}

TEST(FitError, KubeSchedulerShape) {
  FitError e(5);
  e.add("node(s) didn't match Pod's node affinity/selector");
  e.add("cannot allocate all claims", "x: 1 free");
  e.add("cannot allocate all claims", "x: 0 free");
  e.add("cannot allocate all claims", "x: 0 free");
  e.add("Too many pods");
  EXPECT_EQ(e.message(),
            "0/5 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node affinity/selector, "
            "3 cannot allocate all claims. 2 node(s): x: 0 free. 1 node(s): x: 1 free.");
  EXPECT_EQ(e.message(1),
            "0/5 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node affinity/selector, "
            "3 cannot allocate all claims. 2 node(s): x: 0 free. (1 more explanations)");
  FitError pre(2);
  pre.set_pre_filter("resourceclaim \"c\" not found");
  EXPECT_EQ(pre.message(), "0/2 nodes are available: resourceclaim \"c\" not found.");
}

}  // namespace
}  // namespace draplane::sched
