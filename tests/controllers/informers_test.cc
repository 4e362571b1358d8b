// Controllers sharing one Informers: each collection listed and watched once,
// every controller still served.
#include "controllers/informers.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "controllers/claim_controller.h"
#include "controllers/job_controller.h"
#include "controllers/replica_set_controller.h"
#include "claim_test_helpers.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace informers_test {

using testing::FakeApi;
using testing::claim_pod_json;

const char* kTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
 "metadata":{"name":"one-gpu","namespace":"default"},
 "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";

// Lists of the whole collection: one per informer (each then watches it).
int lists_of(FakeApi& api, const std::string& collection) {
  auto log = api.requests();
  return static_cast<int>(std::count(log.begin(), log.end(), "GET " + collection));
}

TEST(Informers, ControllersSharingThemWatchEachCollectionOnce) {
  FakeApi api;
  api.put_object("resourceclaimtemplates", kTemplate);
  Informers informers(api);
  ControllerOptions shared;
  shared.informers = &informers;
  JobControllerOptions job_options;
  job_options.informers = &informers;
  ClaimController claims(api, shared);
  ReplicaSetController sets(api, shared);
  JobController jobs(api, job_options);
  // The owner starts them: before that the controllers wait.
  claims.start();
  sets.start();
  jobs.start();
  EXPECT_FALSE(claims.wait_synced(50));
  informers.start();
  ASSERT_TRUE(claims.wait_synced(5000));
  ASSERT_TRUE(sets.wait_synced(5000));
  api.put_object("pods", claim_pod_json("train", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  ASSERT_TRUE(api.wait_for([&] {
    auto p = api.object("pods", "default", "train");
    return p && FakeApi::field(*p, {"status", "resourceClaimStatuses"}) != "";
  }));
  EXPECT_EQ(lists_of(api, "/api/v1/pods"), 1);
  EXPECT_EQ(lists_of(api, "/apis/resource.k8s.io/v1/resourceclaims"), 1);
  // A controller stopping leaves the shared informers to the others.
  sets.stop();
  jobs.stop();
  api.put_object("pods", claim_pod_json("eval", R"([{"name":"gpus","resourceClaimTemplateName":"one-gpu"}])"));
  ASSERT_TRUE(api.wait_for([&] {
    auto p = api.object("pods", "default", "eval");
    return p && FakeApi::field(*p, {"status", "resourceClaimStatuses"}) != "";
  }));
  claims.stop();
  informers.stop();
}

TEST(Informers, AControllerWithoutThemWatchesOnItsOwn) {
  FakeApi api;
  ClaimController claims(api, {});
  ReplicaSetController sets(api, {});
  claims.start();
  sets.start();
  ASSERT_TRUE(claims.wait_synced(5000));
  ASSERT_TRUE(sets.wait_synced(5000));
  ASSERT_TRUE(api.wait_for([&] { return lists_of(api, "/api/v1/pods") == 2; }));
  sets.stop();
  claims.stop();
}

}  // namespace informers_test
}  // namespace draplane::controllers
