// The demo's closing summary: pods the examples mark draplane.io/expect-pending
// wait as intended; any other pending pod is an ERROR.
#include <gtest/gtest.h>

#include "cluster/demo.h"

namespace draplane::cluster {
namespace {

api::Pod pod(const std::string& ns, const std::string& name, const std::string& expect_pending = "") {
  api::Pod p;
  p.metadata.namespace_ = ns;
  p.metadata.name = name;
  if (!expect_pending.empty()) p.metadata.annotations[kExpectPendingAnnotation] = expect_pending;
  return p;
}

TEST(DemoSummary, MarkedPodsWaitAsIntendedOthersAreAnError) {
  std::vector<api::Pod> pods = {pod("default", "training-job", "class asks for more than 40Gi"),
                                pod("ml-training", "inference-as-written", "memory read as an attribute"),
                                pod("ml-training", "runs"), pod("default", "stuck")};
  auto s = summarize_pending({"default/training-job", "ml-training/inference-as-written", "default/stuck"}, pods);
  ASSERT_EQ(s.expected.size(), 2u);
  EXPECT_EQ(s.expected[0], std::make_pair(std::string("default/training-job"), std::string("class asks for more than 40Gi")));
  EXPECT_EQ(s.expected[1].first, "ml-training/inference-as-written");
  EXPECT_EQ(s.unexpected, std::vector<std::string>{"default/stuck"});
  EXPECT_TRUE(s.started_anyway.empty());
  EXPECT_EQ(render_pending_summary(s, 60),
            "2 examples wait as intended (draplane.io/expect-pending); see the explanations above:\n"
            "  default/training-job: class asks for more than 40Gi\n"
            "  ml-training/inference-as-written: memory read as an attribute\n"
            "ERROR: 1 pod(s) still pending after 60 s that should have started: default/stuck\n");
}

TEST(DemoSummary, OnlyExpectedWaitsIsNoError) {
  std::vector<api::Pod> pods = {pod("default", "training-job", "why"), pod("default", "runs")};
  auto s = summarize_pending({"default/training-job"}, pods);
  EXPECT_TRUE(s.unexpected.empty());
  const std::string text = render_pending_summary(s, 60);
  EXPECT_EQ(text, "1 example waits as intended (draplane.io/expect-pending); see the explanations above:\n"
                  "  default/training-job: why\n");
  EXPECT_EQ(text.find("ERROR"), std::string::npos);
}

TEST(DemoSummary, AMarkedPodThatStartedIsNotedAndAPodGoneMeanwhileIsUnexpected) {
  std::vector<api::Pod> pods = {pod("default", "training-job", "why")};
  auto s = summarize_pending({"default/deleted-meanwhile"}, pods);
  EXPECT_EQ(s.started_anyway, std::vector<std::string>{"default/training-job"});
  EXPECT_EQ(s.unexpected, std::vector<std::string>{"default/deleted-meanwhile"});
  EXPECT_EQ(render_pending_summary(summarize_pending({}, {pod("default", "a")}), 60), "");
}

}  // namespace
}  // namespace draplane::cluster
