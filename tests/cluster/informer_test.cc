// client::Informer against a real API server (memory store, no scheduler or
// controllers): list then watch, events carry the previous object (or none when
// the handler asked for none), get()/list() follow the events.
#include "client/informer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "client/rest_client.h"
#include "cluster/local_cluster.h"

namespace draplane::cluster {
namespace {

namespace fs = std::filesystem;
using client::EventType;

struct Seen {
  EventType type;
  std::string name;
  std::string old_rv;  // "" when the handler got no previous object
  std::string new_rv;
  std::string new_label;
};

constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

std::string claim(const std::string& name) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
         R"("},"spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}})";
}

template <typename F>
bool eventually(F f) {
  for (int i = 0; i < 500; ++i) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

TEST(Informer, HandlersGetThePreviousObjectAndTheCacheFollows) {
  std::string dir = (fs::temp_directory_path() / ("draplane-informer-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.scheduler = false;
  o.controllers = false;
  auto c = LocalCluster::start(o);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  ASSERT_TRUE((*rest)->post(kClaims, claim("before")).has_value());  // delivered by the first list

  auto watch_client = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(watch_client.has_value());
  client::Informer<api::ResourceClaim> inf(**watch_client, {"resource.k8s.io/v1", "ResourceClaim", kClaims, "", "", 100});
  std::mutex mu;
  std::vector<Seen> with_old, without_old;
  auto recorder = [&mu](std::vector<Seen>& into) {
    return [&mu, &into](EventType t, const api::ResourceClaim* old, const api::ResourceClaim& obj) {
      std::lock_guard<std::mutex> lock(mu);
      auto l = obj.metadata.labels.find("step");
      into.push_back({t, obj.metadata.name, old ? old->metadata.resourceVersion : "", obj.metadata.resourceVersion,
                      l == obj.metadata.labels.end() ? "" : l->second});
    };
  };
  inf.add_handler(recorder(with_old));
  inf.add_handler(recorder(without_old), /*wants_old=*/false);
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10000));

  auto created = (*rest)->post(kClaims, claim("c"));
  ASSERT_TRUE(created.has_value());
  ASSERT_TRUE(eventually([&] { return inf.get("default/c").has_value(); }));
  std::string rv1 = inf.get("default/c")->metadata.resourceVersion;
  ASSERT_TRUE((*rest)->patch(std::string(kClaims) + "/c", R"({"metadata":{"labels":{"step":"two"}}})").has_value());
  ASSERT_TRUE(eventually([&] {
    auto cur = inf.get("default/c");
    return cur && cur->metadata.labels.count("step") == 1;
  }));
  std::string rv2 = inf.get("default/c")->metadata.resourceVersion;
  EXPECT_NE(rv1, rv2);
  ASSERT_TRUE((*rest)->del(std::string(kClaims) + "/c").has_value());
  ASSERT_TRUE(eventually([&] { return !inf.get("default/c").has_value(); }));

  std::vector<api::ResourceClaim> listed = inf.list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].metadata.name, "before");
  inf.stop();

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(with_old.size(), 4u);
  EXPECT_EQ(with_old[0].type, EventType::kAdded);
  EXPECT_EQ(with_old[0].name, "before");
  EXPECT_EQ(with_old[0].old_rv, "");
  EXPECT_EQ(with_old[1].type, EventType::kAdded);
  EXPECT_EQ(with_old[1].old_rv, "");
  EXPECT_EQ(with_old[1].new_rv, rv1);
  EXPECT_EQ(with_old[2].type, EventType::kModified);
  EXPECT_EQ(with_old[2].old_rv, rv1);  // the previous object
  EXPECT_EQ(with_old[2].new_rv, rv2);
  EXPECT_EQ(with_old[2].new_label, "two");
  EXPECT_EQ(with_old[3].type, EventType::kDeleted);
  EXPECT_EQ(with_old[3].name, "c");
  EXPECT_EQ(with_old[3].old_rv, rv2);
  ASSERT_EQ(without_old.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(without_old[i].type, with_old[i].type);
    EXPECT_EQ(without_old[i].old_rv, "");
    EXPECT_EQ(without_old[i].name, with_old[i].name);
  }
  (*c)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace draplane::cluster
