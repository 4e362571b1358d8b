// `draplane driver` (node::run_driver) against a real in-process cluster: the
// driver runs with the node's own token (NodeRestriction applies), publishes
// its slices, and a fake kubelet registers it, prepares the claim the real
// scheduler allocated for a pod bound to that node, reads the health stream and
// unprepares.
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <spdlog/sinks/null_sink.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../node/driver_thread.h"
#include "../node/fake_kubelet.h"
#include "../node/test_dir.h"
#include "client/kubeconfig.h"
#include "common/clock.h"
#include "client/rest_client.h"
#include "cluster/demo.h"
#include "cluster/local_cluster.h"
#include "node/agent_node.h"
#include "node/cdi.h"
#include "node/driver.h"

namespace draplane::cluster {
namespace {

namespace fs = std::filesystem;

// A JSON string field by path; "" when absent.
std::string field(const std::string& json, std::initializer_list<const char*> path) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  const rapidjson::Value* v = &d;
  for (const char* p : path) {
    if (!v->IsObject() || !v->HasMember(p)) return "";
    v = &(*v)[p];
  }
  return v->IsString() ? v->GetString() : "";
}

TEST(DriverCluster, FakeKubeletPreparesClaimAllocatedByTheScheduler) {
  // Short paths: a unix socket path has at most 107 bytes.
  node::testing::TempDir tmp("dcl");
  const std::string dir = tmp.str();
  LocalClusterOptions o;
  o.data_dir = dir + "/data";
  o.listen = "127.0.0.1:0";
  o.store = "memory";
  o.node_tokens = {"gpu-node"};
  auto c = LocalCluster::start(o);
  ASSERT_TRUE(c.has_value()) << c.error().to_string();
  auto admin = client::RestClient::create((*c)->admin_config());
  ASSERT_TRUE(admin.has_value());
  auto null_log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
  // What the cluster admin (deploy/) and the kubelet do on a real cluster:
  // the DeviceClasses, and the Node.
  ASSERT_TRUE(node::ensure_device_classes(**admin, *null_log).ok());
  node::NodeInfoOptions ni;
  ni.node_name = "gpu-node";
  ASSERT_TRUE(node::register_node(**admin, node::build_node(ni, {}, common::real_clock()->rfc3339())).ok());

  auto node_cfg = client::load_kubeconfig((*c)->kubeconfig_path(), "node-gpu-node");
  ASSERT_TRUE(node_cfg.has_value()) << node_cfg.error().message();
  auto node_rest = client::RestClient::create(*node_cfg);
  ASSERT_TRUE(node_rest.has_value());
  node::DriverOptions d;
  d.node_name = "gpu-node";
  d.gpus = "sim:2xH100";
  d.dynamic_mig = false;
  d.plugin_dir = dir + "/plugins/gpu.nvidia.com";
  d.registry_dir = dir + "/plugins_registry";
  d.cdi_root = dir + "/cdi";
  d.boot_id = "boot-1";
  node::testing::DriverThread driver(**node_rest, d);

  node::testing::FakeKubelet kubelet(d.registry_dir);
  ASSERT_EQ(kubelet.register_plugin(30000), "");
  EXPECT_EQ(kubelet.info().endpoint(), d.plugin_dir + "/dra.sock");
  // The plugin serves first (unprepare needs no API server); the slices follow,
  // published with the node's identity.
  std::string slices;
  for (int i = 0; i < 600 && slices.find("\"gpu-1\"") == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto body = (*admin)->get("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dgpu-node");
    ASSERT_TRUE(body.has_value());
    slices = *body;
  }
  EXPECT_NE(slices.find("\"gpu-1\""), std::string::npos) << slices;

  ASSERT_TRUE((*admin)->post("/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})")
                  .has_value());
  auto claim = (*admin)->post("/apis/resource.k8s.io/v1/namespaces/team/resourceclaims", R"({
      "apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"one","namespace":"team"},
      "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}})");
  ASSERT_TRUE(claim.has_value()) << claim.error().message();
  const std::string uid = field(*claim, {"metadata", "uid"});
  ASSERT_TRUE((*admin)->post("/api/v1/namespaces/team/pods", R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p","namespace":"team"},
      "spec":{"containers":[{"name":"c","image":"busybox","resources":{"claims":[{"name":"gpu"}]}}],
              "resourceClaims":[{"name":"gpu","resourceClaimName":"one"}]}})")
                  .has_value());
  // The scheduler allocates the claim on gpu-node and binds the pod there.
  std::string device;
  for (int i = 0; i < 600 && device.empty(); ++i) {
    auto body = (*admin)->get("/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/one");
    rapidjson::Document doc;
    if (body.has_value()) doc.Parse(body->c_str());
    if (body.has_value() && !doc.HasParseError() && doc["status"].IsObject() && doc["status"].HasMember("allocation")) {
      const auto& r = doc["status"]["allocation"]["devices"]["results"][0];
      EXPECT_STREQ(r["pool"].GetString(), "gpu-node");
      device = r["device"].GetString();
    }
    if (device.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(device.empty()) << "the claim was not allocated";

  auto resp = kubelet.prepare({node::testing::FakeKubelet::claim("team", "one", uid)});
  ASSERT_EQ(resp.claims().size(), 1u);
  const auto& entry = resp.claims().at(uid);
  ASSERT_EQ(entry.error(), "");
  ASSERT_EQ(entry.devices().size(), 1);
  EXPECT_EQ(entry.devices(0).pool_name(), "gpu-node");
  EXPECT_EQ(entry.devices(0).device_name(), device);
  EXPECT_EQ(entry.devices(0).cdi_device_ids(0), "k8s.gpu.nvidia.com/claim=" + uid + "-" + device);
  EXPECT_TRUE(fs::exists(node::cdi_spec_path(d.cdi_root, uid)));
  EXPECT_TRUE(fs::exists(d.plugin_dir + "/checkpoint.json"));

  kubelet.watch_health();
  auto health = kubelet.next_health();
  ASSERT_TRUE(health.has_value());
  ASSERT_EQ(health->devices().size(), 2);
  EXPECT_EQ(health->devices(0).device().pool_name(), "gpu-node");
  EXPECT_EQ(health->devices(0).health(), v1alpha1::HEALTHY);
  kubelet.stop_health();

  auto un = kubelet.unprepare({node::testing::FakeKubelet::claim("team", "one", uid)});
  ASSERT_EQ(un.claims().size(), 1u);
  EXPECT_EQ(un.claims().at(uid).error(), "");
  EXPECT_FALSE(fs::exists(node::cdi_spec_path(d.cdi_root, uid)));

  Status driver_status = driver.join();
  EXPECT_TRUE(driver_status.ok()) << driver_status.to_string();
  EXPECT_FALSE(fs::exists(d.registry_dir + "/gpu.nvidia.com-reg.sock"));
  (*c)->stop();
}

}  // namespace
}  // namespace draplane::cluster
