#include "controllers/replica_set_controller.h"

#include <gtest/gtest.h>

#include "api/codec.h"
#include "common/rfc3339.h"
#include "controllers/replica_set_logic.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace {

using testing::FakeApi;

std::string rs_json(const std::string& name, int replicas, int min_ready = 0) {
  return R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" + name +
         R"(","namespace":"default","generation":2},"spec":{"replicas":)" + std::to_string(replicas) +
         R"(,"minReadySeconds":)" + std::to_string(min_ready) +
         R"(,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"front"},
          "annotations":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}],
          "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}]}}}})";
}

std::string pod_json(const std::string& name, const std::map<std::string, std::string>& labels,
                     const std::string& node = "", const std::string& phase = "Pending", bool ready = false,
                     const std::string& owner_uid = "") {
  std::string l;
  for (const auto& [k, v] : labels) l += (l.empty() ? "" : ",") + ("\"" + k + "\":\"" + v + "\"");
  std::string refs = owner_uid.empty() ? "[]"
                                       : R"([{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":")" +
                                             owner_uid + R"(","controller":true}])";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":"default","labels":{)" +
         l + R"(},"ownerReferences":)" + refs + R"(},"spec":{"nodeName":")" + node +
         R"(","containers":[{"name":"c","image":"nginx"}]},"status":{"phase":")" + phase +
         R"(","conditions":[{"type":"Ready","status":")" + (ready ? "True" : "False") +
         R"(","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
}

std::vector<api::Pod> pods_of(FakeApi& api) {
  std::vector<api::Pod> out;
  for (const auto& j : api.objects("pods")) out.push_back(*api::decode_as<api::Pod>(j));
  return out;
}

api::ReplicaSet get_rs(FakeApi& api, const std::string& name) {
  return *api::decode_as<api::ReplicaSet>(api.object("replicasets", "default", name).value_or("{}"));
}

TEST(ReplicaSetLogic, SelectorMatchesLabelsAndExpressions) {
  api::LabelSelector s;
  s.matchLabels = {{"app", "web"}};
  s.matchExpressions = {{"tier", "In", {"front", "back"}}, {"canary", "DoesNotExist", {}}};
  EXPECT_TRUE(selector_matches(s, {{"app", "web"}, {"tier", "front"}}));
  EXPECT_FALSE(selector_matches(s, {{"app", "web"}, {"tier", "db"}}));
  EXPECT_FALSE(selector_matches(s, {{"app", "web"}, {"tier", "front"}, {"canary", "1"}}));
  EXPECT_FALSE(selector_matches(s, {{"tier", "front"}}));
  EXPECT_TRUE(selector_matches(api::LabelSelector{}, {}));  // empty selects everything
  EXPECT_FALSE(selector_matches(std::nullopt, {{"app", "web"}}));  // null selects nothing
}

TEST(ReplicaSetLogic, PodFromTemplateIsControlledByTheReplicaSet) {
  auto rs = *api::decode_as<api::ReplicaSet>(rs_json("web", 1));
  rs.metadata.uid = "rs-uid";
  api::Pod p = pod_from_template(rs);
  EXPECT_EQ(p.metadata.generateName, "web-");
  EXPECT_EQ(p.metadata.labels.at("tier"), "front");
  EXPECT_EQ(p.metadata.annotations.at("a"), "b");
  ASSERT_EQ(p.metadata.ownerReferences.size(), 1u);
  const auto& r = p.metadata.ownerReferences[0];
  EXPECT_EQ(r.apiVersion, "apps/v1");
  EXPECT_EQ(r.kind, "ReplicaSet");
  EXPECT_EQ(r.uid, "rs-uid");
  EXPECT_TRUE(r.controller.value_or(false));
  EXPECT_TRUE(r.blockOwnerDeletion.value_or(false));
  ASSERT_EQ(p.spec.resourceClaims.size(), 1u);  // each pod gets its own claim from the template
}

TEST(ReplicaSetLogic, DeletionOrderAsUpstream) {
  auto pod = [](const std::string& name, const std::string& node, const std::string& phase, bool ready,
                const std::string& created) {
    auto p = *api::decode_as<api::Pod>(pod_json(name, {{"app", "web"}}, node, phase, ready));
    p.metadata.creationTimestamp = created;
    return p;
  };
  std::vector<api::Pod> pods = {
      pod("running-ready-old", "n1", "Running", true, "2026-01-01T00:00:00Z"),
      pod("running-ready-new", "n2", "Running", true, "2026-01-01T00:01:00Z"),
      pod("running-notready", "n1", "Running", false, "2026-01-01T00:00:00Z"),
      pod("pending", "n1", "Pending", false, "2026-01-01T00:00:00Z"),
      pod("unscheduled", "", "Pending", false, "2026-01-01T00:00:00Z"),
  };
  auto names = [&](int n) {
    std::vector<std::string> out;
    for (const auto& p : pods_to_delete(pods, pods, n)) out.push_back(p.metadata.name);
    return out;
  };
  EXPECT_EQ(names(1), std::vector<std::string>({"unscheduled"}));
  EXPECT_EQ(names(3), std::vector<std::string>({"unscheduled", "pending", "running-notready"}));
  // Both ready and Running: the one doubled up on n1 (3 related pods there) goes first.
  EXPECT_EQ(names(4).back(), "running-ready-old");
}

TEST(ReplicaSetLogic, StatusCountsReadyAvailableAndFullyLabeled) {
  auto rs = *api::decode_as<api::ReplicaSet>(rs_json("web", 3, /*min_ready=*/60));
  std::vector<api::Pod> pods = {
      *api::decode_as<api::Pod>(pod_json("a", {{"app", "web"}, {"tier", "front"}}, "n1", "Running", true)),
      *api::decode_as<api::Pod>(pod_json("b", {{"app", "web"}}, "n1", "Running", true)),
      *api::decode_as<api::Pod>(pod_json("c", {{"app", "web"}, {"tier", "front"}}, "n1", "Running", false)),
  };
  const int64_t ready_at = *common::parse_rfc3339("2026-01-01T00:00:00Z");
  auto st = replica_set_status(rs, pods, ready_at + 30);
  EXPECT_EQ(st.replicas, 3);
  EXPECT_EQ(st.fullyLabeledReplicas, 2);
  EXPECT_EQ(st.readyReplicas, 2);
  EXPECT_EQ(st.availableReplicas, 0);  // ready for 30 s of the 60 minReadySeconds
  EXPECT_EQ(st.observedGeneration, 2);
  EXPECT_EQ(replica_set_status(rs, pods, ready_at + 60).availableReplicas, 2);
  EXPECT_EQ(seconds_until_available(pods[0], 60, ready_at + 30), 30);
}

TEST(ReplicaSetController, CreatesPodsToReplicasAndWritesStatus) {
  FakeApi api;
  api.put_object("replicasets", rs_json("web", 3));
  ReplicaSetController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return get_rs(api, "web").status.replicas == 3; }));
  c.stop();
  auto pods = pods_of(api);
  ASSERT_EQ(pods.size(), 3u);  // exactly, however many syncs ran
  auto rs = get_rs(api, "web");
  for (const auto& p : pods) {
    EXPECT_EQ(p.metadata.generateName, "web-");
    auto ref = controller_of(p.metadata);
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->uid, rs.metadata.uid);
  }
  EXPECT_EQ(rs.status.observedGeneration, 2);
  EXPECT_EQ(rs.status.fullyLabeledReplicas, 3);
  EXPECT_EQ(rs.status.readyReplicas, 0);
}

TEST(ReplicaSetController, ScalesDownUnscheduledAndNotReadyPodsFirst) {
  FakeApi api;
  std::string rs = api.put_object("replicasets", rs_json("web", 1));
  std::string uid = FakeApi::field(rs, {"metadata", "uid"});
  api.put_object("pods", pod_json("ready", {{"app", "web"}}, "n1", "Running", true, uid));
  api.put_object("pods", pod_json("notready", {{"app", "web"}}, "n1", "Running", false, uid));
  api.put_object("pods", pod_json("unscheduled", {{"app", "web"}}, "", "Pending", false, uid));
  ReplicaSetController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return api.objects("pods").size() == 1 && get_rs(api, "web").status.replicas == 1; }));
  c.stop();
  EXPECT_TRUE(api.object("pods", "default", "ready").has_value());
  EXPECT_EQ(get_rs(api, "web").status.readyReplicas, 1);
  EXPECT_EQ(get_rs(api, "web").status.availableReplicas, 1);
}

TEST(ReplicaSetController, AdoptsMatchingOrphansAndReleasesNonMatchingPods) {
  FakeApi api;
  std::string rs = api.put_object("replicasets", rs_json("web", 2));
  std::string uid = FakeApi::field(rs, {"metadata", "uid"});
  api.put_object("pods", pod_json("orphan", {{"app", "web"}}, "n1", "Running"));
  api.put_object("pods", pod_json("relabelled", {{"app", "other"}}, "n1", "Running", false, uid));
  api.put_object("pods", pod_json("stranger", {{"app", "other"}}, "n1", "Running"));
  ReplicaSetController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return get_rs(api, "web").status.replicas == 2 && pods_of(api).size() == 4; }));
  c.stop();
  for (const auto& p : pods_of(api)) {
    auto ref = controller_of(p.metadata);
    if (p.metadata.name == "orphan") {
      ASSERT_TRUE(ref) << "adopted";
      EXPECT_EQ(ref->uid, uid);
      EXPECT_TRUE(ref->blockOwnerDeletion.value_or(false));
    } else if (p.metadata.name == "relabelled" || p.metadata.name == "stranger") {
      EXPECT_TRUE(p.metadata.ownerReferences.empty()) << p.metadata.name;  // released / left alone
    } else {
      ASSERT_TRUE(ref);
      EXPECT_EQ(ref->uid, uid);  // the one created to reach 2
    }
  }
}

TEST(ReplicaSetController, FailedCreateIsReportedAsReplicaFailureAndRetried) {
  FakeApi api;
  api.fail_next("POST /api/v1/namespaces/default/pods", 500);
  api.put_object("replicasets", rs_json("web", 1));
  ReplicaSetController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return get_rs(api, "web").status.replicas == 1; }));
  c.stop();
  EXPECT_EQ(pods_of(api).size(), 1u);
  bool failed_status = false;
  for (const auto& r : api.requests()) failed_status |= r.find("/replicasets/web/status") != std::string::npos;
  EXPECT_TRUE(failed_status);
  EXPECT_TRUE(get_rs(api, "web").status.conditions.empty());  // removed once the pod was created
}

}  // namespace
}  // namespace draplane::controllers
