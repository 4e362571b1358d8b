// The allocated state kept apart from the inventory: the allocator reads both
// and changes neither, and the state's incremental updates match a fresh build.
#include "alloc/allocated.h"

#include <gtest/gtest.h>

#include "alloc/allocator.h"
#include "builders.h"

namespace draplane::alloc {
namespace {

using namespace testing;  // NOLINT: builders

// A pool with a shared counter set, plain and partitioned devices and a
// shareable device with capacity: every kind of record the state holds.
std::vector<api::ResourceSlice> inventory() {
  api::Device whole = with_counters(device("gpu-0"), "set", {{"mem", 8}});
  api::Device part_a = with_counters(device("gpu-0-a"), "set", {{"mem", 4}});
  api::Device part_b = with_counters(device("gpu-0-b"), "set", {{"mem", 4}});
  api::Device shared = with_capacity(shareable(device("nic")), "bw", 10);
  return {slice("devices", "node-1", "pool-1", {whole, part_a, part_b, shared, device("plain-0"), device("plain-1")}, 1, 2),
          counter_slice("counters", "node-1", "pool-1", "set", {{"mem", 8}})};
}

api::ResourceClaim share_of_nic(const std::string& name, const std::string& share_id, int64_t bw) {
  api::ResourceClaim c = allocated(name, {"nic"});
  auto& r = c.status.allocation->devices.results[0];
  r.shareID = share_id;
  r.consumedCapacity["bw"] = api::Quantity::from_int(bw);
  return c;
}

api::DeviceRequest bandwidth(const std::string& name, int64_t bw) {
  api::DeviceRequest r = request(name, "class-a");
  r.exactly->capacity = api::CapacityRequirements{{{"bw", api::Quantity::from_int(bw)}}};
  return r;
}

TEST(AllocatedState, AllocatorChangesNeitherSnapshotNorState) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  const AllocatedState state(*snap, {allocated("old", {"gpu-0-a", "plain-0"}),
                                     share_of_nic("net", "11111111-1111-4111-8111-111111111111", 4)});
  // What the snapshot and the state say before any allocation.
  const std::vector<api::ResourceSlice> slices_before = snap->slices();
  const std::vector<Snapshot::DeviceEntry> devices_before = snap->devices();
  const auto classes_before = snap->classes();
  const AllocatedState state_before = state;

  api::ResourceClaim c = claim("c", {request("part", "class-a"), request("plain", "class-a"), bandwidth("net", 3)});
  api::Node n = node("node-1");
  auto first = allocate(*snap, state, {&c}, n);
  auto again = allocate(*snap, state, {&c}, n);
  // The same through one reused view (the scheduler's path).
  auto view = NodeView::build(*snap, state, n);
  ASSERT_TRUE(view.has_value()) << view.error().message();
  auto third = allocate(*view, {&c});
  ASSERT_TRUE(first.has_value() && again.has_value() && third.has_value());
  ASSERT_TRUE(first->fits) << (first->reasons.empty() ? "" : first->reasons[0]);
  EXPECT_EQ(picks(first->results[0]),
            (std::vector<std::string>{"part pool-1/gpu-0-b", "plain pool-1/plain-1", "net pool-1/nic"}));
  EXPECT_EQ(first->results, again->results);
  EXPECT_EQ(first->results, third->results);

  EXPECT_EQ(snap->slices(), slices_before);
  EXPECT_EQ(snap->devices(), devices_before);
  EXPECT_EQ(snap->classes(), classes_before);
  EXPECT_EQ(state, state_before);
}

TEST(AllocatedState, IsWhatTheAllocatorCounts) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  api::Node n = node("node-1");
  // One snapshot, two states: the answer follows the state given.
  api::ResourceClaim whole = claim("whole", {request("gpu", "class-a")});
  const AllocatedState none(*snap);
  const AllocatedState gpu_taken(*snap, {allocated("old", {"gpu-0"})});
  auto free_pick = allocate(*snap, none, {&whole}, n);
  auto taken_pick = allocate(*snap, gpu_taken, {&whole}, n);
  ASSERT_TRUE(free_pick.has_value() && free_pick->fits && taken_pick.has_value() && taken_pick->fits);
  EXPECT_EQ(picks(free_pick->results[0]), std::vector<std::string>{"gpu pool-1/gpu-0"});
  // gpu-0 in use, and its counters with it: neither partition fits (8 of 8 consumed).
  EXPECT_EQ(picks(taken_pick->results[0]), std::vector<std::string>{"gpu pool-1/nic"});
}

// Two records of one allocation (the scheduler's placeholder for an extended-
// resource claim and the created claim, whose event may come first): removing
// one leaves the devices held by the other.
TEST(AllocatedState, ADeviceRecordedTwiceIsHeldUntilBothGo) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  const api::ResourceClaim placeholder = allocated("placeholder", {"gpu-0"});
  const api::ResourceClaim created = allocated("created", {"gpu-0"});
  const api::ResourceClaim share = share_of_nic("s", "11111111-1111-4111-8111-111111111111", 4);
  const uint32_t gpu = *snap->find_key("driver-a", "pool-1", "gpu-0");
  const uint32_t nic = *snap->find_key("driver-a", "pool-1", "nic");
  AllocatedState state(*snap);
  state.add(*placeholder.status.allocation);
  state.add(*created.status.allocation);
  state.add(*share.status.allocation);
  state.add(*share.status.allocation);
  state.remove(*placeholder.status.allocation);
  state.remove(*share.status.allocation);
  ASSERT_NE(state.in_use(gpu), nullptr);
  EXPECT_TRUE(state.in_use(gpu)->dedicated);
  ASSERT_NE(state.in_use(nic), nullptr);
  EXPECT_TRUE(state.in_use(nic)->shared);
  EXPECT_EQ(state, AllocatedState(*snap, {created, share}));
  state.remove(*created.status.allocation);
  state.remove(*share.status.allocation);
  EXPECT_EQ(state.in_use(gpu), nullptr);
  EXPECT_EQ(state, AllocatedState(*snap));
}

TEST(AllocatedState, AddAndRemoveMatchAFreshRecord) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  const api::ResourceClaim a = share_of_nic("a", "11111111-1111-4111-8111-111111111111", 4);
  const api::ResourceClaim b = share_of_nic("b", "22222222-2222-4222-8222-222222222222", 5);
  const api::ResourceClaim plain = allocated("plain", {"plain-0", "gpu-0"});
  AllocatedState state(*snap);
  state.add(*a.status.allocation);
  state.add(*plain.status.allocation);
  state.add(*b.status.allocation);
  EXPECT_EQ(state, AllocatedState(*snap, {a, plain, b}));
  const auto* nic = state.in_use(*snap->find_key("driver-a", "pool-1", "nic"));
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->capacity.at("bw"), api::Quantity::from_int(9).nanos());
  EXPECT_EQ(nic->share_ids.size(), 2u);
  state.remove(*a.status.allocation);
  EXPECT_EQ(state, AllocatedState(*snap, {plain, b}));
  state.remove(*plain.status.allocation);
  state.remove(*b.status.allocation);
  EXPECT_EQ(state, AllocatedState(*snap));
  EXPECT_EQ(state.in_use(*snap->find_key("driver-a", "pool-1", "plain-0")), nullptr);
  // Devices no slice publishes, and admin access, hold nothing.
  api::ResourceClaim ghost = allocated("ghost", {"no-such-device"});
  api::ResourceClaim admin = allocated("admin", {"plain-1"});
  admin.status.allocation->devices.results[0].adminAccess = true;
  EXPECT_EQ(AllocatedState(*snap, {ghost, admin}), AllocatedState(*snap));
}

TEST(AllocatedState, ViewRefusesAnotherSnapshotsState) {
  auto snap = Snapshot::build(inventory(), {device_class("class-a")});
  auto other = Snapshot::build(inventory(), {device_class("class-a")});
  const AllocatedState state(*other);
  const api::Node target = node("node-1");  // the view keeps a pointer to it
  auto view = NodeView::build(*snap, state, target);
  ASSERT_FALSE(view.has_value());
  EXPECT_EQ(view.error().code(), Code::kInternal);
  EXPECT_EQ(view.error().message(), "allocated state belongs to another snapshot");
}

}  // namespace
}  // namespace draplane::alloc
