#include "node/health.h"

#include <gtest/gtest.h>

#include "node/sim.h"
#include "node/slices.h"

namespace draplane::node {
namespace {

TEST(Health, XidTaints) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{});
  struct Case {
    uint64_t xid;
    const char* effect;
  } cases[] = {{79, "NoSchedule"}, {48, "NoSchedule"}, {13, "None"}, {31, "None"}, {43, "None"},
               {45, "None"},       {68, "None"},       {109, "None"}, {94, "NoSchedule"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.xid);
    auto t = taints_for_event({GpuEvent::Kind::kXid, gpus[1].uuid, c.xid}, gpus, true, "2025-01-01T00:00:00Z");
    ASSERT_EQ(t.size(), 26u);  // gpu-1 and its 25 MIG placements
    EXPECT_EQ(t.begin()->first, "gpu-1");
    const api::DeviceTaint& taint = t.at("gpu-1-mig-7g80gb-0-0");
    EXPECT_EQ(taint.key, "gpu.nvidia.com/xid");
    EXPECT_EQ(taint.value, std::to_string(c.xid));
    EXPECT_EQ(taint.effect, c.effect);
    EXPECT_EQ(taint.timeAdded, "2025-01-01T00:00:00Z");
  }
  auto plain = taints_for_event({GpuEvent::Kind::kXid, gpus[0].uuid, 79}, gpus, false, "t");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain.begin()->first, "gpu-0");
}

TEST(Health, GpuLostTaintsEverything) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{});
  auto t = taints_for_event({GpuEvent::Kind::kGpuLost, "", 0}, gpus, false, "t");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at("gpu-0").key, "gpu.nvidia.com/gpu-lost");
  EXPECT_EQ(t.at("gpu-1").effect, "NoSchedule");
  EXPECT_EQ(t.at("gpu-1").value, "");
}

TEST(Health, MonitorAndRepublish) {
  auto gpus = *parse_sim_spec("2xH100", SimOptions{});
  SimBackend sim(gpus);
  common::FakeClock clock;
  clock.set_unix_seconds(1735689600);  // 2025-01-01T00:00:00Z
  HealthMonitor monitor(sim, gpus, false, clock);
  EXPECT_FALSE(monitor.poll_once(0));  // nothing happened
  sim.inject_event({GpuEvent::Kind::kXid, gpus[0].uuid, 79});
  EXPECT_TRUE(monitor.poll_once(0));
  sim.inject_event({GpuEvent::Kind::kXid, gpus[0].uuid, 79});
  EXPECT_FALSE(monitor.poll_once(0));  // same taint again: no change
  sim.inject_event({GpuEvent::Kind::kXid, gpus[0].uuid, 13});
  EXPECT_TRUE(monitor.poll_once(0));
  auto taints = monitor.taints();
  ASSERT_EQ(taints.size(), 1u);
  ASSERT_EQ(taints.at("gpu-0").size(), 2u);
  EXPECT_EQ(taints.at("gpu-0")[0].value, "13");
  EXPECT_EQ(taints.at("gpu-0")[1].value, "79");

  auto slices = *build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = false, .taints = taints});
  EXPECT_EQ(slices[0].spec.devices[0].taints.size(), 2u);
  EXPECT_TRUE(slices[0].spec.devices[1].taints.empty());

  sim.set_events_unavailable(true);
  EXPECT_TRUE(monitor.poll_once(0));
  EXPECT_FALSE(monitor.poll_once(0));
  EXPECT_EQ(monitor.taints().at("gpu-1")[0].key, "gpu.nvidia.com/unmonitored");
  EXPECT_EQ(monitor.taints().at("gpu-1")[0].effect, "None");
}

TEST(Health, TaintedSlicesHoldAtMost64Devices) {
  auto gpus = *parse_sim_spec("100xH100", SimOptions{});
  auto untainted = *build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = false});
  ASSERT_EQ(untainted.size(), 1u);
  auto t = taints_for_event({GpuEvent::Kind::kGpuLost, "", 0}, gpus, false, "t");
  std::map<std::string, std::vector<api::DeviceTaint>> taints;
  for (const auto& [d, taint] : t) taints[d] = {taint};
  auto tainted = *build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = false, .taints = taints});
  ASSERT_EQ(tainted.size(), 2u);
  EXPECT_EQ(tainted[0].spec.devices.size(), 64u);
  EXPECT_EQ(tainted[1].spec.devices.size(), 36u);
}

}  // namespace
}  // namespace draplane::node
