// ApiServer over the memory store: REST semantics checked request by request.
#include "server/api_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>

#include "server/http_server.h"
#include "server/json_util.h"
#include "server/protobuf_wire.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

// The memory store, except that the first conditional write (update or remove)
// of `race_key` is preceded by another writer's unconditional rewrite of it,
// so that the conditional one meets a newer revision: a controller's write
// landing between the API server's read and its write.
class RacingStore final : public store::Store {
 public:
  explicit RacingStore(std::unique_ptr<store::Store> inner) : inner_(std::move(inner)) {}
  std::string race_key;
  int races = 0;  // the rewrites made

  int64_t current_revision() override { return inner_->current_revision(); }
  int64_t compacted_revision() override { return inner_->compacted_revision(); }
  Result<store::KeyValue> get(std::string_view key, int64_t revision) override { return inner_->get(key, revision); }
  Result<store::ListResult> list(std::string_view prefix, const store::ListOptions& opts) override {
    return inner_->list(prefix, opts);
  }
  Result<store::KeyValue> create(std::string_view key, std::string_view value) override {
    return inner_->create(key, value);
  }
  Result<store::WriteResult> update(std::string_view key, std::string_view value, int64_t expected) override {
    race(key, expected);
    return inner_->update(key, value, expected);
  }
  Result<store::WriteResult> remove(std::string_view key, int64_t expected) override {
    race(key, expected);
    return inner_->remove(key, expected);
  }
  Result<std::unique_ptr<store::WatchHandle>> watch(std::string_view prefix, int64_t start,
                                                    store::WatchCallback cb) override {
    return inner_->watch(prefix, start, std::move(cb));
  }
  Status compact(int64_t revision) override { return inner_->compact(revision); }

 private:
  void race(std::string_view key, int64_t expected) {
    if (expected == 0 || races > 0 || key != race_key) return;
    auto cur = inner_->get(key, 0);
    if (!cur.has_value()) return;
    ++races;
    (void)inner_->update(key, cur->value, 0);
  }
  std::unique_ptr<store::Store> inner_;
};

const char* kClaim = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1","labels":{"app":"a"}},
  "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})";

class ApiServerTest : public ::testing::Test {
 protected:
  ApiServerTest() {
    auto racing = std::make_unique<RacingStore>(store::new_memory_store());
    racing_ = racing.get();
    store_ = std::move(racing);
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();  // 2026-01-01T00:00:00Z
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return "xyz12"; };
    api_ = std::make_unique<ApiServer>(*store_, o);
    EXPECT_TRUE(api_->bootstrap().ok());
  }
  Response call(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& content_type = "application/json", Identity id = {"admin", true, ""},
                const std::string& accept = "application/json") {
    Request r;
    r.method = method;
    size_t qm = target.find('?');
    r.path = target.substr(0, qm);
    if (qm != std::string::npos) {
      std::string qs = target.substr(qm + 1);
      size_t start = 0;
      while (start < qs.size()) {
        size_t amp = qs.find('&', start);
        std::string kv = qs.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
        size_t eq = kv.find('=');
        r.query[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (amp == std::string::npos) break;
        start = amp + 1;
      }
    }
    r.body = body;
    r.content_type = content_type;
    r.identity = id;
    r.accept = accept;
    return api_->handle(r).response;
  }
  static Json json(const Response& r) {
    auto j = parse_json(r.body);
    EXPECT_TRUE(j.has_value()) << r.body;
    return j.has_value() ? std::move(j).value() : Json();
  }
  static const char* kClaims;
  int uids_ = 0;
  std::unique_ptr<store::Store> store_;
  RacingStore* racing_ = nullptr;  // store_
  std::unique_ptr<ApiServer> api_;
};
const char* ApiServerTest::kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

TEST_F(ApiServerTest, CreateSetsServerMetadataAndGetReturnsIt) {
  Response r = call("POST", kClaims, kClaim);
  ASSERT_EQ(r.code, 201) << r.body;
  Json o = json(r);
  EXPECT_EQ(get_string(o, {"metadata", "uid"}), "uid-7");  // 4 namespaces and 2 priority classes took uid-1..6
  EXPECT_EQ(get_string(o, {"metadata", "namespace"}), "default");
  EXPECT_EQ(get_string(o, {"metadata", "creationTimestamp"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(get_string(o, {"metadata", "resourceVersion"}), "8");
  EXPECT_EQ(find(o, {"metadata", "generation"})->GetInt64(), 1);
  EXPECT_EQ(get_string(o, {"spec", "devices", "requests"}), "");
  const JsonValue* req0 = &(*find(o, {"spec", "devices", "requests"}))[0];
  EXPECT_EQ(get_string(*req0, {"exactly", "allocationMode"}), "ExactCount");  // defaulted
  Response g = call("GET", std::string(kClaims) + "/c1");
  ASSERT_EQ(g.code, 200);
  EXPECT_EQ(json(g), o);
}

TEST_F(ApiServerTest, ErrorsAreKubernetesStatusObjects) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  struct Case {
    std::string name, method, target, body;
    int code;
    std::string reason, message;
  };
  const std::vector<Case> cases = {
      {"duplicate", "POST", kClaims, kClaim, 409, "AlreadyExists", R"(resourceclaims.resource.k8s.io "c1" already exists)"},
      {"missing", "GET", std::string(kClaims) + "/nope", "", 404, "NotFound", R"(resourceclaims.resource.k8s.io "nope" not found)"},
      {"no namespace", "POST", "/apis/resource.k8s.io/v1/namespaces/ghost/resourceclaims", kClaim, 404, "NotFound",
       R"(namespaces "ghost" not found)"},
      {"bad json", "POST", kClaims, "{", 400, "BadRequest", ""},
      {"unknown resource", "GET", "/apis/resource.k8s.io/v1/widgets", "", 404, "NotFound",
       "the server could not find the requested resource"},
      {"method", "PUT", kClaims, kClaim, 405, "MethodNotAllowed", ""},
      {"stale rv", "PUT", std::string(kClaims) + "/c1",
       R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1","resourceVersion":"2"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})",
       409, "Conflict",
       R"(Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c1": the object has been modified; please apply your changes to the latest version and try again)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Response r = call(c.method, c.target, c.body);
    EXPECT_EQ(r.code, c.code) << r.body;
    Json s = json(r);
    EXPECT_EQ(get_string(s, {"kind"}), "Status");
    EXPECT_EQ(get_string(s, {"status"}), "Failure");
    EXPECT_EQ(get_string(s, {"reason"}), c.reason);
    if (!c.message.empty()) {
      EXPECT_EQ(get_string(s, {"message"}), c.message);
    }
    EXPECT_EQ(find(s, {"code"})->GetInt(), c.code);
  }
}

TEST_F(ApiServerTest, InvalidClaimIs422WithFieldCauses) {
  std::string bad = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"bad"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","count":-1}}]}}})";
  Response r = call("POST", kClaims, bad);
  ASSERT_EQ(r.code, 422) << r.body;
  Json s = json(r);
  EXPECT_EQ(get_string(s, {"reason"}), "Invalid");
  EXPECT_EQ(get_string(s, {"message"}),
            R"(ResourceClaim.resource.k8s.io "bad" is invalid: spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero)");
  const JsonValue& cause = (*find(s, {"details", "causes"}))[0];
  EXPECT_EQ(get_string(cause, {"field"}), "spec.devices.requests[0].exactly.count");
  EXPECT_EQ(get_string(cause, {"reason"}), "FieldValueInvalid");
  EXPECT_EQ(get_string(s, {"details", "kind"}), "ResourceClaim");
}

TEST_F(ApiServerTest, StatusSubresourceChangesOnlyStatusAndSpecIsImmutable) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  // Main resource: a status in the body is ignored; a spec change is refused.
  Response r = call("PATCH", std::string(kClaims) + "/c1", R"({"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})",
                    "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(find(json(r), {"status", "reservedFor"}), nullptr);
  r = call("PATCH", std::string(kClaims) + "/c1", R"({"spec":{"devices":{"requests":[{"name":"other","exactly":{"deviceClassName":"x"}}]}}})",
           "application/merge-patch+json");
  EXPECT_EQ(r.code, 422) << r.body;
  // Status: labels in the body are ignored, status is validated (reservedFor needs an allocation).
  r = call("PATCH", std::string(kClaims) + "/c1/status",
           R"({"metadata":{"labels":{"x":"y"}},"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})",
           "application/merge-patch+json");
  EXPECT_EQ(r.code, 422) << r.body;
  r = call("PATCH", std::string(kClaims) + "/c1", R"({"metadata":{"labels":{"app":"b"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.code, 200);
  Json o = json(r);
  EXPECT_EQ(get_string(o, {"metadata", "labels", "app"}), "b");
  EXPECT_EQ(find(o, {"metadata", "generation"})->GetInt64(), 1);  // metadata-only change
}

// The driver's status.devices entries of deallocated devices go with the
// allocation (the strategy's dropDeallocatedStatusDevices), so whoever
// deallocates need not know about them.
TEST_F(ApiServerTest, DeallocationDropsTheDeviceStatusOfDeallocatedDevices) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  const std::string status = std::string(kClaims) + "/c1/status";
  const char* merge = "application/merge-patch+json";
  Response r = call("PATCH", status, R"({"status":{"allocation":{"devices":{"results":[
      {"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"},
      {"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-1"}]}},
      "devices":[{"driver":"gpu.example.com","pool":"n1","device":"gpu-0"},
                 {"driver":"gpu.example.com","pool":"n1","device":"gpu-1"}]}})", merge);
  ASSERT_EQ(r.code, 200) << r.body;
  r = call("PATCH", status, R"({"status":{"allocation":null}})", merge);
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(find(json(r), {"status", "devices"}), nullptr) << r.body;
  // The entry of a device that stays allocated stays.
  r = call("PATCH", status, R"({"status":{"allocation":{"devices":{"results":[
      {"request":"gpu","driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}},
      "devices":[{"driver":"gpu.example.com","pool":"n1","device":"gpu-0"}]}})", merge);
  ASSERT_EQ(r.code, 200) << r.body;
  r = call("PATCH", status, R"({"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})", merge);
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(find(json(r), {"status", "devices"})->Size(), 1u) << r.body;
  // Entries for devices that were never allocated are still refused.
  r = call("PATCH", status, R"({"status":{"devices":[{"driver":"gpu.example.com","pool":"n1","device":"gpu-9"}]}})",
           merge);
  EXPECT_EQ(r.code, 422) << r.body;
}

TEST_F(ApiServerTest, ListSelectorsLimitAndContinue) {
  for (int i = 0; i < 5; ++i) {
    std::string c = kClaim;
    c.replace(c.find("\"c1\""), 4, "\"c" + std::to_string(i) + "\"");
    if (i % 2) c.replace(c.find("\"app\":\"a\""), 9, "\"app\":\"b\"");
    ASSERT_EQ(call("POST", kClaims, c).code, 201);
  }
  auto names = [&](const Response& r) {
    std::vector<std::string> out;
    Json l = json(r);
    for (const auto& it : find(l, {"items"})->GetArray()) out.push_back(get_string(it, {"metadata", "name"}));
    return out;
  };
  // Not decoded by this helper: "app%3Db" is not a label key (400, as upstream).
  EXPECT_EQ(call("GET", std::string(kClaims) + "?labelSelector=app%3Db").code, 400);
  EXPECT_EQ(names(call("GET", std::string(kClaims) + "?labelSelector=app=b")), (std::vector<std::string>{"c1", "c3"}));
  EXPECT_EQ(names(call("GET", std::string(kClaims) + "?labelSelector=app!=b")), (std::vector<std::string>{"c0", "c2", "c4"}));
  EXPECT_EQ(names(call("GET", std::string(kClaims) + "?fieldSelector=metadata.name=c4")), (std::vector<std::string>{"c4"}));
  EXPECT_EQ(call("GET", std::string(kClaims) + "?fieldSelector=spec.foo=x").code, 400);
  Response p1 = call("GET", std::string(kClaims) + "?limit=2");
  EXPECT_EQ(names(p1), (std::vector<std::string>{"c0", "c1"}));
  Json l1 = json(p1);
  std::string token = get_string(l1, {"metadata", "continue"});
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(find(l1, {"metadata", "remainingItemCount"})->GetInt64(), 3);
  Response p2 = call("GET", std::string(kClaims) + "?limit=2&continue=" + token);
  EXPECT_EQ(names(p2), (std::vector<std::string>{"c2", "c3"}));
  EXPECT_EQ(names(call("GET", "/apis/resource.k8s.io/v1/resourceclaims")).size(), 5u);
}

TEST_F(ApiServerTest, AuthenticationAndNodeRestriction) {
  EXPECT_EQ(call("GET", kClaims, "", "", Identity{}).code, 401);
  EXPECT_EQ(call("GET", "/healthz", "", "", Identity{}).code, 200);
  Identity node{"system:node:n1", false, "n1"};
  std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s-NODE"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"NODE","generation":1,"resourceSliceCount":1},"nodeName":"NODE","devices":[{"name":"gpu-0"}]}})";
  auto for_node = [&](const std::string& n) {
    std::string s = slice;
    for (size_t p; (p = s.find("NODE")) != std::string::npos;) s.replace(p, 4, n);
    return s;
  };
  EXPECT_EQ(call("POST", "/apis/resource.k8s.io/v1/resourceslices", for_node("n1"), "application/json", node).code, 201);
  Response other = call("POST", "/apis/resource.k8s.io/v1/resourceslices", for_node("n2"), "application/json", node);
  EXPECT_EQ(other.code, 403) << other.body;
  EXPECT_EQ(get_string(json(other), {"reason"}), "Forbidden");
  EXPECT_EQ(call("POST", kClaims, kClaim, "application/json", node).code, 403);
  // A node reads only the claims of pods bound to it, one by one (authorization_test.cc).
  EXPECT_EQ(call("GET", kClaims, "", "", node).code, 403);
}

TEST_F(ApiServerTest, FinalizersDelayDeletionAndOwnersCollectDependents) {
  std::string owner = kClaim;
  owner.replace(owner.find("\"labels\""), 8, R"("finalizers":["example.com/keep"],"labels")");
  ASSERT_EQ(call("POST", kClaims, owner).code, 201);
  Response d = call("DELETE", std::string(kClaims) + "/c1");
  ASSERT_EQ(d.code, 200);
  EXPECT_EQ(get_string(json(d), {"metadata", "deletionTimestamp"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 200);
  Response p = call("PATCH", std::string(kClaims) + "/c1", R"([{"op":"remove","path":"/metadata/finalizers"}])",
                    "application/json-patch+json");
  EXPECT_EQ(p.code, 200) << p.body;
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);

  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  std::string uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  std::string dep = kClaim;
  dep.replace(dep.find("\"c1\""), 4, "\"dep\",\"ownerReferences\":[{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"name\":\"c1\",\"uid\":\"" + uid + "\"}]");
  ASSERT_EQ(call("POST", kClaims, dep).code, 201);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1").code, 200);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/dep").code, 404);
}

TEST_F(ApiServerTest, NamespaceLifecycleGuardsCreates) {
  // Creates consult the server's namespace cache; its answers must follow the
  // namespace's deletion at once, without waiting for the watch to deliver it.
  const std::string ns = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","finalizers":["example.com/hold"]}})";
  const std::string claims = "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims";
  auto named = [](int i) {
    std::string c = kClaim;
    return c.replace(c.find("\"c1\""), 4, "\"c" + std::to_string(i) + "\"");
  };
  ASSERT_EQ(call("POST", "/api/v1/namespaces", ns).code, 201);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(call("POST", claims, named(i)).code, 201) << i;
  ASSERT_EQ(call("DELETE", "/api/v1/namespaces/team").code, 200);  // terminating: it has a finalizer
  for (int i = 20; i < 25; ++i) {
    Response r = call("POST", claims, named(i));
    EXPECT_EQ(r.code, 403) << r.body;
    EXPECT_NE(r.body.find("unable to create new content in namespace team because it is being terminated"),
              std::string::npos)
        << r.body;
  }
  Response p = call("PATCH", "/api/v1/namespaces/team", R"([{"op":"remove","path":"/metadata/finalizers"}])",
                    "application/json-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  Response gone = call("POST", claims, named(30));
  EXPECT_EQ(gone.code, 404) << gone.body;
  EXPECT_NE(gone.body.find(R"(namespaces \"team\" not found)"), std::string::npos) << gone.body;
  // Created again: usable at once (the cache does not know it yet, the store does).
  ASSERT_EQ(call("POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})").code,
            201);
  EXPECT_EQ(call("POST", claims, named(31)).code, 201);
  EXPECT_EQ(call("GET", claims + "/c0").code, 404);  // the first namespace's contents went with it
}

TEST_F(ApiServerTest, DeletingOneOfTwoOwnersOnlyDropsItsReference) {
  // Through the owner index (bootstrap started it): the dependent written just
  // before the delete must be found, and a second owner keeps it alive.
  std::string a = kClaim, b = kClaim;
  b.replace(b.find("\"c1\""), 4, "\"c2\"");
  ASSERT_EQ(call("POST", kClaims, a).code, 201);
  ASSERT_EQ(call("POST", kClaims, b).code, 201);
  std::string uid1 = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  std::string uid2 = get_string(json(call("GET", std::string(kClaims) + "/c2")), {"metadata", "uid"});
  auto ref = [](const std::string& name, const std::string& uid) {
    return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":")" + name + R"(","uid":")" + uid + "\"}";
  };
  std::string dep = kClaim;
  dep.replace(dep.find("\"c1\""), 4, "\"dep\",\"ownerReferences\":[" + ref("c1", uid1) + "," + ref("c2", uid2) + "]");
  ASSERT_EQ(call("POST", kClaims, dep).code, 201);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1").code, 200);
  Response kept = call("GET", std::string(kClaims) + "/dep");
  ASSERT_EQ(kept.code, 200);
  auto kept_obj = json(kept);
  const JsonValue* refs = find(kept_obj, {"metadata", "ownerReferences"});
  ASSERT_NE(refs, nullptr);
  ASSERT_EQ(refs->Size(), 1u);
  EXPECT_EQ(get_string((*refs)[0], {"uid"}), uid2);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c2").code, 200);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/dep").code, 404);
}

// A claim named `name` with `extra` metadata members (ownerReferences, finalizers).
std::string claim_with(const std::string& name, const std::string& extra) {
  std::string c = kClaim;
  return c.replace(c.find("\"name\":\"c1\""), 11, "\"name\":\"" + name + "\"," + extra);
}
std::string owner_ref(const std::string& name, const std::string& uid, bool blocking) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":")" + name + R"(","uid":")" + uid +
         R"(","controller":true,"blockOwnerDeletion":)" + (blocking ? "true" : "false") + "}";
}

// A cascade's delete of an object that another writer changes between the
// server's read and its write (the claim controller releasing a PodGroup's
// claim as the group goes, the ReplicaSet controller writing a ReplicaSet's
// status) is made again on the new version: a cascade that gave up left the
// object owned by nothing that exists (up_workload_e2e, 1 run in 7-12).
TEST_F(ApiServerTest, ObjectsWrittenDuringACascadeAreDeleted) {
  for (const std::string mode : {"background, finalizer", "background", "foreground"}) {
    SCOPED_TRACE(mode);
    const bool finalizer = mode == "background, finalizer";
    ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
    const std::string uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
    ASSERT_EQ(call("POST", kClaims,
                   claim_with("dep", std::string(finalizer ? "\"finalizers\":[\"example.com/keep\"]," : "") +
                                         "\"ownerReferences\":[" + owner_ref("c1", uid, false) + "]"))
                  .code,
              201);
    racing_->race_key = "/registry/resourceclaims/default/dep";
    racing_->races = 0;
    const std::string query = mode == "foreground" ? "?propagationPolicy=Foreground" : "";
    ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1" + query).code, 200);
    EXPECT_EQ(racing_->races, 1);
    Response dep = call("GET", std::string(kClaims) + "/dep");
    if (finalizer) {
      ASSERT_EQ(dep.code, 200);
      EXPECT_FALSE(get_string(json(dep), {"metadata", "deletionTimestamp"}).empty()) << dep.body;
      Response p = call("PATCH", std::string(kClaims) + "/dep", R"([{"op":"remove","path":"/metadata/finalizers"}])",
                        "application/json-patch+json");
      ASSERT_EQ(p.code, 200) << p.body;
      EXPECT_EQ(call("GET", std::string(kClaims) + "/dep").code, 404);
    } else {
      EXPECT_EQ(dep.code, 404) << dep.body;
    }
    EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);
    racing_->race_key.clear();
  }
  // A namespace's contents likewise.
  ASSERT_EQ(call("POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})").code,
            201);
  const std::string claims = "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims";
  ASSERT_EQ(call("POST", claims, kClaim).code, 201);
  racing_->race_key = "/registry/resourceclaims/team/c1";
  racing_->races = 0;
  ASSERT_EQ(call("DELETE", "/api/v1/namespaces/team").code, 200);
  EXPECT_EQ(racing_->races, 1);
  EXPECT_FALSE(store_->get("/registry/resourceclaims/team/c1").has_value());
  racing_->race_key.clear();
}

TEST_F(ApiServerTest, OrphanPropagationKeepsDependentsWithoutTheReference) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  std::string uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("dep", "\"ownerReferences\":[" + owner_ref("c1", uid, true) + "]")).code, 201);
  Response d = call("DELETE", std::string(kClaims) + "/c1", R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"})");
  ASSERT_EQ(d.code, 200) << d.body;
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);
  Response kept = call("GET", std::string(kClaims) + "/dep");
  ASSERT_EQ(kept.code, 200);
  EXPECT_EQ(find(json(kept), {"metadata", "ownerReferences"}), nullptr) << kept.body;
  // orphanDependents=true in the query means the same.
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("dep2", "\"ownerReferences\":[" + owner_ref("c1", uid, false) + "]")).code, 201);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1?orphanDependents=true").code, 200);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/dep2").code, 200);
  // A dependent written between the server's read and its write loses the
  // reference all the same (dropped again on the newest version).
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("dep3", "\"ownerReferences\":[" + owner_ref("c1", uid, false) + "]")).code, 201);
  racing_->race_key = "/registry/resourceclaims/default/dep3";
  racing_->races = 0;
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1?propagationPolicy=Orphan").code, 200);
  EXPECT_EQ(racing_->races, 1);
  Response raced = call("GET", std::string(kClaims) + "/dep3");
  ASSERT_EQ(raced.code, 200);
  EXPECT_EQ(find(json(raced), {"metadata", "ownerReferences"}), nullptr) << raced.body;
  racing_->race_key.clear();
}

TEST_F(ApiServerTest, ForegroundPropagationWaitsForBlockingDependents) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  std::string uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("held", "\"finalizers\":[\"example.com/keep\"],\"ownerReferences\":[" +
                                                         owner_ref("c1", uid, true) + "]")).code,
            201);
  ASSERT_EQ(call("POST", kClaims, claim_with("loose", "\"ownerReferences\":[" + owner_ref("c1", uid, false) + "]")).code, 201);
  std::string held_uid = get_string(json(call("GET", std::string(kClaims) + "/held")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("grandchild", "\"ownerReferences\":[" + owner_ref("held", held_uid, true) + "]")).code, 201);
  Response d = call("DELETE", std::string(kClaims) + "/c1?propagationPolicy=Foreground");
  ASSERT_EQ(d.code, 200) << d.body;
  // The owner waits, terminating, with the foregroundDeletion finalizer.
  Response owner = call("GET", std::string(kClaims) + "/c1");
  ASSERT_EQ(owner.code, 200);
  auto o = json(owner);
  EXPECT_FALSE(get_string(o, {"metadata", "deletionTimestamp"}).empty());
  const JsonValue* fin = find(o, {"metadata", "finalizers"});
  ASSERT_NE(fin, nullptr);
  ASSERT_EQ(fin->Size(), 1u);
  EXPECT_EQ(std::string((*fin)[0].GetString()), "foregroundDeletion");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/loose").code, 404);       // deleted, not waited for
  EXPECT_EQ(call("GET", std::string(kClaims) + "/grandchild").code, 404);  // the dependent's own dependents first
  Response held = call("GET", std::string(kClaims) + "/held");
  ASSERT_EQ(held.code, 200);
  EXPECT_FALSE(get_string(json(held), {"metadata", "deletionTimestamp"}).empty());
  // Its last finalizer gone, the blocking dependent goes, and then the owner.
  Response p = call("PATCH", std::string(kClaims) + "/held", R"({"metadata":{"finalizers":null}})",
                    "application/merge-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  EXPECT_EQ(call("GET", std::string(kClaims) + "/held").code, 404);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);
}

TEST_F(ApiServerTest, ForegroundWithoutDependentsDeletesAtOnceAndBackgroundIsTheDefault) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1", R"({"propagationPolicy":"Foreground"})").code, 200);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  std::string uid = get_string(json(call("GET", std::string(kClaims) + "/c1")), {"metadata", "uid"});
  ASSERT_EQ(call("POST", kClaims, claim_with("dep", "\"ownerReferences\":[" + owner_ref("c1", uid, true) + "]")).code, 201);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1", R"({"propagationPolicy":"Background"})").code, 200);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/c1").code, 404);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/dep").code, 404);
}

TEST_F(ApiServerTest, GenerateNameAndDryRun) {
  std::string g = kClaim;
  g.replace(g.find("\"name\":\"c1\""), 11, "\"generateName\":\"claim-\"");
  Response dry = call("POST", std::string(kClaims) + "?dryRun=All", g);
  ASSERT_EQ(dry.code, 201);
  EXPECT_EQ(get_string(json(dry), {"metadata", "name"}), "claim-xyz12");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/claim-xyz12").code, 404);
  EXPECT_EQ(call("POST", kClaims, g).code, 201);
  EXPECT_EQ(call("GET", std::string(kClaims) + "/claim-xyz12").code, 200);
}

TEST_F(ApiServerTest, TableOutputForClaims) {
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  Response r = call("GET", kClaims, "", "", {"admin", true, ""}, "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(r.code, 200);
  Json t = json(r);
  EXPECT_EQ(get_string(t, {"kind"}), "Table");
  std::vector<std::string> cols;
  for (const auto& c : find(t, {"columnDefinitions"})->GetArray()) cols.push_back(get_string(c, {"name"}));
  EXPECT_EQ(cols, (std::vector<std::string>{"Name", "State", "Age"}));
  const JsonValue& cells = (*find(t, {"rows"}))[0]["cells"];
  EXPECT_EQ(std::string(cells[0].GetString()), "c1");
  EXPECT_EQ(std::string(cells[1].GetString()), "pending");
  EXPECT_EQ(std::string(cells[2].GetString()), "0s");
}

TEST_F(ApiServerTest, WatchStreamsAddedModifiedDeleted) {
  Request r;
  r.method = "GET";
  r.path = kClaims;
  r.query = {{"watch", "1"}, {"resourceVersion", "5"}};
  r.identity = {"admin", true, ""};
  auto out = api_->handle(r);
  ASSERT_NE(out.watch, nullptr) << out.response.body;
  std::mutex mu;
  std::condition_variable cv;
  out.watch->set_notify([&] { cv.notify_all(); });
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  ASSERT_EQ(call("PATCH", std::string(kClaims) + "/c1", R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json").code, 200);
  ASSERT_EQ(call("DELETE", std::string(kClaims) + "/c1").code, 200);
  std::vector<std::string> lines;
  std::unique_lock<std::mutex> l(mu);
  for (int i = 0; i < 100 && lines.size() < 3; ++i) {
    out.watch->take(lines);
    cv.wait_for(l, std::chrono::milliseconds(100));
  }
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> types;
  for (const auto& line : lines) types.push_back(get_string(json(Response{200, "", line, {}, {}}), {"type"}));
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"}));
}

// Namespaces serve no deletecollection (discovery leaves it out): kube-apiserver
// answers 405, and nothing is deleted.
TEST_F(ApiServerTest, NamespacesCollectionCannotBeDeleted) {
  ASSERT_EQ(call("POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"keep"}})").code,
            201);
  Response r = call("DELETE", "/api/v1/namespaces");
  EXPECT_EQ(r.code, 405) << r.body;
  EXPECT_NE(r.body.find("MethodNotAllowed"), std::string::npos) << r.body;
  EXPECT_EQ(call("GET", "/api/v1/namespaces/keep").code, 200);
}

TEST_F(ApiServerTest, DiscoveryListsResourceGroup) {
  Response r = call("GET", "/apis/resource.k8s.io/v1");
  ASSERT_EQ(r.code, 200);
  Json d = json(r);
  std::vector<std::string> names;
  for (const auto& res : find(d, {"resources"})->GetArray()) names.push_back(get_string(res, {"name"}));
  EXPECT_EQ(names, (std::vector<std::string>{"deviceclasses", "devicetaintrules", "devicetaintrules/status",
                                             "resourceclaims", "resourceclaims/status", "resourceclaimtemplates",
                                             "resourceslices"}));
  EXPECT_EQ(get_string(json(call("GET", "/version")), {"gitVersion"}), "v1.36.0-draplane");
}

// Deployments' /scale (kubectl scale): an autoscaling/v1 Scale read from and
// written to spec.replicas; the write goes through the Deployment's validation.
TEST_F(ApiServerTest, DeploymentScaleSubresource) {
  const std::string base = "/apis/apps/v1/namespaces/default/deployments";
  ASSERT_EQ(call("POST", base, R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
    "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"n","image":"nginx"}]}}}})")
                .code,
            201);
  Response r = call("GET", base + "/web/scale");
  ASSERT_EQ(r.code, 200) << r.body;
  Json scale = json(r);
  EXPECT_EQ(get_string(scale, {"apiVersion"}), "autoscaling/v1");
  EXPECT_EQ(get_string(scale, {"kind"}), "Scale");
  EXPECT_EQ(to_string(*find(scale, {"spec"})), R"({"replicas":2})");
  EXPECT_EQ(get_string(scale, {"status", "selector"}), "app=web");
  r = call("PATCH", base + "/web/scale", R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(to_string(*find(json(r), {"spec"})), R"({"replicas":5})");
  Json d = json(call("GET", base + "/web"));
  EXPECT_EQ(find(d, {"spec", "replicas"})->GetInt64(), 5);
  EXPECT_EQ(find(d, {"metadata", "generation"})->GetInt64(), 2);
  r = call("PATCH", base + "/web/scale", R"({"spec":{"replicas":-1}})", "application/merge-patch+json");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_NE(r.body.find("spec.replicas: Invalid value: -1: must be greater than or equal to 0"), std::string::npos)
      << r.body;
  EXPECT_EQ(call("GET", base + "/missing/scale").code, 404);

  Json list = json(call("GET", "/apis/apps/v1"));
  bool listed = false;
  for (const auto& res : find(list, {"resources"})->GetArray()) {
    if (get_string(res, {"name"}) != "deployments/scale") continue;
    listed = true;
    EXPECT_EQ(get_string(res, {"group"}) + "/" + get_string(res, {"version"}) + " " + get_string(res, {"kind"}),
              "autoscaling/v1 Scale");
  }
  EXPECT_TRUE(listed);
}

TEST_F(ApiServerTest, BetaVersionsAreServedByConversion) {
  const std::string beta1 = "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims";
  const std::string beta2 = "/apis/resource.k8s.io/v1beta2/namespaces/default/resourceclaims";
  std::string flat = R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim","metadata":{"name":"b1"},
    "spec":{"devices":{"requests":[{"name":"gpu","deviceClassName":"gpu.example.com","count":2}]}}})";
  Response r = call("POST", beta1, flat);
  ASSERT_EQ(r.code, 201) << r.body;
  Json o = json(r);
  EXPECT_EQ(get_string(o, {"apiVersion"}), "resource.k8s.io/v1beta1");
  const JsonValue* req0 = &(*find(o, {"spec", "devices", "requests"}))[0];
  EXPECT_EQ(get_string(*req0, {"deviceClassName"}), "gpu.example.com");
  EXPECT_EQ(get_string(*req0, {"allocationMode"}), "ExactCount");  // defaulted in v1, shown flat
  EXPECT_EQ(find(*req0, {"exactly"}), nullptr);
  // Stored as v1: the v1 and v1beta2 URLs show requests[].exactly.
  for (const std::string& url : {std::string(kClaims) + "/b1", beta2 + "/b1"}) {
    SCOPED_TRACE(url);
    Response g = call("GET", url);
    ASSERT_EQ(g.code, 200) << g.body;
    Json v = json(g);
    EXPECT_EQ(get_string(v, {"apiVersion"}), url.find("v1beta2") != std::string::npos ? "resource.k8s.io/v1beta2"
                                                                                         : "resource.k8s.io/v1");
    const JsonValue& q = (*find(v, {"spec", "devices", "requests"}))[0];
    EXPECT_EQ(find(q, {"exactly", "count"})->GetInt64(), 2);
    EXPECT_EQ(get_string(v, {"metadata", "uid"}), get_string(o, {"metadata", "uid"}));
  }
  auto stored = store_->get("/registry/resourceclaims/default/b1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_NE(stored->value.find(R"("apiVersion":"resource.k8s.io/v1")"), std::string::npos) << stored->value;
  // A v1 claim listed through v1beta1 comes back flat.
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  Response l = call("GET", beta1);
  ASSERT_EQ(l.code, 200);
  Json list = json(l);
  EXPECT_EQ(get_string(list, {"apiVersion"}), "resource.k8s.io/v1beta1");
  EXPECT_EQ(get_string(list, {"kind"}), "ResourceClaimList");
  ASSERT_EQ(find(list, {"items"})->Size(), 2u);
  for (const auto& item : find(list, {"items"})->GetArray()) {
    EXPECT_EQ(get_string(item, {"apiVersion"}), "resource.k8s.io/v1beta1");
    EXPECT_EQ(get_string(item["spec"]["devices"]["requests"][0], {"deviceClassName"}), "gpu.example.com");
  }
  // Merge patch of the v1beta1 form (a flat field), and the reply in v1beta1.
  Response p = call("PATCH", beta1 + "/b1", R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  EXPECT_EQ(get_string(json(p), {"metadata", "labels", "x"}), "y");
  EXPECT_EQ(get_string(json(p), {"apiVersion"}), "resource.k8s.io/v1beta1");
  p = call("PATCH", beta1 + "/b1", R"({"spec":{"devices":{"requests":[{"name":"gpu","deviceClassName":"other"}]}}})",
           "application/merge-patch+json");
  EXPECT_EQ(p.code, 422) << p.body;
  EXPECT_NE(p.body.find("field is immutable"), std::string::npos) << p.body;
  // Validation names the v1 field path (as kube-apiserver validates the internal, v1-shaped type).
  std::string bad = flat;
  bad.replace(bad.find("\"b1\""), 4, "\"bad\"");
  bad.replace(bad.find("\"count\":2"), 9, "\"count\":-1");
  Response inv = call("POST", beta1, bad);
  ASSERT_EQ(inv.code, 422) << inv.body;
  EXPECT_EQ(get_string((*find(json(inv), {"details", "causes"}))[0], {"field"}), "spec.devices.requests[0].exactly.count");
  // Unknown fields keep the path of the version that was written.
  std::string unknown = flat;
  unknown.replace(unknown.find("\"count\":2"), 9, "\"cout\":2");
  Response u = call("POST", beta1 + "?fieldValidation=Strict", unknown);
  EXPECT_EQ(u.code, 400) << u.body;
  EXPECT_EQ(get_string(json(u), {"message"}),
            R"(ResourceClaim in version "v1beta1" cannot be handled as a ResourceClaim: strict decoding error: )"
            R"(unknown field "spec.devices.requests[0].cout")");
  // The body's apiVersion must be the URL's.
  Response mismatch = call("POST", beta1, kClaim);
  EXPECT_EQ(mismatch.code, 400);
  EXPECT_EQ(get_string(json(mismatch), {"message"}),
            "the API version in the data (resource.k8s.io/v1) does not match the expected API version "
            "(resource.k8s.io/v1beta1)");
  // Delete through v1beta2 returns the object in v1beta2.
  Response d = call("DELETE", beta2 + "/b1");
  ASSERT_EQ(d.code, 200) << d.body;
  EXPECT_EQ(get_string(json(d), {"apiVersion"}), "resource.k8s.io/v1beta2");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/b1").code, 404);
}

TEST_F(ApiServerTest, BetaSlicesWatchAndStatus) {
  Request w;
  w.method = "GET";
  w.path = "/apis/resource.k8s.io/v1beta1/resourceslices";
  w.query = {{"watch", "1"}, {"resourceVersion", "4"}};
  w.identity = {"admin", true, ""};
  auto out = api_->handle(w);
  ASSERT_NE(out.watch, nullptr) << out.response.body;
  std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"n","generation":1,"resourceSliceCount":1},"nodeName":"n",
    "devices":[{"name":"gpu-0","attributes":{"model":{"string":"A100"}}}]}})";
  ASSERT_EQ(call("POST", "/apis/resource.k8s.io/v1/resourceslices", slice).code, 201);
  std::vector<std::string> lines;
  for (int i = 0; i < 100 && lines.empty(); ++i) {
    out.watch->take(lines);
    if (lines.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(lines.size(), 1u);
  Json ev = json(Response{200, "", lines[0], {}, {}});
  EXPECT_EQ(get_string(ev, {"type"}), "ADDED");
  EXPECT_EQ(get_string(ev, {"object", "apiVersion"}), "resource.k8s.io/v1beta1");
  const JsonValue& dev = (*find(ev, {"object", "spec", "devices"}))[0];
  EXPECT_EQ(get_string(dev, {"basic", "attributes", "model", "string"}), "A100");
  EXPECT_EQ(find(dev, {"attributes"}), nullptr);
  // A v1beta1 slice body (basic) written through v1beta1 reads back flat in v1.
  std::string beta = R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice","metadata":{"name":"s2"},
    "spec":{"driver":"gpu.example.com","pool":{"name":"n2","generation":1,"resourceSliceCount":1},"nodeName":"n2",
    "devices":[{"name":"gpu-0","basic":{"capacity":{"memory":{"value":"40Gi"}}}}]}})";
  ASSERT_EQ(call("POST", "/apis/resource.k8s.io/v1beta1/resourceslices", beta).code, 201);
  Json v1 = json(call("GET", "/apis/resource.k8s.io/v1/resourceslices/s2"));
  EXPECT_EQ(get_string((*find(v1, {"spec", "devices"}))[0], {"capacity", "memory", "value"}), "40Gi");
  // Status through v1beta1 (PUT of the whole beta object with a status).
  std::string claim = R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim","metadata":{"name":"c"},
    "spec":{"devices":{"requests":[{"name":"gpu","deviceClassName":"gpu.example.com"}]}}})";
  const std::string claims = "/apis/resource.k8s.io/v1beta1/namespaces/default/resourceclaims";
  ASSERT_EQ(call("POST", claims, claim).code, 201);
  Response st = call("PATCH", claims + "/c/status",
                     R"({"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"n","device":"gpu-0"}]}}}})",
                     "application/merge-patch+json");
  ASSERT_EQ(st.code, 200) << st.body;
  EXPECT_EQ(get_string(json(st), {"apiVersion"}), "resource.k8s.io/v1beta1");
  Json c1 = json(call("GET", std::string(kClaims) + "/c"));
  EXPECT_EQ(get_string((*find(c1, {"status", "allocation", "devices", "results"}))[0], {"device"}), "gpu-0");
}

TEST_F(ApiServerTest, FieldValidationStrictWarnIgnore) {
  // Two unknown fields and a duplicate one.
  std::string body = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"NAME","colour":"red"},
    "spec":{"devices":{"requests":[{"name":"gpu","name":"gpu","exactly":{"deviceClassName":"gpu.example.com","cout":2}}]}}})";
  auto named = [&](const std::string& n) {
    std::string b = body;
    b.replace(b.find("NAME"), 4, n);
    return b;
  };
  const std::vector<std::string> problems = {
      R"(unknown field "metadata.colour")", R"(duplicate field "spec.devices.requests[0].name")",
      R"(unknown field "spec.devices.requests[0].exactly.cout")"};
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  Response strict = call("POST", std::string(kClaims) + "?fieldValidation=Strict", named("s"));
  ASSERT_EQ(strict.code, 400) << strict.body;
  std::string msg = get_string(json(strict), {"message"});
  EXPECT_EQ(msg.rfind(R"(ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding error: )", 0), 0u)
      << msg;
  for (const auto& p : problems) EXPECT_NE(msg.find(p), std::string::npos) << p << " in " << msg;
  EXPECT_EQ(call("GET", std::string(kClaims) + "/s").code, 404);

  for (const char* mode : {"?fieldValidation=Warn", ""}) {  // Warn is the default
    SCOPED_TRACE(mode);
    std::string name = *mode ? "w" : "default";
    Response warn = call("POST", std::string(kClaims) + mode, named(name));
    ASSERT_EQ(warn.code, 201) << warn.body;
    EXPECT_EQ(sorted(warn.warnings), sorted(problems));
    Json o = json(warn);
    EXPECT_EQ(find(o, {"metadata", "colour"}), nullptr);
    EXPECT_EQ(find((*find(o, {"spec", "devices", "requests"}))[0], {"exactly", "cout"}), nullptr);
    auto stored = store_->get("/registry/resourceclaims/default/" + name);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->value.find("colour"), std::string::npos) << stored->value;
  }
  Response ignore = call("POST", std::string(kClaims) + "?fieldValidation=Ignore", named("i"));
  ASSERT_EQ(ignore.code, 201) << ignore.body;
  EXPECT_TRUE(ignore.warnings.empty());
  EXPECT_EQ(ignore.body.find("colour"), std::string::npos);

  // Patches and updates take the parameter too.
  Response p = call("PATCH", std::string(kClaims) + "/i", R"({"metadata":{"shade":"blue","labels":{"a":"b"}}})",
                    "application/merge-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  EXPECT_EQ(p.warnings, (std::vector<std::string>{R"(unknown field "metadata.shade")"}));
  EXPECT_EQ(get_string(json(p), {"metadata", "labels", "a"}), "b");
  p = call("PATCH", std::string(kClaims) + "/i?fieldValidation=Strict", R"({"metadata":{"shade":"blue"}})",
           "application/merge-patch+json");
  EXPECT_EQ(p.code, 400) << p.body;
  EXPECT_NE(get_string(json(p), {"message"}).find(R"(strict decoding error: unknown field "metadata.shade")"),
            std::string::npos);
  Json cur = json(call("GET", std::string(kClaims) + "/i"));
  set_string(*find(cur, {"metadata"}), "shade", "green", cur.GetAllocator());
  Response put = call("PUT", std::string(kClaims) + "/i?fieldValidation=Strict", to_string(cur));
  EXPECT_EQ(put.code, 400) << put.body;
  put = call("PUT", std::string(kClaims) + "/i?fieldValidation=Ignore", to_string(cur));
  EXPECT_EQ(put.code, 200) << put.body;
  EXPECT_TRUE(put.warnings.empty());

  struct Case {
    std::string method, target, body, content_type, message;
  };
  const std::vector<Case> bad = {
      {"POST", std::string(kClaims) + "?fieldValidation=Loud", named("x"), "application/json",
       R"(CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "Ignore", "Strict", "Warn")"},
      {"PUT", std::string(kClaims) + "/i?fieldValidation=strict", to_string(cur), "application/json",
       R"(UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "Ignore", "Strict", "Warn")"},
      {"PATCH", std::string(kClaims) + "/i?fieldValidation=x", "{}", "application/merge-patch+json",
       R"(PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "x": supported values: "Ignore", "Strict", "Warn")"},
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(c.method);
    Response r = call(c.method, c.target, c.body, c.content_type);
    EXPECT_EQ(r.code, 422) << r.body;
    Json st = json(r);
    EXPECT_EQ(get_string(st, {"reason"}), "Invalid");
    EXPECT_EQ(get_string(st, {"message"}), c.message);
    EXPECT_EQ(get_string((*find(st, {"details", "causes"}))[0], {"field"}), "fieldValidation");
  }
}

TEST(WarningHeader, QuotesAreEscaped) {
  EXPECT_EQ(warning_header(R"(unknown field "spec.x")"), R"(299 - "unknown field \"spec.x\"")");
  EXPECT_EQ(warning_header(R"(a\b)"), R"(299 - "a\\b")");
}

// The fields numbered `number` of a protobuf message.
std::vector<pb::Field> pb_fields(std::string_view msg, uint32_t number) {
  std::vector<pb::Field> out;
  pb::Reader r(msg);
  pb::Field f;
  for (auto more = r.next(f); more.has_value() && *more; more = r.next(f)) {
    if (f.number == number) out.push_back(f);
  }
  return out;
}
std::string pb_string(std::string_view msg, uint32_t number) {
  auto f = pb_fields(msg, number);
  return f.empty() ? std::string() : std::string(f[0].bytes);
}

TEST_F(ApiServerTest, OpenApiV2AsJsonAndProtobuf) {
  const std::string claim_path = "/apis/resource.k8s.io/v1beta1/namespaces/{namespace}/resourceclaims/{name}";
  Response j = call("GET", "/openapi/v2");
  ASSERT_EQ(j.code, 200);
  EXPECT_EQ(j.content_type, "application/json");
  Json doc = json(j);
  EXPECT_EQ(get_string(doc, {"swagger"}), "2.0");
  const JsonValue* patch = find(doc, {"paths", claim_path, "patch"});
  ASSERT_NE(patch, nullptr);
  EXPECT_EQ(get_string(*patch, {"x-kubernetes-group-version-kind", "version"}), "v1beta1");
  EXPECT_EQ(get_string(*patch, {"x-kubernetes-action"}), "patch");
  std::vector<std::string> params;
  for (const auto& p : find(*patch, {"parameters"})->GetArray()) params.push_back(get_string(p, {"name"}));
  EXPECT_EQ(params, (std::vector<std::string>{"body", "dryRun", "fieldManager", "fieldValidation", "force"}));
  EXPECT_NE(find(doc, {"paths", "/api/v1/namespaces/{name}/status", "put"}), nullptr);
  EXPECT_NE(find(doc, {"definitions", "io.k8s.api.resource.v1.ResourceClaim"}), nullptr);

  // kubectl 1.27/1.28: Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf.
  Response p = call("GET", "/openapi/v2", "", "", {"admin", true, ""},
                    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
  ASSERT_EQ(p.code, 200);
  EXPECT_EQ(p.content_type, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
  EXPECT_EQ(pb_string(p.body, 1), "2.0");                         // Document.swagger
  EXPECT_EQ(pb_string(pb_string(p.body, 2), 2), "v1.36.0-draplane");  // Document.info.version
  std::string paths = pb_string(p.body, 8);
  std::string item;  // PathItem of claim_path
  size_t n_paths = 0;
  for (const auto& named : pb_fields(paths, 2)) {
    ++n_paths;
    if (pb_string(named.bytes, 1) == claim_path) item = pb_string(named.bytes, 2);
  }
  EXPECT_EQ(n_paths, find(doc, {"paths"})->MemberCount());
  ASSERT_FALSE(item.empty());
  std::string op = pb_string(item, 8);  // PathItem.patch
  EXPECT_EQ(pb_string(op, 5), "patchResourceV1beta1NamespacedResourceClaim");
  std::map<std::string, std::string> ext;  // Operation.vendor_extension: NamedAny{name, Any{yaml=2}}
  for (const auto& named : pb_fields(op, 13)) ext[pb_string(named.bytes, 1)] = pb_string(pb_string(named.bytes, 2), 2);
  EXPECT_EQ(ext["x-kubernetes-group-version-kind"], "group: resource.k8s.io\nkind: ResourceClaim\nversion: v1beta1\n");
  EXPECT_EQ(ext["x-kubernetes-action"], "patch\n");
  std::vector<std::string> query;  // ParametersItem.parameter.non_body_parameter.query_parameter_sub_schema.name
  for (const auto& it : pb_fields(op, 8)) {
    std::string q = pb_string(pb_string(pb_string(it.bytes, 1), 2), 3);
    if (!q.empty()) query.push_back(pb_string(q, 4));
  }
  EXPECT_EQ(query, (std::vector<std::string>{"dryRun", "fieldManager", "fieldValidation", "force"}));
  size_t n_defs = pb_fields(pb_string(p.body, 9), 1).size();
  EXPECT_EQ(n_defs, find(doc, {"definitions"})->MemberCount());
}

TEST_F(ApiServerTest, ProtobufNamespaceAndYamlBodies) {
  // kubectl create namespace foo: a protobuf v1 Namespace.
  pb::Writer meta;
  meta.bytes(1, "foo").bytes(2, "").bytes(3, "").message(11, std::move(pb::Writer().bytes(1, "team").bytes(2, "ml")));
  pb::Writer ns;
  ns.message(1, meta).message(2, pb::Writer()).message(3, std::move(pb::Writer().bytes(1, "")));
  auto envelope = [](const std::string& av, const std::string& kind, const std::string& raw) {
    pb::Writer u;
    u.message(1, std::move(pb::Writer().bytes(1, av).bytes(2, kind))).bytes(2, raw);
    return std::string("k8s\0", 4) + u.data();
  };
  const char* kProtobuf = "application/vnd.kubernetes.protobuf";
  Response r = call("POST", "/api/v1/namespaces", envelope("v1", "Namespace", ns.data()), kProtobuf);
  ASSERT_EQ(r.code, 201) << r.body;
  Json o = json(r);
  EXPECT_EQ(get_string(o, {"metadata", "name"}), "foo");
  EXPECT_EQ(get_string(o, {"metadata", "labels", "team"}), "ml");
  EXPECT_EQ(get_string(o, {"metadata", "labels", "kubernetes.io/metadata.name"}), "foo");
  EXPECT_EQ(get_string(o, {"status", "phase"}), "Active");
  EXPECT_EQ(call("GET", "/api/v1/namespaces/foo").code, 200);
  // Other kinds: 415 naming the kind; a malformed body: 400 naming the problem.
  Response pc = call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                     envelope("scheduling.k8s.io/v1", "PriorityClass", ""), kProtobuf);
  EXPECT_EQ(pc.code, 415);
  EXPECT_EQ(get_string(json(pc), {"reason"}), "UnsupportedMediaType");
  EXPECT_EQ(get_string(json(pc), {"message"}),
            "the body of the request was in an unknown format - accepted media types include: application/json, "
            "application/yaml, and application/vnd.kubernetes.protobuf for v1 Namespace only (this body is "
            "scheduling.k8s.io/v1 PriorityClass); send PriorityClass as JSON");
  Response bad = call("POST", "/api/v1/namespaces", std::string("k8s\0\x0a\x09", 6), kProtobuf);
  EXPECT_EQ(bad.code, 400);
  EXPECT_EQ(get_string(json(bad), {"message"}),
            "protobuf: envelope: protobuf: field 1 at byte 0 is 9 bytes long but only 0 remain");

  // YAML create and update.
  std::string yaml = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: y1\nspec:\n"
                     "  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.example.com, count: 2}\n";
  r = call("POST", kClaims, yaml, "application/yaml");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(find((*find(json(r), {"spec", "devices", "requests"}))[0], {"exactly", "count"})->GetInt64(), 2);
  std::string put = yaml;
  put.replace(put.find("  name: y1\n"), 11, "  name: y1\n  labels: {a: b}\n");
  r = call("PUT", std::string(kClaims) + "/y1", put, "application/yaml; charset=utf-8");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(get_string(json(r), {"metadata", "labels", "a"}), "b");
  r = call("POST", kClaims, "kind: ResourceClaim\nmetadata: {name: [\n", "application/yaml");
  EXPECT_EQ(r.code, 400);
  EXPECT_NE(get_string(json(r), {"message"}).find("line"), std::string::npos) << r.body;
  // A YAML apply patch (server-side apply from a client that sends YAML).
  std::string apply = yaml;
  apply.replace(apply.find("  name: y1\n"), 11, "  name: y2\n");
  r = call("PATCH", std::string(kClaims) + "/y2?fieldManager=test", apply, "application/apply-patch+yaml");
  EXPECT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(call("GET", std::string(kClaims) + "/y2").code, 200);
}

TEST_F(ApiServerTest, DiscoveryPrefersV1OverBetaVersions) {
  Json groups = json(call("GET", "/apis"));
  const JsonValue* resource = nullptr;
  for (const auto& g : find(groups, {"groups"})->GetArray()) {
    if (get_string(g, {"name"}) == "resource.k8s.io") resource = &g;
  }
  ASSERT_NE(resource, nullptr);
  std::vector<std::string> versions;
  for (const auto& v : (*resource)["versions"].GetArray()) versions.push_back(get_string(v, {"groupVersion"}));
  EXPECT_EQ(versions, (std::vector<std::string>{"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"}));
  EXPECT_EQ(get_string(*resource, {"preferredVersion", "version"}), "v1");
  Json g = json(call("GET", "/apis/resource.k8s.io"));
  EXPECT_EQ(get_string(g, {"preferredVersion", "groupVersion"}), "resource.k8s.io/v1");
  EXPECT_EQ(find(g, {"versions"})->Size(), 3u);
  for (const char* v : {"v1beta1", "v1beta2"}) {
    SCOPED_TRACE(v);
    Json d = json(call("GET", std::string("/apis/resource.k8s.io/") + v));
    EXPECT_EQ(get_string(d, {"groupVersion"}), std::string("resource.k8s.io/") + v);
    std::vector<std::string> names;
    for (const auto& res : find(d, {"resources"})->GetArray()) names.push_back(get_string(res, {"name"}));
    EXPECT_EQ(names, (std::vector<std::string>{"deviceclasses", "resourceclaims", "resourceclaims/status",
                                               "resourceclaimtemplates", "resourceslices"}));
  }
}

TEST_F(ApiServerTest, AggregatedDiscoveryWhenAcceptPrefersIt) {
  const std::string v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
  const std::string v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
  // What client-go sends: v2, then v2beta1, then plain JSON.
  Response r = call("GET", "/apis", "", "", {"admin", true, ""}, v2 + "," + v2beta1 + ",application/json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.content_type, v2);
  Json d = json(r);
  EXPECT_EQ(get_string(d, {"kind"}), "APIGroupDiscoveryList");
  EXPECT_EQ(get_string(d, {"apiVersion"}), "apidiscovery.k8s.io/v2");
  std::vector<std::string> groups;
  const JsonValue* resource_group = nullptr;
  for (const auto& g : find(d, {"items"})->GetArray()) {
    groups.push_back(get_string(g, {"metadata", "name"}));
    if (groups.back() == "resource.k8s.io") resource_group = &g;
  }
  // kube-apiserver's APIService priorities order the groups (a CRD's group, as KAI's
  // scheduling.run.ai, comes last at priority 1000).
  EXPECT_EQ(groups, (std::vector<std::string>{"apps", "events.k8s.io", "batch", "scheduling.k8s.io",
                                              "coordination.k8s.io", "resource.k8s.io", "scheduling.run.ai"}));
  ASSERT_NE(resource_group, nullptr);
  const JsonValue& versions = *find(*resource_group, {"versions"});
  ASSERT_EQ(versions.Size(), 3u);
  EXPECT_EQ(get_string(versions[0], {"version"}), "v1");
  EXPECT_EQ(get_string(versions[1], {"version"}), "v1beta2");
  EXPECT_EQ(get_string(versions[2], {"version"}), "v1beta1");
  EXPECT_EQ(get_string(versions[0], {"freshness"}), "Current");
  const JsonValue* claims = nullptr;
  std::vector<std::string> names;
  for (const auto& res : find(versions[0], {"resources"})->GetArray()) {
    names.push_back(get_string(res, {"resource"}));
    if (names.back() == "resourceclaims") claims = &res;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"deviceclasses", "devicetaintrules", "resourceclaims",
                                             "resourceclaimtemplates", "resourceslices"}));
  ASSERT_NE(claims, nullptr);
  EXPECT_EQ(to_string(*claims),
            R"({"resource":"resourceclaims","responseKind":{"group":"","version":"","kind":"ResourceClaim"},)"
            R"("scope":"Namespaced","singularResource":"resourceclaim",)"
            R"("verbs":["create","delete","deletecollection","get","list","patch","update","watch"],)"
            R"("subresources":[{"subresource":"status","responseKind":{"group":"","version":"","kind":"ResourceClaim"},)"
            R"("verbs":["get","patch","update"]}]})");

  // /api: the core group (no name), with short names, categories and subresources.
  r = call("GET", "/api", "", "", {"admin", true, ""}, v2 + "," + v2beta1 + ",application/json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.content_type, v2);
  d = json(r);
  ASSERT_EQ(find(d, {"items"})->Size(), 1u);
  const JsonValue& core = (*find(d, {"items"}))[0];
  EXPECT_EQ(find(core, {"metadata", "name"}), nullptr);
  const JsonValue& core_v1 = (*find(core, {"versions"}))[0];
  EXPECT_EQ(get_string(core_v1, {"version"}), "v1");
  const JsonValue* pods = nullptr;
  const JsonValue* ns = nullptr;
  names.clear();
  for (const auto& res : find(core_v1, {"resources"})->GetArray()) {
    names.push_back(get_string(res, {"resource"}));
    if (names.back() == "pods") pods = &res;
    if (names.back() == "namespaces") ns = &res;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"configmaps", "events", "namespaces", "nodes", "persistentvolumeclaims",
                                             "pods", "secrets", "serviceaccounts", "services"}));
  ASSERT_NE(pods, nullptr);
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(to_string(*find(*pods, {"shortNames"})), R"(["po"])");
  EXPECT_EQ(to_string(*find(*pods, {"categories"})), R"(["all"])");
  std::vector<std::string> subs;
  for (const auto& s : find(*pods, {"subresources"})->GetArray()) subs.push_back(get_string(s, {"subresource"}));
  EXPECT_EQ(subs, (std::vector<std::string>{"binding", "log", "status"}));
  EXPECT_EQ(get_string((*find(*pods, {"subresources"}))[0], {"responseKind", "kind"}), "Binding");
  EXPECT_EQ(to_string(*find(*ns, {"verbs"})), R"(["create","delete","get","list","patch","update","watch"])");
  EXPECT_EQ(get_string(*ns, {"scope"}), "Cluster");

  // v2beta1 alone: the same document as apidiscovery.k8s.io/v2beta1.
  r = call("GET", "/apis", "", "", {"admin", true, ""}, v2beta1 + ",application/json");
  EXPECT_EQ(r.content_type, v2beta1);
  EXPECT_EQ(get_string(json(r), {"apiVersion"}), "apidiscovery.k8s.io/v2beta1");
  // Unknown discovery versions and other transformations fall through to plain JSON.
  for (const std::string& accept :
       {std::string("application/json"), std::string(""), "application/json," + v2,
        std::string("application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json"),
        "application/json;q=0.9," + v2 + ";q=0.5", std::string("application/vnd.kubernetes.protobuf,*/*")}) {
    SCOPED_TRACE(accept);
    r = call("GET", "/apis", "", "", {"admin", true, ""}, accept);
    EXPECT_EQ(r.content_type, "application/json");
    EXPECT_EQ(get_string(json(r), {"kind"}), "APIGroupList");
  }
  r = call("GET", "/apis", "", "", {"admin", true, ""}, "application/json;q=0.5," + v2 + ";q=0.9");
  EXPECT_EQ(r.content_type, v2);

  // ETag and If-None-Match.
  r = call("GET", "/apis", "", "", {"admin", true, ""}, v2);
  std::string etag;
  for (const auto& [k, v] : r.headers) {
    if (k == "ETag") etag = v;
  }
  ASSERT_FALSE(etag.empty());
  Request again;
  again.method = "GET";
  again.path = "/apis";
  again.accept = v2;
  again.if_none_match = etag;
  again.identity = {"admin", true, ""};
  EXPECT_EQ(api_->handle(again).response.code, 304);
}

TEST_F(ApiServerTest, ServerSideApplyTracksFieldManagers) {
  const std::string c1 = std::string(kClaims) + "/c1";
  ASSERT_EQ(call("POST", std::string(kClaims) + "?fieldManager=creator", kClaim).code, 201);
  Json o = json(call("GET", c1));
  const JsonValue* mf = find(o, {"metadata", "managedFields"});
  ASSERT_NE(mf, nullptr);
  ASSERT_EQ(mf->Size(), 1u);
  EXPECT_EQ(to_string((*mf)[0]),
            R"({"manager":"creator","operation":"Update","apiVersion":"resource.k8s.io/v1","time":"2026-01-01T00:00:00Z",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},)"
            R"("f:spec":{"f:devices":{"f:requests":{}}}}})");
  const char* yaml = "application/apply-patch+yaml";
  auto status_of = [](const Response& r) { return get_string(json(r), {"message"}); };
  // Options and body checks.
  Response r = call("PATCH", c1, R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1"}})", yaml);
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(status_of(r), R"(PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch)");
  r = call("PATCH", c1 + "?force=true", R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json");
  EXPECT_EQ(r.code, 422);
  EXPECT_EQ(status_of(r), R"(PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch)");
  r = call("PATCH", c1 + "?fieldManager=ci", R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim","metadata":{"name":"c1"}})", yaml);
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(status_of(r), "invalid object type: resource.k8s.io/v1beta1, Kind=ResourceClaim");
  r = call("PATCH", c1 + "?fieldManager=ci",
           R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1","managedFields":[]}})", yaml);
  EXPECT_EQ(r.code, 400);
  EXPECT_EQ(status_of(r), "metadata.managedFields must be nil");

  // ci applies a label of its own: no conflict, no generation bump.
  auto apply_labels = [&](const std::string& labels, const std::string& query) {
    return call("PATCH", c1 + "?fieldManager=ci" + query,
                "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c1\n  labels: " + labels + "\n", yaml);
  };
  r = apply_labels("{x: '1'}", "");
  ASSERT_EQ(r.code, 200) << r.body;
  o = json(r);
  EXPECT_EQ(find(o, {"metadata", "generation"})->GetInt64(), 1);
  EXPECT_EQ(get_string(o, {"metadata", "labels", "x"}), "1");
  std::vector<std::string> managers;
  for (const auto& e : find(o, {"metadata", "managedFields"})->GetArray()) {
    managers.push_back(get_string(e, {"manager"}) + "/" + get_string(e, {"operation"}));
  }
  EXPECT_EQ(managers, (std::vector<std::string>{"ci/Apply", "creator/Update"}));
  std::string rv = get_string(o, {"metadata", "resourceVersion"});
  // The same configuration again writes nothing.
  r = apply_labels("{x: '1'}", "");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(get_string(json(r), {"metadata", "resourceVersion"}), rv);

  // Changing the creator's label is a conflict, a Status naming field and manager.
  r = apply_labels("{x: '1', app: b}", "");
  ASSERT_EQ(r.code, 409) << r.body;
  Json s = json(r);
  EXPECT_EQ(get_string(s, {"reason"}), "Conflict");
  EXPECT_EQ(get_string(s, {"message"}),
            R"(Apply failed with 1 conflict: conflict with "creator" using resource.k8s.io/v1: .metadata.labels.app)");
  const JsonValue& cause = (*find(s, {"details", "causes"}))[0];
  EXPECT_EQ(to_string(cause),
            R"({"reason":"FieldManagerConflict","message":"conflict with \"creator\" using resource.k8s.io/v1","field":".metadata.labels.app"})");
  EXPECT_EQ(get_string(json(call("GET", c1)), {"metadata", "labels", "app"}), "a");
  // force=true takes it.
  r = apply_labels("{x: '1', app: b}", "&force=true");
  ASSERT_EQ(r.code, 200) << r.body;
  o = json(r);
  EXPECT_EQ(get_string(o, {"metadata", "labels", "app"}), "b");
  for (const auto& e : find(o, {"metadata", "managedFields"})->GetArray()) {
    if (get_string(e, {"manager"}) == "creator") {
      EXPECT_EQ(to_string(*find(e, {"fieldsV1"})), R"({"f:metadata":{"f:labels":{}},"f:spec":{"f:devices":{"f:requests":{}}}})");
    }
  }
  // Dropping x from the configuration removes it (nobody else owns it).
  r = apply_labels("{app: b}", "");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(to_string(*find(json(r), {"metadata", "labels"})), R"({"app":"b"})");

  // A merge patch is an Update by its field manager (the User-Agent's product here).
  Request patch;
  patch.method = "PATCH";
  patch.path = c1;
  patch.body = R"({"metadata":{"annotations":{"note":"n"}}})";
  patch.content_type = "application/merge-patch+json";
  patch.user_agent = "kubectl/v1.32.4 (linux/amd64) kubernetes/abc";
  patch.identity = {"admin", true, ""};
  Response pr = api_->handle(patch).response;
  ASSERT_EQ(pr.code, 200) << pr.body;
  bool found = false;
  Json patched = json(pr);
  for (const auto& e : find(patched, {"metadata", "managedFields"})->GetArray()) {
    if (get_string(e, {"manager"}) == "kubectl") {
      found = true;
      EXPECT_EQ(to_string(*find(e, {"fieldsV1"})), R"({"f:metadata":{"f:annotations":{".":{},"f:note":{}}}})");
    }
  }
  EXPECT_TRUE(found) << pr.body;

  // A PUT with managedFields: [] resets them: only what this write changes is recorded.
  o = json(call("GET", c1));
  set_member(*find(o, {"metadata"}), "managedFields", JsonValue(rapidjson::kArrayType), o.GetAllocator());
  r = call("PUT", c1 + "?fieldManager=resetter", to_string(o));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(find(json(r), {"metadata", "managedFields"}), nullptr) << r.body;

  // Apply creates, owning exactly its configuration.
  r = call("PATCH", std::string(kClaims) + "/c2?fieldManager=ci",
           "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c2\nspec:\n  devices:\n    requests:\n"
           "    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}\n", yaml);
  ASSERT_EQ(r.code, 201) << r.body;
  o = json(r);
  ASSERT_EQ(find(o, {"metadata", "managedFields"})->Size(), 1u);
  EXPECT_EQ(to_string((*find(o, {"metadata", "managedFields"}))[0]),
            R"({"manager":"ci","operation":"Apply","apiVersion":"resource.k8s.io/v1","time":"2026-01-01T00:00:00Z",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:devices":{"f:requests":{}}}}})");
  // Re-applied by ci, the defaulted requests are ci's own: no conflict and no change.
  rv = get_string(o, {"metadata", "resourceVersion"});
  r = call("PATCH", std::string(kClaims) + "/c2?fieldManager=ci",
           "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c2\nspec:\n  devices:\n    requests:\n"
           "    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}\n", yaml);
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(get_string(json(r), {"metadata", "resourceVersion"}), rv);
  EXPECT_EQ(find(json(r), {"metadata", "generation"})->GetInt64(), 1);
}

// Sum of the values of the series of `name` whose label set contains every one of `labels`.
double metric_sum(const std::string& text, const std::string& name, const std::vector<std::string>& labels) {
  double sum = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind(name + "{", 0) != 0) continue;
    size_t close = line.rfind('}');
    std::string set = line.substr(name.size() + 1, close - name.size() - 1);
    bool all = true;
    for (const auto& l : labels) all = all && set.find(l) != std::string::npos;
    if (all) sum += std::stod(line.substr(close + 2));
  }
  return sum;
}

TEST(ApiServerMetrics, RequestAndStoreLatencyHistograms) {
  auto store = store::new_memory_store();
  Metrics metrics;
  ApiServerOptions o;
  o.clock = std::make_shared<common::FakeClock>();
  int uids = 0;
  o.new_uid = [&] { return "uid-" + std::to_string(++uids); };
  o.random_suffix = [] { return "abcde"; };
  ApiServer api(*store, o, &metrics);
  ASSERT_TRUE(api.bootstrap().ok());
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "",
                  const std::string& ct = "application/json") {
    Request r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = ct;
    r.accept = "application/json";
    r.identity = {"admin", true, ""};
    return api.handle(r).response;
  };
  const std::string claims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
  ASSERT_EQ(call("POST", claims, kClaim).code, 201);
  ASSERT_EQ(call("GET", claims + "/c1").code, 200);
  ASSERT_EQ(call("GET", claims + "/missing").code, 404);
  ASSERT_EQ(call("GET", claims).code, 200);
  ASSERT_EQ(call("PATCH", claims + "/c1", R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json").code, 200);
  ASSERT_EQ(call("DELETE", claims + "/c1").code, 200);
  ASSERT_EQ(call("GET", "/api/v1/nodes").code, 200);

  Request scrape;
  scrape.method = "GET";
  scrape.path = "/metrics";
  scrape.identity = {"admin", true, ""};
  Response m = api.handle(scrape).response;
  ASSERT_EQ(m.code, 200);
  EXPECT_EQ(m.content_type, "text/plain; version=0.0.4");
  const std::string& t = m.body;
  EXPECT_NE(t.find("# TYPE etcd_request_duration_seconds histogram\n"), std::string::npos);
  EXPECT_NE(t.find("# TYPE apiserver_request_duration_seconds histogram\n"), std::string::npos);
  const std::string rc = R"(group="resource.k8s.io",resource="resourceclaims")";
  for (const char* op : {"create", "get", "list", "update", "delete"}) {
    SCOPED_TRACE(op);
    std::string opl = std::string("operation=\"") + op + "\"";
    EXPECT_GT(metric_sum(t, "etcd_request_duration_seconds_count", {opl, rc}), 0) << t;
    EXPECT_GT(metric_sum(t, "etcd_requests_total", {opl, rc}), 0);
    EXPECT_GT(metric_sum(t, "etcd_request_duration_seconds_bucket", {opl, rc, "le=\"+Inf\""}), 0);
  }
  // The 404 get is an answer, not a store error; nothing failed.
  EXPECT_EQ(t.find("etcd_request_errors_total{"), std::string::npos);
  // Bootstrap's namespace writes and the namespace lookups of the create are core resources.
  EXPECT_GT(metric_sum(t, "etcd_request_duration_seconds_count", {R"(operation="get")", R"(group="",resource="namespaces")"}), 0);
  EXPECT_GT(metric_sum(t, "etcd_request_duration_seconds_count", {R"(operation="list")", R"(resource="nodes")"}), 0);

  struct Want {
    std::string verb, scope, code;
  };
  for (const Want& w : std::vector<Want>{{"POST", "namespace", "201"}, {"GET", "resource", "200"},
                                         {"GET", "resource", "404"}, {"LIST", "namespace", "200"},
                                         {"PATCH", "resource", "200"}, {"DELETE", "resource", "200"}}) {
    SCOPED_TRACE(w.verb + " " + w.code);
    std::vector<std::string> labels = {"verb=\"" + w.verb + "\"", R"(group="resource.k8s.io",version="v1",resource="resourceclaims",subresource="")",
                                       "scope=\"" + w.scope + "\"", R"(component="apiserver")"};
    std::vector<std::string> with_code = labels;
    with_code.push_back("code=\"" + w.code + "\"");
    EXPECT_GT(metric_sum(t, "apiserver_request_total", with_code), 0) << t;
    EXPECT_GT(metric_sum(t, "apiserver_request_duration_seconds_count", labels), 0);
    EXPECT_GT(metric_sum(t, "apiserver_request_duration_seconds_bucket", {labels[0], labels[1], "le=\"60\""}), 0);
  }
  EXPECT_GT(metric_sum(t, "apiserver_request_total", {R"(verb="LIST")", R"(resource="nodes")", R"(scope="cluster")"}), 0);
  // Histogram invariants: buckets are cumulative and +Inf equals _count.
  EXPECT_EQ(metric_sum(t, "apiserver_request_duration_seconds_bucket", {"le=\"+Inf\""}),
            metric_sum(t, "apiserver_request_duration_seconds_count", {}));
  EXPECT_LE(metric_sum(t, "etcd_request_duration_seconds_bucket", {"le=\"0.005\""}),
            metric_sum(t, "etcd_request_duration_seconds_bucket", {"le=\"0.025\""}));
}

// Hostile input (issue 22): each answered as kube-apiserver answers it, and the
// server keeps serving.
TEST_F(ApiServerTest, BodyInAnUnsupportedMediaTypeIs415) {
  const std::string ns = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"plain"}})";
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded", "application/cbor"}) {
    SCOPED_TRACE(type);
    Response r = call("POST", "/api/v1/namespaces", ns, type);
    EXPECT_EQ(r.code, 415) << r.body;
    Json st = json(r);
    EXPECT_EQ(get_string(st, {"reason"}), "UnsupportedMediaType");
    EXPECT_EQ(get_string(st, {"message"}),
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
  EXPECT_EQ(call("GET", "/api/v1/namespaces/plain").code, 404);  // nothing was stored
  Response put = call("PUT", "/api/v1/namespaces/default", ns, "text/plain");
  EXPECT_EQ(put.code, 415) << put.body;
  // PATCH: the patch types.
  Response patch = call("PATCH", "/api/v1/namespaces/default", R"({"metadata":{"labels":{"a":"b"}}})", "application/json");
  EXPECT_EQ(patch.code, 415) << patch.body;
  EXPECT_EQ(get_string(json(patch), {"message"}),
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
            "application/apply-patch+yaml");
  // JSON with parameters, and no Content-Type at all, are JSON.
  EXPECT_EQ(call("POST", "/api/v1/namespaces", ns, "application/json; charset=utf-8").code, 201);
  EXPECT_EQ(call("POST", "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"untyped"}})", "").code,
            201);
}

TEST_F(ApiServerTest, YamlAliasBombIs400) {
  std::string y = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bomb\n  annotations:\n";
  y += "    a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    y += "    a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) y += (j ? "," : "") + prev;
    y += "]\n";
  }
  Response r = call("POST", "/api/v1/namespaces", y, "application/yaml");
  ASSERT_EQ(r.code, 400) << r.body.substr(0, 300);
  EXPECT_EQ(get_string(json(r), {"message"}), "error converting YAML to JSON: yaml: document contains excessive aliasing");
  Response apply = call("PATCH", "/api/v1/namespaces/bomb?fieldManager=t", y, "application/apply-patch+yaml");
  EXPECT_EQ(apply.code, 400) << apply.body.substr(0, 300);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default").code, 200);
}

TEST_F(ApiServerTest, DeepNestingIs400) {
  // 150 KB of '[': 400 with encoding/json's reason (not a stack overflow).
  std::string deep(150000, '[');
  Response r = call("POST", kClaims, deep);
  ASSERT_EQ(r.code, 400) << r.body.substr(0, 300);
  EXPECT_NE(get_string(json(r), {"message"}).find("invalid character '[' exceeded max depth"), std::string::npos)
      << r.body.substr(0, 300);
  std::string nested_object = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"d","annotations":)";
  for (int i = 0; i < 150000; ++i) nested_object += R"({"a":)";
  r = call("POST", "/api/v1/namespaces", nested_object);
  EXPECT_EQ(r.code, 400) << r.body.substr(0, 300);
  r = call("PATCH", "/api/v1/namespaces/default", "{\"metadata\":" + nested_object, "application/merge-patch+json");
  EXPECT_EQ(r.code, 400) << r.body.substr(0, 300);
  // Just within the bound: read, then refused by the schema (not a stack overflow
  // in any of the walks over the tree).
  std::string within = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"deep"},)"
                       R"("spec":{"config":[{"opaque":{"driver":"gpu.example.com","parameters":)";
  within += std::string(9990, '[') + std::string(9990, ']') + "}}]}}";
  r = call("POST", "/apis/resource.k8s.io/v1/deviceclasses", within);
  EXPECT_NE(r.code, 500) << r.body.substr(0, 300);
  r = call("POST", "/api/v1/namespaces", std::string(150000, '['), "application/yaml");
  EXPECT_EQ(r.code, 400) << r.body.substr(0, 300);
  EXPECT_NE(get_string(json(r), {"message"}).find("exceeded max depth"), std::string::npos) << r.body.substr(0, 300);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default").code, 200);
}

TEST_F(ApiServerTest, RepeatedKeyTakesTheLastValue) {
  // The object stored and served is the one Go's decoder makes of the bytes.
  std::string body = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"first","name":"last",
    "labels":{"app":"a","app":"b"}},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})";
  Response strict = call("POST", std::string(kClaims) + "?fieldValidation=Strict", body);
  ASSERT_EQ(strict.code, 400) << strict.body;
  EXPECT_NE(get_string(json(strict), {"message"}).find(R"(duplicate field "metadata.name")"), std::string::npos);
  EXPECT_NE(get_string(json(strict), {"message"}).find(R"(duplicate field "metadata.labels.app")"), std::string::npos);
  Response warn = call("POST", kClaims, body);
  ASSERT_EQ(warn.code, 201) << warn.body;
  EXPECT_EQ(warn.warnings, (std::vector<std::string>{R"(duplicate field "metadata.name")",
                                                     R"(duplicate field "metadata.labels.app")"}));
  EXPECT_EQ(get_string(json(warn), {"metadata", "name"}), "last");
  EXPECT_EQ(get_string(json(warn), {"metadata", "labels", "app"}), "b");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/first").code, 404);
  Json got = json(call("GET", std::string(kClaims) + "/last"));
  EXPECT_EQ(get_string(got, {"metadata", "labels", "app"}), "b");
  auto stored = store_->get("/registry/resourceclaims/default/last");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->value.find("first"), std::string::npos) << stored->value;
  // A repeated key in a merge patch: the last value too.
  Response p = call("PATCH", std::string(kClaims) + "/last",
                    R"({"metadata":{"labels":{"app":"c"}},"metadata":{"labels":{"app":"d"}}})",
                    "application/merge-patch+json");
  ASSERT_EQ(p.code, 200) << p.body;
  EXPECT_EQ(get_string(json(p), {"metadata", "labels", "app"}), "d");
}

TEST_F(ApiServerTest, MalformedTimesAre400NamingTheField) {
  Response r = call("POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t","creationTimestamp":"yesterday"}})");
  ASSERT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(get_string(json(r), {"message"}),
            "Namespace in version \"v1\" cannot be handled as a Namespace: metadata.creationTimestamp: parsing time "
            "\"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"");
  EXPECT_EQ(call("GET", "/api/v1/namespaces/t").code, 404);
  r = call("POST", kClaims,
           R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"t","creationTimestamp":5},
               "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_NE(get_string(json(r), {"message"}).find("metadata.creationTimestamp: json: cannot unmarshal number"),
            std::string::npos)
      << r.body;
  // A valid time is taken (and replaced by the server's, as kube-apiserver does).
  r = call("POST", "/api/v1/namespaces",
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t","creationTimestamp":"2020-01-01T00:00:00Z"}})");
  EXPECT_EQ(r.code, 201) << r.body;
  // Updates and patches too.
  Response p = call("PATCH", "/api/v1/namespaces/t", R"({"metadata":{"creationTimestamp":"soon"}})",
                    "application/merge-patch+json");
  EXPECT_EQ(p.code, 400) << p.body;
  EXPECT_NE(get_string(json(p), {"message"}).find("metadata.creationTimestamp: parsing time \"soon\""),
            std::string::npos)
      << p.body;
}

TEST_F(ApiServerTest, InvalidUtf8ReadsAsKubeApiserverReadsIt) {
  // Go's decoder takes each bad byte as U+FFFD: an annotation keeps it, a name
  // is then invalid and the error names the field.
  Response r = call("POST", "/api/v1/namespaces",
                    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"u\",\"annotations\":{\"a\":\"x\xffy\"}}}");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(get_string(json(r), {"metadata", "annotations", "a"}), "x\xEF\xBF\xBDy");
  r = call("POST", kClaims,
           "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"c\xff\"},"
           "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu.example.com\"}}]}}}");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_NE(get_string(json(r), {"message"}).find("metadata.name: Invalid value: \"c\xEF\xBF\xBD\""), std::string::npos)
      << r.body;
  r = call("POST", "/api/v1/namespaces", "apiVersion: v1\nkind: Namespace\nmetadata: {name: \"y\xff\"}\n",
           "application/yaml");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_EQ(get_string(json(r), {"message"}), "error converting YAML to JSON: yaml: invalid leading UTF-8 octet");
}

TEST_F(ApiServerTest, UnknownStatusFieldsAreReported) {
  // The status a create drops is decoded first, as kube-apiserver decodes the body.
  std::string body = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"NAME"},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}},"status":{"bogus":1}})";
  auto named = [&](const std::string& n) { return std::string(body).replace(body.find("NAME"), 4, n); };
  Response strict = call("POST", std::string(kClaims) + "?fieldValidation=Strict", named("s"));
  ASSERT_EQ(strict.code, 400) << strict.body;
  EXPECT_NE(get_string(json(strict), {"message"}).find(R"(strict decoding error: unknown field "status.bogus")"),
            std::string::npos)
      << strict.body;
  Response warn = call("POST", kClaims, named("w"));
  ASSERT_EQ(warn.code, 201) << warn.body;
  EXPECT_EQ(warn.warnings, (std::vector<std::string>{R"(unknown field "status.bogus")"}));
  EXPECT_EQ(find(json(warn), {"status", "bogus"}), nullptr);
  auto stored = store_->get("/registry/resourceclaims/default/w");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->value.find("bogus"), std::string::npos) << stored->value;
  // Ignore: nothing reported.
  Response ignore = call("POST", std::string(kClaims) + "?fieldValidation=Ignore", named("i"));
  ASSERT_EQ(ignore.code, 201) << ignore.body;
  EXPECT_TRUE(ignore.warnings.empty());
}

// etcd's request limit (1.5 MiB) bounds what is stored, as kube-apiserver gets
// it from etcd: 500, etcd's message, no reason. 7,000 valid labels of the
// longest kind pass validation (labels have no total limit upstream) and are
// 1.9 MB of JSON.
TEST_F(ApiServerTest, ObjectOverEtcdRequestLimitIsRefused) {
  std::string prefix = std::string(60, 'a') + "." + std::string(60, 'b') + "." + std::string(60, 'c') + ".example.com/";
  std::string value(63, 'v');
  std::string labels;
  for (int i = 0; i < 7000; ++i) {
    labels += (i ? ",\"" : "\"") + prefix + "label-" + std::to_string(i) + "\":\"" + value + "\"";
  }
  std::string big = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"big","labels":{)" +
                    labels + R"(}},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"g"}}]}}})";
  Response r = call("POST", kClaims, big);
  EXPECT_EQ(r.code, 500) << r.body.substr(0, 300);
  EXPECT_EQ(r.body, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                    R"("message":"etcdserver: request is too large","code":500})");
  EXPECT_EQ(call("GET", std::string(kClaims) + "/big").code, 404);

  // An update that grows an object past the limit likewise.
  ASSERT_EQ(call("POST", kClaims, kClaim).code, 201);
  r = call("PATCH", std::string(kClaims) + "/c1", R"({"metadata":{"labels":{)" + labels + "}}}",
           "application/merge-patch+json");
  EXPECT_EQ(r.code, 500) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("etcdserver: request is too large"), std::string::npos);
  EXPECT_EQ(json(call("GET", std::string(kClaims) + "/c1")).FindMember("metadata")->value["labels"].MemberCount(), 1u);
}

// Annotations as ValidateObjectMeta bounds them: 256 KiB in all.
TEST_F(ApiServerTest, AnnotationsOverTotalLimitAreInvalid) {
  std::string big = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"a",)"
                    R"("annotations":{"a":")" + std::string(262144, 'x') +
                    R"("}},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"g"}}]}}})";
  Response r = call("POST", kClaims, big);
  EXPECT_EQ(r.code, 422) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("metadata.annotations: Too long: must have at most 262144 bytes"), std::string::npos)
      << r.body.substr(0, 300);
}

}  // namespace
}  // namespace draplane::server
