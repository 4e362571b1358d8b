// The fixture of the kubelet plugin tests: simulated GPUs (2x H100 on pool
// node-a), a DeviceState with its checkpoint in a temporary directory, claims in
// an in-memory API (FakeApi), and the plugin's gRPC servers on unix sockets
// there (header-only: tests/<module> compiles only *_test.cc files).
#pragma once

#include <gtest/gtest.h>

#include <spdlog/sinks/null_sink.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../controllers/fake_api.h"
#include "node/driver.h"
#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node::testing {

using draplane::testing::FakeApi;

class DriverFixture : public ::testing::Test {
 protected:
  explicit DriverFixture(const std::string& tag = "driver")
      : dir_(tag),
        sim_(*parse_sim_spec("2xH100", SimOptions{.seed = 7})),
        log_("driver-test", std::make_shared<spdlog::sinks::null_sink_mt>()) {
    gpus_ = *sim_.discover();
    load_state();
  }
  // The driver's state as a (re)started process loads it: the checkpoint.
  void load_state() {
    plugin_.reset();
    preparer_.reset();
    devices_.reset();
    PrepareOptions o;
    o.node_name = "node-a";
    o.cdi_dir = dir_.file("cdi");
    o.plugin_dir = dir_.file("plugin");
    devices_ = std::move(*DeviceState::create(sim_, runner_, o, "boot-1"));
    preparer_ = std::make_unique<ClaimPreparer>(api_, *devices_);
  }
  // Serves the plugin on <dir>/plugin/dra.sock and <dir>/registry; the health
  // stream reports health_.
  void start_plugin() {
    auto health = [this] {
      std::lock_guard<std::mutex> l(health_mu_);
      return health_;
    };
    auto p = KubeletPlugin::start(*preparer_, health, std::make_shared<common::FakeClock>(),
                                  {"node-a", dir_.file("plugin"), dir_.file("registry")}, log_);
    ASSERT_TRUE(p.has_value()) << p.error().message();
    plugin_ = std::move(*p);
  }
  // A claim allocated `device` on node-a (none: not allocated); returns its UID.
  std::string put_claim(const std::string& name, const std::string& device) {
    std::string status = device.empty() ? "" : R"(,"status":{"allocation":{"devices":{"results":[{"request":"gpu",
        "driver":"gpu.nvidia.com","pool":"node-a","device":")" + device + R"("}]}}})";
    std::string body = api_.put_object("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
      "metadata":{"name":")" + name + R"(","namespace":"default"},
      "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}})" + status + "}");
    return FakeApi::field(body, {"metadata", "uid"});
  }

  TempDir dir_;
  SimBackend sim_;
  RecordingRunner runner_;
  std::vector<GpuInfo> gpus_;
  std::unique_ptr<DeviceState> devices_;
  FakeApi api_;
  spdlog::logger log_;
  std::unique_ptr<ClaimPreparer> preparer_;
  std::mutex health_mu_;
  std::vector<DeviceHealthReport> health_{{"gpu-0", "Healthy", ""}, {"gpu-1", "Healthy", ""}};
  std::unique_ptr<KubeletPlugin> plugin_;
};

}  // namespace draplane::node::testing
