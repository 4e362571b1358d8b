// Fault injection for simulated GPUs (`draplane agent inject-xid`): the event
// file format, the backend reading it, and recovery clearing the taints.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "node/health.h"
#include "node/sim.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::TempDir;

TEST(HealthInject, EventLinesRoundTrip) {
  const GpuEvent events[] = {{GpuEvent::Kind::kXid, "GPU-1", 79},
                             {GpuEvent::Kind::kGpuLost, "GPU-2", 0},
                             {GpuEvent::Kind::kRecovered, "GPU-1", 0},
                             {GpuEvent::Kind::kXid, "", 13}};
  for (const GpuEvent& e : events) {
    std::string line = format_injected_event(e);
    SCOPED_TRACE(line);
    auto back = parse_injected_event(line);
    ASSERT_TRUE(back.has_value()) << back.error().message();
    EXPECT_EQ(*back, e);
  }
  EXPECT_EQ(format_injected_event({GpuEvent::Kind::kXid, "", 48}), "xid * 48");
}

TEST(HealthInject, BadEventLinesNameTheLine) {
  for (const char* line : {"", "xid", "xid GPU-1", "xid GPU-1 0", "xid GPU-1 x9", "xid GPU-1 79 1",
                           "recover", "recover GPU-1 2", "boom GPU-1"}) {
    SCOPED_TRACE(line);
    auto e = parse_injected_event(line);
    ASSERT_FALSE(e.has_value());
    EXPECT_EQ(e.error().code(), Code::kInvalid);
    EXPECT_NE(e.error().message().find(std::string("\"") + line + "\""), std::string::npos) << e.error().message();
  }
}

TEST(HealthInject, ResolvesGpuByMinorOrUuid) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{.seed = 7});
  std::string text = format_injected_gpus(gpus);
  EXPECT_EQ(*resolve_injected_gpu(text, "gpu-1"), gpus[1].uuid);
  EXPECT_EQ(*resolve_injected_gpu(text, gpus[0].uuid), gpus[0].uuid);
  EXPECT_EQ(*resolve_injected_gpu(text, "all"), "");
  auto missing = resolve_injected_gpu(text, "gpu-2");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_NE(missing.error().message().find("gpu-1 (" + gpus[1].uuid + ")"), std::string::npos)
      << missing.error().message();
}

TEST(HealthInject, BackendReadsAppendedEventsOnly) {
  TempDir dir("inject");
  auto gpus = *parse_sim_spec("2xH100", SimOptions{});
  // Written before anyone watched: not replayed.
  ASSERT_TRUE(append_injected_event(dir.str(), {GpuEvent::Kind::kXid, gpus[0].uuid, 48}).ok());
  SimBackend sim(gpus);
  ASSERT_TRUE(sim.watch_injected_events(dir.str()).ok());
  EXPECT_EQ(testing::read_file(dir.file("gpus")), format_injected_gpus(gpus));
  EXPECT_FALSE(sim.wait_event(0)->has_value());

  ASSERT_TRUE(append_injected_event(dir.str(), {GpuEvent::Kind::kXid, gpus[1].uuid, 79}).ok());
  std::ofstream(dir.file("events"), std::ios::app) << "not an event\nrecover " << gpus[1].uuid << "\nxid * 1";
  auto e = sim.wait_event(0);
  ASSERT_TRUE(e.has_value() && e->has_value());
  EXPECT_EQ(**e, (GpuEvent{GpuEvent::Kind::kXid, gpus[1].uuid, 79}));
  e = sim.wait_event(0);  // the bad line is skipped
  ASSERT_TRUE(e.has_value() && e->has_value());
  EXPECT_EQ(**e, (GpuEvent{GpuEvent::Kind::kRecovered, gpus[1].uuid, 0}));
  EXPECT_FALSE(sim.wait_event(0)->has_value());  // "xid * 1" has no newline yet
  std::ofstream(dir.file("events"), std::ios::app) << "\n";
  e = sim.wait_event(0);
  ASSERT_TRUE(e.has_value() && e->has_value());
  EXPECT_EQ(**e, (GpuEvent{GpuEvent::Kind::kXid, "", 1}));
}

TEST(HealthInject, WaitingBackendSeesAnEventAppendedLater) {
  TempDir dir("inject-wait");
  auto gpus = *parse_sim_spec("1xH100", SimOptions{});
  SimBackend sim(gpus);
  ASSERT_TRUE(sim.watch_injected_events(dir.str()).ok());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    (void)append_injected_event(dir.str(), {GpuEvent::Kind::kGpuLost, gpus[0].uuid, 0});
  });
  auto e = sim.wait_event(60000);  // returns once the line is there
  writer.join();
  ASSERT_TRUE(e.has_value() && e->has_value());
  EXPECT_EQ((*e)->kind, GpuEvent::Kind::kGpuLost);
}

TEST(HealthInject, RecoveryClearsTheGpusHealthTaints) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{});
  SimBackend sim(gpus);
  common::FakeClock clock;
  HealthMonitor monitor(sim, gpus, true, clock);
  sim.inject_event({GpuEvent::Kind::kXid, gpus[0].uuid, 79});
  sim.inject_event({GpuEvent::Kind::kXid, gpus[0].uuid, 13});
  sim.inject_event({GpuEvent::Kind::kXid, gpus[1].uuid, 48});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(monitor.poll_once(0));
  EXPECT_EQ(monitor.health("gpu-0"), "Unhealthy");
  EXPECT_EQ(monitor.health("gpu-0-mig-7g80gb-0-0"), "Unhealthy");
  EXPECT_EQ(monitor.health("gpu-1"), "Unhealthy");

  sim.inject_event({GpuEvent::Kind::kRecovered, gpus[0].uuid, 0});
  EXPECT_TRUE(monitor.poll_once(0));
  EXPECT_EQ(monitor.health("gpu-0"), "Healthy");
  EXPECT_EQ(monitor.health("gpu-0-mig-7g80gb-0-0"), "Healthy");
  EXPECT_EQ(monitor.taints().count("gpu-0"), 0u);
  EXPECT_EQ(monitor.health("gpu-1"), "Unhealthy");  // another GPU keeps its taint
  sim.inject_event({GpuEvent::Kind::kRecovered, gpus[0].uuid, 0});
  EXPECT_FALSE(monitor.poll_once(0));  // nothing left to clear

  // Recovery keeps the unmonitored taint: the events are still not watched.
  sim.set_events_unavailable(true);
  EXPECT_TRUE(monitor.poll_once(0));
  sim.set_events_unavailable(false);
  sim.inject_event({GpuEvent::Kind::kRecovered, "", 0});
  EXPECT_TRUE(monitor.poll_once(0));  // gpu-1's XID goes
  EXPECT_EQ(monitor.health("gpu-1"), "Unknown");
  EXPECT_EQ(monitor.taints().at("gpu-1")[0].key, "gpu.nvidia.com/unmonitored");
}

TEST(HealthInject, DeviceHealthFromTaints) {
  auto taint = [](const char* key, const char* value, const char* effect) {
    api::DeviceTaint t;
    t.key = key;
    t.value = value;
    t.effect = effect;
    return t;
  };
  EXPECT_EQ(device_health({}), "Healthy");
  EXPECT_EQ(device_health({taint("gpu.nvidia.com/xid", "13", "None")}), "Healthy");
  EXPECT_EQ(device_health({taint("gpu.nvidia.com/xid", "79", "NoSchedule")}), "Unhealthy");
  EXPECT_EQ(device_health({taint("gpu.nvidia.com/gpu-lost", "", "NoSchedule")}), "Unhealthy");
  EXPECT_EQ(device_health({taint("gpu.nvidia.com/unmonitored", "", "None")}), "Unknown");
  EXPECT_EQ(device_health({taint("gpu.nvidia.com/unmonitored", "", "None"), taint("gpu.nvidia.com/xid", "48", "NoSchedule")}),
            "Unhealthy");
  EXPECT_EQ(device_health({taint("example.com/other", "", "NoExecute")}), "Healthy");
}

}  // namespace
}  // namespace draplane::node
