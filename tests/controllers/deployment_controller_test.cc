#include "controllers/deployment_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "api/codec.h"
#include "controllers/deployment_logic.h"
#include "controllers/replica_set_logic.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace {

using testing::FakeApi;

std::string deployment_json(const std::string& image, int replicas, const std::string& strategy,
                            const std::string& extra_spec = "", const std::string& annotations = "{}") {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default",
    "generation":1,"annotations":)" + annotations + R"(},
    "spec":{"replicas":)" + std::to_string(replicas) + R"(,"selector":{"matchLabels":{"app":"web"}},
    "strategy":)" + strategy + R"(,"revisionHistoryLimit":10,"progressDeadlineSeconds":600)" + extra_spec + R"(,
    "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":")" + image +
         R"("}]}}}})";
}

const char* kSurge1 = R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}})";
const char* kRecreate = R"({"type":"Recreate"})";

api::Deployment get_deployment(FakeApi& api) {
  return *api::decode_as<api::Deployment>(api.object("deployments", "default", "web").value_or("{}"));
}

std::vector<api::ReplicaSet> sets_of(FakeApi& api) {
  std::vector<api::ReplicaSet> out;
  for (const auto& j : api.objects("replicasets")) out.push_back(*api::decode_as<api::ReplicaSet>(j));
  return out;
}

std::optional<api::ReplicaSet> set_with_image(FakeApi& api, const std::string& image) {
  for (auto& rs : sets_of(api)) {
    if (rs.spec.template_.spec.containers[0].image == image) return rs;
  }
  return std::nullopt;
}

// The ReplicaSet controller and the kubelet in one step: every ReplicaSet's
// pods exist and are available.
void settle(FakeApi& api) {
  for (auto rs : sets_of(api)) {
    api::ReplicaSetStatus st;
    st.replicas = st.readyReplicas = st.availableReplicas = st.fullyLabeledReplicas = replicas_of(rs);
    st.observedGeneration = rs.metadata.generation;
    if (st == rs.status) continue;
    rs.status = st;
    rs.metadata.resourceVersion.clear();
    (void)api.request("PUT", "/apis/apps/v1/namespaces/default/replicasets/" + rs.metadata.name + "/status",
               api::to_json(api::Object(rs)), "");
  }
}

// A user's edit of the Deployment (a PUT without resourceVersion).
void edit_deployment(FakeApi& api, const std::function<void(api::Deployment&)>& edit) {
  auto d = get_deployment(api);
  edit(d);
  d.metadata.resourceVersion.clear();
  (void)api.request("PUT", "/apis/apps/v1/namespaces/default/deployments/web", api::to_json(api::Object(d)), "");
}

// Waits for the first ReplicaSet (image v1), makes its pods available and waits
// for the Deployment to count them.
bool first_rollout_done(FakeApi& api, int replicas) {
  if (!api.wait_for([&] { return set_with_image(api, "v1").has_value(); })) return false;
  settle(api);
  return api.wait_for([&] { return get_deployment(api).status.availableReplicas == replicas; });
}

TEST(DeploymentLogic, FencepostsRoundSurgeUpAndUnavailableDown) {
  auto d = *api::decode_as<api::Deployment>(deployment_json(
      "a", 10, R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}})"));
  EXPECT_EQ(resolve_fenceposts(d), std::make_pair(3, 2));
  EXPECT_EQ(max_surge(d), 3);
  EXPECT_EQ(max_unavailable(d), 2);
  auto zero = *api::decode_as<api::Deployment>(deployment_json(
      "a", 3, R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":"10%"}})"));
  EXPECT_EQ(resolve_fenceposts(zero), std::make_pair(0, 1));  // both 0: one may be unavailable
  auto recreate = *api::decode_as<api::Deployment>(deployment_json("a", 3, kRecreate));
  EXPECT_EQ(max_surge(recreate), 0);
  EXPECT_EQ(max_unavailable(recreate), 0);
  EXPECT_EQ(scaled_value(api::RawJson{"\"50%\""}, 5, true, 0), 3);
  EXPECT_EQ(scaled_value(api::RawJson{"\"50%\""}, 5, false, 0), 2);
  EXPECT_EQ(scaled_value(api::RawJson{"4"}, 5, false, 0), 4);
}

TEST(DeploymentLogic, TemplateHashIsStableSafeAndChangesWithCollisions) {
  auto d = *api::decode_as<api::Deployment>(deployment_json("a", 1, kRecreate));
  std::string h = pod_template_hash(d.spec.template_, std::nullopt);
  EXPECT_EQ(h, pod_template_hash(d.spec.template_, std::nullopt));
  EXPECT_NE(h, pod_template_hash(d.spec.template_, 1));
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
  auto other = *api::decode_as<api::Deployment>(deployment_json("b", 1, kRecreate));
  EXPECT_NE(h, pod_template_hash(other.spec.template_, std::nullopt));
  api::ReplicaSet rs = new_replica_set(d);
  EXPECT_EQ(rs.metadata.name, "web-" + h);
  EXPECT_EQ(rs.spec.selector->matchLabels.at(kPodTemplateHashLabel), h);
  EXPECT_EQ(rs.spec.template_.metadata.labels.at(kPodTemplateHashLabel), h);
  EXPECT_TRUE(equal_ignore_hash(rs.spec.template_, d.spec.template_));
}

TEST(DeploymentLogic, AnnotationsCopiedAndRevisionRaisedWithHistory) {
  auto d = *api::decode_as<api::Deployment>(deployment_json(
      "a", 2, kSurge1, "",
      R"({"kubernetes.io/change-cause":"kubectl set image","kubectl.kubernetes.io/last-applied-configuration":"{}",
          "deployment.kubernetes.io/revision":"2"})"));
  api::ReplicaSet fresh = new_replica_set(d);
  EXPECT_TRUE(set_new_replica_set_annotations(d, fresh, 3, false));
  EXPECT_EQ(fresh.metadata.annotations.at("kubernetes.io/change-cause"), "kubectl set image");
  EXPECT_EQ(fresh.metadata.annotations.count("kubectl.kubernetes.io/last-applied-configuration"), 0u);
  EXPECT_EQ(fresh.metadata.annotations.at(kRevisionAnnotation), "3");
  EXPECT_EQ(fresh.metadata.annotations.at(kDesiredReplicasAnnotation), "2");
  EXPECT_EQ(fresh.metadata.annotations.at(kMaxReplicasAnnotation), "3");
  EXPECT_EQ(fresh.metadata.annotations.count(kRevisionHistoryAnnotation), 0u);
  // Rolled back to: the old revision goes into the history.
  api::ReplicaSet old = fresh;
  old.metadata.annotations[kRevisionAnnotation] = "1";
  EXPECT_TRUE(set_new_replica_set_annotations(d, old, 4, true));
  EXPECT_EQ(old.metadata.annotations.at(kRevisionAnnotation), "4");
  EXPECT_EQ(old.metadata.annotations.at(kRevisionHistoryAnnotation), "1");
  EXPECT_FALSE(set_new_replica_set_annotations(d, old, 4, true));
}

TEST(DeploymentLogic, ResizeMidRolloutIsProportional) {
  auto d = *api::decode_as<api::Deployment>(deployment_json(
      "a", 20, R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":1}})"));
  auto rs = [](const std::string& name, int replicas, const std::string& created) {
    api::ReplicaSet r;
    r.metadata.name = name;
    r.metadata.creationTimestamp = created;
    r.spec.replicas = replicas;
    r.metadata.annotations[kMaxReplicasAnnotation] = "10";
    return r;
  };
  auto sizes = proportional_sizes(d, {rs("old", 6, "2026-01-01T00:00:00Z"), rs("new", 4, "2026-01-01T00:01:00Z")});
  EXPECT_EQ(sizes.at("old"), 12);
  EXPECT_EQ(sizes.at("new"), 8);
  d.spec.replicas = 5;  // down: 6*5/10 = 3, 4*5/10 = 2
  sizes = proportional_sizes(d, {rs("old", 6, "2026-01-01T00:00:00Z"), rs("new", 4, "2026-01-01T00:01:00Z")});
  EXPECT_EQ(sizes.at("old"), 3);
  EXPECT_EQ(sizes.at("new"), 2);
}

TEST(DeploymentLogic, StatusConditionsAsUpstream) {
  auto d = *api::decode_as<api::Deployment>(deployment_json("a", 2, kSurge1));
  api::ReplicaSet rs = new_replica_set(d);
  rs.spec.replicas = 2;
  rs.status.replicas = rs.status.readyReplicas = 2;
  rs.status.availableReplicas = 1;
  auto st = rollout_status(d, {&rs}, &rs, 1000);
  EXPECT_EQ(st.replicas, 2);
  EXPECT_EQ(st.updatedReplicas, 2);
  EXPECT_EQ(st.unavailableReplicas, 1);
  EXPECT_EQ(find_condition(st, "Available")->status, "False");  // maxUnavailable 0
  EXPECT_EQ(find_condition(st, "Available")->reason, kMinimumReplicasUnavailable);
  EXPECT_EQ(find_condition(st, "Progressing")->reason, kRSUpdatedReason);
  d.status = st;
  rs.status.availableReplicas = 2;
  st = rollout_status(d, {&rs}, &rs, 1001);
  EXPECT_EQ(find_condition(st, "Available")->reason, kMinimumReplicasAvailable);
  const auto* p = find_condition(st, "Progressing");
  EXPECT_EQ(p->reason, kNewRSAvailableReason);
  EXPECT_EQ(p->message, "ReplicaSet \"" + rs.metadata.name + "\" has successfully progressed.");
  // Complete stays complete when a pod becomes unavailable afterwards.
  d.status = st;
  rs.status.availableReplicas = 1;
  EXPECT_EQ(find_condition(rollout_status(d, {&rs}, &rs, 1002), "Progressing")->reason, kNewRSAvailableReason);
  // No progress for longer than the deadline: timed out.
  d.status = api::DeploymentStatus{};
  d.status = rollout_status(d, {&rs}, &rs, 1000);  // progress from nothing: ReplicaSetUpdated, at 1000
  ASSERT_NE(find_condition(d.status, "Progressing"), nullptr);
  ASSERT_EQ(find_condition(d.status, "Progressing")->reason, kRSUpdatedReason);
  d.spec.progressDeadlineSeconds = 10;
  EXPECT_EQ(find_condition(rollout_status(d, {&rs}, &rs, 1005), "Progressing")->reason, kRSUpdatedReason);
  st = rollout_status(d, {&rs}, &rs, 1100);
  EXPECT_EQ(find_condition(st, "Progressing")->reason, kTimedOutReason);
  EXPECT_EQ(find_condition(st, "Progressing")->status, "False");
}

TEST(DeploymentController, CreatesTheFirstReplicaSetWithRevisionOne) {
  FakeApi api;
  std::string d = api.put_object("deployments", deployment_json("nginx", 3, kSurge1));
  DeploymentController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] {
    auto dep = get_deployment(api);
    return dep.metadata.annotations.count(kRevisionAnnotation) && find_condition(dep.status, "Progressing");
  }));
  c.stop();
  auto sets = sets_of(api);
  ASSERT_EQ(sets.size(), 1u);
  const auto& rs = sets[0];
  EXPECT_EQ(replicas_of(rs), 3);
  EXPECT_EQ(rs.metadata.annotations.at(kRevisionAnnotation), "1");
  EXPECT_EQ(rs.metadata.name, "web-" + rs.spec.template_.metadata.labels.at(kPodTemplateHashLabel));
  auto ref = controller_of(rs.metadata);
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->uid, FakeApi::field(d, {"metadata", "uid"}));
  EXPECT_EQ(get_deployment(api).metadata.annotations.at(kRevisionAnnotation), "1");
}

TEST(DeploymentController, RollingUpdateStaysWithinMaxSurgeAndCompletes) {
  FakeApi api;
  api.put_object("deployments", deployment_json("v1", 3, kSurge1));
  DeploymentController c(api, {});
  c.start();
  ASSERT_TRUE(first_rollout_done(api, 3));
  // The new template.
  edit_deployment(api, [&](api::Deployment& d) {
    d.spec.template_.spec.containers[0].image = "v2";
    d.metadata.generation = 2;
  });
  int most = 0;
  ASSERT_TRUE(api.wait_for([&] {
    int total = 0;
    for (const auto& rs : sets_of(api)) total += replicas_of(rs);
    most = std::max(most, total);
    settle(api);
    auto dep = get_deployment(api);
    auto p = find_condition(dep.status, "Progressing");
    return dep.status.observedGeneration == 2 && dep.status.updatedReplicas == 3 && dep.status.replicas == 3 && p &&
           p->reason == kNewRSAvailableReason;
  }));
  c.stop();
  EXPECT_LE(most, 4);  // replicas + maxSurge
  EXPECT_EQ(replicas_of(*set_with_image(api, "v1")), 0);
  EXPECT_EQ(set_with_image(api, "v2")->metadata.annotations.at(kRevisionAnnotation), "2");
  EXPECT_EQ(get_deployment(api).metadata.annotations.at(kRevisionAnnotation), "2");
  EXPECT_EQ(find_condition(get_deployment(api).status, "Available")->status, "True");
}

TEST(DeploymentController, RecreateScalesOldToZeroBeforeCreatingNew) {
  FakeApi api;
  api.put_object("deployments", deployment_json("v1", 2, kRecreate));
  DeploymentController c(api, {});
  c.start();
  ASSERT_TRUE(first_rollout_done(api, 2));
  edit_deployment(api, [&](api::Deployment& d) {
    d.spec.template_.spec.containers[0].image = "v2";
  });
  ASSERT_TRUE(api.wait_for([&] { return replicas_of(*set_with_image(api, "v1")) == 0; }));
  // The old pods still run (status.replicas 2): no new ReplicaSet yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(set_with_image(api, "v2").has_value());
  settle(api);
  ASSERT_TRUE(api.wait_for([&] {
    auto n = set_with_image(api, "v2");
    return n && replicas_of(*n) == 2;
  }));
  c.stop();
}

TEST(DeploymentController, ScaleSubresourceChangeResizesTheReplicaSet) {
  FakeApi api;
  api.put_object("deployments", deployment_json("v1", 3, kSurge1));
  DeploymentController c(api, {});
  c.start();
  ASSERT_TRUE(first_rollout_done(api, 3));
  edit_deployment(api, [&](api::Deployment& d) {
    d.spec.replicas = 5;
  });
  ASSERT_TRUE(api.wait_for([&] {
    auto rs = set_with_image(api, "v1");
    return replicas_of(*rs) == 5 && rs->metadata.annotations[kDesiredReplicasAnnotation] == "5";
  }));
  c.stop();
  EXPECT_EQ(sets_of(api).size(), 1u);
}

TEST(DeploymentController, RollbackRaisesTheOldReplicaSetsRevisionAndCleansUpHistory) {
  FakeApi api;
  // revisionHistoryLimit 1, set with the rollback: of the two old ReplicaSets
  // without pods, the older goes. (Set earlier, the cleanup after v3 may delete
  // v1's ReplicaSet before the rollback reaches it, and v1 comes back as new.)
  api.put_object("deployments", deployment_json("v1", 1, kSurge1));
  DeploymentController c(api, {});
  c.start();
  int revision = 0;
  for (const char* image : {"v2", "v3", "v1"}) {
    ++revision;
    ASSERT_TRUE(api.wait_for([&] {
      settle(api);
      auto dep = get_deployment(api);
      auto p = find_condition(dep.status, "Progressing");
      return dep.metadata.annotations[kRevisionAnnotation] == std::to_string(revision) &&
             dep.status.updatedReplicas == 1 && dep.status.replicas == 1 && p && p->reason == kNewRSAvailableReason;
    })) << image;
    edit_deployment(api, [&](api::Deployment& d) {
      d.spec.template_.spec.containers[0].image = image;
      if (std::string_view(image) == "v1") d.spec.revisionHistoryLimit = 1;
    });
  }
  ASSERT_TRUE(api.wait_for([&] {
    settle(api);
    auto rs = set_with_image(api, "v1");
    return rs && rs->metadata.annotations[kRevisionAnnotation] == "4" &&
           rs->metadata.annotations[kRevisionHistoryAnnotation] == "1" && sets_of(api).size() == 2;
  }));
  c.stop();
  auto v1 = set_with_image(api, "v1");
  EXPECT_EQ(v1->metadata.annotations.at(kRevisionHistoryAnnotation), "1");
  EXPECT_FALSE(set_with_image(api, "v2").has_value());  // the oldest revision, cleaned up
  EXPECT_TRUE(set_with_image(api, "v3").has_value());
  EXPECT_EQ(get_deployment(api).metadata.annotations.at(kRevisionAnnotation), "4");
}

}  // namespace
}  // namespace draplane::controllers
