#include "node/config.h"

#include <gtest/gtest.h>

namespace draplane::node {
namespace {

constexpr const char* kPath = "spec.devices.config[0].opaque.parameters";

TEST(Config, ParsesValidConfigs) {
  auto ts = parse_device_config(
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig",
          "sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}})",
      kPath, ConfigSource::kClaim);
  ASSERT_TRUE(ts.has_value()) << ts.error().message();
  EXPECT_EQ(ts->kind, "GpuConfig");
  EXPECT_EQ(ts->sharing->strategy, "TimeSlicing");
  EXPECT_EQ(ts->sharing->time_slicing->interval, "Long");
  EXPECT_EQ(timeslice_value(ts->sharing->time_slicing->interval), 3);

  auto dflt = parse_device_config(
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}})", kPath,
      ConfigSource::kClaim);
  ASSERT_TRUE(dflt.has_value());
  EXPECT_EQ(dflt->sharing->time_slicing->interval, "Default");
  EXPECT_EQ(timeslice_value("Default"), 0);

  auto mps = parse_device_config(
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig",
          "sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50,
          "defaultPinnedDeviceMemoryLimit":"10Gi","defaultPerDevicePinnedMemoryLimit":{"0":"5Gi"}}}})",
      kPath, ConfigSource::kClaim);
  ASSERT_TRUE(mps.has_value()) << mps.error().message();
  EXPECT_EQ(mps->sharing->mps->default_active_thread_percentage, 50);
  EXPECT_EQ(mps->sharing->mps->default_pinned_device_memory_limit->to_string(), "10Gi");
  EXPECT_EQ(mps->sharing->mps->default_per_device_pinned_memory_limit.at("0").to_string(), "5Gi");
  EXPECT_FALSE(mps->sharing->time_slicing.has_value());

  auto bare = parse_device_config(R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig"})", kPath,
                                  ConfigSource::kClaim);
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->sharing.has_value());

  auto replicas = parse_device_config(
      R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig",
          "sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":4}}})",
      kPath, ConfigSource::kClass);
  ASSERT_TRUE(replicas.has_value());
  EXPECT_EQ(replicas->sharing->time_slicing->replicas, 4);

  // The 000 seed's apiVersion, accepted in DeviceClass config only.
  const char* seed = R"({"apiVersion":"gpu.nvidia.com/v1","kind":"GpuConfig",
      "sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":4}}})";
  auto from_class = parse_device_config(seed, kPath, ConfigSource::kClass);
  ASSERT_TRUE(from_class.has_value()) << from_class.error().message();
  EXPECT_EQ(from_class->sharing->strategy, "TimeSlicing");
  auto from_claim = parse_device_config(R"({"apiVersion":"gpu.nvidia.com/v1","kind":"GpuConfig"})", kPath,
                                        ConfigSource::kClaim);
  ASSERT_FALSE(from_claim.has_value());
  EXPECT_EQ(from_claim.error().message(), std::string(kPath) +
                                              ".apiVersion: Unsupported value: \"gpu.nvidia.com/v1\": supported values: "
                                              "\"resource.nvidia.com/v1beta1\"");
}

TEST(Config, Errors) {
  struct Case {
    const char* json;
    ConfigSource source;
    const char* want;
  } cases[] = {
      {"{", ConfigSource::kClaim, "spec.devices.config[0].opaque.parameters: Invalid value: not JSON: "},
      {"[]", ConfigSource::kClaim, "spec.devices.config[0].opaque.parameters: Invalid value: expected object, got array"},
      {R"({"kind":"GpuConfig"})", ConfigSource::kClaim, "spec.devices.config[0].opaque.parameters.apiVersion: Required value"},
      {R"({"apiVersion":"resource.nvidia.com/v1","kind":"GpuConfig"})", ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.apiVersion: Unsupported value: \"resource.nvidia.com/v1\": supported "
       "values: \"resource.nvidia.com/v1beta1\""},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"TpuConfig"})", ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.kind: Unsupported value: \"TpuConfig\": supported values: "
       "\"GpuConfig\", \"MigDeviceConfig\""},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharng":{}})", ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharng: unknown field"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{}})", ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.strategy: Required value"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"Foo"}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.strategy: Unsupported value: \"Foo\": supported values: "
       "\"MPS\", \"TimeSlicing\""},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":1}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.strategy: Invalid value: expected string, got number"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Huge"}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig.interval: Unsupported value: \"Huge\": "
       "supported values: \"Default\", \"Long\", \"Medium\", \"Short\""},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","timeSlicingConfig":{}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig: Forbidden: only allowed with strategy "
       "TimeSlicing"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","mpsConfig":{}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.mpsConfig: Forbidden: only allowed with strategy MPS"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{}}})",
       ConfigSource::kClaim, "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig: unknown field"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":101}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.mpsConfig.defaultActiveThreadPercentage: Invalid value: 101: "
       "must be between 0 and 100"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultPinnedDeviceMemoryLimit":"10Q"}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.mpsConfig.defaultPinnedDeviceMemoryLimit: Invalid value: "
       "\"10Q\": "},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultPerDevicePinnedMemoryLimit":{"0":"-1Gi"}}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit[0]: Invalid "
       "value: \"-1Gi\": must not be negative"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"threads":1}}})",
       ConfigSource::kClaim, "spec.devices.config[0].opaque.parameters.sharing.mpsConfig.threads: unknown field"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":4}}})",
       ConfigSource::kClaim,
       "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig.replicas: Forbidden: only allowed in "
       "DeviceClass config"},
      {R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":1}}})",
       ConfigSource::kClass,
       "spec.devices.config[0].opaque.parameters.sharing.timeSlicingConfig.replicas: Invalid value: 1: must be "
       "between 2 and 1024"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    auto r = parse_device_config(c.json, kPath, c.source);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), Code::kInvalid);
    EXPECT_EQ(r.error().message().substr(0, std::string(c.want).size()), c.want) << r.error().message();
  }
}

api::DeviceAllocationConfiguration cfg(const char* source, std::vector<std::string> requests, const char* params,
                                       const char* driver = "gpu.nvidia.com") {
  api::DeviceAllocationConfiguration c;
  c.source = source;
  c.requests = std::move(requests);
  c.opaque = api::OpaqueDeviceConfiguration{driver, api::RawJson{params}};
  return c;
}

api::DeviceRequestAllocationResult result(const char* request, const char* device) {
  api::DeviceRequestAllocationResult r;
  r.request = request;
  r.driver = "gpu.nvidia.com";
  r.pool = "n";
  r.device = device;
  return r;
}

constexpr const char* kShort =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Short"}}})";
constexpr const char* kLong =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}})";
constexpr const char* kMps =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}})";
constexpr const char* kMigMps =
    R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS"}})";

TEST(Config, EffectiveConfigPrecedence) {
  api::AllocationResult a;
  a.devices.results = {result("gpu", "gpu-0"), result("other/big", "gpu-1"), result("mig", "gpu-2-mig-1g10gb-19-0")};
  // Claim config comes first in the list but still beats the class config.
  a.devices.config = {cfg("FromClaim", {"gpu"}, kMps), cfg("FromClass", {}, kShort), cfg("FromClass", {}, kLong),
                      cfg("FromClaim", {"other"}, kShort), cfg("FromClaim", {"mig"}, kMigMps),
                      cfg("FromClaim", {}, "{not json", "other.example.com")};
  auto c0 = effective_config(a, 0, false);
  ASSERT_TRUE(c0.has_value()) << c0.error().message();
  EXPECT_EQ(c0->sharing->strategy, "MPS");
  auto c1 = effective_config(a, 1, false);  // "other" matches "other/big"; claim beats class
  ASSERT_TRUE(c1.has_value());
  EXPECT_EQ(c1->sharing->time_slicing->interval, "Short");
  auto c2 = effective_config(a, 2, true);
  ASSERT_TRUE(c2.has_value());
  EXPECT_EQ(c2->kind, "MigDeviceConfig");

  // Later class config beats the earlier one when no claim config matches.
  a.devices.config = {cfg("FromClass", {}, kShort), cfg("FromClass", {}, kLong)};
  EXPECT_EQ(effective_config(a, 0, false)->sharing->time_slicing->interval, "Long");
  // A GpuConfig cannot configure a MIG device.
  auto wrong = effective_config(a, 2, true);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message(), "cannot apply GpuConfig to MIG device gpu-2-mig-1g10gb-19-0");
  a.devices.config = {cfg("FromClaim", {}, kMigMps)};
  EXPECT_EQ(effective_config(a, 0, false).error().message(), "cannot apply MigDeviceConfig to GPU device gpu-0");
  // No config: the default of the kind.
  a.devices.config.clear();
  EXPECT_EQ(*effective_config(a, 2, true), (DeviceConfig{"MigDeviceConfig", std::nullopt}));
  // Bad parameters name their path in the allocation.
  a.devices.config = {cfg("FromClass", {}, kShort), cfg("FromClaim", {}, R"({"apiVersion":"x"})")};
  EXPECT_EQ(effective_config(a, 0, false).error().message(),
            "status.allocation.devices.config[1].opaque.parameters.apiVersion: Unsupported value: \"x\": supported "
            "values: \"resource.nvidia.com/v1beta1\"");
}

TEST(Config, ClassReplicas) {
  api::DeviceClass c;
  c.metadata.name = "gpu-shared";
  EXPECT_EQ(*class_device_config(c), std::nullopt);
  c.spec.config.push_back({api::OpaqueDeviceConfiguration{
      "gpu.nvidia.com",
      api::RawJson{R"({"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"replicas":4}}})"}}});
  auto replicas = [](const std::optional<DeviceConfig>& cfg) -> std::optional<int64_t> {
    if (!cfg || !cfg->sharing || !cfg->sharing->time_slicing) return std::nullopt;
    return cfg->sharing->time_slicing->replicas;
  };
  EXPECT_EQ(replicas(*class_device_config(c)), 4);
  c.spec.config.push_back({api::OpaqueDeviceConfiguration{"gpu.nvidia.com", api::RawJson{R"({"kind":"GpuConfig"})"}}});
  EXPECT_EQ(class_device_config(c).error().message(), "spec.config[1].opaque.parameters.apiVersion: Required value");
}

}  // namespace
}  // namespace draplane::node
