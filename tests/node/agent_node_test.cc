// Node registration, slice publishing, DeviceClasses, the log endpoint and the
// whole agent, against the in-memory API.
#include <gtest/gtest.h>

#include <spdlog/sinks/null_sink.h>

#include <boost/asio.hpp>
#include <thread>

#include "../controllers/fake_api.h"
#include "api/codec.h"
#include "node/agent.h"
#include "node/agent_node.h"
#include "node/kubelet_logs.h"
#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using draplane::testing::FakeApi;

std::shared_ptr<spdlog::logger> quiet() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

std::vector<api::ResourceSlice> slices_of(FakeApi& api) {
  std::vector<api::ResourceSlice> out;
  for (const auto& j : api.objects("resourceslices")) out.push_back(*api::decode_as<api::ResourceSlice>(j));
  return out;
}

TEST(AgentNode, BuildNode) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{.seed = 1});
  NodeInfoOptions o;
  o.node_name = "node-a";
  o.cpu = 16;
  o.memory_bytes = 64LL << 30;
  o.kubelet_port = 10250;
  o.labels = {{"team", "ml"}};
  api::Node n = build_node(o, gpus, "2026-01-01T00:00:00Z");
  EXPECT_EQ(n.metadata.name, "node-a");
  EXPECT_EQ(n.metadata.labels.at("kubernetes.io/hostname"), "node-a");
  EXPECT_EQ(n.metadata.labels.at("nvidia.com/gpu.count"), "2");
  EXPECT_EQ(n.metadata.labels.at("nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(n.metadata.labels.at("team"), "ml");
  EXPECT_EQ(n.status.capacity.at("cpu").to_string(), "16");
  EXPECT_EQ(n.status.capacity.at("memory").to_string(), "64Gi");
  EXPECT_EQ(n.status.capacity.at("pods").to_string(), "110");
  EXPECT_EQ(n.status.allocatable, n.status.capacity);
  EXPECT_EQ(n.status.capacity.count("nvidia.com/gpu"), 0u);  // served by DRA, not the device plugin
  EXPECT_NE(n.status.conditions.text.find(R"({"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:00Z")"),
            std::string::npos);
  EXPECT_EQ(n.status.extra.text, R"({"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}})");
  // Round trip through the codec keeps it.
  auto back = api::decode_as<api::Node>(api::to_json(api::Object(n)));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->metadata.labels, n.metadata.labels);
}

TEST(AgentNode, RegisterCreatesThenUpdates) {
  FakeApi api;
  auto gpus = *parse_sim_spec("1xA100-40GB", SimOptions{.seed = 1});
  NodeInfoOptions o;
  o.node_name = "node-a";
  ASSERT_TRUE(register_node(api, build_node(o, gpus, "t1")).ok());
  o.labels = {{"zone", "b"}};
  ASSERT_TRUE(register_node(api, build_node(o, gpus, "t2")).ok());
  auto n = *api::decode_as<api::Node>(*api.object("nodes", "", "node-a"));
  EXPECT_EQ(n.metadata.labels.at("zone"), "b");
  EXPECT_NE(n.status.conditions.text.find("\"t2\""), std::string::npos);
  ASSERT_TRUE(heartbeat_node(api, build_node(o, gpus, "t3")).ok());
  n = *api::decode_as<api::Node>(*api.object("nodes", "", "node-a"));
  EXPECT_NE(n.status.conditions.text.find("\"t3\""), std::string::npos);
  // A deleted Node is registered again.
  api.erase("nodes", "", "node-a");
  ASSERT_TRUE(heartbeat_node(api, build_node(o, gpus, "t4")).ok());
  EXPECT_TRUE(api.object("nodes", "", "node-a").has_value());
}

TEST(AgentNode, PublishSlicesKeepsGenerationUntilInventoryChanges) {
  FakeApi api;
  auto log = quiet();
  SliceOptions so;
  so.node_name = "node-a";
  so.dynamic_mig = false;
  auto two = *parse_sim_spec("2xH100", SimOptions{.seed = 3});
  ASSERT_TRUE(publish_slices(api, two, so, *log).ok());
  auto s = slices_of(api);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].spec.pool.generation, 1);
  EXPECT_EQ(s[0].spec.devices.size(), 2u);
  // Agent restart with the same GPUs: nothing is written.
  api.clear_requests();
  ASSERT_TRUE(publish_slices(api, two, so, *log).ok());
  for (const auto& r : api.requests()) EXPECT_EQ(r.rfind("GET", 0), 0u) << r;
  // A GPU more: same slice, next generation.
  auto three = *parse_sim_spec("3xH100", SimOptions{.seed = 3});
  ASSERT_TRUE(publish_slices(api, three, so, *log).ok());
  s = slices_of(api);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].spec.pool.generation, 2);
  EXPECT_EQ(s[0].spec.devices.size(), 3u);
  // Taints change the slice too.
  so.taints = {{"gpu-0", {api::DeviceTaint{"gpu.nvidia.com/xid", "79", "NoSchedule", "2026-01-01T00:00:00Z"}}}};
  ASSERT_TRUE(publish_slices(api, three, so, *log).ok());
  EXPECT_EQ(slices_of(api)[0].spec.pool.generation, 3);
  // Fewer slices: the extra one is deleted.
  so.taints.clear();
  so.max_devices_per_slice = 1;
  ASSERT_TRUE(publish_slices(api, three, so, *log).ok());
  EXPECT_EQ(slices_of(api).size(), 3u);
  so.max_devices_per_slice = 128;
  ASSERT_TRUE(publish_slices(api, two, so, *log).ok());
  s = slices_of(api);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].spec.pool.generation, 5);
  EXPECT_EQ(s[0].spec.pool.resourceSliceCount, 1);
}

TEST(AgentNode, DeviceClassesCreatedOnceAndForbiddenIsTolerated) {
  FakeApi api;
  auto log = quiet();
  ASSERT_TRUE(ensure_device_classes(api, *log).ok());
  EXPECT_TRUE(api.object("deviceclasses", "", "gpu.nvidia.com").has_value());
  EXPECT_TRUE(api.object("deviceclasses", "", "mig.nvidia.com").has_value());
  api.clear_requests();
  ASSERT_TRUE(ensure_device_classes(api, *log).ok());
  EXPECT_EQ(api.requests().size(), 2u);  // two GETs, no writes
  FakeApi other;
  other.fail_next("POST /apis/resource.k8s.io/v1/deviceclasses", 500);
  EXPECT_FALSE(ensure_device_classes(other, *log).ok());
  // NodeRestriction: a node identity may not create classes; the agent goes on.
  FakeApi node_identity;
  node_identity.fail_next("POST /apis/resource.k8s.io/v1/deviceclasses", 403);
  EXPECT_TRUE(ensure_device_classes(node_identity, *log).ok());
  EXPECT_FALSE(node_identity.object("deviceclasses", "", "gpu.nvidia.com").has_value());
  EXPECT_TRUE(node_identity.object("deviceclasses", "", "mig.nvidia.com").has_value());
}

TEST(AgentNode, SelectLog) {
  struct Case {
    std::string name, content;
    int64_t tail, limit;
    std::string want;
  };
  std::vector<Case> cases = {
      {"all", "a\nb\nc\n", -1, -1, "a\nb\nc\n"},
      {"tail-2", "a\nb\nc\n", 2, -1, "b\nc\n"},
      {"tail-more", "a\nb\n", 5, -1, "a\nb\n"},
      {"tail-0", "a\nb\n", 0, -1, ""},
      {"tail-no-final-newline", "a\nb\nc", 1, -1, "c"},
      {"limit", "hello\n", -1, 3, "hel"},
      {"empty", "", 3, -1, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(select_log(c.content, c.tail, c.limit), c.want);
  }
}

std::string http_get(int port, const std::string& target) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  char buf[4096];
  while (size_t n = s.read_some(asio::buffer(buf), ec)) out.append(buf, n);
  return out;
}

TEST(AgentNode, LogServerServesContainerLogs) {
  testing::TempDir dir("logs");
  testing::write_file(dir.file("main.log"), "one\ntwo\nthree\n");
  LogServer server([&](const std::string& ns, const std::string& pod, const std::string& c, bool prev) -> Result<std::string> {
    if (ns == "default" && pod == "p" && (c == "main" || c.empty()) && !prev) return dir.file("main.log");
    if (c.empty()) return invalid_error("a container name must be specified");
    return not_found_error("pod \"" + pod + "\" not found");
  });
  auto port = server.start("127.0.0.1", 0);
  ASSERT_TRUE(port.has_value()) << port.error().message();
  std::string all = http_get(*port, "/containerLogs/default/p/main");
  EXPECT_NE(all.find("200 OK"), std::string::npos);
  EXPECT_EQ(all.substr(all.find("\r\n\r\n") + 4), "one\ntwo\nthree\n");
  std::string tail = http_get(*port, "/containerLogs/default/p/main?tailLines=1");
  EXPECT_EQ(tail.substr(tail.find("\r\n\r\n") + 4), "three\n");
  EXPECT_NE(http_get(*port, "/containerLogs/default/q/main").find("404"), std::string::npos);
  EXPECT_NE(http_get(*port, "/other").find("404"), std::string::npos);
  server.stop();
}

TEST(Agent, RegistersPublishesAndRunsPods) {
  FakeApi api;
  testing::TempDir dir("agent");
  AgentOptions o;
  o.node_name = "node-a";
  o.gpus = "sim:2xH100";
  o.state_dir = dir.str();
  o.heartbeat_seconds = 1;
  o.clock = std::make_shared<common::FakeClock>();  // 2026-01-01T00:00:00Z
  std::atomic<bool> stop{false};
  Status result;
  std::thread t([&] { result = run_agent(api, o, stop).status(); });
  ASSERT_TRUE(api.wait_for([&] { return !slices_of(api).empty(); }));
  auto node = api::decode_as<api::Node>(*api.object("nodes", "", "node-a"));
  ASSERT_TRUE(node.has_value());
  EXPECT_NE(node->status.extra.text.find("kubeletEndpoint"), std::string::npos);
  EXPECT_TRUE(api.object("deviceclasses", "", "gpu.nvidia.com").has_value());
  auto slice = slices_of(api)[0];
  EXPECT_EQ(slice.spec.nodeName, std::optional<std::string>("node-a"));
  // A pod with a claim on gpu-1 runs and prints its GPU.
  std::string pod = api.put_object("pods", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
    "spec":{"nodeName":"node-a","restartPolicy":"Never","resourceClaims":[{"name":"g","resourceClaimName":"c"}],
     "containers":[{"name":"main","command":["sh","-c","echo $NVIDIA_VISIBLE_DEVICES"],"resources":{"claims":[{"name":"g"}]}}]}})");
  std::string uid = FakeApi::field(pod, {"metadata", "uid"});
  api.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
      "metadata":{"name":"c","namespace":"default"},
      "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}},
      "status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-1"}]}},
       "reservedFor":[{"resource":"pods","name":"p","uid":")" + uid + R"("}]}})");
  ASSERT_TRUE(api.wait_for([&] {
    return FakeApi::field(*api.object("pods", "default", "p"), {"status", "phase"}) == "Succeeded";
  }));
  // Through the log endpoint the Node advertises.
  int port = std::stoi(FakeApi::field(*api.object("nodes", "", "node-a"), {"status", "daemonEndpoints", "kubeletEndpoint", "Port"}));
  std::string log = http_get(port, "/containerLogs/default/p/main");
  std::string body = log.substr(log.find("\r\n\r\n") + 4);
  EXPECT_EQ(body.rfind("GPU-", 0), 0u) << body;
  stop = true;
  t.join();
  EXPECT_TRUE(result.ok()) << result.to_string();
}

}  // namespace
}  // namespace draplane::node
