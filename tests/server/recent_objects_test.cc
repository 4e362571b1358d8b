// The update path's recent objects (server/internal/recent_objects.h): the
// cache itself; that updates starting from it answer exactly as updates that
// read the store do; and that writes behind the server's back are seen.
#include "server/internal/recent_objects.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/api_server.h"
#include "server/json_util.h"
#include "store/memory_store.h"

namespace draplane::server {
namespace {

Stored stored(int64_t rev, const std::string& name) {
  auto j = parse_json(R"({"metadata":{"name":")" + name + R"("}})");
  EXPECT_TRUE(j.has_value());
  return Stored{std::move(j).value(), rev};
}

TEST(RecentObjects, TakeRemovesAndTheOldestGoBeyondTheBudget) {
  RecentObjects r(250);
  r.put("a", stored(1, "a"), 100);
  r.put("b", stored(2, "b"), 100);
  r.put("c", stored(3, "c"), 100);  // over 250: a goes
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.bytes(), 200u);
  EXPECT_FALSE(r.take("a").has_value());
  auto b = r.take("b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->mod_revision, 2);
  EXPECT_EQ(get_string(b->object, {"metadata", "name"}), "b");
  EXPECT_FALSE(r.take("b").has_value());  // taken, not read
  r.put("c", stored(4, "c2"), 50);          // replaces c's entry and its size
  EXPECT_EQ(r.bytes(), 50u);
  r.put("big", stored(5, "big"), 251);  // larger than the budget: not kept, nothing evicted
  EXPECT_FALSE(r.take("big").has_value());
  auto c = r.take("c");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->mod_revision, 4);
  r.put("d", stored(6, "d"), 10);
  r.erase("d");
  EXPECT_EQ(r.size(), 0u);
  EXPECT_EQ(r.bytes(), 0u);
  RecentObjects off(0);
  off.put("a", stored(1, "a"), 1);
  EXPECT_FALSE(off.take("a").has_value());
}

// An ApiServer over its own memory store, deterministic (time, UIDs).
struct Server {
  explicit Server(size_t recent_bytes) : store(store::new_memory_store()) {
    ApiServerOptions o;
    o.clock = std::make_shared<common::FakeClock>();
    o.new_uid = [this] { return "uid-" + std::to_string(++uids); };
    o.random_suffix = [] { return "xyz12"; };
    o.recent_objects_bytes = recent_bytes;
    api = std::make_unique<ApiServer>(*store, o);
    EXPECT_TRUE(api->bootstrap().ok());
  }
  Response call(const std::string& method, const std::string& path, const std::string& body = "",
                const std::string& content_type = "application/json", const std::string& query = "") {
    Request r;
    r.method = method;
    r.path = path;
    if (!query.empty()) {
      size_t eq = query.find('=');
      r.query[query.substr(0, eq)] = query.substr(eq + 1);
    }
    r.body = body;
    r.content_type = content_type;
    r.identity = Identity{"admin", true, ""};
    r.accept = "application/json";
    return api->handle(r).response;
  }
  int uids = 0;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<ApiServer> api;
};

const char* kPods = "/api/v1/namespaces/default/pods";
const char* kPod = "/api/v1/namespaces/default/pods/p1";
const char* kRecentClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
const char* kClaim = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1";

std::string pod_json(const std::string& rv, const std::string& status) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"app":"a"})" +
         (rv.empty() ? std::string() : R"(,"resourceVersion":")" + rv + "\"") +
         R"(},"spec":{"containers":[{"name":"c","image":"busybox"}]},"status":)" + status + "}";
}

struct Step {
  std::string method, path, body, content_type, query;
};

// Every kind of write the update path has, one after another on the same
// objects: with recent objects each starts from the previous reply's object,
// without from the store. The answers must be the same, byte for byte.
TEST(RecentObjects, UpdatesAnswerAsWhenReadFromTheStore) {
  const std::string merge = "application/merge-patch+json";
  const std::string json_patch = "application/json-patch+json";
  const std::string apply = "application/apply-patch+yaml";
  const std::string claim_body = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c1"},)"
                                 R"("spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})";
  std::vector<Step> steps = {
      {"POST", kPods, pod_json("", "{}"), "application/json", ""},
      {"PUT", std::string(kPod) + "/status", pod_json("", R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes"}]})"), "application/json", ""},
      {"PUT", std::string(kPod) + "/status", pod_json("", R"({"phase":"Running","hostIP":"10.0.0.1","containerStatuses":[{"name":"c","ready":true,"restartCount":0,"image":"busybox","imageID":"","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]})"), "application/json", ""},
      {"PUT", std::string(kPod) + "/status", pod_json("", R"({"phase":"Running","hostIP":"10.0.0.1","containerStatuses":[{"name":"c","ready":true,"restartCount":0,"image":"busybox","imageID":"","state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]})"), "application/json", ""},  // a no-op
      {"PATCH", kPod, R"({"metadata":{"labels":{"tier":"gpu"}}})", merge, ""},
      {"PATCH", kPod, R"({"metadata":{"labels":{"tier":"gpu"}}})", merge, "dryRun=All"},
      {"PATCH", kPod, R"([{"op":"add","path":"/metadata/annotations","value":{"note":"x"}}])", json_patch, ""},
      {"PATCH", kPod, R"([{"op":"test","path":"/metadata/labels/app","value":"zzz"}])", json_patch, ""},  // fails
      {"PUT", kPod, pod_json("7", "{}"), "application/json", ""},  // stale resourceVersion: 409
      {"PATCH", kPod, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"owner":"me"}}})", apply, "fieldManager=tool"},
      {"PATCH", kPod, R"({"metadata":{"finalizers":["example.com/keep"]}})", merge, ""},
      {"DELETE", kPod, "", "application/json", ""},  // terminating: the finalizer holds it
      {"PATCH", kPod, R"({"metadata":{"labels":{"after":"delete"}}})", merge, ""},
      {"PATCH", kPod, R"({"metadata":{"finalizers":null}})", merge, ""},  // the last finalizer: gone
      {"GET", kPod, "", "application/json", ""},
      {"POST", kRecentClaims, claim_body, "application/json", ""},
      {"PATCH", kClaim, R"({"metadata":{"finalizers":["resource.kubernetes.io/delete-protection"]}})", merge, ""},
      {"PATCH", kClaim, R"({"spec":{"devices":{"requests":[{"name":"other","exactly":{"deviceClassName":"x"}}]}}})", merge, ""},  // 422
      {"PATCH", std::string(kClaim) + "/status", R"({"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})", merge, ""},  // 422
      {"PATCH", kClaim, R"({"metadata":{"finalizers":[]}})", merge, ""},
      {"GET", kClaim, "", "application/json", ""},
  };
  Server with(size_t{16} << 20), without(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    Response a = with.call(s.method, s.path, s.body, s.content_type, s.query);
    Response b = without.call(s.method, s.path, s.body, s.content_type, s.query);
    EXPECT_EQ(a.code, b.code) << "step " << i << ": " << a.body;
    EXPECT_EQ(a.body, b.body) << "step " << i;
  }
  // The steps meant what they say (not all the same error).
  EXPECT_EQ(without.call("GET", kPod).code, 404);
  EXPECT_EQ(with.call("GET", kPod).code, 404);
}

// The store changed behind the server's back (another server on the same
// etcd, say): whatever the update decides, it decides on the store's object.
TEST(RecentObjects, WritesBehindTheServersBackAreSeen) {
  Server s(size_t{16} << 20);
  const std::string key = "/registry/pods/default/p1";
  const std::string merge = "application/merge-patch+json";
  auto write_behind = [&](const std::string& from, const std::string& to) {
    auto kv = s.store->get(key);
    ASSERT_TRUE(kv.has_value());
    std::string v = kv->value;
    size_t at = v.find(from);
    ASSERT_NE(at, std::string::npos) << v;
    v.replace(at, from.size(), to);
    auto w = s.store->update(key, v, kv->mod_revision);
    ASSERT_TRUE(w.has_value() && w->succeeded);
  };
  ASSERT_EQ(s.call("POST", kPods, pod_json("", "{}")).code, 201);
  // The server's own last write, kept as the base of the next update.
  ASSERT_EQ(s.call("PATCH", kPod, R"({"metadata":{"labels":{"v":"1"}}})", merge).code, 200);

  // The patch is a no-op on the server's last object, not on the store's.
  write_behind(R"("app":"a")", R"("app":"z")");
  Response r = s.call("PATCH", kPod, R"({"metadata":{"labels":{"app":"a"}}})", merge);
  ASSERT_EQ(r.code, 200) << r.body;
  Json got = parse_json(s.call("GET", kPod).body).value();
  EXPECT_EQ(get_string(got, {"metadata", "labels", "app"}), "a");
  EXPECT_EQ(get_string(parse_json(r.body).value(), {"metadata", "resourceVersion"}),
            get_string(got, {"metadata", "resourceVersion"}));

  // A client that read the store's newer version is not refused.
  ASSERT_EQ(s.call("PATCH", kPod, R"({"metadata":{"labels":{"v":"2"}}})", merge).code, 200);
  write_behind(R"("app":"a")", R"("app":"y")");
  got = parse_json(s.call("GET", kPod).body).value();
  std::string rv = get_string(got, {"metadata", "resourceVersion"});
  r = s.call("PUT", kPod, pod_json(rv, "{}"));
  EXPECT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(get_string(parse_json(s.call("GET", kPod).body).value(), {"metadata", "labels", "app"}), "a");

  // Deleted behind its back: not found, not recreated.
  ASSERT_EQ(s.call("PATCH", kPod, R"({"metadata":{"labels":{"v":"3"}}})", merge).code, 200);
  ASSERT_TRUE(s.store->remove(key, 0).has_value());
  r = s.call("PATCH", kPod, R"({"metadata":{"labels":{"app":"b"}}})", merge);
  EXPECT_EQ(r.code, 404) << r.body;
  EXPECT_FALSE(s.store->get(key).has_value());
}

}  // namespace
}  // namespace draplane::server
