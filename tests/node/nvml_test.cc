// The NVML backend against the fake libnvidia-ml.so.1 (tests/node/fake_nvml):
// discovery -> published ResourceSlices (SPEC §4), MIG create/destroy calls of
// prepare/unprepare, XID events -> taints, and the loading errors.
#include "node/nvml.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/clock.h"
#include "node/health.h"
#include "node/prepare.h"
#include "node/sim.h"
#include "node/slices.h"
#include "slice_find.h"
#include "test_dir.h"

namespace draplane::node {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

// The fake's identities and topology (fake_nvml.c): bus numbers of a DGX H100.
constexpr unsigned kBus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
std::string bus_id(int i) { return fmt::format("0000:{:02x}:00.0", kBus[i]); }
std::string uuid(int i) { return fmt::format("GPU-4a7c2f0e-8d1b-4c3a-9e6f-5b2d0c1a{:04x}", i); }
std::string root_of(int i) { return fmt::format("pci0000:{:02x}", kBus[i] - 2); }
constexpr const char* kClique = "9b2e417c-1033-4d5e-8f01-a2b3c4d5e6f7.1";

using testing::find;

std::string q(const api::Quantity& v) { return v.to_string(); }

// "<type> <value>" of an attribute, so that one comparison checks both.
std::string typed(const api::DeviceAttribute& a) {
  if (a.string_) return "string " + *a.string_;
  if (a.version) return "version " + *a.version;
  if (a.int_) return "int " + std::to_string(*a.int_);
  if (a.bool_) return *a.bool_ ? "bool true" : "bool false";
  return "unset";
}

class NvmlFake : public ::testing::Test {
 protected:
  NvmlFake() : dir_("nvml") {
    for (const char* v : {"FAKE_NVML_MIG", "FAKE_NVML_FABRIC", "FAKE_NVML_GPUS", "FAKE_NVML_INIT_ERROR",
                          "FAKE_NVML_NO_EVENTS", "DRAPLANE_NVML_LIB", "DRAPLANE_SYSFS_ROOT"}) {
      unsetenv(v);
    }
    setenv("FAKE_NVML_LOG", log_path().c_str(), 1);
    setenv("FAKE_NVML_EVENTS", events_path().c_str(), 1);
    // sysfs: /sys/bus/pci/devices/<bus id> -> /sys/devices/<root>/<bridge>/<bus id>
    // with numa_node (GPUs 0-3 on node 0, 4-7 on node 1).
    for (int i = 0; i < 8; ++i) {
      std::string dev = dir_.file(fmt::format("sys/devices/{}/0000:{:02x}:01.0/{}", root_of(i), kBus[i] - 1,
                                              bus_id(i)));
      write_file(dev + "/numa_node", i < 4 ? "0\n" : "1\n");
      std::filesystem::create_directories(dir_.file("sys/bus/pci/devices"));
      std::filesystem::create_directory_symlink(dev, dir_.file("sys/bus/pci/devices/" + bus_id(i)));
    }
  }

  std::string log_path() const { return dir_.file("nvml.log"); }
  std::string events_path() const { return dir_.file("events"); }

  std::unique_ptr<NvmlBackend> open() {
    auto b = NvmlBackend::open(NvmlOptions{.library = DRAPLANE_FAKE_NVML, .sysfs_root = dir_.file("sys")});
    EXPECT_TRUE(b.has_value()) << b.error().message();
    return b.has_value() ? std::move(*b) : nullptr;
  }
  // Loads the library (with the FAKE_NVML_* settings now in the environment),
  // discovers and unloads.
  std::vector<GpuInfo> discover_once() {
    auto b = open();
    return b != nullptr ? discover(*b) : std::vector<GpuInfo>{};
  }
  std::vector<GpuInfo> discover(NvmlBackend& b) {
    auto g = b.discover();
    EXPECT_TRUE(g.has_value()) << g.error().message();
    return g.value_or(std::vector<GpuInfo>{});
  }

  TempDir dir_;
};

// What discovery must report for fake GPU i: the catalogue's H100 80GB (SPEC §4
// table: name, architecture, compute capability, memory, MIG profiles and
// placements) with the fake's identities and topology.
GpuInfo expected_gpu(int i) {
  GpuInfo g = parse_sim_spec("1xH100", SimOptions{})->at(0);
  g.index = g.minor = i;
  g.uuid = uuid(i);
  g.brand = "Nvidia";
  g.driver_version = "550.54.15";
  g.cuda_driver_version = "12.4.0";
  g.addressing_mode = "HMM";
  g.pci_bus_id = bus_id(i);  // NVML's "00000000:18:00.0" in the sysfs form
  g.pcie_root = root_of(i);
  g.numa_node = i < 4 ? 0 : 1;
  g.clique_id = kClique;
  g.memory_bytes = 81559LL << 20;
  g.mig_capable = true;
  g.mig_enabled = false;
  return g;
}

// NVML lists profiles by profile index (0, 1, 2, 3, 4, 7, 9), the catalogue by size.
void sort_profiles(std::vector<GpuInfo>& gpus) {
  for (GpuInfo& g : gpus) {
    std::sort(g.mig_profiles.begin(), g.mig_profiles.end(),
              [](const MigProfile& a, const MigProfile& b) { return a.id < b.id; });
  }
}

TEST_F(NvmlFake, DiscoveryReadsEveryField) {
  auto b = open();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->kind(), "nvml");
  auto gpus = discover(*b);
  ASSERT_EQ(gpus.size(), 8u);
  std::vector<GpuInfo> want;
  for (int i = 0; i < 8; ++i) want.push_back(expected_gpu(i));
  sort_profiles(gpus);
  sort_profiles(want);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(gpus[i], want[i]) << "GPU " << i;
  EXPECT_EQ(gpus[0].mig_profiles[0].placements.size(), 1u);  // 7g.80gb (id 0): start 0 only
}

TEST_F(NvmlFake, PublishedSlicesMatchSpec) {
  auto b = open();
  ASSERT_NE(b, nullptr);
  auto gpus = discover(*b);
  auto slices = build_slices(gpus, SliceOptions{.node_name = "node-a"});
  ASSERT_TRUE(slices.has_value()) << slices.error().message();
  // Counter sets first, then one slice per GPU by PCI bus id: the slices of the
  // expected GPUs (whose SPEC §4 values slices_test.cc checks) to the letter.
  std::vector<GpuInfo> want;
  for (int i = 0; i < 8; ++i) want.push_back(expected_gpu(i));
  auto want_slices = build_slices(want, SliceOptions{.node_name = "node-a"});
  ASSERT_TRUE(want_slices.has_value());
  ASSERT_EQ(slices->size(), 9u);
  for (size_t k = 0; k < slices->size(); ++k) EXPECT_EQ((*slices)[k], (*want_slices)[k]) << "slice " << k;
  EXPECT_EQ((*slices)[0].spec.sharedCounters.size(), 8u);
  EXPECT_EQ((*slices)[4].spec.devices.size(), 26u);  // gpu-3 and its 25 placements

  // gpu-4, attribute by attribute (SPEC §4: names, types, values).
  const api::Device* d = find(*slices, "gpu-4");
  ASSERT_NE(d, nullptr);
  const std::map<std::string, std::string> attributes = {
      {"type", "string gpu"},
      {"uuid", "string " + uuid(4)},
      {"productName", "string NVIDIA H100 80GB HBM3"},
      {"brand", "string Nvidia"},
      {"architecture", "string Hopper"},
      {"cudaComputeCapability", "version 9.0.0"},
      {"driverVersion", "version 550.54.15"},
      {"cudaDriverVersion", "version 12.4.0"},
      {"addressingMode", "string HMM"},
      {"resource.kubernetes.io/pciBusID", "string 0000:9a:00.0"},
      {"resource.kubernetes.io/pcieRoot", "string pci0000:98"},
      {"resource.kubernetes.io/numaNode", "int 1"},
      {"cliqueID", std::string("string ") + kClique},
  };
  std::map<std::string, std::string> got;
  for (const auto& [name, a] : d->attributes) got[name] = typed(a);
  EXPECT_EQ(got, attributes);
  EXPECT_EQ(q(d->capacity.at("memory").value), "81152Mi");  // the largest profile's, with dynamic MIG
  EXPECT_EQ(q(d->capacity.at("multiprocessors").value), "132");
  EXPECT_EQ(d->capacity.size(), 7u);
  ASSERT_EQ(d->consumesCounters.size(), 1u);
  EXPECT_EQ(d->consumesCounters[0].counterSet, "gpu-4-counter-set");
  EXPECT_EQ(d->consumesCounters[0].counters.size(), 15u);

  const api::Device* m = find(*slices, "gpu-4-mig-3g40gb-9-4");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->attributes.at("type").string_, "mig");
  EXPECT_EQ(m->attributes.at("profile").string_, "3g.40gb");
  EXPECT_EQ(m->attributes.at("parentUUID").string_, uuid(4));
  EXPECT_EQ(m->attributes.at("resource.kubernetes.io/pciBusID").string_, "0000:9a:00.0");
  EXPECT_EQ(m->attributes.at("cliqueID").string_, kClique);
  EXPECT_EQ(m->attributes.count("uuid"), 0u);
  EXPECT_EQ(q(m->capacity.at("multiprocessors").value), "60");
  EXPECT_EQ(q(m->capacity.at("copyEngines").value), "3");
  EXPECT_EQ(q(m->capacity.at("decoders").value), "3");
  EXPECT_EQ(q(m->capacity.at("encoders").value), "0");
  EXPECT_EQ(q(m->capacity.at("jpegEngines").value), "3");
  EXPECT_EQ(q(m->capacity.at("ofaEngines").value), "0");
  EXPECT_EQ(q(m->capacity.at("memory").value), "40448Mi");
  ASSERT_EQ(m->consumesCounters.size(), 1u);
  EXPECT_EQ(m->consumesCounters[0].counterSet, "gpu-4-counter-set");
  for (const char* slice : {"memory-slice-4", "memory-slice-5", "memory-slice-6", "memory-slice-7"}) {
    EXPECT_EQ(m->consumesCounters[0].counters.count(slice), 1u) << slice;
  }
  EXPECT_EQ(m->consumesCounters[0].counters.count("memory-slice-3"), 0u);
  const api::Device* me = find(*slices, "gpu-4-mig-1g10gb-me-20-6");
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(me->attributes.at("profile").string_, "1g.10gb+me");
  EXPECT_EQ(q(me->capacity.at("ofaEngines").value), "1");
  EXPECT_NE(find(*slices, "gpu-4-mig-1g20gb-15-6"), nullptr);
  EXPECT_EQ(find(*slices, "gpu-4-mig-1g20gb-15-5"), nullptr);  // 1g.20gb starts at 0, 2, 4, 6 only
  EXPECT_NE(find(*slices, "gpu-4-mig-7g80gb-0-0"), nullptr);

  // Without dynamic MIG: full GPUs only, with NVML's total memory.
  auto plain = build_slices(gpus, SliceOptions{.node_name = "node-a", .dynamic_mig = false});
  ASSERT_TRUE(plain.has_value());
  ASSERT_EQ(plain->size(), 1u);
  ASSERT_EQ((*plain)[0].spec.devices.size(), 8u);
  EXPECT_EQ(q((*plain)[0].spec.devices[0].capacity.at("memory").value), "81559Mi");
}

// With MIG mode enabled the versioned profile call answers; discovery is the same.
TEST_F(NvmlFake, MigEnabledDiscoversTheSameProfiles) {
  auto plain = discover_once();
  setenv("FAKE_NVML_MIG", "enabled", 1);
  auto enabled = discover_once();
  ASSERT_EQ(enabled.size(), 8u);
  EXPECT_TRUE(enabled[0].mig_enabled);
  EXPECT_EQ(enabled[0].mig_profiles, plain[0].mig_profiles);
}

TEST_F(NvmlFake, NoMigNoFabric) {
  setenv("FAKE_NVML_MIG", "unsupported", 1);
  setenv("FAKE_NVML_FABRIC", "none", 1);
  setenv("FAKE_NVML_GPUS", "2", 1);
  auto gpus = discover_once();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_FALSE(gpus[0].mig_capable);
  EXPECT_TRUE(gpus[0].mig_profiles.empty());
  EXPECT_EQ(gpus[0].clique_id, "");
  auto slices = build_slices(gpus, SliceOptions{.node_name = "n"});
  ASSERT_TRUE(slices.has_value());
  ASSERT_EQ(slices->size(), 1u);  // no counter sets, no placements
  ASSERT_EQ((*slices)[0].spec.devices.size(), 2u);
  EXPECT_EQ((*slices)[0].spec.devices[1].attributes.count("cliqueID"), 0u);
  EXPECT_EQ(q((*slices)[0].spec.devices[1].capacity.at("memory").value), "81559Mi");
}

TEST_F(NvmlFake, FabricProbeInProgressHasNoClique) {
  setenv("FAKE_NVML_FABRIC", "inprogress", 1);
  EXPECT_EQ(discover_once().at(0).clique_id, "");
}

TEST_F(NvmlFake, LoadErrorsNameTheLibrary) {
  auto missing = make_backend("nvml:/nonexistent/libnvidia-ml.so.1", 1);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), Code::kUnavailable);
  EXPECT_NE(missing.error().message().find("NVML: cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << missing.error().message();
  setenv("DRAPLANE_NVML_LIB", "/nonexistent/lib2.so", 1);
  auto from_env = make_backend("nvml", 1);
  ASSERT_FALSE(from_env.has_value());
  EXPECT_NE(from_env.error().message().find("cannot load /nonexistent/lib2.so"), std::string::npos);
  // The environment names the fake: `--gpus nvml` loads it.
  setenv("DRAPLANE_NVML_LIB", DRAPLANE_FAKE_NVML, 1);
  setenv("DRAPLANE_SYSFS_ROOT", dir_.file("sys").c_str(), 1);
  auto ok = make_backend("nvml", 1);
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ((*ok)->kind(), "nvml");
  EXPECT_EQ((*ok)->discover()->at(2).pcie_root, root_of(2));
  ok->reset();
  // The driver is installed but not loaded: nvmlInit's error, named.
  setenv("FAKE_NVML_INIT_ERROR", "9", 1);
  auto init = make_backend("nvml", 1);
  ASSERT_FALSE(init.has_value());
  EXPECT_EQ(init.error().message(), fmt::format("NVML: nvmlInit of {}: Driver Not Loaded (9)", DRAPLANE_FAKE_NVML));
}


// ---- prepare/unprepare of MIG devices on a dynamic-MIG GPU ----

// A claim's allocation: these devices of node-a, one request "mig".
api::AllocationResult allocation(std::initializer_list<const char*> devices) {
  api::AllocationResult a;
  for (const char* d : devices) {
    a.devices.results.emplace_back();
    auto& r = a.devices.results.back();
    std::tie(r.request, r.driver, r.pool, r.device) = std::tuple("mig", "gpu.nvidia.com", "node-a", d);
  }
  return a;
}

class NvmlPrepare : public NvmlFake {
 protected:
  NvmlPrepare() {
    // The nvidia-caps major and the MIG capability minors the driver exposes.
    write_file(dir_.file("proc/devices"), "Character devices:\n195 nvidia\n234 nvidia-caps\n");
    for (int gi = 1; gi <= 7; ++gi) {
      std::string base = dir_.file(fmt::format("proc/driver/nvidia/capabilities/gpu0/mig/gi{}", gi));
      write_file(base + "/access", fmt::format("DeviceFileMinor: {}\nDeviceFileMode: 292\n", 100 + gi * 10));
      write_file(base + "/ci0/access", fmt::format("DeviceFileMinor: {}\n", 101 + gi * 10));
    }
  }
  std::unique_ptr<DeviceState> state(NvmlBackend& b) {
    PrepareOptions o;
    o.node_name = "node-a";
    o.cdi_dir = dir_.file("cdi");
    o.plugin_dir = dir_.file("plugin");
    o.proc_root = dir_.file("proc");
    auto s = DeviceState::create(b, runner_, o, "boot-1");
    EXPECT_TRUE(s.has_value()) << s.error().message();
    return s.has_value() ? std::move(*s) : nullptr;
  }
  // The NVML calls logged since the last call, one per line.
  std::string calls() {
    std::string all = read_file(log_path());
    std::string out = all.substr(std::min(seen_, all.size()));
    seen_ = all.size();
    return out;
  }
  RecordingRunner runner_;
  size_t seen_ = 0;
};

TEST_F(NvmlPrepare, MigDeviceCreatedAndDestroyed) {
  auto b = open();
  ASSERT_NE(b, nullptr);
  auto s = state(*b);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(calls(), "");  // discovery changes nothing
  api::AllocationResult a = allocation({"gpu-0-mig-1g10gb-19-2"});
  auto r = s->prepare({"default", "c1", "uid-1"}, a);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].cdi_device_ids, std::vector<std::string>{"k8s.gpu.nvidia.com/claim=uid-1-gpu-0-mig-1g10gb-19-2"});
  // Enable MIG, the GPU instance at its placement, then the full compute instance.
  EXPECT_EQ(calls(),
            "nvmlDeviceSetMigMode gpu=0 mode=1 ret=0\n"
            "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=19 start=2 size=1 ret=0 gi=1\n"
            "nvmlGpuInstanceCreateComputeInstance gpu=0 gi=1 profile=0 ret=0 ci=0\n");
  auto mig = b->list_mig_devices(uuid(0));
  ASSERT_TRUE(mig.has_value());
  ASSERT_EQ(mig->size(), 1u);
  EXPECT_EQ((*mig)[0].profile_id, 19);
  EXPECT_EQ((*mig)[0].placement, (MigPlacement{2, 1}));
  EXPECT_EQ((*mig)[0].uuid.substr(0, 4), "MIG-");
  // The CDI spec carries the GPU node and the GI/CI capability nodes.
  std::string spec = read_file(cdi_spec_path(dir_.file("cdi"), "uid-1"));
  EXPECT_NE(spec.find("/dev/nvidia0"), std::string::npos) << spec;
  EXPECT_NE(spec.find("/dev/nvidia-caps/nvidia-cap110"), std::string::npos) << spec;
  EXPECT_NE(spec.find("/dev/nvidia-caps/nvidia-cap111"), std::string::npos) << spec;

  // Prepared again (the kubelet retries): no NVML call.
  ASSERT_TRUE(s->prepare({"default", "c1", "uid-1"}, a).has_value());
  EXPECT_EQ(calls(), "");

  // A second claim on the same GPU: MIG is already on.
  api::AllocationResult a2 = allocation({"gpu-0-mig-3g40gb-9-4"});
  ASSERT_TRUE(s->prepare({"default", "c2", "uid-2"}, a2).has_value());
  EXPECT_EQ(calls(),
            "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=9 start=4 size=4 ret=0 gi=2\n"
            "nvmlGpuInstanceCreateComputeInstance gpu=0 gi=2 profile=2 ret=0 ci=0\n");

  // Unprepare: CI, then GI; MIG stays on while another instance exists.
  ASSERT_TRUE(s->unprepare("uid-1").ok());
  EXPECT_EQ(calls(),
            "nvmlComputeInstanceDestroy gpu=0 gi=1 ci=0 ret=0\n"
            "nvmlGpuInstanceDestroy gpu=0 gi=1 ret=0\n");
  ASSERT_TRUE(s->unprepare("uid-1").ok());  // idempotent
  EXPECT_EQ(calls(), "");
  ASSERT_TRUE(s->unprepare("uid-2").ok());
  EXPECT_EQ(calls(),
            "nvmlComputeInstanceDestroy gpu=0 gi=2 ci=0 ret=0\n"
            "nvmlGpuInstanceDestroy gpu=0 gi=2 ret=0\n"
            "nvmlDeviceSetMigMode gpu=0 mode=0 ret=0\n");
  EXPECT_TRUE(b->list_mig_devices("")->empty());
  EXPECT_FALSE(std::filesystem::exists(cdi_spec_path(dir_.file("cdi"), "uid-1")));
}

// An overlapping placement fails in NVML; prepare reports it and leaves nothing.
TEST_F(NvmlPrepare, OverlappingPlacementFailsCleanly) {
  auto b = open();
  ASSERT_NE(b, nullptr);
  auto s = state(*b);
  ASSERT_NE(s, nullptr);
  api::AllocationResult a = allocation({"gpu-0-mig-4g40gb-5-0"});
  ASSERT_TRUE(s->prepare({"default", "c1", "uid-1"}, a).has_value());
  calls();
  api::AllocationResult b2 = allocation({"gpu-0-mig-1g10gb-19-3"});
  auto r = s->prepare({"default", "c2", "uid-2"}, b2);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("Insufficient resources"), std::string::npos) << r.error().message();
  EXPECT_EQ(calls(), "nvmlDeviceCreateGpuInstanceWithPlacement gpu=0 profile=19 start=3 size=1 ret=23 gi=-1\n");
  EXPECT_EQ(s->prepared_claims(), std::vector<std::string>{"uid-1"});
}

// ---- XID events -> health taints ----

TEST_F(NvmlFake, InjectedXidTaintsTheGpu) {
  auto b = open();
  ASSERT_NE(b, nullptr);
  auto gpus = discover(*b);
  common::FakeClock clock;
  HealthMonitor monitor(*b, gpus, true, clock);
  EXPECT_FALSE(monitor.poll_once(20));  // nothing queued: a timeout
  write_file(events_path(), "xid 3 79\n");
  ASSERT_TRUE(monitor.poll_once(5000));
  auto taints = monitor.taints();
  EXPECT_EQ(taints.size(), 26u);  // gpu-3 and its 25 placements
  ASSERT_EQ(taints.count("gpu-3"), 1u);
  const api::DeviceTaint& t = taints.at("gpu-3").at(0);
  EXPECT_EQ(t.key, "gpu.nvidia.com/xid");
  EXPECT_EQ(t.value, "79");
  EXPECT_EQ(t.effect, "NoSchedule");
  EXPECT_EQ(taints.at("gpu-3-mig-7g80gb-0-0").at(0).value, "79");
  EXPECT_EQ(taints.count("gpu-2"), 0u);
  EXPECT_EQ(monitor.health("gpu-3"), "Unhealthy");
  EXPECT_EQ(monitor.health("gpu-2"), "Healthy");

  // An application XID (13) is informational; XID 48 (DBE) keeps pods off.
  std::FILE* f = std::fopen(events_path().c_str(), "a");
  std::fputs("xid 5 13\nxid 6 48\n", f);
  std::fclose(f);
  ASSERT_TRUE(monitor.poll_once(5000));
  ASSERT_TRUE(monitor.poll_once(5000));
  taints = monitor.taints();
  EXPECT_EQ(taints.at("gpu-5").at(0).effect, "None");
  EXPECT_EQ(taints.at("gpu-6").at(0).value, "48");
  EXPECT_EQ(taints.at("gpu-6").at(0).effect, "NoSchedule");

  // The tainted devices reach the published slice.
  auto slices = build_slices(gpus, SliceOptions{.node_name = "node-a", .taints = monitor.taints()});
  ASSERT_TRUE(slices.has_value()) << slices.error().message();
  const api::Device* d = find(*slices, "gpu-3");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->taints.size(), 1u);
  EXPECT_EQ(d->taints[0].key, "gpu.nvidia.com/xid");
  EXPECT_TRUE(find(*slices, "gpu-2")->taints.empty());

  // GPU_IS_LOST from nvmlEventSetWait_v2 taints every device.
  f = std::fopen(events_path().c_str(), "a");
  std::fputs("lost\n", f);
  std::fclose(f);
  ASSERT_TRUE(monitor.poll_once(5000));
  taints = monitor.taints();
  EXPECT_EQ(taints.size(), 8u * 26u);
  bool lost = false;
  for (const auto& x : taints.at("gpu-0")) lost |= x.key == "gpu.nvidia.com/gpu-lost" && x.effect == "NoSchedule";
  EXPECT_TRUE(lost);
}

TEST_F(NvmlFake, NoEventsMeansUnmonitored) {
  setenv("FAKE_NVML_NO_EVENTS", "1", 1);
  auto b = open();
  ASSERT_NE(b, nullptr);
  auto gpus = discover(*b);
  common::FakeClock clock;
  HealthMonitor monitor(*b, gpus, false, clock);
  ASSERT_TRUE(monitor.poll_once(10));
  auto taints = monitor.taints();
  ASSERT_EQ(taints.size(), 8u);
  EXPECT_EQ(taints.at("gpu-0").at(0).key, "gpu.nvidia.com/unmonitored");
  EXPECT_EQ(taints.at("gpu-0").at(0).effect, "None");
  EXPECT_EQ(monitor.health("gpu-0"), "Unknown");
}

// The event source fails at once on every call: poll_once still waits out its
// timeout, or the publisher's `while (!stop) poll_once(500)` spins at 100% CPU.
TEST_F(NvmlFake, NoEventsStillWaitsTheTimeout) {
  setenv("FAKE_NVML_NO_EVENTS", "1", 1);
  auto b = open();
  ASSERT_NE(b, nullptr);
  common::FakeClock clock;
  HealthMonitor monitor(*b, discover(*b), false, clock);
  for (bool first : {true, false}) {
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(monitor.poll_once(200), first);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(150));
  }
}

}  // namespace
}  // namespace draplane::node
