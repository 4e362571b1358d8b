#include <gtest/gtest.h>

#include "harness.h"
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
            "Unschedulable: gang default/train: only 2 of 3 pods fit; pod default/w2: 0/2 nodes are available: "
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

}  // namespace
}  // namespace draplane::sched
