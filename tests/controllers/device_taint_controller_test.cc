// The device taint eviction controller against FakeApi: a NoExecute rule evicts
// the pod that does not tolerate it (event, DisruptionTarget, delete) and the
// rule's status counts it.
#include "controllers/device_taint_controller.h"

#include <gtest/gtest.h>

#include "api/codec.h"
#include "common/rfc3339.h"
#include "fake_api.h"

namespace draplane::controllers {
namespace {

using testing::FakeApi;

const char* kSlice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"node-1-gpus"},
 "spec":{"driver":"gpu.nvidia.com","nodeName":"node-1","pool":{"name":"node-1","generation":1,"resourceSliceCount":1},
  "devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}})";

const char* kRule = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":"drain"},
 "spec":{"deviceSelector":{"driver":"gpu.nvidia.com"},
  "taint":{"key":"example.com/drain","value":"now","effect":"NoExecute","timeAdded":"2026-01-01T00:00:00Z"}}})";

std::string pod_json(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"busybox"}],
 "resourceClaims":[{"name":"gpu","resourceClaimName":")" + name + R"("}]},"status":{"phase":"Running"}})";
}

// The claim `name` of pod `name` (uid), allocated `device`, maybe tolerating the drain.
std::string claim_json(const std::string& name, const std::string& uid, const std::string& device, bool tolerate) {
  std::string tol = tolerate ? R"(,"tolerations":[{"key":"example.com/drain","operator":"Exists","effect":"NoExecute"}])" : "";
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
 "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-1","device":")" +
         device + "\"" + tol + R"(}]}},"reservedFor":[{"resource":"pods","name":")" + name + R"(","uid":")" + uid +
         R"("}]}})";
}

TEST(DeviceTaintController, NoExecuteRuleEvictsTheUntoleratingPodAndCountsIt) {
  FakeApi api;
  api.put_object("resourceslices", kSlice);
  for (auto [name, device, tolerate] : {std::tuple{"victim", "gpu-0", false}, std::tuple{"keeper", "gpu-1", true}}) {
    std::string pod = api.put_object("pods", pod_json(name));
    api.put_object("resourceclaims", claim_json(name, FakeApi::field(pod, {"metadata", "uid"}), device, tolerate));
  }
  DeviceTaintOptions o;
  o.rule_status_period = std::chrono::milliseconds(200);
  DeviceTaintController c(api, o);
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  api.put_object("devicetaintrules", kRule);
  ASSERT_TRUE(api.wait_for([&] { return !api.object("pods", "default", "victim"); })) << "victim is evicted";
  // The condition came first, then the delete with the pod's UID as precondition.
  auto reqs = api.requests();
  auto at = [&](const std::string& r) { return std::find(reqs.begin(), reqs.end(), r) - reqs.begin(); };
  const auto status_put = at("PUT /api/v1/namespaces/default/pods/victim/status");
  const auto del = at("DELETE /api/v1/namespaces/default/pods/victim");
  EXPECT_LT(status_put, del);
  EXPECT_LT(del, static_cast<long>(reqs.size()));
  EXPECT_TRUE(api.object("pods", "default", "keeper")) << "keeper tolerates the taint";

  // The event names the device and the taint.
  ASSERT_TRUE(api.wait_for([&] {
    for (const auto& e : api.objects("events")) {
      if (FakeApi::field(e, {"reason"}) == "DeviceTaintManagerEviction" &&
          FakeApi::field(e, {"message"}) ==
              "Marking for deletion: NoExecute taint on device gpu.nvidia.com/node-1/gpu-0 "
              "example.com/drain=now:NoExecute (DeviceTaintRule drain)" &&
          FakeApi::field(e, {"involvedObject", "name"}) == "victim") {
        return true;
      }
    }
    return false;
  })) << "eviction event";

  // The rule's status: Completed, one pod evicted.
  ASSERT_TRUE(api.wait_for([&] {
    auto r = api.object("devicetaintrules", "", "drain");
    if (!r) return false;
    auto rule = api::decode_as<api::DeviceTaintRule>(*r);
    if (!rule.has_value() || rule->status.conditions.empty()) return false;
    const auto& cond = rule->status.conditions[0];
    return cond.type == "EvictionInProgress" && cond.status == "False" && cond.reason == "Completed" &&
           cond.message == "1 pod evicted since starting the controller.";
  })) << api.object("devicetaintrules", "", "drain").value_or("");
  const std::string rule_uid = FakeApi::field(*api.object("devicetaintrules", "", "drain"), {"metadata", "uid"});
  EXPECT_EQ(c.evicted_by_rule(rule_uid), 1);
  c.stop();
}

TEST(DeviceTaintController, TaintRemovedBeforeItsTimeCancelsTheEviction) {
  FakeApi api;
  api.put_object("resourceslices", kSlice);
  std::string pod = api.put_object("pods", pod_json("p"));
  // Tolerated for an hour from the rule's timeAdded (now).
  std::string claim = claim_json("p", FakeApi::field(pod, {"metadata", "uid"}), "gpu-0", false);
  const std::string tol =
      R"("device":"gpu-0","tolerations":[{"key":"example.com/drain","operator":"Exists","effect":"NoExecute","tolerationSeconds":3600}])";
  claim.replace(claim.find(R"("device":"gpu-0")"), std::string(R"("device":"gpu-0")").size(), tol);
  api.put_object("resourceclaims", claim);
  DeviceTaintController c(api, {});
  c.start();
  ASSERT_TRUE(c.wait_synced(5000));
  std::string rule = kRule;
  rule.replace(rule.find("2026-01-01T00:00:00Z"), 20, common::format_rfc3339(std::chrono::system_clock::now()));
  api.put_object("devicetaintrules", rule);
  // The status says one pod waits for its eviction.
  ASSERT_TRUE(api.wait_for([&] {
    auto r = api.object("devicetaintrules", "", "drain");
    return r && FakeApi::field(*r, {"status"}).find("1 pod needs to be evicted in 1 namespace.") != std::string::npos;
  }));
  api.erase("devicetaintrules", "", "drain");
  ASSERT_TRUE(api.wait_for([&] {
    for (const auto& e : api.objects("events")) {
      if (FakeApi::field(e, {"message"}) == "Cancelling deletion") return true;
    }
    return false;
  })) << "cancel event";
  c.stop();
  EXPECT_TRUE(api.object("pods", "default", "p"));
}

}  // namespace
}  // namespace draplane::controllers
