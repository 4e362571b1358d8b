// ClaimController and PodGroups (KEP-5729): claims made from a group's
// templates, shared by its members, reserved for the group until it goes.
#include <gtest/gtest.h>

#include "api/codec.h"
#include "controllers/claim_controller.h"
#include "controllers/claim_logic.h"
#include "claim_test_helpers.h"
#include "fake_api.h"

namespace draplane::controllers::claim_controller_groups_test {
namespace {

using draplane::testing::FakeApi;
using draplane::testing::stored_claim;

const char* kDomainTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
 "metadata":{"name":"domain","namespace":"default"},
 "spec":{"metadata":{"labels":{"team":"a"}},
  "spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":8}}]}}}})";

const char* kOwnTemplate = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
 "metadata":{"name":"own","namespace":"default"},
 "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";

std::string group_json(const std::string& name, const std::string& claims) {
  return R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"schedulingPolicy":{"gang":{"minCount":2}},"resourceClaims":)" + claims +
         "}}";
}

// Pod `name` of PodGroup `group` with spec.resourceClaims `claims`.
std::string member_json(const std::string& name, const std::string& group, const std::string& claims,
                        const std::string& node = "") {
  return draplane::testing::claim_pod_json(name, claims, node, "Pending", group);
}

const char* kDomainEntry = R"([{"name":"domain","resourceClaimTemplateName":"domain"}])";

template <class T>
std::optional<std::string> status_claim_of(const std::optional<std::string>& json, const std::string& entry) {
  if (!json) return std::nullopt;
  auto obj = api::decode_as<T>(*json);
  if (!obj.has_value()) return std::nullopt;
  for (const auto& s : obj->status.resourceClaimStatuses) {
    if (s.name == entry) return s.resourceClaimName;
  }
  return std::nullopt;
}

// The claim that status.resourceClaimStatuses names for `entry` of pod `name`.
std::optional<std::string> pod_status_claim(FakeApi& api, const std::string& name, const std::string& entry) {
  return status_claim_of<api::Pod>(api.object("pods", "default", name), entry);
}

std::optional<std::string> group_status_claim(FakeApi& api, const std::string& name, const std::string& entry) {
  return status_claim_of<api::PodGroup>(api.object("podgroups", "default", name), entry);
}

TEST(ClaimControllerGroups, OneClaimPerGroupEntrySharedByTheMembers) {
  FakeApi api;
  api.put_object("resourceclaimtemplates", kDomainTemplate);
  api.put_object("resourceclaimtemplates", kOwnTemplate);
  std::string group = api.put_object("podgroups", group_json("train", kDomainEntry));
  const std::string group_uid = FakeApi::field(group, {"metadata", "uid"});
  api.put_object("pods", member_json("w0", "train", kDomainEntry));
  api.put_object("pods", member_json("w1", "train", kDomainEntry));
  // Same entry name, another template: the pod's own claim.
  api.put_object("pods", member_json("w2", "train", R"([{"name":"domain","resourceClaimTemplateName":"own"}])"));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] {
    for (const char* p : {"w0", "w1", "w2"}) {
      if (!pod_status_claim(api, p, "domain")) return false;
    }
    return true;
  }));
  c.stop();
  // The group's status names its claim; both members name the same one.
  const std::optional<std::string> shared = group_status_claim(api, "train", "domain");
  ASSERT_TRUE(shared.has_value());
  // (The fake server's generated suffixes depend on the order of the creates.)
  EXPECT_EQ(shared->rfind("train-domain-", 0), 0u) << *shared;
  EXPECT_EQ(pod_status_claim(api, "w0", "domain"), shared);
  EXPECT_EQ(pod_status_claim(api, "w1", "domain"), shared);
  const std::optional<std::string> own = pod_status_claim(api, "w2", "domain");
  ASSERT_TRUE(own.has_value());
  EXPECT_NE(*own, *shared);
  EXPECT_EQ(own->rfind("w2-domain-", 0), 0u) << *own;
  EXPECT_EQ(api.objects("resourceclaims").size(), 2u) << "one for the group, one for w2";
  api::ResourceClaim g = stored_claim(api, *shared);
  ASSERT_EQ(g.metadata.ownerReferences.size(), 1u);
  const api::OwnerReference& o = g.metadata.ownerReferences[0];
  EXPECT_EQ(o.apiVersion, "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(o.kind, "PodGroup");
  EXPECT_EQ(o.name, "train");
  EXPECT_EQ(o.uid, group_uid);
  EXPECT_EQ(o.controller, std::optional<bool>(true));
  EXPECT_FALSE(o.blockOwnerDeletion.has_value());
  EXPECT_EQ(g.metadata.generateName, "train-domain-");
  EXPECT_EQ(g.metadata.annotations.at(kPodClaimNameAnnotation), "domain");
  EXPECT_EQ(g.metadata.labels.at("team"), "a");
  EXPECT_EQ(g.spec.devices.requests.at(0).exactly->count, std::optional<int64_t>(8));
}

TEST(ClaimControllerGroups, MembersWaitForTheirGroupAndItsClaim) {
  FakeApi api;
  api.put_object("resourceclaimtemplates", kDomainTemplate);
  api.put_object("pods", member_json("w0", "train", kDomainEntry));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  // No group: the pod's sync fails and makes no claim (a per-pod one would
  // split the gang's devices). Synced here so that it surely ran.
  auto synced = c.sync_pod("default/w0");
  ASSERT_FALSE(synced.has_value());
  EXPECT_NE(synced.error().message().find("podgroup.scheduling.k8s.io \"train\" not found"), std::string::npos)
      << synced.error().message();
  EXPECT_TRUE(api.objects("resourceclaims").empty());
  api.put_object("podgroups", group_json("train", kDomainEntry));
  ASSERT_TRUE(api.wait_for([&] { return pod_status_claim(api, "w0", "domain").has_value(); }));
  c.stop();
  EXPECT_EQ(pod_status_claim(api, "w0", "domain"), std::optional<std::string>("train-domain-aaaaa"));
  EXPECT_EQ(api.objects("resourceclaims").size(), 1u);
}

TEST(ClaimControllerGroups, MissingTemplateIsAWarningOnTheGroup) {
  FakeApi api;
  api.put_object("podgroups", group_json("train", kDomainEntry));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return !api.objects("events").empty(); }));
  c.stop();
  std::string e = api.objects("events")[0];
  EXPECT_EQ(FakeApi::field(e, {"reason"}), "FailedResourceClaimCreation");
  EXPECT_EQ(FakeApi::field(e, {"involvedObject", "kind"}), "PodGroup");
  EXPECT_EQ(FakeApi::field(e, {"involvedObject", "name"}), "train");
  EXPECT_EQ(FakeApi::field(e, {"message"}).rfind("PodGroupResourceClaim domain: ", 0), 0u)
      << FakeApi::field(e, {"message"});
  EXPECT_TRUE(api.objects("resourceclaims").empty());
}

// An allocated claim reserved for group `train` (uid) and nothing else.
std::string reserved_claim(const std::string& group_uid) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
    "metadata":{"name":"domain","namespace":"default","finalizers":["resource.kubernetes.io/delete-protection"]},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
    "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n","device":"gpu-0"}]}},
     "reservedFor":[{"apiGroup":"scheduling.k8s.io","resource":"podgroups","name":"train","uid":")" +
         group_uid + R"("}]}})";
}

TEST(ClaimControllerGroups, AGroupsReservationOutlivesItsPodsAndGoesWithIt) {
  FakeApi api;
  std::string group = api.put_object("podgroups", group_json("train", R"([{"name":"domain","resourceClaimName":"domain"}])"));
  std::string pod = api.put_object("pods", member_json("w0", "train", R"([{"name":"mine","resourceClaimName":"domain"}])", "n"));
  // Reserved for the group and, through another entry, for the pod itself.
  std::string claim = reserved_claim(FakeApi::field(group, {"metadata", "uid"}));
  claim.replace(claim.rfind("}]}}"), 4,
                R"(},{"resource":"pods","name":"w0","uid":")" + FakeApi::field(pod, {"metadata", "uid"}) + R"("}]}})");
  api.put_object("resourceclaims", claim);
  ASSERT_EQ(stored_claim(api, "domain").status.reservedFor.size(), 2u);
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  // The pod goes: its entry goes, the group still holds the claim.
  api.erase("pods", "default", "w0");
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "domain").status.reservedFor.size() == 1; }));
  EXPECT_EQ(stored_claim(api, "domain").status.reservedFor.at(0).resource, "podgroups");
  EXPECT_TRUE(stored_claim(api, "domain").status.allocation.has_value());
  // The group goes: its reservation and the allocation go, and the finalizer.
  api.erase("podgroups", "default", "train");
  ASSERT_TRUE(api.wait_for([&] {
    auto cl = stored_claim(api, "domain");
    return cl.status.reservedFor.empty() && !cl.status.allocation && cl.metadata.finalizers.empty();
  }));
  c.stop();
}

TEST(ClaimControllerGroups, AReplacedGroupsReservationIsDropped) {
  FakeApi api;
  api.put_object("podgroups", group_json("train", R"([{"name":"domain","resourceClaimName":"domain"}])"));
  // Reserved for an earlier group of the same name.
  api.put_object("resourceclaims", reserved_claim("an-earlier-uid"));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return stored_claim(api, "domain").status.reservedFor.empty(); }));
  c.stop();
  EXPECT_FALSE(stored_claim(api, "domain").status.allocation.has_value());
}

TEST(ClaimControllerGroups, ABoundMemberReservesTheGroupsClaimForTheGroup) {
  FakeApi api;
  std::string group = api.put_object("podgroups", group_json("train", R"([{"name":"domain","resourceClaimName":"domain"}])"));
  std::string claim = reserved_claim("x");
  // Allocated, reserved for nobody.
  claim.replace(claim.find(R"(,
     "reservedFor")"), std::string::npos, "}}");
  api.put_object("resourceclaims", claim);
  ASSERT_TRUE(stored_claim(api, "domain").status.reservedFor.empty());
  api.put_object("pods", member_json("w0", "train", R"([{"name":"domain","resourceClaimName":"domain"}])", "n"));
  ClaimController c(api, {});
  c.start();
  ASSERT_TRUE(api.wait_for([&] { return !stored_claim(api, "domain").status.reservedFor.empty(); }));
  c.stop();
  EXPECT_EQ(stored_claim(api, "domain").status.reservedFor,
            (std::vector<api::ResourceClaimConsumerReference>{
                {"scheduling.k8s.io", "podgroups", "train", FakeApi::field(group, {"metadata", "uid"})}}));
}

}  // namespace
}  // namespace draplane::controllers::claim_controller_groups_test
