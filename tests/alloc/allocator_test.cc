// Feature tests of the allocator on inventories built in C++ (classes without
// selectors, so these run without the CEL engine's evaluation paths).
#include "alloc/allocator.h"

#include <gtest/gtest.h>

#include "builders.h"

// Cases leave trailing fields (picks, text, policy) at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace draplane::alloc {
namespace {

using namespace testing;  // NOLINT: builders

enum class Want { kFit, kNoFit, kError };

struct Case {
  std::string name;
  std::vector<api::ResourceSlice> slices;
  std::vector<api::ResourceClaim> in_use;
  std::vector<api::ResourceClaim> claims;
  Want want = Want::kFit;
  std::vector<std::vector<std::string>> picks;  // per claim, when kFit
  std::string text;                             // error or first reason must contain it
  Policy policy = Policy::kFirstFit;
};

std::vector<api::Device> devs(int n, const std::string& prefix = "device-") {
  std::vector<api::Device> out;
  for (int i = 0; i < n; ++i) out.push_back(device(prefix + std::to_string(i)));
  return out;
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.name);
  auto snap = Snapshot::build(c.slices, {device_class("class-a"), device_class("class-b")});
  AllocatedState used(*snap, c.in_use);
  api::Node n = node("node-1", {{"region", "r1"}});
  std::vector<const api::ResourceClaim*> claims;
  for (const auto& cl : c.claims) claims.push_back(&cl);
  Options opts;
  opts.policy = c.policy;
  auto got = allocate(*snap, used, claims, n, opts);
  if (c.want == Want::kError) {
    ASSERT_FALSE(got.has_value()) << "expected an error";
    EXPECT_NE(got.error().message().find(c.text), std::string::npos) << got.error().message();
    return;
  }
  ASSERT_TRUE(got.has_value()) << got.error().message();
  if (c.want == Want::kNoFit) {
    EXPECT_FALSE(got->fits);
    if (!c.text.empty()) {
      ASSERT_FALSE(got->reasons.empty());
      EXPECT_NE(got->reasons[0].find(c.text), std::string::npos) << got->reasons[0];
    }
    return;
  }
  ASSERT_TRUE(got->fits) << (got->reasons.empty() ? "" : got->reasons[0]);
  ASSERT_EQ(got->results.size(), c.picks.size());
  for (size_t i = 0; i < c.picks.size(); ++i) EXPECT_EQ(picks(got->results[i]), c.picks[i]) << "claim " << i;
}

TEST(Allocator, Table) {
  const std::vector<Case> cases = {
      {"one device", {slice("s1", "node-1", "pool-1", devs(2))}, {}, {claim("c", {request("gpu", "class-a")})},
       Want::kFit, {{"gpu pool-1/device-0"}}},
      {"in use device is skipped", {slice("s1", "node-1", "pool-1", devs(2))}, {allocated("old", {"device-0"})},
       {claim("c", {request("gpu", "class-a")})}, Want::kFit, {{"gpu pool-1/device-1"}}},
      {"all in use does not fit", {slice("s1", "node-1", "pool-1", devs(1))}, {allocated("old", {"device-0"})},
       {claim("c", {request("gpu", "class-a")})}, Want::kNoFit, {}, "1 is in use"},
      {"other node", {slice("s1", "node-2", "pool-1", devs(2))}, {}, {claim("c", {request("gpu", "class-a")})},
       Want::kNoFit, {}, "0 match class class-a"},
      {"unknown class", {slice("s1", "node-1", "pool-1", devs(1))}, {}, {claim("c", {request("gpu", "nope")})},
       Want::kError, {}, "could not retrieve device class nope"},
      {"two claims get different devices", {slice("s1", "node-1", "pool-1", devs(2))}, {},
       {claim("c0", {request("gpu", "class-a")}), claim("c1", {request("gpu", "class-a")})}, Want::kFit,
       {{"gpu pool-1/device-0"}, {"gpu pool-1/device-1"}}},
      {"pools sorted, slices by name",
       {slice("z", "node-1", "pool-2", devs(1, "b-")), slice("y", "node-1", "pool-1", devs(1, "a-"), 1, 2),
        slice("x", "node-1", "pool-1", devs(1, "c-"), 1, 2)},
       {}, {claim("c", {request("gpu", "class-a", 3)})}, Want::kFit,
       {{"gpu pool-1/c-0", "gpu pool-1/a-0", "gpu pool-2/b-0"}}},
      {"all devices", {slice("s1", "node-1", "pool-1", devs(3))}, {}, {claim("c", {all_request("gpu", "class-a")})},
       Want::kFit, {{"gpu pool-1/device-0", "gpu pool-1/device-1", "gpu pool-1/device-2"}}},
      {"all on incomplete pool is an error", {slice("s1", "node-1", "pool-1", devs(3), 1, 2)}, {},
       {claim("c", {all_request("gpu", "class-a")})}, Want::kError, {}, "is currently being updated"},
      {"incomplete pool not used", {slice("s1", "node-1", "pool-1", devs(3), 1, 2)}, {},
       {claim("c", {request("gpu", "class-a")})}, Want::kNoFit},
      {"newest generation wins",
       {slice("old", "node-1", "pool-1", devs(1, "old-"), 1), slice("new", "node-1", "pool-1", devs(1, "new-"), 2)},
       {}, {claim("c", {request("gpu", "class-a")})}, Want::kFit, {{"gpu pool-1/new-0"}}},
      {"duplicate device names make the pool invalid",
       {slice("a", "node-1", "pool-1", devs(1), 1, 2), slice("b", "node-1", "pool-1", devs(1), 1, 2)}, {},
       {claim("c", {request("gpu", "class-a")})}, Want::kError, {}, "invalid resource pools were encountered"},
      {"too many devices", {slice("s1", "node-1", "pool-1", devs(40))}, {},
       {claim("c", {request("a", "class-a", 20), request("b", "class-a", 13)})}, Want::kError, {},
       "number of requested devices 33 exceeds the claim limit of 32"},
      {"untolerated taint", {slice("s1", "node-1", "pool-1", {with_taint(device("d0"), "xid", "79", "NoSchedule")})},
       {}, {claim("c", {request("gpu", "class-a")})}, Want::kNoFit, {}, "1 is tainted xid=79:NoSchedule"},
      {"taint None ignored", {slice("s1", "node-1", "pool-1", {with_taint(device("d0"), "xid", "13", "None")})}, {},
       {claim("c", {request("gpu", "class-a")})}, Want::kFit, {{"gpu pool-1/d0"}}},
      {"matchAttribute backtracks",
       {slice("s1", "node-1", "pool-1",
              {with_attr(device("d0"), "clique", "a"), with_attr(device("d1"), "clique", "b"),
               with_attr(device("d2"), "clique", "b")})},
       {}, {claim("c", {request("gpu", "class-a", 2)}, {match_attribute("driver-a/clique")})}, Want::kFit,
       {{"gpu pool-1/d1", "gpu pool-1/d2"}}},
      {"matchAttribute across requests",
       {slice("s1", "node-1", "pool-1",
              {with_int(device("d0"), "numa", 0), with_int(device("d1"), "numa", 1), with_int(device("d2"), "numa", 1)})},
       {}, {claim("c", {request("a", "class-a"), request("b", "class-a")}, {match_attribute("driver-a/numa")})},
       Want::kFit, {{"a pool-1/d1", "b pool-1/d2"}}},
      {"matchAttribute missing attribute", {slice("s1", "node-1", "pool-1", devs(2))}, {},
       {claim("c", {request("gpu", "class-a", 2)}, {match_attribute("driver-a/clique")})}, Want::kNoFit, {},
       "usable on their own, but not together"},
      {"distinctAttribute",
       {slice("s1", "node-1", "pool-1",
              {with_attr(device("d0"), "x", "a"), with_attr(device("d1"), "x", "a"), with_attr(device("d2"), "x", "b")})},
       {}, {claim("c", {request("a", "class-a"), request("b", "class-a")}, {distinct_attribute("driver-a/x")})},
       Want::kFit, {{"a pool-1/d0", "b pool-1/d2"}}},
      {"shared counters limit partitions",
       {slice("dev", "node-1", "pool-1",
              {with_counters(device("p0"), "gpu-0", {{"mem", 4}}), with_counters(device("p1"), "gpu-0", {{"mem", 4}}),
               with_counters(device("p2"), "gpu-0", {{"mem", 4}})},
              1, 2),
        counter_slice("counters", "node-1", "pool-1", "gpu-0", {{"mem", 8}})},
       {}, {claim("c", {request("mig", "class-a", 3)})}, Want::kNoFit},
      {"counters used by allocated devices",
       {slice("dev", "node-1", "pool-1",
              {with_counters(device("p0"), "gpu-0", {{"mem", 4}}), with_counters(device("p1"), "gpu-0", {{"mem", 4}}),
               with_counters(device("p2"), "gpu-0", {{"mem", 4}})},
              1, 2),
        counter_slice("counters", "node-1", "pool-1", "gpu-0", {{"mem", 8}})},
       {allocated("old", {"p0"})}, {claim("c", {request("mig", "class-a")})}, Want::kFit, {{"mig pool-1/p1"}}},
      {"unknown counter set makes the pool invalid",
       {slice("dev", "node-1", "pool-1", {with_counters(device("p0"), "nope", {{"mem", 4}})}, 1, 2),
        counter_slice("counters", "node-1", "pool-1", "gpu-0", {{"mem", 8}})},
       {}, {claim("c", {request("mig", "class-a")})}, Want::kError, {}, "invalid resource pools were encountered"},
      {"shareable device serves two claims",
       {slice("s1", "node-1", "pool-1", {shareable(with_capacity(device("d0"), "shares", 2))})}, {},
       {claim("c0", {request("gpu", "class-a")}), claim("c1", {request("gpu", "class-a")})}, Want::kNoFit},
  };
  for (const auto& c : cases) run_case(c);
}

TEST(Allocator, FirstAvailableFallsBack) {
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", devs(1))}, {device_class("class-a")});
  api::DeviceRequest r;
  r.name = "gpu";
  api::DeviceSubRequest big{"big", "class-a", {}, api::kAllocationModeExactCount, 2, {}, std::nullopt};
  api::DeviceSubRequest small{"small", "class-a", {}, api::kAllocationModeExactCount, 1, {}, std::nullopt};
  r.firstAvailable = {big, small};
  api::ResourceClaim c = claim("c", {r});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  ASSERT_TRUE(got->fits);
  EXPECT_EQ(picks(got->results[0]), std::vector<std::string>{"gpu/small pool-1/device-0"});
  EXPECT_EQ(got->score, 7);
}

TEST(Allocator, SharesGetDistinctIdsAndCapacity) {
  api::Device d = shareable(with_capacity(device("d0"), "shares", 4));
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", {d})}, {device_class("class-a")});
  api::ResourceClaim c0 = claim("c0", {request("gpu", "class-a")});
  c0.spec.devices.requests[0].exactly->capacity = api::CapacityRequirements{{{"shares", api::Quantity::from_int(1)}}};
  api::ResourceClaim c1 = c0;
  c1.metadata.name = "c1";
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c0, &c1}, n);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  ASSERT_TRUE(got->fits);
  const auto& r0 = got->results[0].devices.results.at(0);
  const auto& r1 = got->results[1].devices.results.at(0);
  ASSERT_TRUE(r0.shareID && r1.shareID);
  EXPECT_NE(*r0.shareID, *r1.shareID);
  EXPECT_EQ(r0.consumedCapacity.at("shares"), api::Quantity::from_int(1));
}

TEST(Allocator, NodeSelectorOfResult) {
  api::ResourceSlice net = slice("net", "", "pool-1", devs(1));  // allNodes
  auto snap = Snapshot::build({net}, {device_class("class-a")});
  api::ResourceClaim c = claim("c", {request("gpu", "class-a")});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value() && got->fits);
  EXPECT_FALSE(got->results[0].nodeSelector.has_value());

  auto snap2 = Snapshot::build({slice("local", "node-1", "pool-1", devs(1))}, {device_class("class-a")});
  auto got2 = allocate(*snap2, AllocatedState(*snap2), {&c}, n);
  ASSERT_TRUE(got2.has_value() && got2->fits);
  ASSERT_TRUE(got2->results[0].nodeSelector.has_value());
  const auto& f = got2->results[0].nodeSelector->nodeSelectorTerms.at(0).matchFields.at(0);
  EXPECT_EQ(f.key, "metadata.name");
  EXPECT_EQ(f.values, std::vector<std::string>{"node-1"});
}

TEST(Allocator, ClassAndClaimConfig) {
  api::DeviceClass cls = device_class("class-a");
  cls.spec.config.push_back(api::DeviceClassConfiguration{api::OpaqueDeviceConfiguration{"driver-a", {"{\"a\":1}"}}});
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", devs(2))}, {cls});
  api::ResourceClaim c = claim("c", {request("r0", "class-a"), request("r1", "class-a")});
  c.spec.devices.config.push_back(
      api::DeviceClaimConfiguration{{"r1"}, api::OpaqueDeviceConfiguration{"driver-a", {"{\"b\":2}"}}});
  c.spec.devices.config.push_back(
      api::DeviceClaimConfiguration{{"r0", "r1"}, api::OpaqueDeviceConfiguration{"driver-a", {"{\"c\":3}"}}});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value() && got->fits);
  const auto& cfg = got->results[0].devices.config;
  ASSERT_EQ(cfg.size(), 4u);
  EXPECT_EQ(cfg[0].source, "FromClass");
  EXPECT_EQ(cfg[0].requests, (std::vector<std::string>{"r0", "r1"}));  // class config once
  EXPECT_EQ(cfg[1].source, "FromClaim");
  EXPECT_EQ(cfg[1].requests, std::vector<std::string>{"r1"});
  // Kubernetes 1.36 appends a claim config once per request it names.
  EXPECT_EQ(cfg[2].requests, (std::vector<std::string>{"r0", "r1"}));
  EXPECT_EQ(cfg[3].requests, (std::vector<std::string>{"r0", "r1"}));
}

TEST(Allocator, StepBudgetGivesTimedOutNoFit) {
  // 24 devices, 12 pairs sharing an attribute value: picking 3 with one value is
  // impossible, and the constraint only fails deep in the search.
  std::vector<api::Device> ds;
  for (int i = 0; i < 24; ++i) ds.push_back(with_int(device("d" + std::to_string(i)), "island", i / 2));
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", ds)}, {device_class("class-a")});
  api::ResourceClaim c =
      claim("c", {request("a", "class-a", 8), request("b", "class-a", 3)}, {match_attribute("driver-a/island", {"b"})});
  api::Node n = node("node-1");
  Options opts;
  opts.max_steps = 2048;
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n, opts);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_FALSE(got->fits);
  // Either the memo proves it quickly or the budget stops it; never a hang.
  EXPECT_LE(got->steps, 2048);
}

TEST(Allocator, InfeasibleCountAnsweredWithoutSearch) {
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", devs(24))}, {device_class("class-a"), device_class("class-b")});
  api::ResourceClaim c = claim("c", {request("a", "class-a", 2), request("b", "class-b", 25)});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_FALSE(got->fits);
  EXPECT_EQ(got->steps, 0);
  ASSERT_EQ(got->reasons.size(), 2u);
  EXPECT_EQ(got->reasons[1], "claim default/c: request b: 25 devices needed; 24 match class class-b; only 24 usable");
}

TEST(Allocator, PackingPrefersSharedDevice) {
  api::Device fresh = shareable(device("a-fresh"));
  api::Device used = shareable(device("b-used"));
  auto snap_claim = allocated("old", {"b-used"});
  snap_claim.status.allocation->devices.results[0].shareID = "11111111-1111-4111-8111-111111111111";
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", {fresh, used})}, {device_class("class-a")});
  AllocatedState state(*snap, {snap_claim});
  api::ResourceClaim c = claim("c", {request("gpu", "class-a")});
  api::Node n = node("node-1");
  Options first_fit, packing;
  packing.policy = Policy::kPacking;
  auto a = allocate(*snap, state, {&c}, n, first_fit);
  auto b = allocate(*snap, state, {&c}, n, packing);
  ASSERT_TRUE(a.has_value() && a->fits && b.has_value() && b->fits);
  EXPECT_EQ(a->results[0].devices.results[0].device, "a-fresh");
  EXPECT_EQ(b->results[0].devices.results[0].device, "b-used");
}

TEST(Allocator, ParsePolicy) {
  EXPECT_EQ(*parse_policy("first-fit"), Policy::kFirstFit);
  EXPECT_EQ(*parse_policy("packing"), Policy::kPacking);
  auto bad = parse_policy("best");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "unknown policy \"best\": supported values: \"first-fit\", \"packing\"");
}

}  // namespace
}  // namespace draplane::alloc

namespace draplane::alloc {
namespace {

using namespace testing;  // NOLINT: builders

// kubernetes#131730 shape: an easy request followed by one that can never be
// satisfied; upstream retries every combination of the first (C(32,8) here).
TEST(Allocator, UnsatisfiableSecondRequestIsFast) {
  std::vector<api::Device> ds;
  for (int i = 0; i < 32; ++i) ds.push_back(with_int(device("d" + std::to_string(i)), "island", i / 3));
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", ds)}, {device_class("class-a")});
  api::ResourceClaim c = claim("c", {request("a", "class-a", 8), request("b", "class-a", 4)},
                               {match_attribute("driver-a/island", {"b"})});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_FALSE(got->fits);
  EXPECT_FALSE(got->timed_out);
  EXPECT_EQ(got->steps, 0);  // proven before the main search
}

std::vector<api::Device> devs_for_test(int n) {
  std::vector<api::Device> out;
  for (int i = 0; i < n; ++i) out.push_back(device("device-" + std::to_string(i)));
  return out;
}

TEST(Allocator, MoreDevicesThanExistAcrossRequests) {
  auto snap = Snapshot::build({slice("s1", "node-1", "pool-1", devs_for_test(24))}, {device_class("class-a")});
  api::ResourceClaim c = claim("c", {request("a", "class-a", 12), request("b", "class-a", 13)});
  api::Node n = node("node-1");
  auto got = allocate(*snap, AllocatedState(*snap), {&c}, n);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_FALSE(got->fits);
  EXPECT_EQ(got->steps, 0);
}

}  // namespace
}  // namespace draplane::alloc
