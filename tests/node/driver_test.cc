// `draplane driver`'s kubelet plugin driven by a fake kubelet over the real
// gRPC services on unix sockets: registration, NodePrepareResources /
// NodeUnprepareResources (v1 and v1beta1) for claims read from an in-memory API
// (FakeApi), per-claim errors, idempotency, and the health stream.
#include "node/driver.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "client/rest_client.h"
#include "driver_fixture.h"
#include "driver_thread.h"
#include "fake_kubelet.h"
#include "node/cdi.h"
#include "node/node_devices.h"

namespace draplane::node {
namespace {

using draplane::testing::FakeApi;
using testing::FakeKubelet;

class DriverTest : public testing::DriverFixture {};

TEST_F(DriverTest, RegistersWithTheKubelet) {
  start_plugin();
  EXPECT_FALSE(plugin_->registration().has_value());
  FakeKubelet kubelet(dir_.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(), "");
  EXPECT_TRUE(std::filesystem::is_socket(dir_.file("registry/gpu.nvidia.com-reg.sock")));
  EXPECT_EQ(kubelet.info().type(), "DRAPlugin");
  EXPECT_EQ(kubelet.info().name(), "gpu.nvidia.com");
  EXPECT_EQ(kubelet.info().endpoint(), dir_.file("plugin/dra.sock"));
  std::vector<std::string> versions(kubelet.info().supported_versions().begin(),
                                    kubelet.info().supported_versions().end());
  EXPECT_EQ(versions, (std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth"}));
  ASSERT_TRUE(plugin_->registration().has_value());
  EXPECT_TRUE(plugin_->registration()->registered);
  EXPECT_EQ(plugin_->registration()->error, "");
  // Stopping removes both sockets: the kubelet's plugin watcher deregisters.
  plugin_->stop();
  EXPECT_FALSE(std::filesystem::exists(dir_.file("registry/gpu.nvidia.com-reg.sock")));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("plugin/dra.sock")));
}

// A socket left by a crashed plugin does not keep a new one from starting.
TEST_F(DriverTest, ReplacesStaleSockets) {
  testing::write_file(dir_.file("plugin/dra.sock"), "stale");
  testing::write_file(dir_.file("registry/gpu.nvidia.com-reg.sock"), "stale");
  start_plugin();
  FakeKubelet kubelet(dir_.file("registry"));
  EXPECT_EQ(kubelet.register_plugin(), "");
}

TEST_F(DriverTest, PreparesAndUnpreparesClaims) {
  const std::string uid = put_claim("c1", "gpu-1");
  start_plugin();
  FakeKubelet kubelet(dir_.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(), "");
  grpc::Status st;
  auto resp = kubelet.prepare({FakeKubelet::claim("default", "c1", uid)}, &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.claims().size(), 1u);
  const auto& entry = resp.claims().at(uid);
  EXPECT_EQ(entry.error(), "");
  ASSERT_EQ(entry.devices().size(), 1);
  const auto& d = entry.devices(0);
  EXPECT_EQ(std::vector<std::string>(d.request_names().begin(), d.request_names().end()),
            std::vector<std::string>{"gpu"});
  EXPECT_EQ(d.pool_name(), "node-a");
  EXPECT_EQ(d.device_name(), "gpu-1");
  EXPECT_EQ(std::vector<std::string>(d.cdi_device_ids().begin(), d.cdi_device_ids().end()),
            std::vector<std::string>{"k8s.gpu.nvidia.com/claim=" + uid + "-gpu-1"});
  // The CDI spec names the device the kubelet was told about, with its GPU.
  const std::string spec = testing::read_file(cdi_spec_path(dir_.file("cdi"), uid));
  EXPECT_NE(spec.find("name: " + uid + "-gpu-1"), std::string::npos) << spec;
  EXPECT_NE(spec.find("NVIDIA_VISIBLE_DEVICES=" + gpus_[1].uuid), std::string::npos) << spec;
  EXPECT_EQ(devices_->prepared_claims(), std::vector<std::string>{uid});

  // Prepared again (a kubelet restart): the same answer, from the checkpoint.
  auto again = kubelet.prepare({FakeKubelet::claim("default", "c1", uid)});
  EXPECT_EQ(again.SerializeAsString(), resp.SerializeAsString());
  // v1beta1 speaks the same messages in its own package.
  auto beta = kubelet.prepare_v1beta1(FakeKubelet::claim("default", "c1", uid));
  EXPECT_EQ(beta.SerializeAsString(), resp.SerializeAsString());

  auto un = kubelet.unprepare({FakeKubelet::claim("default", "c1", uid)}, &st);
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(un.claims().size(), 1u);
  EXPECT_EQ(un.claims().at(uid).error(), "");
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), uid)));
  EXPECT_TRUE(devices_->prepared_claims().empty());
  // Unprepare is idempotent, also once the claim is gone from the API.
  api_.erase("resourceclaims", "default", "c1");
  un = kubelet.unprepare({FakeKubelet::claim("default", "c1", uid)});
  ASSERT_EQ(un.claims().size(), 1u);
  EXPECT_EQ(un.claims().at(uid).error(), "");
}

// A driver restarted (new process, same checkpoint) answers a prepare the
// kubelet repeats with what it answered before, and unprepares what the old
// process prepared.
TEST_F(DriverTest, SurvivesARestart) {
  const std::string uid = put_claim("c1", "gpu-0");
  start_plugin();
  FakeKubelet kubelet(dir_.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(), "");
  auto before = kubelet.prepare({FakeKubelet::claim("default", "c1", uid)});
  ASSERT_EQ(before.claims().at(uid).error(), "");
  load_state();
  start_plugin();
  FakeKubelet restarted(dir_.file("registry"));
  ASSERT_EQ(restarted.register_plugin(), "");
  auto after = restarted.prepare({FakeKubelet::claim("default", "c1", uid)});
  EXPECT_EQ(after.SerializeAsString(), before.SerializeAsString());
  EXPECT_EQ(restarted.unprepare({FakeKubelet::claim("default", "c1", uid)}).claims().at(uid).error(), "");
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), uid)));
  EXPECT_TRUE(devices_->prepared_claims().empty());
}

// Failures are per claim, in the response map (a gRPC error would make the
// kubelet drop every claim's answer); the good claim of the same call is prepared.
TEST_F(DriverTest, PerClaimErrors) {
  const std::string good = put_claim("good", "gpu-0");
  const std::string replaced = put_claim("replaced", "gpu-1");
  put_claim("pending", "");
  const std::string pending_uid = FakeApi::field(*api_.object("resourceclaims", "default", "pending"), {"metadata", "uid"});
  put_claim("elsewhere", "gpu-7");
  const std::string elsewhere_uid =
      FakeApi::field(*api_.object("resourceclaims", "default", "elsewhere"), {"metadata", "uid"});
  start_plugin();
  FakeKubelet kubelet(dir_.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(), "");
  grpc::Status st;
  auto resp = kubelet.prepare({FakeKubelet::claim("default", "good", good),
                               FakeKubelet::claim("default", "replaced", "old-uid"),
                               FakeKubelet::claim("default", "pending", pending_uid),
                               FakeKubelet::claim("default", "missing", "uid-m"),
                               FakeKubelet::claim("default", "elsewhere", elsewhere_uid)},
                              &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.claims().size(), 5u);
  EXPECT_EQ(resp.claims().at(good).error(), "");
  EXPECT_EQ(resp.claims().at(good).devices().size(), 1);
  EXPECT_EQ(resp.claims().at("old-uid").error(),
            "claim default/replaced: metadata.uid: is " + replaced +
                ", the kubelet asked for old-uid (the claim was replaced)");
  EXPECT_EQ(resp.claims().at("old-uid").devices().size(), 0);
  EXPECT_EQ(resp.claims().at(pending_uid).error(), "claim default/pending: status.allocation: not allocated");
  EXPECT_NE(resp.claims().at("uid-m").error().find("retrieve claim default/missing: "), std::string::npos)
      << resp.claims().at("uid-m").error();
  EXPECT_NE(resp.claims().at(elsewhere_uid).error().find("prepare claim default/elsewhere: "), std::string::npos);
  EXPECT_NE(resp.claims().at(elsewhere_uid).error().find("gpu-7"), std::string::npos)
      << resp.claims().at(elsewhere_uid).error();
  EXPECT_EQ(devices_->prepared_claims(), std::vector<std::string>{good});
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), replaced)));
}

TEST_F(DriverTest, StreamsDeviceHealth) {
  start_plugin();
  FakeKubelet kubelet(dir_.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(), "");
  kubelet.watch_health();
  auto first = kubelet.next_health();
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->devices().size(), 2);
  EXPECT_EQ(first->devices(0).device().pool_name(), "node-a");
  EXPECT_EQ(first->devices(0).device().device_name(), "gpu-0");
  EXPECT_EQ(first->devices(0).health(), v1alpha1::HEALTHY);
  EXPECT_EQ(first->devices(0).last_updated_time(), 1767225600);  // FakeClock: 2026-01-01T00:00:00Z
  {
    std::lock_guard<std::mutex> l(health_mu_);
    health_[1] = {"gpu-1", "Unhealthy", "gpu.nvidia.com/xid=79:NoSchedule"};
  }
  plugin_->health_changed();
  auto second = kubelet.next_health();
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->devices().size(), 2);
  EXPECT_EQ(second->devices(0).health(), v1alpha1::HEALTHY);
  EXPECT_EQ(second->devices(1).device().device_name(), "gpu-1");
  EXPECT_EQ(second->devices(1).health(), v1alpha1::UNHEALTHY);
  EXPECT_EQ(second->devices(1).message(), "gpu.nvidia.com/xid=79:NoSchedule");
  // The plugin stopping ends the stream.
  plugin_->stop();
  EXPECT_TRUE(kubelet.health_ended(5000));
}

// A client of an API server that is not there.
std::unique_ptr<client::RestClient> unreachable_server() {
  client::KubeConfig down;
  down.server = "http://127.0.0.1:1";  // nothing listens there
  return std::move(*client::RestClient::create(down));
}

DriverOptions driver_options(const std::string& dir) {
  DriverOptions d;
  d.node_name = "node-a";
  d.gpus = "sim:2xH100";
  d.dynamic_mig = false;
  d.plugin_dir = dir + "/plugin";
  d.registry_dir = dir + "/registry";
  d.cdi_root = dir + "/cdi";
  d.boot_id = "boot-1";
  return d;
}

// run_driver restarted while the API server is unreachable: it registers with
// the kubelet and unprepares a claim the previous process prepared (that needs
// only the checkpoint) while it keeps trying to publish its slices.
TEST(RunDriver, ServesTheKubeletWhileTheApiServerIsDown) {
  testing::TempDir dir("rdown");
  const DriverOptions d = driver_options(dir.str());
  const std::string uid = "uid-1";
  {  // The previous process prepared the claim.
    PrepareOptions po;
    po.node_name = d.node_name;
    po.cdi_dir = d.cdi_root;
    po.plugin_dir = d.plugin_dir;
    auto opened = open_node_devices(d.gpus, po, d.boot_id);
    ASSERT_TRUE(opened.has_value()) << opened.error().message();
    api::AllocationResult a;
    a.devices.results.push_back({});
    a.devices.results[0].request = "gpu";
    a.devices.results[0].driver = kDriverName;
    a.devices.results[0].pool = "node-a";
    a.devices.results[0].device = "gpu-0";
    ASSERT_TRUE(opened->devices->prepare({"default", "c1", uid}, a).has_value());
  }
  ASSERT_TRUE(std::filesystem::exists(cdi_spec_path(d.cdi_root, uid)));

  auto rest = unreachable_server();
  testing::DriverThread driver(*rest, d);
  FakeKubelet kubelet(d.registry_dir);
  ASSERT_EQ(kubelet.register_plugin(10000), "");
  auto un = kubelet.unprepare({FakeKubelet::claim("default", "c1", uid)});
  ASSERT_EQ(un.claims().size(), 1u);
  EXPECT_EQ(un.claims().at(uid).error(), "");
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(d.cdi_root, uid)));
  // Prepare needs the claim: a per-claim error until the server answers.
  auto prep = kubelet.prepare({FakeKubelet::claim("default", "c2", "uid-2")});
  ASSERT_EQ(prep.claims().size(), 1u);
  EXPECT_NE(prep.claims().at("uid-2").error().find("retrieve claim default/c2: "), std::string::npos)
      << prep.claims().at("uid-2").error();
}

// Directories given relative to the working directory: GetInfo still names
// dra.sock by an absolute path (the kubelet runs elsewhere).
TEST(RunDriver, AdvertisesAnAbsoluteEndpoint) {
  testing::TempDir dir("rrel");
  const std::string rel = std::filesystem::relative(dir.str()).string();
  ASSERT_FALSE(std::filesystem::path(rel).is_absolute());
  auto rest = unreachable_server();
  testing::DriverThread driver(*rest, driver_options(rel));
  FakeKubelet kubelet(dir.file("registry"));
  ASSERT_EQ(kubelet.register_plugin(10000), "");
  const std::string endpoint = kubelet.info().endpoint();
  EXPECT_TRUE(std::filesystem::path(endpoint).is_absolute()) << endpoint;
  EXPECT_EQ(endpoint, std::filesystem::absolute(dir.file("plugin/dra.sock")).lexically_normal().string());
}

}  // namespace
}  // namespace draplane::node
