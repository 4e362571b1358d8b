#include "controllers/claim_controller.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "api/codec.h"
#include "controllers/claim_logic.h"
#include "claim_test_helpers.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace {

using testing::FakeApi;
using testing::claim_pod_json;
using testing::stored_claim;

const char* kTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
 "metadata":{"name":"one-gpu","namespace":"default"},
 "spec":{"metadata":{"labels":{"app":"train"}},
  "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";

std::vector<api::ResourceClaim> all_claims(FakeApi& api) {
  std::vector<api::ResourceClaim> out;
  for (const auto& j : api.objects("resourceclaims")) out.push_back(*api::decode_as<api::ResourceClaim>(j));
  return out;
}

// A running pod on node-1 naming claim `claim`, which it owns (controller
// reference), allocated (gpu-0) and reserved for it, with the delete-protection
// finalizer, as the scheduler leaves a generated claim.
void put_running_pod_with_own_claim(FakeApi& api, const std::string& pod_name, const std::string& claim) {
  std::string pod = api.put_object(
      "pods", claim_pod_json(pod_name, R"([{"name":"gpus","resourceClaimName":")" + claim + R"("}])", "node-1", "Running"));
  std::string uid = FakeApi::field(pod, {"metadata", "uid"});
  api.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":")" + claim + R"(","namespace":"default","finalizers":["resource.kubernetes.io/delete-protection"],
     "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":")" + pod_name + R"(","uid":")" + uid +
                                             R"(","controller":true}]},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-1","device":"gpu-0"}]}},
     "reservedFor":[{"resource":"pods","name":")" + pod_name + R"(","uid":")" + uid + R"("}]}})");
}

TEST(ClaimController, CreatesClaimFromTemplateAndRecordsItInPodStatus) {
  FakeApi api;
  api.put_object("resourceclaimtemplates", kTemplate);
  std::string pod = api.put_object("pods", claim_pod_json("train", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  std::string pod_uid = FakeApi::field(pod, {"metadata", "uid"});
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] {
    auto p = api.object("pods", "default", "train");
    return p && FakeApi::field(*p, {"status", "resourceClaimStatuses"}) != "";
  }));
  c.stop();
  auto claims = all_claims(api);
  ASSERT_EQ(claims.size(), 1u);  // exactly one, however many syncs ran
  const auto& claim = claims[0];
  EXPECT_EQ(claim.metadata.name, "train-gpus-aaaaa");
  EXPECT_EQ(claim.metadata.generateName, "train-gpus-");
  EXPECT_EQ(claim.metadata.labels.at("app"), "train");
  EXPECT_EQ(claim.metadata.annotations.at(kPodClaimNameAnnotation), "gpus");
  ASSERT_EQ(claim.metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(claim.metadata.ownerReferences[0].uid, pod_uid);
  EXPECT_EQ(claim.metadata.ownerReferences[0].controller, std::optional<bool>(true));
  EXPECT_EQ(claim.spec.devices.requests[0].exactly->deviceClassName, "gpu.nvidia.com");
  auto p = api::decode_as<api::Pod>(*api.object("pods", "default", "train"));
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->status.resourceClaimStatuses.size(), 1u);
  EXPECT_EQ(p->status.resourceClaimStatuses[0].name, "gpus");
  EXPECT_EQ(p->status.resourceClaimStatuses[0].resourceClaimName, std::optional<std::string>("train-gpus-aaaaa"));
}

TEST(ClaimController, LaggingCachesNeverCreateASecondClaim) {
  // The claim is created and the pod status written, but neither informer has
  // seen either write yet when the pod is synced again.
  FakeApi api;
  api.put_object("resourceclaimtemplates", kTemplate);
  api.put_object("pods", claim_pod_json("train", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  api.hold("pods");
  api.hold("resourceclaims");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(20000));
  ASSERT_TRUE(api.wait_for([&] {
    auto p = api.object("pods", "default", "train");
    return p && FakeApi::field(*p, {"status", "resourceClaimStatuses"}) != "";
  }));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.sync_pod("default/train").has_value());
  api.release("pods");
  api.release("resourceclaims");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.sync_pod("default/train").has_value());
  c.stop();
  EXPECT_EQ(all_claims(api).size(), 1u);
}

TEST(ClaimController, MissingTemplateIsRetriedUntilItExists) {
  FakeApi api;
  api.put_object("pods", claim_pod_json("train", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  // The sync fails (template missing) and backs off; nothing is created.
  ASSERT_TRUE(api.wait_for([&] {
    for (const auto& r : api.requests()) {
      if (r.find("resourceclaimtemplates/one-gpu") != std::string::npos) return true;
    }
    return false;
  }));
  EXPECT_TRUE(all_claims(api).empty());
  // Reported on the pod as upstream's controller does.
  ASSERT_TRUE(api.wait_for([&] { return !api.objects("events").empty(); }));
  std::string e = api.objects("events")[0];
  EXPECT_EQ(FakeApi::field(e, {"reason"}), "FailedResourceClaimCreation");
  EXPECT_EQ(FakeApi::field(e, {"type"}), "Warning");
  EXPECT_EQ(FakeApi::field(e, {"involvedObject", "name"}), "train");
  EXPECT_EQ(FakeApi::field(e, {"source", "component"}), "resource_claim");
  EXPECT_EQ(FakeApi::field(e, {"message"}).rfind("PodResourceClaim gpus: ", 0), 0u) << FakeApi::field(e, {"message"});
  api.put_object("resourceclaimtemplates", kTemplate);
  ASSERT_TRUE(api.wait_for([&] { return all_claims(api).size() == 1; }));
  c.stop();
}

TEST(ClaimController, ConflictOnPodStatusIsRetried) {
  FakeApi api;
  api.put_object("resourceclaimtemplates", kTemplate);
  api.put_object("pods", claim_pod_json("train", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  api.fail_next("PUT /api/v1/namespaces/default/pods/train/status", 409);
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] {
    auto p = api.object("pods", "default", "train");
    return p && FakeApi::field(*p, {"status", "resourceClaimStatuses"}) != "";
  }));
  c.stop();
  EXPECT_EQ(all_claims(api).size(), 1u);
}

TEST(ClaimController, FinishedPodReleasesAndDeletesItsClaim) {
  FakeApi api;
  // A generated claim owned by the pod, allocated and reserved for it.
  put_running_pod_with_own_claim(api, "train", "shared");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  // Still running: nothing changes.
  EXPECT_EQ(stored_claim(api, "shared").status.reservedFor.size(), 1u);
  // The pod succeeds.
  auto p = *api::decode_as<api::Pod>(*api.object("pods", "default", "train"));
  p.status.phase = "Succeeded";
  ASSERT_TRUE(api.put("/api/v1/namespaces/default/pods/train/status", api::to_json(api::Object(p))).has_value());
  ASSERT_TRUE(api.wait_for([&] { return !api.object("resourceclaims", "default", "shared").has_value(); }));
  c.stop();
  // Deallocated (status), finalizer dropped (update), then deleted.
  std::vector<std::string> writes;
  for (const auto& r : api.requests()) {
    if (r.find("resourceclaims/shared") != std::string::npos && r.rfind("GET", 0) != 0) writes.push_back(r);
  }
  EXPECT_EQ(writes, (std::vector<std::string>{
                        "PUT /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/shared/status",
                        "PUT /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/shared",
                        "DELETE /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/shared",
                    }));
}

// A deleted pod's own claim: released and deleted without asking the server
// about the pod (its informer saw it deleted), a little after the deletion (the
// garbage collector's mark of the claim usually comes first; FakeApi has none).
TEST(ClaimController, ADeletedPodsOwnClaimIsReleasedWithoutAskingAboutThePod) {
  FakeApi api;
  put_running_pod_with_own_claim(api, "train", "own");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  api.erase("pods", "default", "train");
  ASSERT_TRUE(api.wait_for([&] { return !api.object("resourceclaims", "default", "own").has_value(); }));
  c.stop();
  // Each sync looks the pod up twice (reservation, owner): without the memo of
  // deleted pods every one of them was a GET.
  auto log = api.requests();
  EXPECT_LE(std::count(log.begin(), log.end(), "GET /api/v1/namespaces/default/pods/train"), 1);
  // Its finalizer is removed once: the syncs after that (the cache still shows
  // the claim) know it released and leave it.
  EXPECT_EQ(std::count(log.begin(), log.end(), "PUT /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/own"), 1);
}

TEST(ClaimController, DeletedPodIsDroppedFromSharedClaim) {
  FakeApi api;
  std::string a = api.put_object("pods", claim_pod_json("a", R"([{"name":"g","resourceClaimName":"shared"}])", "n", "Running"));
  std::string b = api.put_object("pods", claim_pod_json("b", R"([{"name":"g","resourceClaimName":"shared"}])", "n", "Running"));
  std::string ua = FakeApi::field(a, {"metadata", "uid"}), ub = FakeApi::field(b, {"metadata", "uid"});
  api.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"shared","namespace":"default","finalizers":["resource.kubernetes.io/delete-protection"]},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n","device":"gpu-0"}]}},
     "reservedFor":[{"resource":"pods","name":"a","uid":")" + ua + R"("},{"resource":"pods","name":"b","uid":")" + ub +
                                             R"("}]}})");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  api.erase("pods", "default", "a");
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "shared").status.reservedFor.size() == 1; }));
  auto claim = stored_claim(api, "shared");
  EXPECT_EQ(claim.status.reservedFor[0].name, "b");
  EXPECT_TRUE(claim.status.allocation.has_value());
  api.erase("pods", "default", "b");
  ASSERT_TRUE(api.wait_for([&] {
    auto cl = stored_claim(api, "shared");
    return !cl.status.allocation.has_value() && cl.metadata.finalizers.empty();
  }));
  c.stop();
  // Not generated for a pod: the claim stays.
  EXPECT_TRUE(stored_claim(api, "shared").status.reservedFor.empty());
  // The informer saw both pods deleted: the server is not asked about them at
  // each sync (once at most: a sync may run between the informer dropping the
  // pod from its cache and its handler noting the deletion).
  auto log = api.requests();
  for (const char* p : {"a", "b"}) {
    EXPECT_LE(std::count(log.begin(), log.end(), std::string("GET /api/v1/namespaces/default/pods/") + p), 1) << p;
  }
}

// A reservation for a pod the cache never held may be for one it has not seen
// yet: the server is asked (as upstream's controller does) before it is dropped.
TEST(ClaimController, AReservationForAPodTheCacheNeverSawIsCheckedWithTheServer) {
  FakeApi api;
  api.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"lone","namespace":"default","finalizers":["resource.kubernetes.io/delete-protection"]},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n","device":"gpu-0"}]}},
     "reservedFor":[{"resource":"pods","name":"ghost","uid":"uid-ghost"}]}})");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "lone").status.reservedFor.empty(); }));
  c.stop();
  auto log = api.requests();
  EXPECT_NE(std::find(log.begin(), log.end(), "GET /api/v1/namespaces/default/pods/ghost"), log.end());
}

TEST(ClaimController, PodBoundWithoutSchedulerGetsReservation) {
  FakeApi api;
  std::string a = api.put_object("pods", claim_pod_json("a", R"([{"name":"g","resourceClaimName":"shared"}])", "n", "Pending"));
  api.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"shared","namespace":"default"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n","device":"gpu-0"}]}}}})");
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "shared").status.reservedFor.size() == 1; }));
  c.stop();
  EXPECT_EQ(stored_claim(api, "shared").status.reservedFor[0].uid, FakeApi::field(a, {"metadata", "uid"}));
}

// The claim appears only after the pod was bound: the pod is found through
// the index of claim names, as long as it is bound and not done.
TEST(ClaimController, ClaimCreatedAfterTheBoundPodGetsReservation) {
  FakeApi api;
  const char* kClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"NAME","namespace":"default"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n","device":"gpu-0"}]}}}})";
  auto claim = [&](const std::string& name) {
    std::string j = kClaim;
    j.replace(j.find("NAME"), 4, name);
    return j;
  };
  std::string a = api.put_object("pods", claim_pod_json("a", R"([{"name":"g","resourceClaimName":"late"}])", "n", "Pending"));
  // b used "gone" while bound, then finished: it must have left the index.
  api.put_object("pods", claim_pod_json("b", R"([{"name":"g","resourceClaimName":"gone"}])", "n", "Succeeded"));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  api.put_object("resourceclaims", claim("late"));
  api.put_object("resourceclaims", claim("gone"));
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "late").status.reservedFor.size() == 1; }));
  c.stop();
  EXPECT_EQ(stored_claim(api, "late").status.reservedFor[0].uid, FakeApi::field(a, {"metadata", "uid"}));
  EXPECT_TRUE(stored_claim(api, "gone").status.reservedFor.empty());
}

// The claim cache lags: it shows a generated claim without the finalizer and
// reservation the scheduler has written since, so the controller deletes it
// when its pod goes, and the finalizer keeps it (deletionTimestamp). The
// controller must still release it, or the devices stay taken for good (seen
// as a steady-state bench round that never bound).
TEST(ClaimController, AClaimDeletedUnderItsFinalizerIsStillReleased) {
  FakeApi api;
  std::string pod = api.put_object("pods", claim_pod_json("p", R"([{"name":"g","resourceClaimName":"gen"}])", "n", "Running"));
  const std::string uid = FakeApi::field(pod, {"metadata", "uid"});
  const std::string claim_v1 = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"gen","namespace":"default",
     "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":")" +
                               uid + R"(","controller":true}]},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}})";
  api.put_object("resourceclaims", claim_v1);
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  api.hold("resourceclaims");
  // The scheduler's writes, unseen by the controller's cache.
  api::ResourceClaim cl = stored_claim(api, "gen");
  cl.metadata.finalizers.push_back(kDeleteProtectionFinalizer);
  auto updated = api.put("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gen", api::to_json(api::Object(cl)));
  ASSERT_TRUE(updated.has_value());
  cl = *api::decode_as<api::ResourceClaim>(*updated);
  cl.status.allocation = api::AllocationResult{};
  cl.status.allocation->devices.results.push_back(api::DeviceRequestAllocationResult{});
  cl.status.allocation->devices.results[0].request = "gpu";
  cl.status.allocation->devices.results[0].driver = "gpu.nvidia.com";
  cl.status.allocation->devices.results[0].pool = "n";
  cl.status.allocation->devices.results[0].device = "gpu-0";
  cl.status.reservedFor.push_back({"", "pods", "p", uid});
  ASSERT_TRUE(api.put("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/gen/status",
                      api::to_json(api::Object(cl)))
                  .has_value());
  // The pod goes: the controller, reading the stale claim, deletes it.
  api.erase("pods", "default", "p");
  ASSERT_TRUE(api.wait_for([&] {
    auto j = api.object("resourceclaims", "default", "gen");
    return j && !FakeApi::field(*j, {"metadata", "deletionTimestamp"}).empty();
  }));
  api.release("resourceclaims");
  ASSERT_TRUE(api.wait_for([&] { return !api.object("resourceclaims", "default", "gen").has_value(); }))
      << api.object("resourceclaims", "default", "gen").value_or("");
  c.stop();
}

}  // namespace
}  // namespace draplane::controllers
