// LoopbackClient: the API server in process behind RestClient, as the caller's
// identity, with watches streamed from the server's WatchStream.
#include "cluster/loopback_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "client/informer.h"
#include "store/memory_store.h"

namespace draplane::cluster {
namespace loopback_client_test {

constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

std::string claim(const std::string& name) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}})";
}

class LoopbackClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::new_memory_store();
    server::ApiServerOptions o;
    o.new_uid = [this] { return "uid-" + std::to_string(++uids_); };
    o.random_suffix = [] { return std::string("abcde"); };
    api_ = std::make_unique<server::ApiServer>(*store_, o);
    ASSERT_TRUE(api_->bootstrap().ok());
  }
  int uids_ = 0;
  server::Identity admin_{"admin", true, ""};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<server::ApiServer> api_;
};

TEST_F(LoopbackClientTest, WritesReadsAndErrorsAsOverHttp) {
  LoopbackClient c(*api_, admin_);
  auto created = c.post(kClaims, claim("a"));
  ASSERT_TRUE(created.has_value()) << created.error().to_string();
  EXPECT_NE(created->find(R"("uid":)"), std::string::npos);
  auto got = c.get(std::string(kClaims) + "/a");
  ASSERT_TRUE(got.has_value());
  // The writer is named as the HTTP client names itself.
  EXPECT_NE(got->find(R"("manager":"draplane")"), std::string::npos) << *got;
  auto again = c.post(kClaims, claim("a"));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code(), Code::kAlreadyExists);
  auto missing = c.get(std::string(kClaims) + "/nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  // Query parameters reach the server decoded: a label selector that matches nothing.
  auto listed = c.get(std::string(kClaims) + "?labelSelector=app%3Dnone");
  ASSERT_TRUE(listed.has_value());
  EXPECT_NE(listed->find(R"("items":[])"), std::string::npos) << *listed;
  // A merge patch with its content type.
  auto patched = c.patch(std::string(kClaims) + "/a", R"({"metadata":{"labels":{"app":"x"}}})");
  ASSERT_TRUE(patched.has_value()) << patched.error().to_string();
  EXPECT_NE(patched->find(R"("app":"x")"), std::string::npos);
}

TEST_F(LoopbackClientTest, ActsAsItsIdentity) {
  // A node may not create DeviceClasses (NodeRestriction and authorization).
  LoopbackClient node(*api_, server::Identity{"system:node:n1", false, "n1"});
  auto r = node.post("/apis/resource.k8s.io/v1/deviceclasses",
                     R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"}})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kForbidden) << r.error().to_string();
}

TEST_F(LoopbackClientTest, WatchStreamsEventsAndEndsOnStopOrTimeout) {
  LoopbackClient c(*api_, admin_);
  auto before = c.post(kClaims, claim("before"));
  ASSERT_TRUE(before.has_value());
  const std::string from = std::to_string(store_->current_revision());
  std::atomic<bool> stop{false};
  std::vector<std::string> events;
  std::mutex mu;
  std::thread watcher([&] {
    auto st = c.watch(std::string(kClaims) + "?watch=1&resourceVersion=" + from, [&](std::string_view e) {
      std::lock_guard<std::mutex> l(mu);
      events.emplace_back(e);
      return true;
    }, &stop, 20);
    EXPECT_TRUE(st.has_value());
  });
  ASSERT_TRUE(c.post(kClaims, claim("after")).has_value());
  ASSERT_TRUE(c.patch(std::string(kClaims) + "/before", R"({"metadata":{"labels":{"app":"x"}}})").has_value());
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard<std::mutex> l(mu);
      if (events.size() >= 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  watcher.join();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].rfind(R"({"type":"ADDED")", 0), 0u) << events[0];
  EXPECT_NE(events[0].find(R"("name":"after")"), std::string::npos) << events[0];
  EXPECT_EQ(events[1].rfind(R"({"type":"MODIFIED")", 0), 0u) << events[1];
  EXPECT_NE(events[1].find(R"("name":"before")"), std::string::npos) << events[1];
  EXPECT_NE(events[1].back(), '\n');

  // timeoutSeconds ends the stream cleanly (the informer then watches again).
  auto start = std::chrono::steady_clock::now();
  std::atomic<bool> never{false};
  auto st = c.watch(std::string(kClaims) + "?watch=1&timeoutSeconds=1&resourceVersion=" + "1",
                    [](std::string_view) { return true; }, &never, 50);
  EXPECT_TRUE(st.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A watch the server refuses is its Status.
  auto bad = c.watch(std::string(kClaims) + "?watch=1&resourceVersion=x", [](std::string_view) { return true; },
                     &never, 50);
  EXPECT_FALSE(bad.has_value());
}

TEST_F(LoopbackClientTest, AnInformerFollowsTheServerThroughIt) {
  LoopbackClient c(*api_, admin_);
  client::Informer<api::ResourceClaim> inf(c, {"resource.k8s.io/v1", "ResourceClaim", kClaims, "", "", 50});
  inf.start();
  ASSERT_TRUE(inf.wait_synced(5000));
  ASSERT_TRUE(c.post(kClaims, claim("x")).has_value());
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    seen = inf.get("default/x").has_value();
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(seen);
  inf.stop();
}

}  // namespace loopback_client_test
}  // namespace draplane::cluster
