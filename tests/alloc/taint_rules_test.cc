// DeviceTaintRules applied to published slices (alloc/taint_rules.h), and what
// the allocator then makes of a rule's taint.
#include "alloc/taint_rules.h"

#include <gtest/gtest.h>

#include "alloc/allocator.h"
#include "builders.h"

namespace draplane::alloc {
namespace {

using namespace testing;  // NOLINT: builders

api::DeviceTaintRule rule(const std::string& name, std::optional<api::DeviceTaintSelector> sel,
                          const std::string& effect = "NoSchedule") {
  api::DeviceTaintRule r;
  r.metadata.name = name;
  r.spec.deviceSelector = std::move(sel);
  r.spec.taint = api::DeviceTaint{"maintenance", name, effect, "2026-12-01T10:00:00Z"};
  return r;
}

api::DeviceTaintSelector select(std::optional<std::string> driver, std::optional<std::string> pool,
                                std::optional<std::string> device) {
  return api::DeviceTaintSelector{std::move(driver), std::move(pool), std::move(device)};
}

// "driver/pool/device:value,value" for every tainted device.
std::vector<std::string> tainted(const std::vector<api::ResourceSlice>& slices) {
  std::vector<std::string> out;
  for (const auto& s : slices) {
    for (const auto& d : s.spec.devices) {
      if (d.taints.empty()) continue;
      std::string line = s.spec.driver + "/" + s.spec.pool.name + "/" + d.name + ":";
      for (size_t i = 0; i < d.taints.size(); ++i) line += (i ? "," : "") + d.taints[i].value;
      out.push_back(line);
    }
  }
  return out;
}

std::vector<api::ResourceSlice> taint_inventory() {
  return {slice("a", "node-1", "pool-1", {device("d0"), device("d1")}),
          slice("b", "node-2", "pool-2", {device("d0")}, 1, 1, "driver-b")};
}

TEST(TaintRules, SelectorFields) {
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select({}, {}, {}))})),
            (std::vector<std::string>{"driver-a/pool-1/d0:r", "driver-a/pool-1/d1:r", "driver-b/pool-2/d0:r"}));
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", std::nullopt)})), std::vector<std::string>{});
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select("driver-b", {}, {}))})),
            std::vector<std::string>{"driver-b/pool-2/d0:r"});
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select({}, "pool-1", {}))})),
            (std::vector<std::string>{"driver-a/pool-1/d0:r", "driver-a/pool-1/d1:r"}));
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select({}, {}, "d0"))})),
            (std::vector<std::string>{"driver-a/pool-1/d0:r", "driver-b/pool-2/d0:r"}));
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select("driver-a", "pool-1", "d1"))})),
            std::vector<std::string>{"driver-a/pool-1/d1:r"});
  EXPECT_EQ(tainted(apply_taint_rules(taint_inventory(), {rule("r", select("driver-a", "pool-2", {}))})),
            std::vector<std::string>{});
}

TEST(TaintRules, AppendedAfterDriverTaintsInNameOrder) {
  auto slices = taint_inventory();
  slices[0].spec.devices[0].taints.push_back(api::DeviceTaint{"xid", "drv", "NoSchedule", ""});
  auto out = apply_taint_rules(slices, {rule("z", select({}, {}, "d0")), rule("a", select({}, "pool-1", "d0"))});
  EXPECT_EQ(tainted(out), (std::vector<std::string>{"driver-a/pool-1/d0:drv,a,z", "driver-b/pool-2/d0:z"}));
  // The rule's taint as written, timeAdded included.
  EXPECT_EQ(out[0].spec.devices[0].taints[1], (api::DeviceTaint{"maintenance", "a", "NoSchedule", "2026-12-01T10:00:00Z"}));
}

Result<Allocation> allocate_one(const std::vector<api::DeviceTaintRule>& rules, std::vector<api::DeviceToleration> tol) {
  auto snap = Snapshot::build(apply_taint_rules({slice("a", "node-1", "pool-1", {device("d0")})}, rules),
                              {device_class("class-a")});
  AllocatedState used(*snap, {});
  api::ResourceClaim c = claim("c", {request("gpu", "class-a")});
  c.spec.devices.requests[0].exactly->tolerations = std::move(tol);
  return allocate(*snap, used, {&c}, node("node-1"), Options{});
}

TEST(TaintRules, RuleTaintBlocksAllocationUnlessTolerated) {
  auto free = allocate_one({}, {});
  ASSERT_TRUE(free.has_value());
  EXPECT_TRUE(free->fits);

  for (const char* effect : {"NoSchedule", "NoExecute"}) {
    SCOPED_TRACE(effect);
    auto blocked = allocate_one({rule("drain", select("driver-a", {}, {}), effect)}, {});
    ASSERT_TRUE(blocked.has_value());
    EXPECT_FALSE(blocked->fits);
    ASSERT_FALSE(blocked->reasons.empty());
    // Named like a driver's taint in the explanation.
    EXPECT_NE(blocked->reasons[0].find(std::string("1 is tainted maintenance=drain:") + effect), std::string::npos)
        << blocked->reasons[0];

    api::DeviceToleration t;
    t.key = "maintenance";
    t.operator_ = "Exists";
    auto tolerated = allocate_one({rule("drain", select("driver-a", {}, {}), effect)}, {t});
    ASSERT_TRUE(tolerated.has_value());
    EXPECT_TRUE(tolerated->fits);
  }
  // Effect None taints nothing for the allocator.
  auto none = allocate_one({rule("drain", select({}, {}, {}), "None")}, {});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->fits);
}

}  // namespace
}  // namespace draplane::alloc
