#include "alloc/capacity.h"

#include <gtest/gtest.h>

namespace draplane::alloc {
namespace {

api::Quantity q(const char* s) { return *api::Quantity::parse(s); }

api::Device dev_with(api::DeviceCapacity cap) {
  api::Device d;
  d.name = "d";
  d.capacity["mem"] = std::move(cap);
  return d;
}

api::DeviceCapacity range_cap(const char* value, const char* def, const char* min, const char* max, const char* step) {
  api::CapacityRequestPolicy p;
  p.default_ = q(def);
  api::CapacityRequestPolicyRange r;
  r.min = q(min);
  if (max) r.max = q(max);
  if (step) r.step = q(step);
  p.validRange = r;
  return api::DeviceCapacity{q(value), p};
}

api::DeviceCapacity values_cap(const char* value, const char* def, std::vector<const char*> values) {
  api::CapacityRequestPolicy p;
  p.default_ = q(def);
  for (auto* v : values) p.validValues.push_back(q(v));
  return api::DeviceCapacity{q(value), p};
}

TEST(Capacity, Consumed) {
  struct Case {
    std::string name;
    api::DeviceCapacity cap;
    const char* request;  // null: no request
    const char* want;
  };
  const std::vector<Case> cases = {
      {"no policy, no request: whole value", api::DeviceCapacity{q("8Gi"), std::nullopt}, nullptr, "8Gi"},
      {"no policy: as requested", api::DeviceCapacity{q("8Gi"), std::nullopt}, "1Gi", "1Gi"},
      {"default when not requested", range_cap("8", "2", "1", "8", "1"), nullptr, "2"},
      {"below min -> min", range_cap("8", "2", "2", "8", "2"), "1", "2"},
      {"rounded up to a step", range_cap("16", "2", "2", "16", "4"), "3", "6"},
      {"no step: as requested", range_cap("16", "2", "2", "16", nullptr), "3", "3"},
      {"validValues round up", values_cap("10", "1", {"1", "5", "10"}), "2", "5"},
      {"validValues none above: as requested", values_cap("10", "1", {"1", "5"}), "7", "7"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Device d = dev_with(c.cap);
    api::CapacityRequirements req;
    if (c.request) req.requests["mem"] = q(c.request);
    auto got = consumed_capacity(d, c.request ? &req : nullptr);
    EXPECT_EQ(got.at("mem"), q(c.want)) << got.at("mem").to_string();
  }
}

TEST(Capacity, Fits) {
  api::Device d = dev_with(range_cap("4", "2", "2", "4", "2"));
  api::CapacityRequirements one;
  one.requests["mem"] = q("1");
  api::CapacityRequirements five;
  five.requests["mem"] = q("5");
  api::CapacityRequirements other;
  other.requests["cores"] = q("1");
  std::map<std::string, __int128> two{{"mem", q("2").nanos()}};
  std::map<std::string, __int128> four{{"mem", q("4").nanos()}};
  EXPECT_TRUE(capacity_fits(d, &one, nullptr, nullptr));
  EXPECT_TRUE(capacity_fits(d, &one, &two, nullptr));
  EXPECT_FALSE(capacity_fits(d, &one, &two, &two));
  EXPECT_FALSE(capacity_fits(d, &one, &four, nullptr));
  EXPECT_FALSE(capacity_fits(d, &five, nullptr, nullptr));   // above max
  EXPECT_FALSE(capacity_fits(d, &other, nullptr, nullptr));  // device lacks it
  EXPECT_TRUE(capacity_fits(d, nullptr, nullptr, nullptr));  // default 2
}

}  // namespace
}  // namespace draplane::alloc
