// The published slices and classes must pass the API server's validation.
#include <gtest/gtest.h>

#include "api/validation.h"
#include "node/sim.h"
#include "node/slices.h"

namespace draplane::node {
namespace {

std::string errors(const api::FieldErrorList& list) {
  std::string out;
  for (const auto& e : list) out += e.to_string() + "\n";
  return out;
}

TEST(SlicesValidation, EveryLayoutIsValid) {
  struct Case {
    const char* spec;
    bool dynamic_mig;
    std::map<std::string, ConsumableShares> sharing;
    ConsumableShares flag = {};
  } cases[] = {
      {"8xH100", true, {}},
      {"12xH100", true, {}},
      {"4xA100-40GB,2xH200", true, {}},
      {"2xA100-80GB", true, {{"gpu-0", {ConsumableShares::Mode::kShares, 4}}}},
      {"8xH100", false, {{"gpu-0", {ConsumableShares::Mode::kShares, 4}}, {"gpu-7", {ConsumableShares::Mode::kMemory}}}},
      {"2xH100", true, {}, {ConsumableShares::Mode::kShares, 3}},
      {"2xA100-40GB", true, {}, {ConsumableShares::Mode::kMemory}},
      {"2xH200", false, {}, {ConsumableShares::Mode::kUnlimited}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto gpus = parse_sim_spec(c.spec, SimOptions{.seed = 3});
    ASSERT_TRUE(gpus.has_value());
    auto slices = build_slices(*gpus, SliceOptions{.node_name = "worker-1.example.com",
                                                   .dynamic_mig = c.dynamic_mig,
                                                   .consumable_shares = c.flag,
                                                   .sharing = c.sharing});
    ASSERT_TRUE(slices.has_value()) << slices.error().message();
    for (const auto& s : *slices) {
      SCOPED_TRACE(s.metadata.name);
      EXPECT_EQ(errors(api::validate_resource_slice(s)), "");
    }
  }
}

TEST(SlicesValidation, DeviceClassesAreValid) {
  for (const auto& c : device_classes()) {
    SCOPED_TRACE(c.metadata.name);
    EXPECT_EQ(errors(api::validate_device_class(c)), "");
  }
}

TEST(SlicesValidation, LeadingZeroVersionWouldBeRejected) {
  // Why versions go through to_semver: the API rejects "535.104.05".
  auto gpus = *parse_sim_spec("1xH100", SimOptions{});
  gpus[0].driver_version = "535.104.05";
  auto slices = *build_slices(gpus, SliceOptions{.node_name = "n", .dynamic_mig = false});
  EXPECT_NE(errors(api::validate_resource_slice(slices[0])), "");
}

}  // namespace
}  // namespace draplane::node
