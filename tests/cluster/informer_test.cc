// client::Informer against a real API server (memory store, no scheduler or
// controllers): list then watch, events carry the previous object (or none when
// the handler asked for none), get()/list() follow the events.
#include "client/informer.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "api/codec.h"
#include "client/rest_client.h"
#include "cluster/local_cluster.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

// A claim type whose decoder rejects what this build "does not know": a claim
// labelled schema=future stands for an object of a newer API than ours.
struct PickyClaim : draplane::api::ResourceClaim {};

namespace draplane::client {
template <>
Result<PickyClaim> decode_json_value<PickyClaim>(const rapidjson::Value& object) {
  auto c = decode_json_value<api::ResourceClaim>(object);
  if (!c.has_value()) return c.error();
  auto l = c->metadata.labels.find("schema");
  if (l != c->metadata.labels.end() && l->second == "future") {
    return invalid_error("spec.devices.requests[0].future: unknown field \"future\"");
  }
  return PickyClaim{std::move(*c)};
}
}  // namespace draplane::client

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

// An API server alone (memory store) in a fresh data dir.
Result<std::unique_ptr<LocalCluster>> start_server(const std::string& dir) {
  fs::remove_all(dir);
  LocalClusterOptions o;
  o.data_dir = dir;
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.scheduler = false;
  o.controllers = false;
  return LocalCluster::start(o);
}

TEST(Informer, HandlersGetThePreviousObjectAndTheCacheFollows) {
  std::string dir = (fs::temp_directory_path() / ("draplane-informer-" + std::to_string(::getpid()))).string();
  auto c = start_server(dir);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  ASSERT_TRUE((*rest)->post(kClaims, claim("before")).has_value());  // delivered by the first list

  auto watch_client = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(watch_client.has_value());
  client::Informer<api::ResourceClaim> inf(**watch_client, {"resource.k8s.io/v1", "ResourceClaim", kClaims, "", "", 100});
  std::mutex mu;
  std::vector<Seen> with_old, second;
  auto recorder = [&mu](std::vector<Seen>& into) {
    return [&mu, &into](EventType t, const api::ResourceClaim* old, const api::ResourceClaim& obj) {
      std::lock_guard<std::mutex> lock(mu);
      auto l = obj.metadata.labels.find("step");
      into.push_back({t, obj.metadata.name, old ? old->metadata.resourceVersion : "", obj.metadata.resourceVersion,
                      l == obj.metadata.labels.end() ? "" : l->second});
    };
  };
  inf.add_handler(recorder(with_old));
  inf.add_handler(recorder(second));  // the event is decoded once for both
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
  ASSERT_EQ(second.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(second[i].type, with_old[i].type);
    EXPECT_EQ(second[i].old_rv, with_old[i].old_rv);
    EXPECT_EQ(second[i].name, with_old[i].name);
  }
  (*c)->stop();
  fs::remove_all(dir);
}

TEST(Informer, StripsManagedFieldsAndAnUpdateFromTheCacheKeepsTheServers) {
  std::string dir = (fs::temp_directory_path() / ("draplane-informer-strip-" + std::to_string(::getpid()))).string();
  auto c = start_server(dir);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  ASSERT_TRUE((*rest)->post(kClaims, claim("listed")).has_value());

  client::RawInformer::Options opts{"resource.k8s.io/v1", "ResourceClaim", kClaims, "", "", 100};
  opts.strip_managed_fields = true;
  client::RawInformer inf(**rest, opts);
  std::mutex mu;
  std::vector<std::string> handed;  // JSON given to the handler
  inf.add_handler([&](EventType, const std::string&, const std::string&, const std::string& json) {
    std::lock_guard<std::mutex> lock(mu);
    handed.push_back(json);
  });
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10000));
  ASSERT_TRUE((*rest)->post(kClaims, claim("watched")).has_value());
  ASSERT_TRUE(eventually([&] { return inf.get("default/watched").has_value(); }));

  for (const char* key : {"default/listed", "default/watched"}) {
    auto json = inf.get(key);
    ASSERT_TRUE(json.has_value()) << key;
    EXPECT_EQ(json->find("managedFields"), std::string::npos) << *json;
    EXPECT_NE(json->find("\"resourceVersion\""), std::string::npos) << *json;  // the rest stays
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(handed.size(), 2u);
    for (const auto& j : handed) EXPECT_EQ(j.find("managedFields"), std::string::npos) << j;
  }
  // The server's copy has them; a PUT of the stripped copy leaves them there.
  auto server = (*rest)->get(std::string(kClaims) + "/watched");
  ASSERT_TRUE(server.has_value());
  EXPECT_NE(server->find("\"managedFields\""), std::string::npos);
  auto cached = api::decode_as<api::ResourceClaim>(*inf.get("default/watched"));
  ASSERT_TRUE(cached.has_value());
  cached->metadata.labels["step"] = "two";
  auto put = (*rest)->put(std::string(kClaims) + "/watched", api::to_json(api::Object(*cached)));
  ASSERT_TRUE(put.has_value()) << put.error().to_string();
  auto after = api::decode_as<api::ResourceClaim>(*put);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->metadata.labels["step"], "two");
  EXPECT_NE(put->find("\"manager\""), std::string::npos) << *put;
  inf.stop();
  (*c)->stop();
  fs::remove_all(dir);
}

TEST(Informer, AnObjectThatCannotBeDecodedIsLoggedOncePerKindAndCounted) {
  std::string dir = (fs::temp_directory_path() / ("draplane-informer-undecodable-" + std::to_string(::getpid()))).string();
  auto c = start_server(dir);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto rest = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(rest.has_value());
  auto future_claim = [](const std::string& name) {
    const std::string plain = R"("},"spec")";
    std::string j = claim(name);
    return j.replace(j.find(plain), plain.size(), R"(","labels":{"schema":"future"}},"spec")");
  };
  ASSERT_TRUE((*rest)->post(kClaims, claim("known")).has_value());
  ASSERT_TRUE((*rest)->post(kClaims, future_claim("future-1")).has_value());

  std::ostringstream log_text;
  auto logger = std::make_shared<spdlog::logger>("informer", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
  client::RawInformer::Options opts{"resource.k8s.io/v1", "PickyClaim", kClaims, "", "", 100};
  opts.logger = logger;
  client::Informer<PickyClaim> inf(**rest, opts);
  std::mutex mu;
  std::vector<std::string> seen;
  for (int h = 0; h < 2; ++h) {  // two handlers: each dropped event still counts once
    inf.add_handler([&mu, &seen](EventType, const PickyClaim*, const PickyClaim& obj) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(obj.metadata.name);
    });
  }
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10000));
  ASSERT_TRUE((*rest)->post(kClaims, future_claim("future-2")).has_value());
  ASSERT_TRUE((*rest)->post(kClaims, claim("known-2")).has_value());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return seen.size() == 4;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"known", "known", "known-2", "known-2"}));
  }
  EXPECT_EQ(inf.decode_errors(), 2u);
  // The first drop of the kind is logged with the key and the error; later ones only counted.
  const std::string text = log_text.str();
  EXPECT_NE(text.find("[warning]"), std::string::npos) << text;
  EXPECT_NE(text.find("PickyClaim default/future-1 that cannot be decoded: spec.devices.requests[0].future: unknown field"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("future-2"), std::string::npos) << text;
  // The cache never held it: list() leaves it out; each drop counted once.
  EXPECT_EQ(inf.list().size(), 2u);
  EXPECT_FALSE(inf.get("default/future-2").has_value());
  EXPECT_EQ(inf.decode_errors(), 2u);
  EXPECT_EQ(client::informer_decode_errors()["PickyClaim"], 2u);
  // The API server of this process serves the count.
  auto metrics = (*rest)->get("/metrics");
  ASSERT_TRUE(metrics.has_value()) << metrics.error().to_string();
  EXPECT_NE(metrics->find("draplane_informer_decode_errors_total{kind=\"PickyClaim\"} 2\n"), std::string::npos) << *metrics;
  inf.stop();
  (*c)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace draplane::cluster
