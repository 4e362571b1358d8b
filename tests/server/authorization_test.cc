// Authorization: the node authorizer's rules and NodeRestriction admission for
// every verb (ApiServer over the memory store, requests with a node identity),
// and the table in docs/security.md against the one the server enforces.
#include "server/authorization.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "server/api_server.h"
#include "server/json_util.h"
#include "server/resources.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

const Identity kAdmin{"admin", true, ""};
const Identity kNode1{"system:node:n1", false, "n1"};
const Identity kUser{"alice", false, ""};

const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";
const char* kAuthzClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
const char* kPods = "/api/v1/namespaces/default/pods";
const char* kNodes = "/api/v1/nodes";
const char* kNodeLeases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
  return s;
}

std::string slice(const std::string& name, const std::string& node) {
  return replace_all(replace_all(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"NAME"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"NODE","generation":1,"resourceSliceCount":1},"nodeName":"NODE",
    "devices":[{"name":"gpu-0"}]}})",
                                 "NAME", name),
                     "NODE", node);
}

std::string claim(const std::string& name) {
  return replace_all(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"NAME"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})",
                     "NAME", name);
}

// A pod bound to `node` (empty: not bound) using `claims_json` as spec.resourceClaims.
std::string pod(const std::string& name, const std::string& node, const std::string& claims_json = "[]") {
  std::string n = node.empty() ? "" : R"("nodeName":")" + node + R"(",)";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","labels":{"app":"a"}},"spec":{)" + n +
         R"("containers":[{"name":"c","image":"busybox"}],"resourceClaims":)" + claims_json + "}}";
}

std::string node_object(const std::string& name, const std::string& labels_json = "{}",
                        const std::string& taints_json = "[]") {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","labels":)" + labels_json +
         R"(},"spec":{"taints":)" + taints_json + "}}";
}

std::string lease(const std::string& name) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":")" + name +
         R"("},"spec":{"holderIdentity":")" + name + R"("}})";
}

class AuthorizationTest : public ::testing::Test {
 protected:
  AuthorizationTest() {
    store_ = store::new_memory_store();
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }

  Response call(const Identity& id, const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& content_type = "application/json") {
    Request r;
    r.method = method;
    size_t qm = target.find('?');
    r.path = target.substr(0, qm);
    if (qm != std::string::npos) {
      std::stringstream qs(target.substr(qm + 1));
      std::string kv;
      while (std::getline(qs, kv, '&')) {
        size_t eq = kv.find('=');
        r.query[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
      }
    }
    r.body = body;
    r.content_type = content_type;
    r.identity = id;
    r.accept = "application/json";
    return api_->handle(r).response;
  }
  int code(const Identity& id, const std::string& method, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    return call(id, method, target, body, content_type).code;
  }
  // Creates as admin; fails the test otherwise.
  void admin_create(const std::string& collection, const std::string& body) {
    Response r = call(kAdmin, "POST", collection, body);
    ASSERT_EQ(r.code, 201) << r.body;
  }
  std::vector<std::string> names(const Response& r) {
    std::vector<std::string> out;
    auto j = parse_json(r.body);
    const JsonValue* items = j.has_value() ? find(*j, {"items"}) : nullptr;
    if (items && items->IsArray()) {
      for (const auto& i : items->GetArray()) out.push_back(get_string(i, {"metadata", "name"}));
    }
    return out;
  }

  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ApiServer> api_;
};

TEST_F(AuthorizationTest, NodeDeletesOnlyItsOwnSlicesByCollection) {
  admin_create(kSlices, slice("s1", "n1"));
  admin_create(kSlices, slice("s2", "n2"));
  Response r = call(kNode1, "DELETE", kSlices);
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("can only list/watch/deletecollection resourceslices with nodeName field selector"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kSlices) + "?fieldSelector=spec.nodeName=n2"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kSlices) + "?fieldSelector=spec.nodeName!=n1"), 403);
  EXPECT_EQ(names(call(kAdmin, "GET", kSlices)), (std::vector<std::string>{"s1", "s2"}));
  r = call(kNode1, "DELETE", std::string(kSlices) + "?fieldSelector=spec.nodeName==n1");
  EXPECT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(names(call(kAdmin, "GET", kSlices)), (std::vector<std::string>{"s2"}));
}

TEST_F(AuthorizationTest, NodeListsAndWatchesOnlyItsOwnSlices) {
  admin_create(kSlices, slice("s1", "n1"));
  admin_create(kSlices, slice("s2", "n2"));
  EXPECT_EQ(code(kNode1, "GET", kSlices), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "?fieldSelector=spec.driver=gpu.example.com"), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "?watch=true"), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "?watch=true&fieldSelector=spec.nodeName=n2"), 403);
  Response own = call(kNode1, "GET", std::string(kSlices) + "?fieldSelector=spec.nodeName=n1");
  EXPECT_EQ(own.code, 200) << own.body;
  EXPECT_EQ(names(own), (std::vector<std::string>{"s1"}));
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "?watch=true&fieldSelector=spec.nodeName=n1"), 200);
}

TEST_F(AuthorizationTest, NodeReadsAndWritesOnlyItsOwnSlices) {
  admin_create(kSlices, slice("s2", "n2"));
  EXPECT_EQ(code(kNode1, "POST", kSlices, slice("s1", "n1")), 201);
  Response other = call(kNode1, "POST", kSlices, slice("s3", "n2"));
  EXPECT_EQ(other.code, 403) << other.body;
  EXPECT_NE(other.body.find("can only create ResourceSlice with the same NodeName as the requesting node"),
            std::string::npos)
      << other.body;
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "/s1"), 200);
  Response get = call(kNode1, "GET", std::string(kSlices) + "/s2");
  EXPECT_EQ(get.code, 403) << get.body;
  EXPECT_NE(get.body.find("no relationship found between node 'n1' and this object"), std::string::npos) << get.body;
  EXPECT_EQ(code(kNode1, "GET", std::string(kSlices) + "/missing"), 403);
  const std::string relabel = R"({"metadata":{"labels":{"x":"y"}}})";
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kSlices) + "/s1", relabel, "application/merge-patch+json"), 200);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kSlices) + "/s2", relabel, "application/merge-patch+json"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kSlices) + "/s2"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kSlices) + "/s1"), 200);
}

TEST_F(AuthorizationTest, NodeUsesOnlyItsOwnLeaseInKubeNodeLease) {
  admin_create(kNodeLeases, lease("n2"));
  admin_create("/apis/coordination.k8s.io/v1/namespaces/default/leases", lease("n1"));
  Response wrong_ns = call(kNode1, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease("n1"));
  EXPECT_EQ(wrong_ns.code, 403) << wrong_ns.body;
  EXPECT_NE(wrong_ns.body.find("can only access leases in the \\\"kube-node-lease\\\" system namespace"),
            std::string::npos)
      << wrong_ns.body;
  EXPECT_EQ(code(kNode1, "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", "/apis/coordination.k8s.io/v1/namespaces/default/leases/n1"), 403);
  Response other = call(kNode1, "POST", kNodeLeases, lease("n3"));
  EXPECT_EQ(other.code, 403) << other.body;
  EXPECT_NE(other.body.find("can only access node lease with the same name as the requesting node"), std::string::npos);
  EXPECT_EQ(code(kNode1, "POST", kNodeLeases, lease("n1")), 201);
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodeLeases) + "/n1"), 200);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodeLeases) + "/n1", R"({"spec":{"leaseDurationSeconds":40}})",
                 "application/merge-patch+json"),
            200);
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodeLeases) + "/n2"), 403);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodeLeases) + "/n2", R"({"spec":{"leaseDurationSeconds":40}})",
                 "application/merge-patch+json"),
            403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kNodeLeases) + "/n2"), 403);
  EXPECT_EQ(code(kNode1, "GET", kNodeLeases), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodeLeases) + "?watch=true"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", kNodeLeases), 403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kNodeLeases) + "/n1"), 200);
}

TEST_F(AuthorizationTest, NodeMayNotSetRestrictedLabels) {
  Response r = call(kNode1, "POST", kNodes, node_object("n1", R"({"node-restriction.kubernetes.io/pool":"a"})"));
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("node \\\"n1\\\" is not allowed to set the following labels: node-restriction.kubernetes.io/pool"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(code(kNode1, "POST", kNodes, node_object("n1", R"({"example.node-restriction.kubernetes.io/x":"a"})")), 403);
  EXPECT_EQ(code(kNode1, "POST", kNodes, node_object("n1", R"({"kubernetes.io/role":"master"})")), 403);
  EXPECT_EQ(code(kNode1, "POST", kNodes, node_object("n1", R"({"foo.k8s.io/x":"a"})")), 403);
  // The kubelet's own labels, its namespaces and any other prefix are allowed.
  r = call(kNode1, "POST", kNodes,
           node_object("n1", R"({"kubernetes.io/hostname":"n1","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"big",
             "topology.kubernetes.io/zone":"z","x.kubelet.kubernetes.io/y":"1","nvidia.com/gpu.present":"true"})"));
  EXPECT_EQ(r.code, 201) << r.body;
  // A label an admin set may stay; the node may not change or remove it.
  Response admin = call(kAdmin, "PATCH", std::string(kNodes) + "/n1",
                        R"({"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"a"}}})",
                        "application/merge-patch+json");
  ASSERT_EQ(admin.code, 200) << admin.body;
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1", R"({"metadata":{"labels":{"nvidia.com/x":"1"}}})",
                 "application/merge-patch+json"),
            200);
  r = call(kNode1, "PATCH", std::string(kNodes) + "/n1",
           R"({"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"b"}}})", "application/merge-patch+json");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("is not allowed to modify labels: node-restriction.kubernetes.io/pool"), std::string::npos)
      << r.body;
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1",
                 R"({"metadata":{"labels":{"node-restriction.kubernetes.io/pool":null}}})", "application/merge-patch+json"),
            403);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1",
                 R"({"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}})",
                 "application/merge-patch+json"),
            403);
}

TEST_F(AuthorizationTest, NodeMayRegisterWithTaintsButNotChangeThem) {
  const std::string taint = R"([{"key":"example.com/gpu","effect":"NoSchedule"}])";
  // As kubelet --register-with-taints: taints at create are allowed.
  Response r = call(kNode1, "POST", kNodes, node_object("n1", "{}", taint));
  ASSERT_EQ(r.code, 201) << r.body;
  r = call(kNode1, "PATCH", std::string(kNodes) + "/n1", R"({"spec":{"taints":[]}})", "application/merge-patch+json");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("node \\\"n1\\\" is not allowed to modify taints"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1",
                 R"({"spec":{"taints":[{"key":"example.com/gpu","effect":"NoSchedule"},{"key":"a","effect":"NoExecute"}]}})",
                 "application/merge-patch+json"),
            403);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1", R"({"spec":{"unschedulable":true}})",
                 "application/merge-patch+json"),
            200);
  // Status updates leave the taints alone.
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n1/status", R"({"status":{"phase":"Running"}})",
                 "application/merge-patch+json"),
            200);
}

TEST_F(AuthorizationTest, NodeReadsAndWritesOnlyItsOwnNode) {
  admin_create(kNodes, node_object("n2"));
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodes) + "/n1"), 404);  // may look before it registers
  Response r = call(kNode1, "POST", kNodes, node_object("n3"));
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("node \\\"n1\\\" is not allowed to modify node \\\"n3\\\""), std::string::npos) << r.body;
  ASSERT_EQ(code(kNode1, "POST", kNodes, node_object("n1")), 201);
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodes) + "/n1"), 200);
  r = call(kNode1, "GET", std::string(kNodes) + "/n2");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("node 'n1' cannot read 'n2', only its own Node object"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "GET", kNodes), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodes) + "?watch=true"), 403);
  EXPECT_EQ(names(call(kNode1, "GET", std::string(kNodes) + "?fieldSelector=metadata.name=n1")),
            (std::vector<std::string>{"n1"}));
  EXPECT_EQ(code(kNode1, "GET", std::string(kNodes) + "?fieldSelector=metadata.name=n2"), 403);
  const std::string patch = R"({"metadata":{"annotations":{"a":"b"}}})";
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n2", patch, "application/merge-patch+json"), 403);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kNodes) + "/n2/status", R"({"status":{}})", "application/merge-patch+json"),
            403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kNodes) + "/n2"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kNodes) + "/n1"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", kNodes), 403);
}

TEST_F(AuthorizationTest, NodeReadsOnlyClaimsOfPodsBoundToIt) {
  admin_create(kAuthzClaims, claim("direct"));
  admin_create(kAuthzClaims, claim("templated"));
  admin_create(kAuthzClaims, claim("elsewhere"));
  admin_create(kAuthzClaims, claim("unused"));
  admin_create(kPods, pod("p1", "n1", R"([{"name":"gpu","resourceClaimName":"direct"},
                                          {"name":"t","resourceClaimTemplateName":"tmpl"}])"));
  admin_create(kPods, pod("p2", "n2", R"([{"name":"gpu","resourceClaimName":"elsewhere"}])"));
  admin_create(kPods, pod("p3", "", R"([{"name":"gpu","resourceClaimName":"unused"}])"));  // not bound
  const std::string claims = kAuthzClaims;
  EXPECT_EQ(code(kNode1, "GET", claims + "/direct"), 200);
  Response r = call(kNode1, "GET", claims + "/templated");
  EXPECT_EQ(r.code, 403) << r.body;  // the generated claim is not known to be the pod's yet
  ASSERT_EQ(code(kAdmin, "PATCH", std::string(kPods) + "/p1/status",
                 R"({"status":{"resourceClaimStatuses":[{"name":"t","resourceClaimName":"templated"}]}})",
                 "application/merge-patch+json"),
            200);
  EXPECT_EQ(code(kNode1, "GET", claims + "/templated"), 200);
  r = call(kNode1, "GET", claims + "/elsewhere");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("no relationship found between node 'n1' and this object"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "GET", claims + "/unused"), 403);
  EXPECT_EQ(code(kNode1, "GET", "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims/direct"), 200);
  // Only get of single claims and status updates (NodeClaimDeviceStatus below):
  // no list, watch, reading status or writes.
  r = call(kNode1, "GET", kAuthzClaims);
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("can only get individual resources of this type"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "GET", "/apis/resource.k8s.io/v1/resourceclaims"), 403);
  EXPECT_EQ(code(kNode1, "GET", claims + "?watch=true"), 403);
  EXPECT_EQ(code(kNode1, "GET", claims + "?fieldSelector=metadata.name=direct"), 403);
  EXPECT_EQ(code(kNode1, "GET", claims + "/direct/status"), 403);
  EXPECT_EQ(code(kNode1, "PATCH", claims + "/unused/status", R"({"status":{}})", "application/merge-patch+json"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", claims + "/direct"), 403);
  EXPECT_EQ(code(kNode1, "POST", kAuthzClaims, claim("mine")), 403);
}

// The driver's device status (KEP-4817): a node writes the status.devices
// entries of its own pool into the claims of its pods, and nothing else.
// The node authorizer's pod -> ConfigMap/Secret edges: a node reads what the
// pods bound to it name in env, envFrom or volumes, and nothing else.
TEST_F(AuthorizationTest, NodeReadsOnlyConfigMapsAndSecretsOfPodsBoundToIt) {
  const std::string cms = "/api/v1/namespaces/default/configmaps", secrets = "/api/v1/namespaces/default/secrets";
  for (const char* n : {"env", "from", "vol", "other"}) {
    admin_create(cms, std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")") + n + R"("}})");
    admin_create(secrets, std::string(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")") + n + R"("}})");
  }
  admin_create(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"nodeName":"n1",
    "containers":[{"name":"c","image":"i","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"env","key":"k"}}}],
      "envFrom":[{"secretRef":{"name":"from"}}]}],
    "volumes":[{"name":"v","secret":{"secretName":"vol"}},{"name":"w","projected":{"sources":[{"configMap":{"name":"vol"}}]}}]}})");
  admin_create(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2"},"spec":{"nodeName":"n2",
    "containers":[{"name":"c","image":"i","envFrom":[{"configMapRef":{"name":"other"}}]}]}})");
  EXPECT_EQ(code(kNode1, "GET", cms + "/env"), 200);
  EXPECT_EQ(code(kNode1, "GET", cms + "/vol"), 200);
  EXPECT_EQ(code(kNode1, "GET", secrets + "/from"), 200);
  EXPECT_EQ(code(kNode1, "GET", secrets + "/vol"), 200);
  EXPECT_EQ(code(kNode1, "GET", cms + "/from"), 403);      // p1 names a Secret "from", not a ConfigMap
  EXPECT_EQ(code(kNode1, "GET", secrets + "/env"), 403);
  EXPECT_EQ(code(kNode1, "GET", cms + "/other"), 403);     // another node's pod
  EXPECT_EQ(code(kNode1, "GET", cms), 403);                // no list
  EXPECT_EQ(code(kNode1, "DELETE", cms + "/env"), 403);
}

TEST_F(AuthorizationTest, NodeClaimDeviceStatus) {
  admin_create(kAuthzClaims, claim("direct"));
  admin_create(kPods, pod("p1", "n1", R"([{"name":"gpu","resourceClaimName":"direct"}])"));
  const std::string status = std::string(kAuthzClaims) + "/direct/status";
  const char* merge = "application/merge-patch+json";
  ASSERT_EQ(code(kAdmin, "PATCH", status, R"({"status":{"allocation":{"devices":{"results":[
      {"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"},
      {"request":"gpu","driver":"gpu.example.com","pool":"n2","device":"gpu-0"}]}},
      "devices":[{"driver":"gpu.example.com","pool":"n2","device":"gpu-0"}]}})", merge),
            200);
  auto devices = [](const std::string& own_status) {
    return R"({"status":{"devices":[{"driver":"gpu.example.com","pool":"n2","device":"gpu-0"},
        {"driver":"gpu.example.com","pool":"n1","device":"gpu-0","conditions":[{"type":"Healthy","status":")" +
           own_status + R"(","reason":"Healthy","message":"","lastTransitionTime":"2025-01-01T00:00:00Z"}]}]}})";
  };
  EXPECT_EQ(code(kNode1, "PATCH", status, devices("True"), merge), 200);
  EXPECT_EQ(code(kNode1, "PATCH", status, devices("False"), merge), 200);
  // Another pool's entry, the allocation or reservedFor: refused.
  Response r = call(kNode1, "PATCH", status, R"({"status":{"devices":[
      {"driver":"gpu.example.com","pool":"n2","device":"gpu-0","conditions":[{"type":"Healthy","status":"False",
       "reason":"Unhealthy","message":"","lastTransitionTime":"2025-01-01T00:00:00Z"}]}]}})", merge);
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("may only update status.devices entries of its own pool"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "PATCH", status, R"({"status":{"reservedFor":[{"resource":"pods","name":"p1","uid":"x"}]}})",
                 merge),
            403);
  EXPECT_EQ(code(kNode1, "PATCH", status, R"({"status":{"allocation":null,"devices":null}})", merge), 403);
}

// The pods a claim is reserved for are asked first; the answer is the same as
// without them: a pod bound to the node must reference the claim.
TEST_F(AuthorizationTest, ReservedForDoesNotStandInForAReference) {
  admin_create(kAuthzClaims, claim("shared"));
  admin_create(kPods, pod("p1", "n1", R"([{"name":"gpu","resourceClaimName":"shared"}])"));
  admin_create(kPods, pod("p2", "n1"));  // bound to n1, does not use the claim
  admin_create(kPods, pod("p3", "n2", R"([{"name":"gpu","resourceClaimName":"shared"}])"));
  auto uid = [&](const std::string& name) {
    auto j = parse_json(call(kAdmin, "GET", std::string(kPods) + "/" + name).body);
    return j.has_value() ? get_string(*j, {"metadata", "uid"}) : std::string();
  };
  auto reserve = [&](const std::vector<std::string>& pods) {
    std::string rf;
    for (const auto& p : pods) {
      rf += std::string(rf.empty() ? "" : ",") + R"({"resource":"pods","name":")" + p + R"(","uid":")" + uid(p) + R"("})";
    }
    Response r = call(kAdmin, "PATCH", std::string(kAuthzClaims) + "/shared/status",
                      R"({"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com",
                        "pool":"n1","device":"gpu-0"}]}},"reservedFor":[)" + rf + "]}}",
                      "application/merge-patch+json");
    ASSERT_EQ(r.code, 200) << r.body;
  };
  const std::string get = std::string(kAuthzClaims) + "/shared";
  reserve({"p3"});  // reserved for n2's pod only: n1's p1 still references it
  EXPECT_EQ(code(kNode1, "GET", get), 200);
  reserve({"p2", "p1"});
  EXPECT_EQ(code(kNode1, "GET", get), 200);
  ASSERT_EQ(code(kAdmin, "DELETE", std::string(kPods) + "/p1"), 200);
  reserve({"p2"});  // bound to n1 but without a reference to the claim
  EXPECT_EQ(code(kNode1, "GET", get), 403);
}

TEST_F(AuthorizationTest, NodeReadsDeviceClassesButDoesNotWriteThem) {
  const std::string cls = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.example.com"}})";
  admin_create("/apis/resource.k8s.io/v1/deviceclasses", cls);
  EXPECT_EQ(code(kNode1, "GET", "/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com"), 200);
  EXPECT_EQ(code(kNode1, "GET", "/apis/resource.k8s.io/v1/deviceclasses"), 200);
  EXPECT_EQ(code(kNode1, "GET", "/apis/resource.k8s.io/v1/deviceclasses?watch=true"), 200);
  EXPECT_EQ(code(kNode1, "POST", "/apis/resource.k8s.io/v1/deviceclasses", cls), 403);
  EXPECT_EQ(code(kNode1, "DELETE", "/apis/resource.k8s.io/v1/deviceclasses/gpu.example.com"), 403);
}

TEST_F(AuthorizationTest, NodeSeesAndUpdatesOnlyPodsBoundToIt) {
  admin_create(kPods, pod("p1", "n1"));
  admin_create(kPods, pod("p2", "n2"));
  EXPECT_EQ(code(kNode1, "GET", "/api/v1/pods"), 403);
  Response r = call(kNode1, "GET", "/api/v1/pods?watch=true");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("can only list/watch pods with spec.nodeName field selector"), std::string::npos) << r.body;
  EXPECT_EQ(names(call(kNode1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName=n1")), (std::vector<std::string>{"p1"}));
  EXPECT_EQ(code(kNode1, "GET", "/api/v1/pods?fieldSelector=spec.nodeName=n1&watch=true"), 200);
  EXPECT_EQ(code(kNode1, "GET", std::string(kPods) + "?fieldSelector=metadata.name=p1"), 200);
  EXPECT_EQ(code(kNode1, "GET", std::string(kPods) + "?fieldSelector=metadata.name=p2"), 403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kPods) + "/p1"), 200);
  EXPECT_EQ(code(kNode1, "GET", std::string(kPods) + "/p2"), 403);
  const std::string running = R"({"status":{"phase":"Running"}})";
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kPods) + "/p1/status", running, "application/merge-patch+json"), 200);
  r = call(kNode1, "PATCH", std::string(kPods) + "/p2/status", running, "application/merge-patch+json");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("can only update pod status for pods with spec.nodeName set to itself"), std::string::npos);
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kPods) + "/p1", R"({"metadata":{"labels":{"x":"y"}}})",
                 "application/merge-patch+json"),
            403);
  EXPECT_EQ(code(kNode1, "POST", kPods, pod("p3", "n1")), 403);
  EXPECT_EQ(code(kNode1, "POST", std::string(kPods) + "/p2/binding",
                 R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p2"},"target":{"kind":"Node","name":"n1"}})"),
            403);
  EXPECT_EQ(code(kNode1, "GET", std::string(kPods) + "/p1/log"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", kPods), 403);
  r = call(kNode1, "DELETE", std::string(kPods) + "/p2");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("can only delete pods with spec.nodeName set to itself"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "DELETE", std::string(kPods) + "/p1"), 200);
}

TEST_F(AuthorizationTest, NodeMayNotChangeResourceClaimStatusesOfItsPods) {
  admin_create(kPods, pod("p1", "n1", R"([{"name":"t","resourceClaimTemplateName":"tmpl"}])"));
  ASSERT_EQ(code(kAdmin, "PATCH", std::string(kPods) + "/p1/status",
                 R"({"status":{"resourceClaimStatuses":[{"name":"t","resourceClaimName":"c1"}]}})",
                 "application/merge-patch+json"),
            200);
  Response r = call(kNode1, "PATCH", std::string(kPods) + "/p1/status",
                    R"({"status":{"resourceClaimStatuses":[{"name":"t","resourceClaimName":"c2"}]}})",
                    "application/merge-patch+json");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("node \\\"n1\\\" cannot update resource claim statues"), std::string::npos) << r.body;
  EXPECT_EQ(code(kNode1, "PATCH", std::string(kPods) + "/p1/status", R"({"status":{"phase":"Running"}})",
                 "application/merge-patch+json"),
            200);
}

TEST_F(AuthorizationTest, NodeCreatesEventsButDoesNotReadThem) {
  const std::string ev = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},
    "involvedObject":{"kind":"Node","name":"n1"},"reason":"Started","message":"m","type":"Normal"})";
  EXPECT_EQ(code(kNode1, "POST", "/api/v1/namespaces/default/events", ev), 201);
  EXPECT_EQ(code(kNode1, "GET", "/api/v1/namespaces/default/events"), 403);
  EXPECT_EQ(code(kNode1, "GET", "/api/v1/namespaces/default/events/e1"), 403);
  EXPECT_EQ(code(kNode1, "DELETE", "/api/v1/namespaces/default/events/e1"), 403);
}

TEST_F(AuthorizationTest, UsersThatAreNeitherAdminNorNodeReadNothing) {
  admin_create(kAuthzClaims, claim("c1"));
  Response r = call(kUser, "GET", kAuthzClaims);
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_NE(r.body.find("User \\\"alice\\\" cannot list resource \\\"resourceclaims\\\" in API group "
                        "\\\"resource.k8s.io\\\" in the namespace \\\"default\\\""),
            std::string::npos)
      << r.body;
  EXPECT_EQ(code(kUser, "GET", std::string(kAuthzClaims) + "/c1"), 403);
  EXPECT_EQ(code(kUser, "GET", std::string(kAuthzClaims) + "?watch=true"), 403);
  EXPECT_EQ(code(kUser, "GET", "/api/v1/namespaces"), 403);
  EXPECT_EQ(code(kUser, "GET", "/api"), 200);  // discovery stays readable
  EXPECT_EQ(code(kUser, "GET", "/apis/resource.k8s.io/v1"), 200);
}

// Every resource, subresource and verb without a node rule is forbidden to a
// node, whatever the object: the table is the whole of what a node may do.
TEST_F(AuthorizationTest, EverythingOutsideTheNodeRulesIsForbiddenToNodes) {
  const std::vector<std::string> verbs = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"};
  int checked = 0;
  for (const ResourceInfo& r : all_resources()) {
    std::string base = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
    std::string collection = base + (r.namespaced ? "/namespaces/kube-node-lease/" : "/") + r.resource;
    std::vector<std::string> subs = {""};
    for (const auto& s : r.subresources) subs.push_back(s);
    for (const auto& sub : subs) {
      for (const auto& verb : verbs) {
        if (find_rule("node", r.group, r.resource, sub, verb)) continue;
        // The verbs the server routes for each subresource.
        if (sub == "status" && verb != "get" && verb != "update" && verb != "patch") continue;
        if (sub == "binding" && verb != "create") continue;
        if (sub == "log" && verb != "get") continue;
        bool named = !sub.empty() || (verb != "list" && verb != "watch" && verb != "deletecollection" && verb != "create");
        std::string target = collection + (named ? "/n1" : "") + (sub.empty() ? "" : "/" + sub);
        std::string method = verb == "get" || verb == "list" || verb == "watch" ? "GET"
                             : verb == "create"                                 ? "POST"
                             : verb == "update"                                 ? "PUT"
                             : verb == "patch"                                  ? "PATCH"
                                                                                : "DELETE";
        if (verb == "watch") target += "?watch=true";
        Response resp = call(kNode1, method, target, "{}",
                             verb == "patch" ? "application/merge-patch+json" : "application/json");
        EXPECT_EQ(resp.code, 403) << verb << " " << target << ": " << resp.body;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// docs/security.md's table, row by row, is the table the server enforces.
TEST(AuthorizationDoc, TableMatchesTheRulesTheServerEnforces) {
  std::ifstream in(std::string(DRAPLANE_SOURCE_DIR) + "/docs/security.md");
  ASSERT_TRUE(in) << "docs/security.md";
  std::vector<std::vector<std::string>> doc;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("<!-- authorization-table:begin -->") != std::string::npos) {
      inside = true;
      continue;
    }
    if (line.find("<!-- authorization-table:end -->") != std::string::npos) break;
    if (!inside || line.empty() || line[0] != '|') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.empty() || cells[0] == "Identity" || cells[0].rfind("---", 0) == 0) continue;  // header, rule
    doc.push_back(cells);
  }
  ASSERT_TRUE(inside) << "the table's markers are missing";
  std::vector<std::vector<std::string>> code;
  for (const auto& r : authorization_rules()) {
    std::string verbs;
    for (const auto& v : r.verbs) verbs += (verbs.empty() ? "" : ", ") + v;
    code.push_back({r.identity, r.group.empty() ? "core" : r.group, r.resource, verbs, condition_text(r.condition),
                    r.admission.empty() ? "-" : r.admission});
  }
  EXPECT_EQ(doc, code) << "update docs/security.md's table (or the rules in src/server/authorization.cc)";
}

TEST(AuthorizationRules, ForbiddenNodeLabels) {
  EXPECT_EQ(forbidden_node_labels({"node-restriction.kubernetes.io/a", "a.node-restriction.kubernetes.io/b",
                                   "kubernetes.io/hostname", "beta.kubernetes.io/arch", "node.kubernetes.io/x",
                                   "kubelet.kubernetes.io/y", "k8s.io/z", "x.k8s.io/w", "kubernetes.io/role",
                                   "notkubernetes.io/v", "example.com/u", "plain"}),
            (std::vector<std::string>{"a.node-restriction.kubernetes.io/b", "k8s.io/z", "kubernetes.io/role",
                                      "node-restriction.kubernetes.io/a", "x.k8s.io/w"}));
}

}  // namespace
}  // namespace draplane::server
