// Property tests on small random inventories: every allocation the allocator
// returns is valid (checked by an independent model), and first-fit finds a
// solution whenever brute force over all device combinations finds one.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

#include "alloc/allocator.h"
#include "builders.h"

namespace draplane::alloc {
namespace {

using namespace testing;  // NOLINT: builders

struct World {
  std::vector<api::Device> devices;  // one pool "pool-1" on node-1
  std::set<std::string> in_use;
  int64_t counter_total = 0;          // set "s", counter "c"
  std::vector<api::ResourceClaim> claims;
};

World random_world(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  World w;
  w.counter_total = pick(2, 4);
  int n = pick(3, 6);
  for (int i = 0; i < n; ++i) {
    api::Device d = device("d" + std::to_string(i));
    if (pick(0, 4) > 0) d = with_int(d, "x", pick(0, 2));
    if (pick(0, 4) == 0) d = with_taint(d, "bad", "", "NoSchedule");
    if (pick(0, 2) == 0) d = with_counters(d, "s", {{"c", pick(1, 2)}});
    if (pick(0, 4) == 0) w.in_use.insert(d.name);
    w.devices.push_back(d);
  }
  int nclaims = pick(1, 2);
  for (int c = 0; c < nclaims; ++c) {
    int nreq = pick(1, 2);
    int kind = pick(0, 2);  // 0 none, 1 match, 2 distinct
    std::vector<api::DeviceRequest> reqs;
    for (int r = 0; r < nreq; ++r) {
      api::DeviceRequest req = request("r" + std::to_string(r), "class-a", kind == 2 ? 1 : pick(1, 2));
      if (pick(0, 2) == 0) req.exactly->tolerations.push_back(api::DeviceToleration{"bad", "Exists", "", "", std::nullopt});
      reqs.push_back(req);
    }
    std::vector<api::DeviceConstraint> cons;
    if (kind == 1) cons.push_back(match_attribute("driver-a/x"));
    if (kind == 2) cons.push_back(distinct_attribute("driver-a/x"));
    w.claims.push_back(claim("c" + std::to_string(c), reqs, cons));
  }
  return w;
}

const api::Device* find(const World& w, const std::string& name) {
  for (const auto& d : w.devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// picks[claim][request] = device names. Returns "" when valid, else why not.
std::string check(const World& w, const std::vector<std::vector<std::vector<std::string>>>& picks) {
  std::set<std::string> used;
  int64_t counters = 0, added = 0;
  for (const auto& d : w.devices) {
    if (w.in_use.count(d.name) && !d.consumesCounters.empty()) counters += d.consumesCounters[0].counters.at("c").value.value();
  }
  for (size_t c = 0; c < w.claims.size(); ++c) {
    const auto& cl = w.claims[c];
    std::vector<const api::Device*> all;
    for (size_t r = 0; r < cl.spec.devices.requests.size(); ++r) {
      const auto& req = *cl.spec.devices.requests[r].exactly;
      if (static_cast<int64_t>(picks[c][r].size()) != *req.count) return "wrong count";
      for (const auto& name : picks[c][r]) {
        const api::Device* d = find(w, name);
        if (d == nullptr) return "unknown device " + name;
        if (w.in_use.count(name)) return "device in use " + name;
        if (!used.insert(name).second) return "device twice " + name;
        if (!d->taints.empty() && req.tolerations.empty()) return "taint not tolerated on " + name;
        if (!d->consumesCounters.empty()) added += d->consumesCounters[0].counters.at("c").value.value();
        all.push_back(d);
      }
    }
    if (!cl.spec.devices.constraints.empty()) {
      bool match = cl.spec.devices.constraints[0].matchAttribute.has_value();
      std::set<int64_t> values;
      for (const auto* d : all) {
        auto it = d->attributes.find("x");
        if (it == d->attributes.end()) return "constraint attribute missing";
        values.insert(*it->second.int_);
      }
      if (match && values.size() > 1) return "matchAttribute violated";
      if (!match && values.size() != all.size()) return "distinctAttribute violated";
    }
  }
  // Only devices that consume counters are held back by them (also when the
  // set is already overdrawn by allocated devices).
  if (added > 0 && counters + added > w.counter_total) return "counters exceeded";
  return "";
}

// Does any assignment exist? Enumerates combinations per request.
bool brute_force(const World& w) {
  std::vector<std::pair<size_t, size_t>> order;
  for (size_t c = 0; c < w.claims.size(); ++c) {
    for (size_t r = 0; r < w.claims[c].spec.devices.requests.size(); ++r) order.emplace_back(c, r);
  }
  std::vector<std::vector<std::vector<std::string>>> picks(w.claims.size());
  for (size_t c = 0; c < w.claims.size(); ++c) picks[c].resize(w.claims[c].spec.devices.requests.size());
  std::function<bool(size_t)> rec = [&](size_t k) -> bool {
    if (k == order.size()) return check(w, picks).empty();
    auto [c, r] = order[k];
    int64_t count = *w.claims[c].spec.devices.requests[r].exactly->count;
    size_t n = w.devices.size();
    for (uint32_t mask = 0; mask < (1u << n); ++mask) {
      if (__builtin_popcount(mask) != count) continue;
      picks[c][r].clear();
      for (size_t i = 0; i < n; ++i) {
        if (mask & (1u << i)) picks[c][r].push_back(w.devices[i].name);
      }
      if (rec(k + 1)) return true;
    }
    picks[c][r].clear();
    return false;
  };
  return rec(0);
}

TEST(AllocatorProperty, ValidAndComplete) {
  int fits = 0;
  for (uint32_t seed = 1; seed <= 600; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    World w = random_world(rng);
    std::vector<api::ResourceSlice> slices = {slice("devices", "node-1", "pool-1", w.devices, 1, 2),
                                              counter_slice("counters", "node-1", "pool-1", "s", {{"c", w.counter_total}})};
    std::vector<api::ResourceClaim> in_use;
    if (!w.in_use.empty()) in_use.push_back(allocated("old", {w.in_use.begin(), w.in_use.end()}));
    auto snap = Snapshot::build(slices, {device_class("class-a")});
    std::vector<const api::ResourceClaim*> claims;
    for (const auto& c : w.claims) claims.push_back(&c);
    api::Node n = node("node-1");
    auto got = allocate(*snap, AllocatedState(*snap, in_use), claims, n);
    ASSERT_TRUE(got.has_value()) << got.error().message();
    bool exists = brute_force(w);
    if (!got->fits) {
      EXPECT_FALSE(exists) << "brute force found a solution the allocator missed";
      continue;
    }
    ++fits;
    EXPECT_TRUE(exists);
    std::vector<std::vector<std::vector<std::string>>> picks(w.claims.size());
    for (size_t c = 0; c < w.claims.size(); ++c) {
      const auto& reqs = w.claims[c].spec.devices.requests;
      picks[c].resize(reqs.size());
      for (const auto& r : got->results[c].devices.results) {
        for (size_t i = 0; i < reqs.size(); ++i) {
          if (reqs[i].name == r.request) picks[c][i].push_back(r.device);
        }
      }
    }
    EXPECT_EQ(check(w, picks), "");
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(fits, 100);
  EXPECT_LT(fits, 550);
}

// The allocator's shortcuts (Options::shortcuts: blocked candidates passed
// over at a glance, matchAttribute answered from the view's attribute index)
// change no answer: on random inventories of several partitionable pools, with
// devices in use, taints, shareable devices, admin access, CEL selectors and
// class errors, both policies give the same results, reasons and steps with
// and without them.
TEST(AllocatorProperty, ShortcutsGiveTheSameAnswers) {
  int fits = 0, jumps = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<api::ResourceSlice> slices;
    std::vector<api::ResourceClaim> in_use;
    const int pools = pick(1, 3);
    for (int p = 0; p < pools; ++p) {
      const std::string pool = "pool-" + std::to_string(p + 1);
      std::vector<api::Device> devices;
      std::vector<std::string> used;
      const int n = pick(2, 6);
      for (int i = 0; i < n; ++i) {
        api::Device d = device("d" + std::to_string(i));
        if (pick(0, 4) > 0) d = with_int(d, "x", pick(0, 2));
        if (pick(0, 3) == 0) d = with_attr(d, "slice", pool);
        if (pick(0, 5) == 0) d = with_taint(d, "bad", "", "NoSchedule");
        if (pick(0, 1) == 0) d = with_counters(d, "s", {{"c", pick(1, 3)}});
        if (pick(0, 5) == 0) d = with_capacity(shareable(d), "mem", 4);
        if (pick(0, 4) == 0) used.push_back(d.name);
        devices.push_back(d);
      }
      slices.push_back(slice(pool + "-devices", pick(0, 1) ? "node-1" : "", pool, devices, 1, 2));
      slices.push_back(counter_slice(pool + "-counters", "node-1", pool, "s", {{"c", pick(1, 5)}}));
      if (!used.empty()) {
        // A shareable device in use is shared (its counters consumed once).
        api::ResourceClaim old = allocated("old-" + pool, used, pool);
        for (auto& r : old.status.allocation->devices.results) {
          for (const auto& d : devices) {
            if (d.name != r.device || !d.allowMultipleAllocations.value_or(false)) continue;
            r.shareID = "share-" + r.device;
            r.consumedCapacity["mem"] = api::Quantity::from_int(1);
          }
        }
        in_use.push_back(std::move(old));
      }
    }
    std::vector<api::DeviceClass> classes = {device_class("class-a")};
    // class-b fails on devices without x (a CEL error for them).
    classes.push_back(device_class("class-b", {"device.attributes['driver-a'].x >= 0"}));
    std::vector<api::ResourceClaim> claims;
    const int nclaims = pick(1, 2);
    for (int c = 0; c < nclaims; ++c) {
      std::vector<api::DeviceRequest> reqs;
      const int nreq = pick(1, 2);
      for (int r = 0; r < nreq; ++r) {
        api::DeviceRequest req = request("r" + std::to_string(r), pick(0, 5) == 0 ? "class-b" : "class-a", pick(1, 3));
        if (pick(0, 2) == 0) req.exactly->tolerations.push_back(api::DeviceToleration{"bad", "Exists", "", "", std::nullopt});
        if (pick(0, 6) == 0) req.exactly->selectors.push_back(api::DeviceSelector{api::CELDeviceSelector{"device.attributes['driver-a'].x != 1"}});
        if (pick(0, 9) == 0) req.exactly->adminAccess = true;
        if (pick(0, 5) == 0) req.exactly->capacity = api::CapacityRequirements{{{"mem", api::Quantity::from_int(1)}}};
        reqs.push_back(req);
      }
      std::vector<api::DeviceConstraint> cons;
      const int kind = pick(0, 4);
      if (kind == 1 || kind == 4) cons.push_back(match_attribute("driver-a/x"));
      if (kind == 2) cons.push_back(match_attribute("driver-a/slice"));
      if (kind == 3 || kind == 4) cons.push_back(distinct_attribute("driver-a/x"));
      claims.push_back(claim("c" + std::to_string(c), reqs, cons));
      if (kind == 1 || kind == 2 || kind == 4) ++jumps;
    }
    auto snap = Snapshot::build(slices, classes);
    std::vector<const api::ResourceClaim*> ptrs;
    for (const auto& c : claims) ptrs.push_back(&c);
    const api::Node n = node("node-1");
    const AllocatedState state(*snap, in_use);
    auto view = NodeView::build(*snap, state, n);
    ASSERT_TRUE(view.has_value()) << view.error().message();
    for (Policy policy : {Policy::kFirstFit, Policy::kPacking}) {
      Options with, without;
      with.policy = without.policy = policy;
      without.shortcuts = false;
      auto a = allocate(*view, ptrs, with), b = allocate(*view, ptrs, without);
      ASSERT_EQ(a.has_value(), b.has_value());
      if (!a.has_value()) {
        EXPECT_EQ(a.error().message(), b.error().message());
        continue;
      }
      EXPECT_EQ(a->fits, b->fits);
      EXPECT_EQ(a->results, b->results);
      EXPECT_EQ(a->reasons, b->reasons);
      EXPECT_EQ(a->steps, b->steps);
      fits += a->fits ? 1 : 0;
    }
  }
  // Both outcomes, and constraints whose values the index answers, are exercised.
  EXPECT_GT(fits, 80);
  EXPECT_LT(fits, 700);
  EXPECT_GT(jumps, 100);
}

// A shared device has consumed its counters once: another share needs none,
// even when its pool has none left (not blocked by the view's counter marks).
TEST(AllocatorProperty, ASharedDeviceTakesMoreSharesWithoutCounters) {
  std::vector<api::ResourceSlice> slices = {
      slice("devices", "node-1", "pool-1", {shareable(with_capacity(with_counters(device("s"), "s", {{"c", 2}}), "mem", 8))},
            1, 2),
      counter_slice("counters", "node-1", "pool-1", "s", {{"c", 2}})};
  api::ResourceClaim old = allocated("old", {"s"});
  old.status.allocation->devices.results[0].shareID = "share-1";
  old.status.allocation->devices.results[0].consumedCapacity["mem"] = api::Quantity::from_int(1);
  auto snap = Snapshot::build(slices, {device_class("class-a")});
  const AllocatedState state(*snap, {old});
  const api::Node target = node("node-1");  // the view keeps a pointer to it
  auto view = NodeView::build(*snap, state, target);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->blocked()[0], 0) << "shareable: the search decides";
  api::DeviceRequest r = request("r", "class-a");
  r.exactly->capacity = api::CapacityRequirements{{{"mem", api::Quantity::from_int(1)}}};
  api::ResourceClaim c = claim("c", {r});
  auto got = allocate(*view, {&c});
  ASSERT_TRUE(got.has_value()) << got.error().message();
  ASSERT_TRUE(got->fits);
  EXPECT_EQ(picks(got->results[0]), std::vector<std::string>{"r pool-1/s"});
}

}  // namespace
}  // namespace draplane::alloc
