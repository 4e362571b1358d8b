// The running agent follows the DeviceClasses: a sharing class makes it
// republish its GPUs as shared, changing or deleting the class republishes
// them again, without a restart; --consumable-shares decides alone.
#include <gtest/gtest.h>

#include <thread>

#include "../controllers/fake_api.h"
#include "api/codec.h"
#include "node/agent.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using draplane::testing::FakeApi;

// "gpu-0=<shares value or - when not shared>,gpu-1=..." of the published full GPUs.
std::string shares(FakeApi& api) {
  std::map<std::string, std::string> by_name;
  for (const auto& j : api.objects("resourceslices")) {
    auto s = api::decode_as<api::ResourceSlice>(j);
    if (!s.has_value()) continue;
    for (const auto& d : s->spec.devices) {
      if (d.name.find("-mig-") != std::string::npos) continue;
      auto c = d.capacity.find("shares");
      by_name[d.name] = c == d.capacity.end() ? (d.allowMultipleAllocations ? "shared" : "-") : c->second.value.to_string();
    }
  }
  std::string out;
  for (const auto& [n, v] : by_name) out += (out.empty() ? "" : ",") + n + "=" + v;
  return out;
}

std::string time_sliced_class(int replicas) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"nvidia-gpu"},
    "spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com'"}}],
    "config":[{"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"gpu.nvidia.com/v1","kind":"GpuConfig",
      "sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":)" +
         std::to_string(replicas) + "}}}}}]}}";
}

struct RunningAgent {
  RunningAgent(FakeApi& api, AgentOptions o) : dir("agent-share") {
    o.node_name = "node-a";
    o.gpus = "sim:2xH100";
    o.state_dir = dir.str();
    o.log_port = -1;
    o.clock = std::make_shared<common::FakeClock>();
    thread = std::thread([this, &api, o] { result = run_agent(api, o, stop).status(); });
  }
  ~RunningAgent() {
    stop = true;
    thread.join();
  }
  testing::TempDir dir;
  std::atomic<bool> stop{false};
  Status result;
  std::thread thread;
};

TEST(SlicesAgent, FollowsTheClassesWithoutRestart) {
  FakeApi api;
  RunningAgent agent(api, AgentOptions{});
  ASSERT_TRUE(api.wait_for([&] { return shares(api) == "gpu-0=-,gpu-1=-"; })) << shares(api);
  api.put_object("deviceclasses", time_sliced_class(4));
  EXPECT_TRUE(api.wait_for([&] { return shares(api) == "gpu-0=4,gpu-1=4"; })) << shares(api);
  api.handle("PUT", "/apis/resource.k8s.io/v1/deviceclasses/nvidia-gpu", time_sliced_class(2));
  EXPECT_TRUE(api.wait_for([&] { return shares(api) == "gpu-0=2,gpu-1=2"; })) << shares(api);
  api.erase("deviceclasses", "", "nvidia-gpu");
  EXPECT_TRUE(api.wait_for([&] { return shares(api) == "gpu-0=-,gpu-1=-"; })) << shares(api);
}

TEST(SlicesAgent, ConsumableSharesFlagDecidesAlone) {
  FakeApi api;
  api.put_object("deviceclasses", time_sliced_class(4));
  AgentOptions o;
  o.consumable_shares = {ConsumableShares::Mode::kUnlimited, 0};
  RunningAgent agent(api, o);
  ASSERT_TRUE(api.wait_for([&] { return shares(api) == "gpu-0=shared,gpu-1=shared"; })) << shares(api);
}

}  // namespace
}  // namespace draplane::node
