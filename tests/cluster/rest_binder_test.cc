// sched::RestBinder::update_pod_status against a real API server (memory
// store): a current copy is written without reading the pod first; a stale
// one draws a conflict, then the pod is read and the change applied to it; a
// pod replaced under the same name is not touched.
#include "sched/rest_binder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "api/codec.h"
#include "client/rest_client.h"
#include "cluster/local_cluster.h"

namespace draplane::cluster {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPods = "/api/v1/namespaces/default/pods";

std::string pod_json(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"containers":[{"name":"c","image":"busybox"}]}})";
}

// apiserver_request_total for GETs of single pods that succeeded.
long pod_gets(client::RestClient& rest) {
  auto text = rest.get("/metrics");
  if (!text.has_value()) return -1;
  const std::string want = "apiserver_request_total{verb=\"GET\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"pods\","
                           "subresource=\"\",";
  size_t at = text->find(want);
  if (at == std::string::npos) return 0;
  size_t line_end = text->find('\n', at);
  std::string line = text->substr(at, line_end - at);
  if (line.find("code=\"200\"") == std::string::npos) return 0;
  return std::stol(line.substr(line.rfind(' ') + 1));
}

void set_unschedulable(api::Pod& p, const std::string& message) {
  p.status.conditions.push_back(api::PodCondition{"PodScheduled", "False", "", "", "Unschedulable", message});
}

TEST(RestBinder, PodStatusFromTheCallersCopyThenFromTheServer) {
  std::string dir = (fs::temp_directory_path() / ("draplane-binder-" + std::to_string(::getpid()))).string();
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
  auto created = (*rest)->post(kPods, pod_json("p"));
  ASSERT_TRUE(created.has_value()) << created.error().to_string();
  auto pod = api::decode_as<api::Pod>(*created);
  ASSERT_TRUE(pod.has_value());
  sched::RestBinder binder(**rest);

  // Current copy: one PUT, no GET.
  const long gets = pod_gets(**rest);
  ASSERT_GE(gets, 0);
  ASSERT_TRUE(binder.update_pod_status(*pod, [](api::Pod& p) { set_unschedulable(p, "first"); }).has_value());
  EXPECT_EQ(pod_gets(**rest), gets);
  auto now = api::decode_as<api::Pod>(*(*rest)->get(std::string(kPods) + "/p"));
  ASSERT_TRUE(now.has_value());
  ASSERT_EQ(now->status.conditions.size(), 1u);
  EXPECT_EQ(now->status.conditions[0].message, "first");

  // Stale copy (the pod changed since): the change lands on the server's pod.
  ASSERT_TRUE((*rest)->patch(std::string(kPods) + "/p", R"({"metadata":{"labels":{"k":"v"}}})").has_value());
  const long gets2 = pod_gets(**rest);
  ASSERT_TRUE(binder
                  .update_pod_status(*pod,
                                     [](api::Pod& p) {
                                       // The copy has no condition yet, the server's pod has one.
                                       if (p.status.conditions.empty()) set_unschedulable(p, "from the stale copy");
                                       else p.status.conditions[0].message = "second";
                                     })
                  .has_value());
  EXPECT_EQ(pod_gets(**rest), gets2 + 1);
  now = api::decode_as<api::Pod>(*(*rest)->get(std::string(kPods) + "/p"));
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->metadata.labels["k"], "v");
  ASSERT_EQ(now->status.conditions.size(), 1u);
  EXPECT_EQ(now->status.conditions[0].message, "second");

  // Replaced under the same name: NotFound, the new pod untouched.
  ASSERT_TRUE((*rest)->del(std::string(kPods) + "/p?gracePeriodSeconds=0").has_value());
  ASSERT_TRUE((*rest)->post(kPods, pod_json("p")).has_value());
  auto r = binder.update_pod_status(*now, [](api::Pod& p) { set_unschedulable(p, "third"); });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kNotFound);
  auto fresh = api::decode_as<api::Pod>(*(*rest)->get(std::string(kPods) + "/p"));
  ASSERT_TRUE(fresh.has_value());
  EXPECT_TRUE(fresh->status.conditions.empty());
  (*c)->stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace draplane::cluster
