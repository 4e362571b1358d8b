// Shared GPUs: the --consumable-shares shapes of the NVIDIA driver and the
// per-device sharing derived from DeviceClass config (class_sharing), checked
// against the real allocator.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "alloc/allocated.h"
#include "alloc/allocator.h"
#include "alloc/snapshot.h"
#include "api/codec.h"
#include "node/sim.h"
#include "node/slices.h"

namespace draplane::node {
namespace {

using Mode = ConsumableShares::Mode;

std::vector<GpuInfo> sim(const char* spec) {
  auto r = parse_sim_spec(spec, SimOptions{.seed = 7});
  EXPECT_TRUE(r.has_value()) << r.error().message();
  return r.value_or(std::vector<GpuInfo>{});
}

const api::Device& device(const std::vector<api::ResourceSlice>& slices, const std::string& name) {
  for (const auto& s : slices) {
    for (const auto& d : s.spec.devices) {
      if (d.name == name) return d;
    }
  }
  static const api::Device none;
  ADD_FAILURE() << "no device " << name;
  return none;
}

// "value default min..max/step" of one capacity.
std::string shape(const api::Device& d, const std::string& capacity) {
  auto it = d.capacity.find(capacity);
  if (it == d.capacity.end()) return "absent";
  std::string out = it->second.value.to_string();
  if (!it->second.requestPolicy) return out;
  const auto& p = *it->second.requestPolicy;
  out += " default " + (p.default_ ? p.default_->to_string() : "-");
  if (p.validRange) {
    const auto& r = *p.validRange;
    out += " " + (r.min ? r.min->to_string() : "-") + ".." + (r.max ? r.max->to_string() : "-") + "/" +
           (r.step ? r.step->to_string() : "-");
  }
  return out;
}

template <typename T>
T decode_yaml(const std::string& yaml) {
  auto json = api::yaml_to_json(yaml);
  EXPECT_TRUE(json.has_value()) << json.error().message();
  auto obj = api::decode_as<T>(json.value_or(""));
  EXPECT_TRUE(obj.has_value()) << obj.error().message();
  return obj.value_or(T{});
}

// The 000 seed's DeviceClass, as written (examples/seed-000).
api::DeviceClass seed_class() {
  std::ifstream in(DRAPLANE_SOURCE_DIR "/examples/seed-000/deviceclass-nvidia-gpu-timeslicing.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return decode_yaml<api::DeviceClass>(text.str());
}

api::DeviceClass mps_class(const std::string& name, const std::string& selector, const char* kind = "GpuConfig") {
  return decode_yaml<api::DeviceClass>(R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: )" + name + R"(
spec:
  selectors:
  - cel:
      expression: ")" + selector + R"("
  config:
  - opaque:
      driver: gpu.nvidia.com
      parameters:
        apiVersion: resource.nvidia.com/v1beta1
        kind: )" + kind + R"(
        sharing:
          strategy: MPS
)");
}

TEST(SlicesSharing, ParseConsumableShares) {
  EXPECT_EQ(*parse_consumable_shares("disabled"), ConsumableShares{});
  EXPECT_EQ(*parse_consumable_shares("unlimited"), (ConsumableShares{Mode::kUnlimited, 0}));
  EXPECT_EQ(*parse_consumable_shares("memory"), (ConsumableShares{Mode::kMemory, 0}));
  EXPECT_EQ(*parse_consumable_shares("4"), (ConsumableShares{Mode::kShares, 4}));
  for (const char* bad : {"0", "-1", "", "x", "4x", "99999999999"}) {
    SCOPED_TRACE(bad);
    auto r = parse_consumable_shares(bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message(), std::string("invalid value for --consumable-shares: \"") + bad +
                                       "\" (must be 'disabled', 'memory', 'unlimited', or a positive integer)");
  }
  EXPECT_EQ(to_string(ConsumableShares{Mode::kShares, 4}), "4");
  EXPECT_EQ(to_string(ConsumableShares{Mode::kMemory, 0}), "memory");
}

// The driver's applyConsumableShares, mode by mode, on a GPU whose memory is
// not a multiple of 1Mi (rounded down) and on MIG devices.
TEST(SlicesSharing, FlagShapesAreTheDrivers) {
  auto gpus = sim("1xH100");
  gpus[0].memory_bytes = 81559LL * 1024 * 1024 + 12345;
  auto build = [&](Mode mode, int64_t n, bool mig) {
    auto s = build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = mig, .consumable_shares = {mode, n}});
    EXPECT_TRUE(s.has_value()) << s.error().message();
    return s.value_or(std::vector<api::ResourceSlice>{});
  };
  auto off = build(Mode::kDisabled, 0, false);
  EXPECT_FALSE(device(off, "gpu-0").allowMultipleAllocations.has_value());
  EXPECT_EQ(shape(device(off, "gpu-0"), "memory"), "85520822329");

  auto unlimited = build(Mode::kUnlimited, 0, false);
  EXPECT_EQ(device(unlimited, "gpu-0").allowMultipleAllocations, true);
  EXPECT_EQ(shape(device(unlimited, "gpu-0"), "memory"), "81559Mi default 0 0..81559Mi/1Mi");
  EXPECT_EQ(shape(device(unlimited, "gpu-0"), "shares"), "absent");

  auto memory = build(Mode::kMemory, 0, false);
  EXPECT_EQ(shape(device(memory, "gpu-0"), "memory"), "81559Mi default 81559Mi 1Mi..81559Mi/1Mi");
  EXPECT_EQ(shape(device(memory, "gpu-0"), "shares"), "absent");

  auto four = build(Mode::kShares, 4, false);
  EXPECT_EQ(shape(device(four, "gpu-0"), "memory"), "81559Mi default 0 0..81559Mi/1Mi");
  EXPECT_EQ(shape(device(four, "gpu-0"), "shares"), "4 default 1 1..4/1");

  // With dynamic MIG the driver applies it to the full GPU and every placement.
  auto mig = build(Mode::kShares, 2, true);
  const api::Device& one_g = device(mig, "gpu-0-mig-1g10gb-19-0");
  EXPECT_EQ(one_g.allowMultipleAllocations, true);
  EXPECT_EQ(shape(one_g, "memory"), "9984Mi default 0 0..9984Mi/1Mi");
  EXPECT_EQ(shape(one_g, "shares"), "2 default 1 1..2/1");
  // Unlike the driver: the other capacities a share need not consume.
  EXPECT_EQ(shape(one_g, "multiprocessors"), "16 default 0 0..16/1");
  EXPECT_EQ(device(mig, "gpu-0").allowMultipleAllocations, true);
  EXPECT_EQ(shape(device(mig, "gpu-0"), "copyEngines"), "8 default 0 0..8/1");
}

TEST(SlicesSharing, SeedClassSharesFullGpusOnly) {
  auto gpus = sim("2xH100");
  SliceOptions o{.node_name = "n"};
  auto cs = class_sharing(gpus, o, {seed_class()});
  ASSERT_TRUE(cs.has_value()) << cs.error().message();
  EXPECT_TRUE(cs->warnings.empty());
  // A GpuConfig applies to full GPUs (prepare refuses it on a MIG device).
  EXPECT_EQ(cs->devices, (std::map<std::string, ConsumableShares>{{"gpu-0", {Mode::kShares, 4}},
                                                                  {"gpu-1", {Mode::kShares, 4}}}));
  EXPECT_EQ(cs->by_class.at("gpu-1"), "nvidia-gpu");
  o.sharing = cs->devices;
  auto slices = *build_slices(gpus, o);
  EXPECT_EQ(shape(device(slices, "gpu-1"), "shares"), "4 default 1 1..4/1");
  // Same shape as the flag with N = 4.
  auto flag = *build_slices(gpus, SliceOptions{.node_name = "n", .consumable_shares = {Mode::kShares, 4}});
  EXPECT_EQ(device(slices, "gpu-1"), device(flag, "gpu-1"));
  EXPECT_FALSE(device(slices, "gpu-1-mig-1g10gb-19-0").allowMultipleAllocations.has_value());
}

TEST(SlicesSharing, MpsClassPublishesMemoryOnTheDevicesItSelects) {
  auto gpus = sim("1xH100,1xA100-80GB");
  SliceOptions o{.node_name = "n", .dynamic_mig = false};
  auto cs = *class_sharing(gpus, o,
                           {mps_class("h100-mps", "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')")});
  EXPECT_EQ(cs.devices, (std::map<std::string, ConsumableShares>{{"gpu-0", {Mode::kMemory, 0}}}));
  o.sharing = cs.devices;
  auto slices = *build_slices(gpus, o);
  EXPECT_EQ(shape(device(slices, "gpu-0"), "memory"), "81559Mi default 81559Mi 1Mi..81559Mi/1Mi");
  EXPECT_FALSE(device(slices, "gpu-1").allowMultipleAllocations.has_value());

  // A MigDeviceConfig shares the MIG devices the class selects, not full GPUs.
  auto mig = *class_sharing(gpus, SliceOptions{.node_name = "n"},
                            {mps_class("mig-mps", "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'",
                                       "MigDeviceConfig")});
  ASSERT_FALSE(mig.devices.empty());
  for (const auto& [name, s] : mig.devices) {
    EXPECT_NE(name.find("-mig-3g40gb-"), std::string::npos) << name;
    EXPECT_EQ(s.mode, Mode::kMemory);
  }
}

TEST(SlicesSharing, FirstClassByNameWinsAndBrokenClassesAreSkipped) {
  auto gpus = sim("2xH100");
  auto broken = mps_class("a-broken", "device.driver == 'gpu.nvidia.com'");
  broken.spec.config[0].opaque->parameters.text = R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"Foo"}})";
  auto bad_cel = mps_class("b-bad-cel", "device.attributes['gpu.nvidia.com'].nope == 1");
  auto time_sliced = seed_class();
  time_sliced.spec.config[0].opaque->parameters.text =
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}})";
  time_sliced.metadata.name = "c-plain-time-slicing";
  auto cs = *class_sharing(gpus, SliceOptions{.node_name = "n"},
                           {seed_class(), mps_class("gpu-mps", "true"), broken, bad_cel,
                            time_sliced});
  // gpu-mps < nvidia-gpu: MPS wins both GPUs; the seed class is passed over.
  EXPECT_EQ(cs.devices.at("gpu-0"), (ConsumableShares{Mode::kMemory, 0}));
  EXPECT_EQ(cs.by_class.at("gpu-1"), "gpu-mps");
  ASSERT_EQ(cs.warnings.size(), 4u);
  EXPECT_EQ(cs.warnings[0],
            "DeviceClass a-broken: spec.config[0].opaque.parameters.sharing.strategy: Unsupported value: \"Foo\": "
            "supported values: \"MPS\", \"TimeSlicing\"");
  EXPECT_NE(cs.warnings[1].find("DeviceClass b-bad-cel: device gpu-0: "), std::string::npos) << cs.warnings[1];
  EXPECT_EQ(cs.warnings[2], "DeviceClass nvidia-gpu: device gpu-0 is already shared as DeviceClass gpu-mps says");
  // A time-slicing class without replicas changes nothing that is published.
  EXPECT_EQ(cs.by_class.size(), 2u);
}

// The flag decides alone when set: classes do not change what it publishes.
TEST(SlicesSharing, FlagWinsOverClasses) {
  auto gpus = sim("1xH100");
  SliceOptions o{.node_name = "n", .dynamic_mig = false, .consumable_shares = {Mode::kUnlimited, 0}};
  o.sharing = class_sharing(gpus, o, {seed_class()})->devices;
  EXPECT_FALSE(o.sharing.empty());
  auto slices = *build_slices(gpus, o);
  EXPECT_EQ(shape(device(slices, "gpu-0"), "shares"), "absent");
  EXPECT_EQ(shape(device(slices, "gpu-0"), "memory"), "81559Mi default 0 0..81559Mi/1Mi");
}

api::ResourceClaim claim(const std::string& name, const std::string& cls, const std::string& memory = "") {
  std::string exactly = "{deviceClassName: " + cls;
  if (!memory.empty()) exactly += ", capacity: {requests: {memory: " + memory + "}}";
  return decode_yaml<api::ResourceClaim>("{apiVersion: resource.k8s.io/v1, kind: ResourceClaim, metadata: {name: " +
                                         name + ", namespace: default}, spec: {devices: {requests: [{name: gpu, "
                                         "exactly: " + exactly + "}}]}}}");
}

// Allocates `claims` one by one (as pods arrive) on node n; the devices chosen.
std::vector<std::string> place(const std::vector<api::ResourceSlice>& slices, const std::vector<api::DeviceClass>& classes,
                               std::vector<api::ResourceClaim>& allocated, const std::vector<api::ResourceClaim>& claims) {
  auto snap = alloc::Snapshot::build(slices, classes);
  api::Node node;
  node.metadata.name = "n";
  std::vector<std::string> out;
  for (const auto& c : claims) {
    alloc::AllocatedState state(*snap, allocated);
    auto a = alloc::allocate(*snap, state, {&c}, node);
    EXPECT_TRUE(a.has_value()) << a.error().message();
    if (!a.has_value() || !a->fits) {
      out.push_back("none");
      continue;
    }
    api::ResourceClaim done = c;
    done.status.allocation = a->results[0];
    allocated.push_back(done);
    out.push_back(a->results[0].devices.results[0].device);
  }
  return out;
}

TEST(SlicesSharing, AllocatorSharesTimeSlicedGpusNTimes) {
  auto gpus = sim("2xH100");
  auto cls = seed_class();
  SliceOptions o{.node_name = "n"};
  o.sharing = class_sharing(gpus, o, {cls})->devices;
  auto slices = *build_slices(gpus, o);
  std::vector<api::ResourceClaim> allocated;
  std::vector<api::ResourceClaim> claims;
  for (int i = 0; i < 5; ++i) claims.push_back(claim("c" + std::to_string(i), "nvidia-gpu"));
  EXPECT_EQ(place(slices, {cls}, allocated, claims),
            (std::vector<std::string>{"gpu-0", "gpu-0", "gpu-0", "gpu-0", "gpu-1"}));

  // N shrinks to 2 while 4 shares of gpu-0 are allocated: they stay allocated
  // (nothing re-checks them), gpu-0 takes no new share until fewer than 2 remain.
  o.sharing["gpu-0"].shares = 2;
  o.sharing["gpu-1"].shares = 2;
  slices = *build_slices(gpus, o);
  EXPECT_EQ(place(slices, {cls}, allocated, {claim("c5", "nvidia-gpu"), claim("c6", "nvidia-gpu")}),
            (std::vector<std::string>{"gpu-1", "none"}));
}

TEST(SlicesSharing, AllocatorFillsMpsGpusByMemory) {
  auto gpus = sim("2xH100");
  auto cls = mps_class("gpu-mps", "device.driver == 'gpu.nvidia.com'");
  SliceOptions o{.node_name = "n", .dynamic_mig = false};
  o.sharing = class_sharing(gpus, o, {cls})->devices;
  auto slices = *build_slices(gpus, o);
  std::vector<api::ResourceClaim> allocated;
  EXPECT_EQ(place(slices, {cls}, allocated,
                  {claim("a", "gpu-mps", "20Gi"), claim("b", "gpu-mps", "20Gi"), claim("c", "gpu-mps", "20Gi"),
                   claim("d", "gpu-mps", "30Gi"), claim("e", "gpu-mps")}),
            (std::vector<std::string>{"gpu-0", "gpu-0", "gpu-0", "gpu-1", "none"}));
}

}  // namespace
}  // namespace draplane::node
