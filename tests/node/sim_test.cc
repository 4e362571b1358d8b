#include "node/sim.h"

#include <set>

#include <gtest/gtest.h>

#include "node/catalogue.h"
#include "node/nvml.h"

namespace draplane::node {
namespace {

TEST(Sim, Spec8xH100) {
  auto gpus = parse_sim_spec("8xH100", SimOptions{.seed = 7});
  ASSERT_TRUE(gpus.has_value()) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 8u);
  const GpuInfo& g0 = (*gpus)[0];
  EXPECT_EQ(g0.minor, 0);
  EXPECT_EQ(g0.product_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g0.architecture, "Hopper");
  EXPECT_EQ(g0.cuda_compute_capability, "9.0.0");
  EXPECT_EQ(g0.driver_version, "550.54.15");
  EXPECT_EQ(g0.cuda_driver_version, "12.4.0");
  EXPECT_EQ(g0.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(g0.pcie_root, "pci0000:10");
  EXPECT_EQ(g0.numa_node, 0);
  EXPECT_EQ((*gpus)[7].numa_node, 1);
  EXPECT_EQ((*gpus)[7].pci_bus_id, "0000:db:00.0");
  EXPECT_EQ(g0.memory_bytes, 81559LL * 1024 * 1024);
  EXPECT_EQ(g0.mig_profiles.size(), 7u);
  std::set<std::string> uuids;
  for (const GpuInfo& g : *gpus) {
    uuids.insert(g.uuid);
    EXPECT_EQ(g.uuid.substr(0, 4), "GPU-");
    EXPECT_EQ(g.uuid.size(), 40u);
    EXPECT_EQ(g.clique_id, g0.clique_id);  // one NVLink island per node
  }
  EXPECT_EQ(uuids.size(), 8u);
  // Deterministic per seed, different across seeds.
  auto again = parse_sim_spec("8xH100", SimOptions{.seed = 7});
  auto other = parse_sim_spec("8xH100", SimOptions{.seed = 8});
  EXPECT_EQ(*gpus, *again);
  EXPECT_NE((*gpus)[0].uuid, (*other)[0].uuid);
}

TEST(Sim, MixedSpec) {
  auto gpus = parse_sim_spec("4xA100-40GB,2xH200", SimOptions{});
  ASSERT_TRUE(gpus.has_value()) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 6u);
  EXPECT_EQ((*gpus)[3].product_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ((*gpus)[3].cuda_compute_capability, "8.0.0");
  EXPECT_EQ((*gpus)[4].product_name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[4].minor, 4);
  EXPECT_NE((*gpus)[0].clique_id, (*gpus)[4].clique_id);
  EXPECT_EQ(parse_sim_spec("h200", SimOptions{})->size(), 1u);
}

TEST(Sim, SpecErrors) {
  struct Case {
    const char* spec;
    const char* want;
  } cases[] = {
      {"", "sim spec is empty"},
      {"8xB200", "sim spec item \"8xB200\": unknown GPU model \"B200\" (known: H100-80GB (H100), "},
      {"0xH100", "count must be between 1 and 256"},
      {"8xH100,", "unknown GPU model \"\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = parse_sim_spec(c.spec, SimOptions{});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kInvalid);
    EXPECT_NE(r.error().message().find(c.want), std::string::npos) << r.error().message();
  }
}

TEST(Sim, Inventory) {
  const char* yaml = R"(
driverVersion: "535.104.05"
cudaDriverVersion: 12020
gpus:
- model: H100
  count: 2
  numaNode: 3
  cliqueID: ""
- model: A100-80GB
  uuid: GPU-11111111-2222-3333-4444-555555555555
  pciBusID: "00000000:C1:00.0"
  pcieRoot: pci0000:c0
  minor: 9
  addressingMode: HMM
  migCapable: false
)";
  auto gpus = parse_inventory(yaml, SimOptions{});
  ASSERT_TRUE(gpus.has_value()) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].driver_version, "535.104.5");
  EXPECT_EQ((*gpus)[0].cuda_driver_version, "12.2.0");
  EXPECT_EQ((*gpus)[1].numa_node, 3);
  EXPECT_EQ((*gpus)[1].clique_id, "");
  EXPECT_EQ((*gpus)[2].uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ((*gpus)[2].pci_bus_id, "0000:c1:00.0");
  EXPECT_EQ((*gpus)[2].pcie_root, "pci0000:c0");
  EXPECT_EQ((*gpus)[2].minor, 9);
  EXPECT_EQ((*gpus)[2].addressing_mode, "HMM");
  EXPECT_FALSE((*gpus)[2].mig_capable);
  EXPECT_TRUE((*gpus)[2].mig_profiles.empty());
}

TEST(Sim, InventoryErrors) {
  struct Case {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"gpus: []", "inventory: gpus: Required value"},
      {"gpu: []", "inventory: gpu: unknown field"},
      {"gpus:\n- count: 2", "gpus[0].model: Required value"},
      {"gpus:\n- model: H100\n- model: H100\n  numa: 1", "gpus[1].numa: unknown field"},
      {"gpus:\n- model: X1", "gpus[0].model: Unsupported value: \"X1\""},
      {"gpus:\n- model: H100\n  count: 2\n  uuid: GPU-1", "gpus[0].uuid: Forbidden: only allowed when count is 1"},
      {"gpus:\n- model: H100\n  pciBusID: 65:00", "gpus[0].pciBusID: Invalid value"},
      {"gpus:\n- model: H100\n  addressingMode: Foo", "gpus[0].addressingMode: Unsupported value: \"Foo\""},
      {"gpus:\n- model: H100\n  minor: 1\n- model: H100\n  minor: 1", "inventory: duplicate minor 1"},
      {"driverVersion: abc\ngpus:\n- model: H100", "driverVersion: version \"abc\""},
      {"gpus: [", "inventory: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto r = parse_inventory(c.yaml, SimOptions{});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kInvalid);
    EXPECT_NE(r.error().message().find(c.want), std::string::npos) << r.error().message();
  }
}

TEST(Sim, MigCreateDestroy) {
  SimBackend sim(*parse_sim_spec("2xH100", SimOptions{}));
  auto gpus = *sim.discover();
  const std::string& u = gpus[0].uuid;
  auto a = sim.create_mig_device(u, 9, 4);  // 3g.40gb at slices 4..7
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ(a->placement, (MigPlacement{4, 4}));
  EXPECT_EQ(a->gi_id, 1);
  EXPECT_EQ(a->uuid.substr(0, 4), "MIG-");
  EXPECT_TRUE((*sim.discover())[0].mig_enabled);
  // Overlap with slices 4..7 is refused; slices 0..3 are free.
  EXPECT_EQ(sim.create_mig_device(u, 19, 5).error().code(), Code::kFailedPrecondition);
  auto b = sim.create_mig_device(u, 19, 0);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->gi_id, 2);
  EXPECT_EQ(sim.create_mig_device(u, 19, 7).error().code(), Code::kNotFound);  // no such placement
  EXPECT_EQ(sim.create_mig_device(u, 99, 0).error().code(), Code::kNotFound);
  EXPECT_EQ(sim.create_mig_device("GPU-x", 19, 0).error().code(), Code::kNotFound);
  // +me: at most one per GPU.
  ASSERT_TRUE(sim.create_mig_device(u, 20, 1).has_value());
  EXPECT_EQ(sim.create_mig_device(u, 20, 2).error().code(), Code::kFailedPrecondition);
  EXPECT_EQ(sim.list_mig_devices(u)->size(), 3u);
  EXPECT_EQ(sim.list_mig_devices("")->size(), 3u);
  sim.fail_next_mig_create();
  EXPECT_EQ(sim.create_mig_device(u, 19, 2).error().code(), Code::kUnavailable);

  std::vector<MigInstance> all = *sim.list_mig_devices(u);
  for (const MigInstance& m : all) ASSERT_TRUE(sim.destroy_mig_device(m).ok());
  EXPECT_TRUE(sim.destroy_mig_device(*a).ok());  // idempotent
  EXPECT_TRUE(sim.list_mig_devices(u)->empty());
  EXPECT_FALSE((*sim.discover())[0].mig_enabled);
}

TEST(Sim, Events) {
  SimBackend sim(*parse_sim_spec("1xH100", SimOptions{}));
  auto none = sim.wait_event(0);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  sim.inject_event({GpuEvent::Kind::kXid, "GPU-a", 79});
  auto e = sim.wait_event(0);
  ASSERT_TRUE(e.has_value() && e->has_value());
  EXPECT_EQ((*e)->xid, 79u);
  sim.set_events_unavailable(true);
  EXPECT_EQ(sim.wait_event(0).error().code(), Code::kUnavailable);
}

TEST(Backend, MakeBackend) {
  auto sim = make_backend("sim:8xH100", 1);
  ASSERT_TRUE(sim.has_value());
  EXPECT_EQ((*sim)->kind(), "sim");
  EXPECT_EQ((*sim)->discover()->size(), 8u);
  auto bad = make_backend("sim:8xQ", 1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message().substr(0, 15), "--gpus sim:8xQ:");
  auto missing = make_backend("/nonexistent/inventory.yaml", 1);
  EXPECT_NE(missing.error().message().find("cannot be read"), std::string::npos);
}

TEST(Nvml, MissingLibraryIsAClearError) {
  auto r = NvmlBackend::open(NvmlOptions{.library = "/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Code::kUnavailable);
  EXPECT_NE(r.error().message().find("NVML: cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_NE(r.error().message().find("--gpus sim:8xH100"), std::string::npos);
}

}  // namespace
}  // namespace draplane::node
