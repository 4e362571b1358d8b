#include "node/slices.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "node/sim.h"
#include "slice_find.h"

namespace draplane::node {
namespace {

std::vector<GpuInfo> sim(const char* spec) {
  auto r = parse_sim_spec(spec, SimOptions{.seed = 42});
  EXPECT_TRUE(r.has_value()) << r.error().message();
  return r.value_or(std::vector<GpuInfo>{});
}

using testing::find;

std::string q(const api::Quantity& v) { return v.to_string(); }

// counters rendered "name=value,..." in map order.
std::string render(const std::map<std::string, api::Counter>& c) {
  std::string out;
  for (const auto& [k, v] : c) out += (out.empty() ? "" : ",") + k + "=" + v.value.to_string();
  return out;
}

TEST(Slices, H100x8Layout) {
  auto gpus = sim("8xH100");
  auto slices = build_slices(gpus, SliceOptions{.node_name = "node-a", .generation = 3});
  ASSERT_TRUE(slices.has_value()) << slices.error().message();
  // Slice 0: the eight counter sets; then one slice per GPU.
  ASSERT_EQ(slices->size(), 9u);
  const auto& s0 = (*slices)[0];
  EXPECT_EQ(s0.metadata.name, "node-a-gpu.nvidia.com-0");
  EXPECT_EQ(s0.spec.driver, "gpu.nvidia.com");
  EXPECT_EQ(s0.spec.pool.name, "node-a");
  EXPECT_EQ(s0.spec.pool.generation, 3);
  EXPECT_EQ(s0.spec.pool.resourceSliceCount, 9);
  EXPECT_EQ(s0.spec.nodeName, "node-a");
  EXPECT_TRUE(s0.spec.devices.empty());
  ASSERT_EQ(s0.spec.sharedCounters.size(), 8u);
  EXPECT_EQ(s0.spec.sharedCounters[0].name, "gpu-0-counter-set");
  EXPECT_EQ(render(s0.spec.sharedCounters[0].counters),
            "copy-engines=8,decoders=7,encoders=0,jpeg-engines=7,memory=81152Mi,memory-slice-0=1,"
            "memory-slice-1=1,memory-slice-2=1,memory-slice-3=1,memory-slice-4=1,memory-slice-5=1,"
            "memory-slice-6=1,memory-slice-7=1,multiprocessors=132,ofa-engines=1");
  for (size_t i = 1; i < slices->size(); ++i) {
    const auto& s = (*slices)[i];
    EXPECT_TRUE(s.spec.sharedCounters.empty());
    EXPECT_EQ(s.spec.pool.resourceSliceCount, 9);
    // 1 full GPU + 7 (1g) + 7 (1g+me) + 4 (1g.20gb) + 3 (2g) + 2 (3g) + 1 (4g) + 1 (7g).
    ASSERT_EQ(s.spec.devices.size(), 26u);
    EXPECT_EQ(s.spec.devices[0].name, fmt::format("gpu-{}", i - 1));
    EXPECT_TRUE(std::is_sorted(s.spec.devices.begin(), s.spec.devices.end(),
                               [](const auto& a, const auto& b) { return a.name < b.name; }));
  }
  std::vector<std::string> names;
  for (const auto& d : (*slices)[1].spec.devices) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "gpu-0",
                       "gpu-0-mig-1g10gb-19-0",    "gpu-0-mig-1g10gb-19-1",    "gpu-0-mig-1g10gb-19-2",
                       "gpu-0-mig-1g10gb-19-3",    "gpu-0-mig-1g10gb-19-4",    "gpu-0-mig-1g10gb-19-5",
                       "gpu-0-mig-1g10gb-19-6",    "gpu-0-mig-1g10gb-me-20-0", "gpu-0-mig-1g10gb-me-20-1",
                       "gpu-0-mig-1g10gb-me-20-2", "gpu-0-mig-1g10gb-me-20-3", "gpu-0-mig-1g10gb-me-20-4",
                       "gpu-0-mig-1g10gb-me-20-5", "gpu-0-mig-1g10gb-me-20-6", "gpu-0-mig-1g20gb-15-0",
                       "gpu-0-mig-1g20gb-15-2",    "gpu-0-mig-1g20gb-15-4",    "gpu-0-mig-1g20gb-15-6",
                       "gpu-0-mig-2g20gb-14-0",    "gpu-0-mig-2g20gb-14-2",    "gpu-0-mig-2g20gb-14-4",
                       "gpu-0-mig-3g40gb-9-0",     "gpu-0-mig-3g40gb-9-4",     "gpu-0-mig-4g40gb-5-0",
                       "gpu-0-mig-7g80gb-0-0",
                   }));
}

TEST(Slices, FullGpuDevice) {
  auto gpus = sim("8xH100");
  auto slices = *build_slices(gpus, SliceOptions{.node_name = "n"});
  const api::Device* d = find(slices, "gpu-3");
  ASSERT_NE(d, nullptr);
  const GpuInfo& g = gpus[3];
  EXPECT_EQ(d->attributes.at("type").string_, "gpu");
  EXPECT_EQ(d->attributes.at("uuid").string_, g.uuid);
  EXPECT_EQ(d->attributes.at("productName").string_, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->attributes.at("brand").string_, "Nvidia");
  EXPECT_EQ(d->attributes.at("architecture").string_, "Hopper");
  EXPECT_EQ(d->attributes.at("cudaComputeCapability").version, "9.0.0");
  EXPECT_EQ(d->attributes.at("driverVersion").version, "550.54.15");
  EXPECT_EQ(d->attributes.at("cudaDriverVersion").version, "12.4.0");
  EXPECT_EQ(d->attributes.at("resource.kubernetes.io/pciBusID").string_, "0000:5d:00.0");
  EXPECT_EQ(d->attributes.at("resource.kubernetes.io/pcieRoot").string_, "pci0000:50");
  EXPECT_EQ(d->attributes.at("resource.kubernetes.io/numaNode").int_, 0);
  EXPECT_EQ(d->attributes.at("cliqueID").string_, g.clique_id);
  EXPECT_EQ(d->attributes.count("addressingMode"), 0u);  // unknown in the catalogue
  EXPECT_EQ(d->attributes.size(), 12u);
  // Dynamic MIG: the full GPU offers and consumes the per-dimension maximum.
  EXPECT_EQ(q(d->capacity.at("multiprocessors").value), "132");
  EXPECT_EQ(q(d->capacity.at("memory").value), "81152Mi");
  EXPECT_EQ(q(d->capacity.at("copyEngines").value), "8");
  EXPECT_EQ(d->capacity.size(), 7u);
  ASSERT_EQ(d->consumesCounters.size(), 1u);
  EXPECT_EQ(d->consumesCounters[0].counterSet, "gpu-3-counter-set");
  EXPECT_EQ(d->consumesCounters[0].counters.size(), 15u);
  EXPECT_FALSE(d->allowMultipleAllocations.has_value());
}

TEST(Slices, MigDeviceH100) {
  auto gpus = sim("8xH100");
  auto slices = *build_slices(gpus, SliceOptions{.node_name = "n"});
  const api::Device* d = find(slices, "gpu-0-mig-3g40gb-9-4");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->attributes.at("type").string_, "mig");
  EXPECT_EQ(d->attributes.at("profile").string_, "3g.40gb");
  EXPECT_EQ(d->attributes.at("parentUUID").string_, gpus[0].uuid);
  EXPECT_EQ(d->attributes.at("productName").string_, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->attributes.count("uuid"), 0u);  // the MIG device does not exist yet
  EXPECT_EQ(q(d->capacity.at("multiprocessors").value), "60");
  EXPECT_EQ(q(d->capacity.at("memory").value), "40448Mi");
  EXPECT_EQ(q(d->capacity.at("decoders").value), "3");
  ASSERT_EQ(d->consumesCounters.size(), 1u);
  EXPECT_EQ(d->consumesCounters[0].counterSet, "gpu-0-counter-set");
  EXPECT_EQ(render(d->consumesCounters[0].counters),
            "copy-engines=3,decoders=3,encoders=0,jpeg-engines=3,memory=40448Mi,memory-slice-4=1,"
            "memory-slice-5=1,memory-slice-6=1,memory-slice-7=1,multiprocessors=60,ofa-engines=0");
  const api::Device* me = find(slices, "gpu-0-mig-1g10gb-me-20-3");
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(render(me->consumesCounters[0].counters),
            "copy-engines=1,decoders=1,encoders=0,jpeg-engines=1,memory=9984Mi,memory-slice-3=1,"
            "multiprocessors=16,ofa-engines=1");
  const api::Device* two = find(slices, "gpu-0-mig-1g20gb-15-6");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->consumesCounters[0].counters.count("memory-slice-6"), 1u);
  EXPECT_EQ(two->consumesCounters[0].counters.count("memory-slice-7"), 1u);
  EXPECT_EQ(q(two->capacity.at("multiprocessors").value), "26");
}

TEST(Slices, ProfileTables) {
  struct Case {
    const char* spec;
    const char* device;
    const char* profile;
    const char* memory;
    int sm;
    const char* full_memory;  // capacity of the full GPU without dynamic MIG
  } cases[] = {
      {"A100-40GB", "gpu-0-mig-1g5gb-19-6", "1g.5gb", "4864Mi", 14, "40Gi"},
      {"A100-40GB", "gpu-0-mig-1g10gb-15-4", "1g.10gb", "9856Mi", 14, "40Gi"},
      {"A100-40GB", "gpu-0-mig-7g40gb-0-0", "7g.40gb", "40192Mi", 98, "40Gi"},
      {"A100-80GB", "gpu-0-mig-3g40gb-9-0", "3g.40gb", "40192Mi", 42, "80Gi"},
      {"H200", "gpu-0-mig-1g18gb-19-0", "1g.18gb", "16Gi", 16, "143771Mi"},
      {"H200", "gpu-0-mig-1g18gb-me-20-0", "1g.18gb+me", "16Gi", 16, "143771Mi"},
      {"H200", "gpu-0-mig-2g35gb-14-4", "2g.35gb", "33024Mi", 32, "143771Mi"},
      {"H200", "gpu-0-mig-7g141gb-0-0", "7g.141gb", "143104Mi", 132, "143771Mi"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.device);
    auto gpus = sim(c.spec);
    auto slices = *build_slices(gpus, SliceOptions{.node_name = "n"});
    const api::Device* d = find(slices, c.device);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->attributes.at("profile").string_, c.profile);
    EXPECT_EQ(q(d->capacity.at("memory").value), c.memory);
    EXPECT_EQ(d->capacity.at("multiprocessors").value.as_int64(), c.sm);
    auto plain = *build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = false});
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(q(plain[0].spec.devices[0].capacity.at("memory").value), c.full_memory);
  }
  // A100 counter set: jpeg and ofa come only from 7g and +me.
  auto a100 = *build_slices(sim("A100-40GB"), SliceOptions{.node_name = "n"});
  EXPECT_EQ(render(a100[0].spec.sharedCounters[0].counters),
            "copy-engines=7,decoders=5,encoders=0,jpeg-engines=1,memory=40192Mi,memory-slice-0=1,"
            "memory-slice-1=1,memory-slice-2=1,memory-slice-3=1,memory-slice-4=1,memory-slice-5=1,"
            "memory-slice-6=1,memory-slice-7=1,multiprocessors=98,ofa-engines=1");
}

TEST(Slices, WithoutDynamicMig) {
  auto slices = *build_slices(sim("8xH100"), SliceOptions{.node_name = "n", .dynamic_mig = false});
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0].spec.sharedCounters.empty());
  ASSERT_EQ(slices[0].spec.devices.size(), 8u);
  const api::Device& d = slices[0].spec.devices[0];
  EXPECT_EQ(d.name, "gpu-0");
  EXPECT_EQ(q(d.capacity.at("memory").value), "81559Mi");
  EXPECT_EQ(d.capacity.size(), 1u);
  EXPECT_TRUE(d.consumesCounters.empty());
}

TEST(Slices, Limits) {
  // 12 GPUs: counter sets need two slices (8 + 4), then 12 device slices.
  auto slices = *build_slices(sim("12xH100"), SliceOptions{.node_name = "n"});
  ASSERT_EQ(slices.size(), 14u);
  EXPECT_EQ(slices[0].spec.sharedCounters.size(), 8u);
  EXPECT_EQ(slices[1].spec.sharedCounters.size(), 4u);
  EXPECT_EQ(slices[2].spec.devices.size(), 26u);
  // Ten counter-consuming devices per slice: 26 -> 10 + 10 + 6.
  auto small = *build_slices(sim("2xH100"),
                             SliceOptions{.node_name = "n", .max_counter_sets_per_slice = 1,
                                          .max_counter_devices_per_slice = 10});
  ASSERT_EQ(small.size(), 2u + 6u);
  EXPECT_EQ(small[2].spec.devices.size(), 10u);
  EXPECT_EQ(small[4].spec.devices.size(), 6u);
  EXPECT_EQ(small[5].spec.devices[0].name, "gpu-1");
  for (const auto& s : small) EXPECT_EQ(s.spec.pool.resourceSliceCount, 8);
  // No GPUs: one empty slice, so the pool is complete and empty.
  auto none = *build_slices({}, SliceOptions{.node_name = "n"});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].spec.pool.resourceSliceCount, 1);
}

TEST(Slices, OrderByPciBusId) {
  auto gpus = sim("3xH100");
  gpus[0].pci_bus_id = "0000:ff:00.0";  // gpu-0 now sorts last
  auto slices = *build_slices(gpus, SliceOptions{.node_name = "n"});
  EXPECT_EQ(slices[0].spec.sharedCounters[0].name, "gpu-1-counter-set");
  EXPECT_EQ(slices[1].spec.devices[0].name, "gpu-1");
  EXPECT_EQ(slices[3].spec.devices[0].name, "gpu-0");
}

TEST(Slices, TimeSlicingShares) {
  auto slices = *build_slices(sim("2xH100"), SliceOptions{.node_name = "n", .dynamic_mig = false,
                                                          .sharing = {{"gpu-1", {ConsumableShares::Mode::kShares, 4}}}});
  const api::Device& d0 = slices[0].spec.devices[0];
  const api::Device& d1 = slices[0].spec.devices[1];
  EXPECT_FALSE(d0.allowMultipleAllocations.has_value());
  EXPECT_EQ(d1.allowMultipleAllocations, true);
  const api::DeviceCapacity& c = d1.capacity.at("shares");
  EXPECT_EQ(q(c.value), "4");
  ASSERT_TRUE(c.requestPolicy.has_value());
  EXPECT_EQ(q(*c.requestPolicy->default_), "1");
  ASSERT_TRUE(c.requestPolicy->validRange.has_value());
  EXPECT_EQ(q(*c.requestPolicy->validRange->min), "1");
  EXPECT_EQ(q(*c.requestPolicy->validRange->max), "4");
  EXPECT_EQ(q(*c.requestPolicy->validRange->step), "1");

  auto bad = build_slices(sim("2xH100"),
                          SliceOptions{.node_name = "n", .sharing = {{"gpu-7", {ConsumableShares::Mode::kShares, 4}}}});
  EXPECT_EQ(bad.error().message(), "sharing of gpu-7: no such device");
  bad = build_slices(sim("2xH100"),
                     SliceOptions{.node_name = "n", .sharing = {{"gpu-0", {ConsumableShares::Mode::kShares, 0}}}});
  EXPECT_EQ(bad.error().message(), "sharing of gpu-0: shares 0 must be at least 1");
  EXPECT_EQ(build_slices(sim("1xH100"), SliceOptions{}).error().code(), Code::kInvalid);
}

TEST(Slices, ResolveDevice) {
  auto gpus = sim("2xH100");
  auto full = resolve_device(gpus, "gpu-1");
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->gpu->uuid, gpus[1].uuid);
  EXPECT_EQ(full->profile, nullptr);
  auto mig = resolve_device(gpus, "gpu-1-mig-1g10gb-me-20-5");
  ASSERT_TRUE(mig.has_value());
  EXPECT_EQ(mig->profile->id, 20);
  EXPECT_EQ(mig->placement, (MigPlacement{5, 1}));
  EXPECT_EQ(resolve_device(gpus, "gpu-1-mig-3g40gb-9-2").error().code(), Code::kNotFound);
  EXPECT_EQ(resolve_device(gpus, "gpu-9").error().message(), "device gpu-9 is not a device of this node");
}

TEST(Slices, DeviceClasses) {
  auto classes = device_classes();
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].metadata.name, "gpu.nvidia.com");
  EXPECT_EQ(classes[0].spec.selectors[0].cel->expression,
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'");
  EXPECT_EQ(classes[0].spec.extendedResourceName, "nvidia.com/gpu");
  EXPECT_EQ(classes[1].metadata.name, "mig.nvidia.com");
  EXPECT_EQ(classes[1].spec.selectors[0].cel->expression,
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'");
  EXPECT_FALSE(classes[1].spec.extendedResourceName.has_value());
}

}  // namespace
}  // namespace draplane::node
